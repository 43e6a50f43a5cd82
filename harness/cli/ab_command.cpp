#include "cli/ab_command.hpp"

#include "cli/known_backends.hpp"
#include "cli/printable.hpp"

#include "cli/cpu_list.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_path.hpp"
#include "cli/replayed_args.hpp"
#include "plugin/plugin_variant.hpp"
#include "run/interrupt.hpp"
#include "run/ab_run.hpp"
#include "run/code_under_test.hpp"
#include "run/journal.hpp"
#include "run/paired_console.hpp"
#include "run/run_environment.hpp"
#include "run/run_log.hpp"
#include "suite/suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <sched.h>
#include <stdexcept>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// Bad input found by a step of `opbench ab`: run() prints it and exits 2.
struct AbBadInput : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What `ab --resume` may change: how long a case may take, the console, the
// trust flag and --force (never taken from the journal: kAbOutputOptions).
// Every other option would change what the run measures, so it is refused.
constexpr std::string_view kAbResumeMayChange[] = {"--case-timeout", "--force", "--no-progress",
                                                   "--allow-insecure-plugins"};
constexpr std::string_view kAbOutputOptions[] = {"--force"};

bool ab_resume_may_change(std::string_view name) {
    return std::find(std::begin(kAbResumeMayChange), std::end(kAbResumeMayChange), name) !=
           std::end(kAbResumeMayChange);
}

// `args` without the options named in `drop` (and --case-timeout's value),
// which the resumed run takes from the new command line instead.
std::vector<std::string> without_ab_options(const std::vector<std::string> &args,
                                            const std::vector<std::string> &drop) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        const bool dropped = std::any_of(drop.begin(), drop.end(), [&](const std::string &d) {
            return d.starts_with("--") && (a == d || a.starts_with(d + "="));
        });
        if (!dropped)
            out.push_back(a);
        else if (a == "--case-timeout")
            ++i; // and its value
    }
    return out;
}

// The result set a journal belongs to: its own path less ".journal".
std::string resumed_ab_out(const std::string &journal) {
    constexpr std::string_view kSuffix = ".journal";
    if (!journal.ends_with(kSuffix))
        throw AbBadInput(fmt::format("--resume: {} is not named <result set>.journal, so its result set is "
                                     "unknown; resume through the result set's path",
                                     journal));
    return journal.substr(0, journal.size() - kSuffix.size());
}

// True when the interrupted run's own command line had --force.
bool ab_journal_forced(const std::string &journal) {
    const nlohmann::json args = read_journal(journal).header.value("args", nlohmann::json::array());
    return std::find(args.begin(), args.end(), nlohmann::json("--force")) != args.end();
}

// An interrupted or killed run's journal beside --out: --resume finishes
// that run, so it is refused (before the empty set "already exists" would
// be) with the command that does; a live run's is refused as its own.
void refuse_journal_beside(const std::string &out) {
    const std::string journal = journal_path_for(out);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(journal, ec))) return;
    if (journal_is_live(journal))
        throw AbBadInput(fmt::format("--out {}: a run still going writes here (its journal {} is held by it); "
                                     "wait for it to finish, or choose another --out",
                                     out, journal));
    throw AbBadInput(fmt::format("--out {}: the journal of an interrupted run lies beside it ({}): `{} {}` "
                                 "finishes that run; remove both files to start afresh, or choose another --out",
                                 out, journal, resume_command_of(journal), out));
}
} // namespace

struct AbCommand::Options {
    CLI::App *sub = nullptr;
    std::string suite_path, pair, out_path, verify = "fast", reference = "naive", cpus, resume_from;
    std::string commit_under_test; // --commit-under-test
    std::vector<std::string> plugin_specs;
    PairedRunOptions run;
    bool no_out = false, force = false, allow_insecure = false, no_progress = false;

    void add_build_options();
    void add_output_options();
    // --resume: the journal's command line again, through `relaunch`.
    [[nodiscard]] int resume(char **argv, const Relaunch &relaunch) const;
    [[nodiscard]] std::vector<std::string> resume_changes() const;
    [[nodiscard]] std::vector<std::string> resumed_args(char **argv, const std::string &journal,
                                                        const nlohmann::json &header,
                                                        const std::vector<std::string> &changes) const;
    [[nodiscard]] int run_ab();

