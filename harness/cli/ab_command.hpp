// `opbench ab`: a paired A/B run of two builds of one backend
// (run/ab_run.hpp). main() registers it and, when chosen, runs it
// before the other subcommands' plugin discovery: it discovers the plugins
// itself and adds the --plugin variants. With a result set it keeps a
// journal, as `run` does; `ab --resume SET` finishes an interrupted or
// killed run from it.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

class AbCommand {
public:
    explicit AbCommand(CLI::App &app); // adds the subcommand to `app`
    ~AbCommand();
    AbCommand(const AbCommand &) = delete;
    AbCommand &operator=(const AbCommand &) = delete;

    // The whole command line again, as `ab --resume` rebuilds it from the
    // journal, with the journal it resumes (main.cpp's run_cli).
    using Relaunch = std::function<int(std::vector<std::string> args, const std::string &resume_journal)>;

    // After parsing: the exit status when `ab` was chosen, else nullopt.
    // `argc`/`argv` are the command line (the journal records its replayable
    // part); `resume_journal` is non-empty in a relaunched, resumed run.
    [[nodiscard]] std::optional<int> run(int argc, char **argv, const std::string &resume_journal,
                                         const Relaunch &relaunch);

private:
    struct Options;
    std::unique_ptr<Options> o_;
};

} // namespace opbench
