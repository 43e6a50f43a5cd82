#include "cli/replayed_args.hpp"

namespace opbench {

std::vector<std::string> replayable_args(int argc, char **argv, std::string_view subcommand) {
    std::vector<std::string> out;
    int i = 1;
    while (i < argc && std::string_view(argv[i]) != subcommand) ++i;
    for (++i; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--out" || a == "--resume") {
            ++i; // and its value
            continue;
        }
        if (a.starts_with("--out=") || a.starts_with("--resume=") || a == "--no-out") continue;
        out.emplace_back(a);
    }
    return out;
}

} // namespace opbench