    // The steps of run_ab(), in order; each throws AbBadInput for bad input.
    void pin_to_cpus();
    PluginSet plugins_with_builds(std::vector<PluginVariantSpec> &specs) const;
    void record_insecure(const PluginSet &plugins);
    void choose_pair(const std::vector<PluginVariantSpec> &specs, const PluginSet &plugins);
    void choose_reference(const PluginSet &plugins);
    Suite load_suite(const PluginSet &plugins) const; // throws SuiteError
    ResultPath reserve_out(const Suite &suite, const PluginSet &plugins);
    void print_start(const PluginSet &plugins) const;
    int run_pairs(const Suite &suite, const PluginSet &plugins, ResultPath &result_path) const;
};

AbCommand::AbCommand(CLI::App &app) : o_(std::make_unique<Options>()) {
    Options &o = *o_;
    o.sub = app.add_subcommand(
        "ab", "paired A/B run: two builds of one backend measured side by side (ABBA blocks, each in its own "
              "workers), a paired test per case; docs/measurement.md");
    // Not required here: `ab --resume SET` takes the suite from the journal.
    o.sub->add_option("suite", o.suite_path,
                      "suite TOML file: its cases that list the pair's backend run (not with --resume)");
    o.add_build_options();
    o.add_output_options();
}

