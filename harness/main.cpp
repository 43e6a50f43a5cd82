// opbench: the command-line program. main() builds the command line and
// hands each subcommand to its wiring in cli/; the work lives in the harness
// modules.
#include "build_config.hpp"
#include "cli/ab_command.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_format.hpp"
#include "cli/info_commands.hpp"
#include "cli/known_backends.hpp"
#include "cli/printable.hpp"
#include "cli/reader_commands.hpp"
#include "cli/run_command.hpp"
#include "isolate/case_host.hpp"
#include "plugin/plugin_loader.hpp"
#include "readers/analyze.hpp"
#include "run/entry_jobs.hpp"
#include "run/git_commit.hpp"
#include "run/interrupt.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>

using namespace opbench;

namespace {

int run_cli(int argc, char **argv, const std::string &resume_journal) {
    CLI::App app{"opbench: benchmark transformer ops on interchangeable backends.\n"
                 "Backends are plugins found in the build tree, the install dir and OPBENCH_PLUGIN_PATH."};
    app.formatter(std::make_shared<WrappingHelpFormatter>()); // before the subcommands: they copy it
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(OPBENCH_VERSION) + " (" + git_commit() + ")");

    bool allow_insecure_plugins = false;
    auto add_trust_flag = [&](CLI::App *sub) {
        sub->add_flag("--allow-insecure-plugins", allow_insecure_plugins,
                      "load plugin files even where others may write them (file or directory mode o+w)");
    };
    auto *list = app.add_subcommand("list", "show backends (version, usable here or why not), ops and suites");
    add_trust_flag(list);

    auto *validate = app.add_subcommand("validate", "check suite files and print how many cases each expands to");
    std::vector<std::string> validate_paths;
    validate->add_option("suite", validate_paths, "suite TOML file(s)")->required();
    add_trust_flag(validate);

    RunCommand run(app, add_trust_flag);

    auto *machine = app.add_subcommand("machine", "measure this machine's peak FLOP/s and memory bandwidth "
                                                  "(cached per machine; used for rooflines)");
    bool refresh = false;
    machine->add_flag("--refresh", refresh, "measure again even if cached");
    bool machine_id_only = false;
    machine->add_flag("--id", machine_id_only,
                      "print only the machine id this machine's result sets get (what merge and archive compare); "
                      "measures nothing");

    // analyze, compare, report, history, merge, archive: they read result
    // sets and return before any plugin is loaded.
    ReaderCommands readers(app);
    AbCommand ab(app); // paired A/B runs: loads its own plugins

    // A usage error echoes what was typed: control bytes in it are shown as
    // \xHH, never sent to the terminal raw (issue 32).
    app.failure_message([](const CLI::App *, const CLI::Error &e) {
        return printable(e.what()) + "\nRun with --help for more information.\n";
    });
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version exit 0; a usage error is bad input (2).
        return app.exit(e) == 0 ? 0 : kExitBadInput;
    }
    if (std::optional<int> rc = readers.run()) return *rc;
    // --resume: the command line rebuilt from the journal, parsed afresh.
    auto relaunch = [](std::vector<std::string> args, const std::string &journal) {
        std::vector<char *> replay;
        for (auto &a : args) replay.push_back(a.data());
        return run_cli(static_cast<int>(replay.size()), replay.data(), journal);
    };
    if (std::optional<int> rc = ab.run(argc, argv, resume_journal, relaunch)) return *rc;
    if (std::optional<int> rc = run.pin_cpus()) return *rc; // before plugins load

    PluginSet plugins = discover_plugins(default_plugin_search_paths(), DiscoverOptions{allow_insecure_plugins});
    if (std::optional<int> rc = run.add_plugin_builds(plugins, allow_insecure_plugins)) return *rc;

    if (*list) return list_command(plugins);
    if (*validate) {
        print_refused(plugins);
        return validate_command(validate_paths, plugins);
    }
    if (*machine) return machine_id_only ? machine_id_command() : machine_command(refresh);
    return run.run(plugins, argc, argv, resume_journal, relaunch);
}

} // namespace

int main(int argc, char **argv) {
    // The hidden worker mode (case_host.hpp): opbench starts itself this way
    // to run one backend's cases in a process of their own.
    if (argc > 1 && std::string_view(argv[1]) == "__worker")
        return case_worker_main(argc, argv, [] { return make_entry_jobs(); });
    install_interrupt_handling(); // before any thread exists: signals go to one watcher thread
    return run_cli(argc, argv, "");
}
