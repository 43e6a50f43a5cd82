// What `run --resume` and `ab --resume` replay of the interrupted command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// The arguments after `subcommand` ("run" or "ab") except where the set goes
// (--out, --no-out: the journal's own path says that) and --resume.
[[nodiscard]] std::vector<std::string> replayable_args(int argc, char **argv, std::string_view subcommand);

} // namespace opbench
