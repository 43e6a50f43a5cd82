// The subcommands that read result sets and never load a plugin: analyze,
// compare, report, history, merge, archive. main() registers them and, when one was
// chosen, runs it before any plugin discovery.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>

namespace opbench {

class ReaderCommands {
public:
    explicit ReaderCommands(CLI::App &app); // adds the subcommands to `app`
    ~ReaderCommands();
    ReaderCommands(const ReaderCommands &) = delete;
    ReaderCommands &operator=(const ReaderCommands &) = delete;

    // After parsing: the exit status of the chosen reader command, or
    // nullopt when the command line chose another subcommand.
    [[nodiscard]] std::optional<int> run();

private:
    struct Options;
    std::unique_ptr<Options> o_;
};

} // namespace opbench
