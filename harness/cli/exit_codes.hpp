// opbench's exit statuses, shared by the subcommands' wiring (cli/, main.cpp).
#pragma once

namespace opbench {

// 0 all good, 1 a case failed verification or execution, 2 bad input
// (usage, suite), 3 an environment problem (output not writable).
constexpr int kExitFailedCases = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitEnvironment = 3;

} // namespace opbench
