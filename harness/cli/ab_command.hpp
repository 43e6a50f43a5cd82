// `opbench ab`: a paired A/B run of two builds of one backend
// (run/ab_run.hpp). main() registers it and, when chosen, runs it
// before the other subcommands' plugin discovery: it discovers the plugins
// itself and adds the --plugin variants.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>

namespace opbench {

class AbCommand {
public:
    explicit AbCommand(CLI::App &app); // adds the subcommand to `app`
    ~AbCommand();
    AbCommand(const AbCommand &) = delete;
    AbCommand &operator=(const AbCommand &) = delete;

    // After parsing: the exit status when `ab` was chosen, else nullopt.
    [[nodiscard]] std::optional<int> run();

private:
    struct Options;
    std::unique_ptr<Options> o_;
};

} // namespace opbench