// The builds, the pair, the blocks and the test.
void AbCommand::Options::add_build_options() {
    Options &o = *this;
    o.sub->add_option("--plugin", o.plugin_specs,
                      "a build of a backend: NAME@VARIANT=PATH (e.g. onednn@base=old/opbench-backend-onednn.so); "
                      "give it once per build")
        ->type_name("SPEC");
    o.sub->add_option("--pair", o.pair,
                      "BASE,NEW: the two backends compared (default: the two --plugin builds in order; a plain "
                      "name is the build found as usual)")
        ->type_name("BASE,NEW");
    o.sub->add_option("--pairs", o.run.pairs, "ABBA blocks per case (one pair each)")
        ->capture_default_str()
        ->check(CLI::Range(6, 1000));
    o.sub->add_option("--seconds", o.run.half_seconds, "sampling time of each of a block's four repetitions")
        ->capture_default_str()
        ->check(CLI::Range(1e-4, 10.0));
    o.sub->add_option("--threshold", o.run.verdict.threshold,
                      "smallest relative change of the paired ratio that counts (0.02 = 2%)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 10.0));
    o.sub->add_option("--alpha", o.run.verdict.alpha, "significance level of the signed-rank test")
        ->capture_default_str()
        ->check(CLI::Range(1e-6, 0.5));
    o.sub->add_option("--verify", o.verify, "checks of both sides against the reference: full | fast | off")
        ->check(CLI::IsMember({"full", "fast", "off"}))
        ->capture_default_str();
    o.sub->add_option("--cpus", o.cpus,
                      "CPUs both sides run on, as taskset -c writes them (default: the one CPU opbench starts on, "
                      "so a pair never compares two CPUs; give more for multi-threaded backends)");
    o.sub->add_option("--benchmark_filter", o.run.benchmark_filter,
                      "run only the cases whose name (on either build) matches this extended regex; a leading "
                      "'-' negates it (as in opbench run)")
        ->type_name("REGEX");
    o.sub->add_option("--reference", o.reference, "backend whose output verifies both sides")->capture_default_str();
    o.sub->add_option("--case-timeout", o.run.case_timeout,
                      "seconds a case may take, from its start to its last block (both sides' blocks "
                      "interleave), before its workers are killed and the case fails; also each step of a "
                      "side's probe. 0 = 60 + 10 x repetitions x max_time (about 61 s with the defaults)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 86400.0))
        ->type_name("S");
}

// The result set, --resume, the console and the trust flag.
void AbCommand::Options::add_output_options() {
    Options &o = *this;
    auto *out = o.sub->add_option("--out", o.out_path,
                                  "result set path (default results/<suite>-<UTC time>.json); an existing file is "
                                  "refused unless --force. Its journal (<out>.journal) keeps each finished case "
                                  "until the set is complete");
    o.sub->add_flag("--no-out", o.no_out, "write no result set (nor a journal: nothing to --resume)")->excludes(out);
    o.sub->add_option("--resume", o.resume_from,
                      "finish an interrupted or killed `ab`: its result set or its .journal; the finished cases "
                      "are kept (their pairs and verdicts), the rest run with the same arguments. Only "
                      "--case-timeout, --force, --no-progress and --allow-insecure-plugins may be given with "
                      "it; any other option is refused")
        ->type_name("SET");
    o.sub->add_flag("--force", o.force, "replace an existing --out file");
    o.sub->add_option("--commit-under-test", o.commit_under_test, kCommitUnderTestHelp);
    o.sub->add_flag("--no-progress", o.no_progress, "print no line per case, only the summary");
    o.sub->add_flag("--allow-insecure-plugins", o.allow_insecure,
                    "load plugin files even where others may write them (file or directory mode o+w)");
}

// The options given with --resume, as a new command line's tail: those that
// leave what is measured alone replace the run's own; any other is refused,
// never ignored (as `run --resume`).
std::vector<std::string> AbCommand::Options::resume_changes() const {
    if (!suite_path.empty())
        throw AbBadInput("--resume takes the interrupted run's suite and arguments from its journal: give no "
                         "suite file with it");
    std::vector<std::string> refused, changes;
    for (const CLI::Option *opt : sub->get_options()) {
        const std::string name = opt->get_name();
        if (opt->count() == 0 || name == "--resume" || name == "suite") continue;
        if (!ab_resume_may_change(name)) {
            refused.push_back(name);
            continue;
        }
        changes.push_back(name);
        if (name == "--case-timeout") changes.push_back(opt->results().empty() ? "" : opt->results().back());
    }
    if (!refused.empty())
        throw AbBadInput(fmt::format("--resume continues the run with its own settings, and {} would change what "
                                     "it measures: drop {}, or start a new run. With --resume only these may "
                                     "change: {}",
                                     fmt::join(refused, ", "), refused.size() == 1 ? "it" : "them",
                                     fmt::join(kAbResumeMayChange, ", ")));
    return changes;
}

// The interrupted run's command line from its journal's header, with the
// options given now that may change, writing to the journal's own set.
std::vector<std::string> AbCommand::Options::resumed_args(char **argv, const std::string &journal,
                                                          const nlohmann::json &h,
                                                          const std::vector<std::string> &changes) const {
    if (h.value("command", std::string("run")) != "ab")
        throw AbBadInput(fmt::format("--resume {}: {} is the journal of an `opbench run`, not of `ab`: `opbench "
                                     "run --resume {}` finishes it",
                                     resume_from, journal, resume_from));
    std::vector<std::string> recorded, dropped(changes), args = {argv[0], "ab"};
    for (const auto &a : h.at("args")) recorded.push_back(a.get<std::string>());
    dropped.insert(dropped.end(), std::begin(kAbOutputOptions), std::end(kAbOutputOptions));
    for (auto &a : without_ab_options(recorded, dropped)) args.push_back(std::move(a));
    args.insert(args.end(), changes.begin(), changes.end());
    args.insert(args.end(), {"--out", resumed_ab_out(journal)});
    return args;
}

int AbCommand::Options::resume(char **argv, const Relaunch &relaunch) const {
    const std::vector<std::string> changes = resume_changes();
    try {
        if (fs::is_directory(resume_from))
            throw AbBadInput(fmt::format("--resume {}: is a directory; give the interrupted run's result set or "
                                         "its .journal",
                                         resume_from));
        const std::string journal = fs::absolute(journal_to_resume(resume_from)).string();
        if (journal_is_live(journal))
            throw AbBadInput(fmt::format("--resume {}: a run still going holds its journal {}; it is not "
                                         "interrupted: wait for it to finish",
                                         resume_from, journal));
        const JournalContents done = read_journal(journal);
        std::vector<std::string> args = resumed_args(argv, journal, done.header, changes);
        // Relative paths in the arguments (the suite, the --plugin builds) meant the first run's directory.
        std::error_code ec;
        fs::current_path(done.header.at("cwd").get<std::string>(), ec);
        if (ec)
            throw JournalError(fmt::format("{}: cannot return to the run's directory {}: {}", journal,
                                           done.header.at("cwd").get<std::string>(), ec.message()));
        std::set<std::string> finished;
        for (const auto &e : done.entries)
            if (e.contains("case")) finished.insert(e["case"].get<std::string>());
        std::cerr << fmt::format("opbench ab: resuming {} ({} case x side finished) from {}\n", args.back(),
                                 finished.size(), journal);
        return relaunch(std::move(args), journal);
    } catch (const JournalError &e) {
        throw AbBadInput(fmt::format("--resume: {}", e.what()));
    } catch (const nlohmann::json::exception &e) {
        throw AbBadInput(fmt::format("--resume: the journal's first line lacks what a resume needs ({})", e.what()));
    }
}

AbCommand::~AbCommand() = default;

// Before any plugin loads (OpenMP reads the mask at load) and before the
// workers start (they inherit it). On a shared VM the vCPUs differ in speed
// (each has its own neighbours on the host), and a worker stays on one for a
// whole case: unpinned, an A/A case came out 13% "slower" under load 14
// (docs/measurement.md, "Paired A/B").
void AbCommand::Options::pin_to_cpus() {
    try {
        run.cpus = cpus.empty() ? std::vector<int>{sched_getcpu()} : parse_cpu_list(cpus);
        pin_process_to_cpus(run.cpus);
    } catch (const std::exception &e) {
        throw AbBadInput(fmt::format("--cpus: {}", e.what()));
    }
}

// The plugins found as usual plus the suite's and the --plugin builds (into `specs`).
PluginSet AbCommand::Options::plugins_with_builds(std::vector<PluginVariantSpec> &specs) const {
    PluginSet plugins = discover_plugins(default_plugin_search_paths(), DiscoverOptions{allow_insecure});
    try {
        specs = plugin_builds(suite_path, plugin_specs);
        add_plugin_variants(plugins, specs, allow_insecure);
    } catch (const PluginSpecError &e) {
        throw AbBadInput(e.what());
    }
    print_insecure_allowed(plugins);
    return plugins;
}

// What --allow-insecure-plugins let load, for the set's context (as `run` records it).
void AbCommand::Options::record_insecure(const PluginSet &plugins) {
    if (plugins.allow_insecure) run.insecure_plugins_allowed = plugins.insecure_loaded;
}

// The pair: --pair, else the two --plugin builds; two loaded builds of one
// backend.
void AbCommand::Options::choose_pair(const std::vector<PluginVariantSpec> &specs, const PluginSet &plugins) {
    if (!pair.empty()) {
        const auto comma = pair.find(',');
        if (comma == std::string::npos || pair.find(',', comma + 1) != std::string::npos)
            throw AbBadInput(
                fmt::format("--pair '{}': expected BASE,NEW (two backends, e.g. naive@base,naive@new)", pair));
        run.base = pair.substr(0, comma);
        run.next = pair.substr(comma + 1);
    } else if (specs.size() == 2) {
        run.base = specs[0].instance();
        run.next = specs[1].instance();
    } else {
        throw AbBadInput(fmt::format("give the two builds to compare: --plugin NAME@base=FILE --plugin "
                                     "NAME@new=FILE, or two in the suite's [defaults] plugins (got {}), or --pair BASE,NEW",
                                     specs.size()));
    }
    for (const std::string &name : {run.base, run.next})
        if (!plugins.find(name)) throw AbBadInput(fmt::format("--pair: {}", plugins.why_unavailable(name)));
    if (run.base == run.next)
        throw AbBadInput(fmt::format("--pair {},{}: the same backend twice; an A/A run names two variants of one "
                                     "file (--plugin naive@a=F --plugin naive@b=F)",
                                     run.base, run.next));
    if (variant_backend(run.base) != variant_backend(run.next))
        throw AbBadInput(fmt::format("--pair {},{}: builds of two different backends; a paired run compares two "
                                     "builds of one (NAME@base, NAME@new)",
                                     run.base, run.next));
}

void AbCommand::Options::choose_reference(const PluginSet &plugins) {
    run.reference = reference;
    if (!plugins.find(reference))
        throw AbBadInput(
            fmt::format("the reference backend '{}' is not loaded: {}", reference, plugins.why_unavailable(reference)));
}

// As `opbench run`: the design's three, every plugin found and the base
// name of each build are known backends, so a typo is caught. Then the cases
// the pair runs are checked: none is bad input, before any result set.
Suite AbCommand::Options::load_suite(const PluginSet &plugins) const {
    Suite suite = load_suite_file(suite_path, SuiteOptions{known_backends(plugins)});
    try {
        (void)paired_cases(suite, run);
    } catch (const std::regex_error &e) {
        throw AbBadInput(fmt::format("--benchmark_filter={}: not an extended regex ({})", run.benchmark_filter,
                                     e.what()));
    }
    return suite;
}

// The result set's path, reserved (unless --no-out) for as long as the
// returned object lives. Resumed, it may be the run's own incomplete set or
// empty reservation (a killed run), and the first run's --force still lets
// only that set be replaced.
ResultPath AbCommand::Options::reserve_out(const Suite &suite, const PluginSet &plugins) {
    if (no_out) return {};
    const bool resuming = !run.resume_journal.empty();
    if (!resuming && !out_path.empty()) refuse_journal_beside(out_path);
    ResultPath result_path;
    try {
        OutputRequest request;
        request.path = out_path;
        request.force = force || (resuming && ab_journal_forced(run.resume_journal));
        request.resuming = resuming;
        request.suite_path = suite_path;
        // --force never replaces what the run reads: opbench, its plugins
        // (both --plugin builds); the suite is refused by suite_path.
        request.inputs = {kRunningExecutable};
        for (const auto &p : plugins.plugins) request.inputs.push_back({p.path, "the loaded plugin " + p.name()});
        if (resuming) request.inputs.push_back({run.resume_journal, "the journal being resumed"});
        result_path = reserve_result_path(request, suite.name);
    } catch (const OutputPathError &e) {
        throw AbBadInput(e.what());
    }
    run.out_path = result_path.path();
    return result_path;
}

void AbCommand::Options::print_start(const PluginSet &plugins) const {
    std::cout << fmt::format("opbench ab: {} -> {}: {} ABBA pairs per case, {:g} ms per repetition, on CPU {}\n"
                             "  {}: {}\n  {}: {}\n",
                             run.base, run.next, run.pairs, run.half_seconds * 1e3, fmt::join(run.cpus, ","), run.base,
                             plugins.find(run.base)->path, run.next, plugins.find(run.next)->path);
    if (run.progress) std::cout << paired_console_header();
}

// The paired run and its summary; the exit status.
int AbCommand::Options::run_pairs(const Suite &suite, const PluginSet &plugins, ResultPath &result_path) const {
    PairedSummary summary;
    try {
        summary = run_paired(suite, plugins, run);
    } catch (const SuiteError &e) {
        std::cerr << printable(e.what()) << "\n";
        return kExitBadInput;
    } catch (const JournalError &e) {
        // Before anything ran (the suite changed since the interrupted run, a
        // damaged journal): bad input; a journal that cannot grow: the environment's.
        std::cerr << "opbench ab: " << printable(e.what()) << "\n";
        return e.during_run() ? exit_keeping_journal(result_path, "ab") : kExitBadInput;
    } catch (const std::exception &e) {
        std::cerr << "opbench ab: " << printable(e.what()) << "\n";
        return exit_keeping_journal(result_path, "ab");
    }
    std::cout << "\n" << paired_summary_line(summary, run);
    if (!summary.complete) std::cout << " (incomplete)";
    std::cout << "\n";
    if (summary.resumed > 0)
        std::cout << fmt::format("  {} of the {} cases were finished before the interruption (kept from the "
                                 "journal)\n",
                                 summary.resumed, summary.cases.size());
    if (!summary.out_path.empty())
        std::cout << "  result set: " << summary.out_path << " (`opbench compare` on it shows the 95% intervals)\n";
    if (!summary.complete) {
        std::cout << (summary.out_path.empty()
                          ? std::string("  incomplete: interrupted; with --no-out nothing is kept to resume\n")
                          : fmt::format("  incomplete: `opbench ab --resume {}` finishes it\n", summary.out_path));
        const int signal_status = interrupt_exit_status();
        return signal_status ? signal_status : kExitEnvironment;
    }
    return summary.failed() > 0 ? kExitFailedCases : 0;
}

std::optional<int> AbCommand::run(int argc, char **argv, const std::string &resume_journal,
                                  const Relaunch &relaunch) {
    Options &o = *o_;
    if (!*o.sub) return std::nullopt;
    try {
        if (!o.resume_from.empty()) return o.resume(argv, relaunch);
        if (o.suite_path.empty()) throw AbBadInput("a suite file is required (or --resume SET)");
        o.run.command_args = replayable_args(argc, argv, "ab");
        o.run.resume_journal = resume_journal;
        return o.run_ab();
    } catch (const AbBadInput &e) {
        std::cerr << "opbench ab: " << printable(e.what()) << "\n";
        return kExitBadInput;
    }
}

// A new run (or the relaunched command line of a resumed one): its steps in order.
int AbCommand::Options::run_ab() {
    pin_to_cpus();
    std::vector<PluginVariantSpec> specs;
    const PluginSet plugins = plugins_with_builds(specs);
    record_insecure(plugins);
    run.code_under_test = code_under_test(commit_under_test);
    choose_pair(specs, plugins);
    choose_reference(plugins);
    run.verify = *verify_mode_from_name(verify);
    run.progress = !no_progress;
    for (const auto &f : plugins.failures) std::cerr << "opbench: refused plugin " << printable(f.reason) << "\n";
    Suite suite;
    try {
        suite = load_suite(plugins);
    } catch (const SuiteError &e) {
        std::cerr << printable(e.what()) << "\n";
        return kExitBadInput;
    }
    ResultPath result_path = reserve_out(suite, plugins);
    print_start(plugins);
    return run_pairs(suite, plugins, result_path);
}

} // namespace opbench
