// `opbench run`: its options, their checks into RunOptions, --resume, and the
// run itself with its closing line. main() registers it and calls it in two
// steps, because pinning to --cpus must precede plugin loading.
#pragma once

#include "plugin/plugin_loader.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

class RunCommand {
public:
    // Adds `run` to `app`; `trust_flag` adds --allow-insecure-plugins to it.
    RunCommand(CLI::App &app, const std::function<void(CLI::App *)> &trust_flag);
    ~RunCommand();
    RunCommand(const RunCommand &) = delete;
    RunCommand &operator=(const RunCommand &) = delete;

    [[nodiscard]] bool chosen() const;

    // After parsing, before plugins load (OpenMP runtimes read the mask at
    // load): pins the process to --cpus. The exit status on bad input.
    [[nodiscard]] std::optional<int> pin_cpus();

    // After plugin discovery: the builds --plugin names, added to `plugins`
    // as backends NAME@VARIANT. The exit status on bad input (a bad spec, a
    // refused file).
    [[nodiscard]] std::optional<int> add_plugin_builds(PluginSet &plugins, bool allow_insecure);

    // The whole command line again, as `run --resume` rebuilds it from the
    // journal, with the journal it resumes.
    using Relaunch = std::function<int(std::vector<std::string> args, const std::string &resume_journal)>;

    // After plugin discovery: checks the options, runs the suite (or resumes
    // a run through `relaunch`) and returns the exit status. `argc`/`argv`
    // are the command line (the journal records its replayable part);
    // `resume_journal` is non-empty in a relaunched, resumed run.
    [[nodiscard]] int run(const PluginSet &plugins, int argc, char **argv, const std::string &resume_journal,
                          const Relaunch &relaunch);

private:
    struct Options;
    std::unique_ptr<Options> o_;
};

} // namespace opbench
