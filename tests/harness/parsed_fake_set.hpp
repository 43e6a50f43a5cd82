// A fake set (result_set_fixture.hpp) as the readers see it, for the tests
// that link the harness: the readers' unit tests share it rather than each
// defining its own.
#pragma once

#include "readers/result_set_reader.hpp"
#include "result_set_fixture.hpp"

#include <string>

namespace opbench::test {

// `s` parsed as if read from a file called `name`.
inline ResultSet parsed_set(const FakeSet &s, const std::string &name) {
    return parse_result_set(fake_set_json(s).dump(), name);
}

} // namespace opbench::test
