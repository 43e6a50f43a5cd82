// libFuzzer target: an archived set's entry summaries (the CBOR file history
// reads instead of the set; issue 32: a file nested 200,000 deep overflowed
// the stack and killed every archive command). set_from_summaries_bytes
// either refuses with ResultSetError or gives a set whose cases history can
// summarise, and which survives being written as summaries and read again.
#include "readers/result_set_reader.hpp"
#include "readers/set_summaries.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    opbench::ResultSet set;
    try {
        set = opbench::set_from_summaries_bytes(bytes, "fuzz.summaries.cbor", "fuzz.json");
    } catch (const opbench::ResultSetError &) {
        return 0; // refused with a message: the expected outcome
    }
    (void)set.machine_id();
    (void)set.suite_name();
    for (const auto &c : set.cases) {
        (void)c.label();
        (void)opbench::valid_times(c);
        (void)opbench::entry_summary(c);
    }
    // What was accepted is what opbench itself could have written.
    const opbench::ResultSet again =
        opbench::set_from_summaries_bytes(opbench::set_summaries_bytes(set), "again.summaries.cbor", "fuzz.json");
    if (again.cases.size() != set.cases.size()) std::abort();
    return 0;
}
