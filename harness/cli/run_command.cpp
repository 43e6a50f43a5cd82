#include "cli/run_command.hpp"

#include "cli/printable.hpp"
#include "cli/run_document.hpp"

#include "plugin/plugin_variant.hpp"

#include "cli/benchmark_flags.hpp"
#include "cli/cpu_list.hpp"
#include "cli/exit_codes.hpp"
#include "cli/known_backends.hpp"
#include "cli/output_path.hpp"
#include "cli/replayed_args.hpp"
#include "measure/memory_estimate.hpp"
#include "measure/settings.hpp"
#include "opbench/ops.hpp"
#include "check/verify.hpp"
#include "isolate/case_host.hpp"
#include "profile/trace.hpp"
#include "readers/archive.hpp"
#include "readers/result_set_reader.hpp"
#include "run/code_under_test.hpp"
#include "run/interrupt.hpp"
#include "run/journal.hpp"
#include "run/run_log.hpp"
#include "run/run_environment.hpp"
#include "run/runner.hpp"
#include "suite/shard.hpp"
#include "suite/suite.hpp"
#include "writers/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <iostream>
#include <set>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// Bad input found while checking the options: `what` is the whole line to
// print (already prefixed); the run exits 2.
struct BadRunInput {
    std::string what;
};

// A command-line value as the run uses it: a min_time below its floor is
// raised to it, with one warning line now (and in the result set's
// context.opbench.warnings through `warnings`).
double floored_override(const SettingInfo &info, const std::string &flag, double v,
                        std::vector<std::string> &warnings) {
    const FlooredValue used = raise_to_floor(info, v);
    if (used.warning.empty()) return v;
    const std::string line = fmt::format("{}: warning: {}", flag, used.warning);
    std::cerr << "opbench run: " << line << "\n";
    add_warning(warnings, line);
    return used.value;
}

std::vector<std::string> split_list(const std::string &s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find(',', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// What `run --resume` may change (its help says so): where cases run, how
// long one may take, the trace and the console. Every other option would
// change what the run measures, so it is refused with --resume.
constexpr std::string_view kResumeMayChange[] = {
    "--isolate", "--case-timeout", "--trace",   "--trace-schedule",         "--force",
    "--archive", "--no-progress",  "--verbose", "--allow-insecure-plugins"};
// Where the run writes: taken from the command line alone, never replayed
// from the journal's header (a damaged or planted header must not choose
// what --force replaces).
constexpr std::string_view kOutputOptions[] = {"--trace", "--trace-schedule", "--force", "--archive"};
bool resume_may_change(std::string_view name) {
    return std::find(std::begin(kResumeMayChange), std::end(kResumeMayChange), name) != std::end(kResumeMayChange);
}
bool resume_option_takes_value(std::string_view name) {
    return name == "--isolate" || name == "--case-timeout" || name == "--trace" || name == "--trace-schedule" ||
           name == "--archive";
}

// `args` without the options `changes` names (with their values), which the
// resumed run takes from the new command line instead.
std::vector<std::string> without_options(const std::vector<std::string> &args,
                                         const std::vector<std::string> &changes) {
    auto changed = [&](std::string_view a) {
        for (const auto &c : changes)
            if (c.starts_with("--") && (a == c || a.starts_with(c + "="))) return true;
        return false;
    };
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!changed(args[i])) {
            out.push_back(args[i]);
            continue;
        }
        if (resume_option_takes_value(args[i]) && args[i].find('=') == std::string::npos) ++i; // and its value
    }
    return out;
}

// The options given with --resume, as a new command line's tail: the ones
// that leave what is measured alone (with their values) replace the run's
// own; any other is refused, never ignored.
std::vector<std::string> options_resume_changes(const CLI::App &run) {
    std::vector<std::string> refused, changes;
    for (const CLI::Option *opt : run.get_options()) {
        const std::string name = opt->get_name();
        if (opt->count() == 0 || name == "--resume") continue;
        if (!resume_may_change(name)) {
            refused.push_back(name);
            continue;
        }
        changes.push_back(name);
        if (resume_option_takes_value(name)) changes.push_back(opt->results().empty() ? "" : opt->results().back());
    }
    // Google Benchmark's arguments change what is measured too (filter,
    // repetitions, min time, interleaving) or where it goes (--benchmark_out).
    for (const auto &extra : run.remaining()) refused.push_back(extra);
    if (!refused.empty())
        throw BadRunInput{fmt::format("opbench run: --resume continues the run with its own settings, and {} would "
                                      "change what it measures: drop {}, or start a new run. With --resume only "
                                      "these may change: {}",
                                      fmt::join(refused, ", "), refused.size() == 1 ? "it" : "them",
                                      fmt::join(kResumeMayChange, ", "))};
    return changes;
}

// The result set a journal belongs to: the journal's own path less
// ".journal" (journal_path_for), never the header's say.
std::string resumed_out(const std::string &journal) {
    constexpr std::string_view kSuffix = ".journal";
    if (!journal.ends_with(kSuffix))
        throw BadRunInput{fmt::format("opbench run: --resume: {} is not named <result set>.journal, so its result "
                                      "set is unknown; resume through the result set's path",
                                      journal)};
    return journal.substr(0, journal.size() - kSuffix.size());
}

// "opbench: resuming OUT (N case x backend finished) from JOURNAL": OUT is
// the set this resume writes (the journal's own name less .journal), and N
// counts each case once however often its line repeats (issue 44: a copied
// journal named another set, and a duplicated line counted twice).
std::string resume_message(const JournalContents &done, const std::string &out, const std::string &journal) {
    std::set<std::string> finished;
    for (const nlohmann::json &e : done.entries)
        if (e.contains("case") && e["case"].is_string()) finished.insert(e["case"].get<std::string>());
    std::string msg = fmt::format("opbench: resuming {} ({} case x backend finished) from {}", printable(out),
                                  finished.size(), printable(journal));
    const std::string recorded = done.header.value("out", "");
    if (!recorded.empty() && fs::path(recorded).filename() != fs::path(out).filename())
        msg += fmt::format(" (the journal was written for {})", printable(recorded));
    return msg + "\n";
}

// True when the interrupted run's own command line had --force.
bool journal_forced(const std::string &journal) {
    const nlohmann::json args = read_journal(journal).header.value("args", nlohmann::json::array());
    return std::find(args.begin(), args.end(), nlohmann::json("--force")) != args.end();
}

} // namespace

// Every option of `run` as parsed; the checks turn them into RunOptions.
struct RunCommand::Options {
    CLI::App *run = nullptr;
    CLI::Option *backends_opt = nullptr, *out_opt = nullptr;
    std::string suite_path, backends_csv, out_path, resume_from, isolate = "process", mem_limit_text;
    std::string commit_under_test; // --commit-under-test
    std::string archive_dir, shard_text, verify_mode = "fast", cpus_csv, trace_schedule;
    std::string format = "console"; // --format: what stdout carries after the run (cli/run_document.hpp)
    bool no_out = false, no_progress = false, force = false, no_reference_cache = false;
    std::vector<std::string> plugin_specs; // --plugin NAME@VARIANT=PATH
    bool list = false;                     // --list: the entry names, nothing run
    RunOptions opts;
    std::vector<CommandInput> inputs; // what no output may replace (collect_inputs)

    void add_where_options();
    void add_output_options(const std::function<void(CLI::App *)> &trust_flag);
    void add_setting_options();
    void add_check_and_profile_options();

    [[nodiscard]] int resume(char **argv, const std::string &resume_journal, const Relaunch &relaunch);
    void check_benchmark_flags();
    [[nodiscard]] Suite load_checked_suite(const PluginSet &plugins);
    void check_backends(const PluginSet &plugins);
    void check_shard(Suite &suite);
    void collect_inputs(const PluginSet &plugins, const std::string &resume_journal);
    void check_archive();
    void check_trace(const std::string &resume_journal);
    [[nodiscard]] ResultPath reserve_out(const Suite &suite, const std::string &resume_journal);
    void check_trace_schedule();
    void check_format();
    [[nodiscard]] int run_and_close(const Suite &suite, const PluginSet &plugins, ResultPath &result_path);
    [[nodiscard]] int run_and_report(const Suite &suite, const PluginSet &plugins, ResultPath &result_path);
    [[nodiscard]] int archive(const std::string &result_set);
};

RunCommand::RunCommand(CLI::App &app, const std::function<void(CLI::App *)> &trust_flag)
    : o_(std::make_unique<Options>()) {
    o_->run = app.add_subcommand("run", "run a suite: verify each case (--verify), measure, "
                                        "write a result set.\nArguments --benchmark_* go to Google Benchmark.");
    o_->add_where_options();
    o_->add_output_options(trust_flag);
    o_->add_setting_options();
    o_->add_check_and_profile_options();
    o_->run->allow_extras();
}

RunCommand::~RunCommand() = default;

bool RunCommand::chosen() const { return o_->run->parsed(); }

// The suite, --resume, and where and within what memory the cases run.
void RunCommand::Options::add_where_options() {
    // Not required here: `run --resume FILE` takes the suite from the journal.
    run->add_option("suite", suite_path, "suite TOML file (not with --resume)");
    run->add_option("--resume", resume_from,
                    "continue an interrupted run: its result set (\"complete\": false) or its .journal; the "
                    "finished cases are kept, the rest run with the same arguments. Only --isolate, "
                    "--case-timeout, --trace, --trace-schedule, --force, --archive, --no-progress, --verbose and "
                    "--allow-insecure-plugins may be given with it (they replace the run's own; the outputs "
                    "--trace, --force and --archive are never taken from the journal); any other option, "
                    "--benchmark_* included, is refused");
    run->add_option("--isolate", isolate,
                    "where cases run: 'process' (a worker process per backend: a plugin's crash, exit or hang "
                    "costs only its case) or 'none' (in opbench itself, for a debugger)")
        ->check(CLI::IsMember({"process", "none"}))
        ->capture_default_str();
    run->add_option("--mem-limit", mem_limit_text,
                    "memory a case may need at most, e.g. 8G or 512M (default: what the machine has available); "
                    "a case estimated above it is skipped, never started");
    backends_opt = run->add_option("--backends", backends_csv, "comma-separated backends, replacing the suite's lists");
}

// Where the result set goes, the trust flag, archive and shard.
void RunCommand::Options::add_output_options(const std::function<void(CLI::App *)> &trust_flag) {
    out_opt = run->add_option("--out", out_path,
                              "result set path (default results/<suite>-<UTC time>.json); an existing "
                              "file is refused unless --force");
    run->add_flag("--no-out", no_out, "write no result set")->excludes(out_opt);
    run->add_flag("--force", force, "replace an existing --out or --trace file (a regular file only)");
    trust_flag(run);
    run->add_option("--archive", archive_dir,
                    "also store the result set in this archive: DIR/<machine>/<suite>/<UTC time>-<commit>.json");
    run->add_option("--commit-under-test", commit_under_test, kCommitUnderTestHelp);
    run->add_option("--shard", shard_text,
                    "run shard i of n of the suite's cases (1/4 .. 4/4; merge with opbench merge)");
    run->add_option("--format", format,
                    "what stdout carries: console (default) the run's lines; " + run_document_formats() +
                        ": once the set is written, the table `opbench compare --by backend SET --format "
                        "FORMAT` prints (csv: its tidy records), the run's lines going to stderr")
        ->capture_default_str();
    run->add_flag("--verbose", opts.loop.verbose, "Google Benchmark's line per repetition instead of one line per case");
    run->add_flag("--list", list,
                  "print the names of the entries this run would measure (after --backends and "
                  "--benchmark_filter) and exit; nothing runs and nothing is written");
    run->add_option("--reference", opts.backend.reference, "backend whose output is the reference")->capture_default_str();
    run->add_option("--plugin", plugin_specs,
                    "one more build of a backend, as its own backend NAME@VARIANT: NAME@VARIANT=PATH (e.g. "
                    "onednn@new=build/backends/onednn/opbench-backend-onednn.so); name it in --backends")
        ->type_name("SPEC");
}

// One option per measurement setting, from the table (settings.hpp). Values
// are checked against the table's range; a bad one exits 2.
void RunCommand::Options::add_setting_options() {
    for (const SettingInfo &info : measurement_settings()) {
        const std::string help = fmt::format("{} ({}; built-in default {}; suite key `{}`)", info.help,
                                             range_text(info), default_text(info), info.key);
        auto store = [this, &info](double v) {
            v = floored_override(info, std::string(info.cli_flag), v, opts.setting_warnings);
            if (auto why = check_setting(info, v)) throw CLI::ValidationError(std::string(info.cli_flag), *why);
            opts.overrides.set(info, v);
        };
        if (const auto names = setting_value_names(info.type); !names.empty())
            run->add_option_function<std::string>(
                   std::string(info.cli_flag),
                   [store, names](const std::string &v) {
                       store(double(std::find(names.begin(), names.end(), v) - names.begin()));
                   },
                   help)
                ->check(CLI::IsMember(std::vector<std::string>(names.begin(), names.end())))
                ->type_name(std::string(info.value_name));
        else if (info.type == SettingType::integer)
            run->add_option_function<long long>(
                   std::string(info.cli_flag), [store](long long v) { store(double(v)); }, help)
                ->type_name(std::string(info.value_name));
        else
            run->add_option_function<double>(std::string(info.cli_flag), store, help)
                ->type_name(std::string(info.value_name));
    }
}

namespace {
// The ops with a check of their own for --verify fast, from the op table:
// "a, b".
std::string ops_with_fast_check() {
    std::vector<std::string> names;
    for (const OpInfo &row : kOps)
        if (row.fast_check) names.push_back(row.name);
    return fmt::format("{}", fmt::join(names, ", "));
}
} // namespace

// Verification, the console, pinning, profiling and tracing.
void RunCommand::Options::add_check_and_profile_options() {
    run->add_option("--verify", verify_mode,
                    fmt::format("how each case's output is checked before it is timed: full (against the reference "
                                "backend on the whole case; references kept in the cache dir), fast ({}: a check of "
                                "the output alone, e.g. Freivalds', and the reference never runs; other ops in "
                                "full), off (nothing checked: entries are marked unverified)",
                                ops_with_fast_check()))
        ->check(CLI::IsMember({"full", "fast", "off"}))
        ->capture_default_str();
    run->add_flag("--no-reference-cache", no_reference_cache,
                  "--verify full: compute every reference, neither reading nor writing the on-disk cache");
    run->add_flag("--no-progress", no_progress, "no progress lines on a terminal");
    run->add_option("--cpus", cpus_csv,
                    "pin opbench and its backends' threads to these CPUs, as taskset -c writes them (0-3,6)");
    run->add_flag("--profile", opts.profile.hot_path,
                  "record where the time goes (docs/profiling.md): hot-path table per case x backend, top "
                  "scopes, `profile` arrays; recorded samples are left out of the timings");
    run->add_option("--trace", opts.profile.trace_path,
                    "write a Chrome trace (Perfetto, chrome://tracing, speedscope) of the recorded samples")
        ->type_name("FILE");
    run->add_option("--trace-schedule", trace_schedule,
                    "which samples of each case x backend --profile/--trace record, as the PyTorch profiler: "
                    "wait=N,warmup=N,active=N,repeat=N[,skip_first=N] (default " +
                        to_string(TraceSchedule{}) + ")")
        ->type_name("SPEC");
}

std::optional<int> RunCommand::add_plugin_builds(PluginSet &plugins, bool allow_insecure) {
    if (!chosen()) return std::nullopt;
    // The same trust and ABI checks as any plugin; refused: bad input.
    try {
        const std::vector<PluginVariantSpec> specs = plugin_builds(o_->suite_path, o_->plugin_specs);
        if (specs.empty()) return std::nullopt;
        add_plugin_variants(plugins, specs, allow_insecure);
    } catch (const PluginSpecError &e) {
        std::cerr << "opbench run: " << printable(e.what()) << "\n";
        return kExitBadInput;
    }
    return std::nullopt;
}

std::optional<int> RunCommand::pin_cpus() {
    if (!chosen() || o_->run->count("--cpus") == 0) return std::nullopt;
    try {
        o_->opts.cpus = parse_cpu_list(o_->cpus_csv);
        pin_process_to_cpus(o_->opts.cpus);
    } catch (const std::exception &e) { // std::invalid_argument from the list, or the kernel's refusal
        std::cerr << "opbench run: --cpus: " << printable(e.what()) << "\n";
        return kExitBadInput;
    }
    return std::nullopt;
}

// --resume: the journal's command line, with the options given now that may
// change, run again from the first run's directory.
int RunCommand::Options::resume(char **argv, const std::string &resume_journal, const Relaunch &relaunch) {
    if (!resume_journal.empty() || !suite_path.empty())
        throw BadRunInput{"opbench run: --resume takes the interrupted run's suite and arguments from its journal: "
                          "give no suite file with it"};
    const std::vector<std::string> changes = options_resume_changes(*run);
    try {
        if (fs::is_directory(resume_from))
            throw BadRunInput{fmt::format("opbench run: --resume {}: is a directory; give the interrupted run's "
                                          "result set or its .journal",
                                          resume_from)};
        const std::string journal = fs::absolute(journal_to_resume(resume_from)).string();
        if (journal_is_live(journal))
            throw BadRunInput{fmt::format("opbench run: --resume {}: a run still going holds its journal {}; it is "
                                          "not interrupted: wait for it to finish",
                                          resume_from, journal)};
        const JournalContents done = read_journal(journal);
        const nlohmann::json &h = done.header;
        // An `opbench ab` run's journal: `ab --resume` finishes it.
        if (h.value("command", std::string("run")) == "ab") {
            std::vector<std::string> as_ab = {argv[0], "ab", "--resume", resume_from};
            as_ab.insert(as_ab.end(), changes.begin(), changes.end());
            return relaunch(std::move(as_ab), "");
        }
        std::vector<std::string> args = {argv[0], "run"};
        std::vector<std::string> recorded, dropped(changes);
        for (const auto &a : h.at("args")) recorded.push_back(a.get<std::string>());
        dropped.insert(dropped.end(), std::begin(kOutputOptions), std::end(kOutputOptions));
        for (auto &a : without_options(recorded, dropped)) args.push_back(std::move(a));
        args.insert(args.end(), changes.begin(), changes.end());
        args.push_back("--out");
        args.push_back(resumed_out(journal));
        // Relative paths in the arguments meant the first run's directory.
        std::error_code ec;
        fs::current_path(h.at("cwd").get<std::string>(), ec);
        if (ec)
            throw JournalError(fmt::format("{}: cannot return to the run's directory {}: {}", journal,
                                           h.at("cwd").get<std::string>(), ec.message()));
        std::cerr << resume_message(done, resumed_out(journal), journal);
        return relaunch(std::move(args), journal);
    } catch (const JournalError &e) {
        throw BadRunInput{fmt::format("opbench run: --resume: {}", e.what())};
    } catch (const nlohmann::json::exception &e) {
        throw BadRunInput{
            fmt::format("opbench run: --resume: the journal's first line lacks what a resume needs ({})", e.what())};
    }
}

// Google Benchmark's arguments: only --benchmark_* ones are extras, and its
// min time and repetitions mean opbench's own settings (each repetition is
// one adaptive measurement by opbench).
void RunCommand::Options::check_benchmark_flags() {
    for (const auto &extra : run->remaining())
        if (extra.rfind("--benchmark_", 0) != 0)
            throw BadRunInput{fmt::format("opbench run: unknown argument '{}' (opbench's options are listed by "
                                          "--help; Google Benchmark's start with --benchmark_)",
                                          extra)};
    try {
        BenchmarkFlags flags = sort_benchmark_flags(run->remaining());
        for (auto [value, key] :
             {std::pair{flags.min_time, "min_time"},
              std::pair{flags.repetitions ? std::optional<double>(*flags.repetitions) : std::nullopt, "repetitions"}}) {
            if (!value) continue;
            const SettingInfo &info = *find_setting(key);
            *value = floored_override(info, fmt::format("--benchmark_{}", key), *value, opts.setting_warnings);
            if (auto why = check_setting(info, *value))
                throw BenchmarkFlagError(fmt::format("--benchmark_{}: {} ({})", key, *why, range_text(info)));
            opts.overrides.set(info, *value);
        }
        opts.loop.benchmark_args = std::move(flags.pass_through);
    } catch (const BenchmarkFlagError &e) {
        throw BadRunInput{fmt::format("opbench run: {}", e.what())};
    }
}

// The suite file, parsed against the backends known here; its warnings are
// printed and kept for the result set.
Suite RunCommand::Options::load_checked_suite(const PluginSet &plugins) {
    Suite suite;
    try {
        suite = load_suite_file(suite_path, SuiteOptions{known_backends(plugins)});
    } catch (const SuiteError &e) {
        throw BadRunInput{e.what()};
    }
    for (const auto &w : suite.warnings) {
        std::cerr << w << "\n";
        add_warning(opts.setting_warnings, w);
    }
    return suite;
}

// --backends names known backends, and the reference backend is loaded.
void RunCommand::Options::check_backends(const PluginSet &plugins) {
    if (backends_opt->count() > 0) {
        opts.backends = split_list(backends_csv);
        const auto known = known_backends(plugins);
        if (opts.backends.empty())
            throw BadRunInput{fmt::format("opbench run: --backends names no backend (known: {}); leave it out to run "
                                          "each case's own list",
                                          fmt::join(known, ", "))};
        for (const auto &b : opts.backends)
            if (std::find(known.begin(), known.end(), b) == known.end())
                throw BadRunInput{fmt::format("opbench run: --backends: unknown backend '{}' (known: {})", b,
                                              fmt::join(known, ", "))};
    }
    if (!plugins.find(opts.backend.reference))
        throw BadRunInput{fmt::format("opbench run: the reference backend '{}' is not loaded (loaded: {}); every "
                                      "case is verified against it: build it (-Dnaive=enabled) or choose --reference",
                                      opts.backend.reference, fmt::join(plugins.names(), ", "))};
}

void RunCommand::Options::check_shard(Suite &suite) {
    if (run->count("--shard") == 0) return; // given empty is an error, not "no shard"
    try {
        opts.shard = parse_shard(shard_text);
        shard_suite(suite, *opts.shard);
    } catch (const std::invalid_argument &e) {
        throw BadRunInput{fmt::format("opbench run: {}", e.what())};
    }
}

// The trace follows --out's rule, checked now, not after the run: never the
// suite, a result set or journal, a device, directory or FIFO, and an
// existing file only with --force.
void RunCommand::Options::check_trace(const std::string &resume_journal) {
    if (run->count("--trace") == 0) return;
    OutputFile trace{"--trace", opts.profile.trace_path, force, {suite_path}, {}, {}};
    if (!resume_journal.empty()) trace.inputs.push_back(resume_journal);
    // Before --out is reserved (a refused trace leaves nothing behind); a
    // default --out is a fresh name no trace can hold.
    if (!no_out && !out_path.empty())
        trace.other_outputs = {{"--out", out_path}, {"the run's journal", journal_path_for(out_path)}};
    try {
        check_not_an_input("--trace", trace.path, inputs, {archive_dir});
        check_output_file(trace);
    } catch (const OutputPathError &e) {
        throw BadRunInput{fmt::format("opbench run: {}", e.what())};
    }
}

// Checked and reserved before the first case runs, so no run ends in "cannot
// write". The finished (or interrupted) result set is renamed over this very
// path; a resumed run may replace its own incomplete set.
ResultPath RunCommand::Options::reserve_out(const Suite &suite, const std::string &resume_journal) {
    ResultPath result_path;
    if (no_out) return result_path;
    if (out_opt->count() > 0 && out_path.empty())
        throw BadRunInput{"opbench run: --out is empty; give a file name, or --no-out"};
    try {
        OutputRequest request;
        request.path = out_path;
        // Resumed, the first run's --force still lets its own set be
        // replaced, but only that: it is not replayed (kOutputOptions).
        request.force = force || (!resume_journal.empty() && journal_forced(resume_journal));
        request.suite_path = suite_path;
        request.resuming = !resume_journal.empty();
        request.inputs = inputs;
        request.input_dirs = {archive_dir};
        result_path = reserve_result_path(request, suite.name);
    } catch (const OutputPathError &e) {
        throw BadRunInput{fmt::format("opbench run: {}", e.what())};
    }
    opts.log.out_path = result_path.path();
    return result_path;
}

// The files the run reads, which --force never replaces: opbench itself,
// every loaded plugin (--plugin builds included) and, resuming, the
// journal.
void RunCommand::Options::collect_inputs(const PluginSet &plugins, const std::string &resume_journal) {
    // (The suite is refused by --out's and --trace's own checks.)
    inputs = {kRunningExecutable};
    for (const auto &p : plugins.plugins) inputs.push_back({p.path, "the loaded plugin " + p.name()});
    if (!resume_journal.empty()) inputs.push_back({resume_journal, "the journal being resumed"});
}

// --archive is checked before the first case, not after the whole run.
void RunCommand::Options::check_archive() {
    if (archive_dir.empty()) return;
    if (no_out) throw BadRunInput{"opbench run: --archive stores the result set, so it cannot go with --no-out"};
    std::error_code ec;
    const fs::file_status st = fs::status(archive_dir, ec);
    if (fs::exists(st) && !fs::is_directory(st))
        throw BadRunInput{fmt::format("opbench run: --archive {}: is not a directory; --archive takes the archive's "
                                      "directory (created if missing)",
                                      archive_dir)};
}

void RunCommand::Options::check_trace_schedule() {
    if (trace_schedule.empty()) return;
    if (!opts.profile.enabled())
        throw BadRunInput{"opbench run: --trace-schedule chooses what --profile or --trace records; give one of them"};
    try {
        opts.profile.schedule = parse_trace_schedule(trace_schedule);
    } catch (const ScheduleError &e) {
        throw BadRunInput{fmt::format("opbench run: {}", e.what())};
    }
}

int RunCommand::run(const PluginSet &plugins, int argc, char **argv, const std::string &resume_journal,
                    const Relaunch &relaunch) {
    Options &o = *o_;
    try {
        if (!o.resume_from.empty()) return o.resume(argv, resume_journal, relaunch);
        if (o.suite_path.empty()) throw BadRunInput{"opbench run: a suite file is required (or --resume FILE)"};
        o.opts.backend.isolation = *isolation_from_name(o.isolate);
        // In opbench's own process a hung call cannot be cut safely (no
        // worker to kill): refuse rather than ignore the timeout silently.
        if (o.opts.backend.isolation == Isolation::none && o.run->count("--case-timeout") > 0)
            throw BadRunInput{"opbench run: --case-timeout cannot hold under --isolate none: a call in opbench's own "
                              "process cannot be stopped safely; use --isolate process (the default) for a timeout, "
                              "or drop --case-timeout"};
        if (o.run->count("--mem-limit") > 0) { // given empty is an error, not "no limit"
            o.opts.loop.mem_limit = parse_memory_size(o.mem_limit_text);
            if (!o.opts.loop.mem_limit)
                throw BadRunInput{fmt::format("opbench run: --mem-limit: '{}' is not a size (a number with K, M, G "
                                              "or T, e.g. 8G)",
                                              o.mem_limit_text)};
        }
        o.opts.log.command_args = replayable_args(argc, argv, "run");
        o.opts.log.resume_journal = resume_journal;
        print_refused(plugins);
        print_insecure_allowed(plugins);
        if (plugins.allow_insecure) o.opts.insecure_plugins_allowed = plugins.insecure_loaded;
        o.opts.code_under_test = code_under_test(o.commit_under_test);
        o.check_benchmark_flags();
        Suite suite = o.load_checked_suite(plugins);
        o.check_backends(plugins);
        o.check_shard(suite);
        std::vector<std::string> names; // a filter that matches nothing is bad input, before any work
        try {
            names = entry_names(suite, o.opts);
        } catch (const SuiteError &e) {
            throw BadRunInput{fmt::format("opbench run: {}", e.what())};
        }
        if (o.list) {
            for (const std::string &name : names) std::cout << name << "\n";
            return 0;
        }
        o.check_archive();
        o.check_format();
        o.collect_inputs(plugins, resume_journal);
        o.check_trace(resume_journal);
        ResultPath result_path = o.reserve_out(suite, resume_journal);
        o.opts.loop.progress = !o.no_progress;
        o.check_trace_schedule();
        o.opts.backend.verify = *verify_mode_from_name(o.verify_mode); // CLI11 checked the name
        o.opts.backend.reference_store = !o.no_reference_cache;
        return o.run_and_report(suite, plugins, result_path);
    } catch (const BadRunInput &e) {
        std::cerr << printable(e.what) << "\n";
        return kExitBadInput;
    }
}

// A --format other than console prints the written set's document.
void RunCommand::Options::check_format() {
    if (format == "console") return;
    if (const std::string problem = run_format_problem(format); !problem.empty())
        throw BadRunInput{"opbench run: " + problem};
    if (no_out)
        throw BadRunInput{fmt::format("opbench run: --format {} prints the result set's table, so it cannot go with "
                                      "--no-out",
                                      format)};
}

// The run, its closing line, --archive, and the --format document.
int RunCommand::Options::run_and_report(const Suite &suite, const PluginSet &plugins, ResultPath &result_path) {
    std::optional<StdoutToStderr> console_on_stderr;
    if (format != "console") console_on_stderr.emplace();
    const int rc = run_and_close(suite, plugins, result_path);
    console_on_stderr.reset();
    if (format == "console" || (rc != 0 && rc != kExitFailedCases) || opts.log.out_path.empty()) return rc;
    const int printed = print_run_document(opts.log.out_path, format, opts.backend.reference);
    return printed != 0 ? printed : rc;
}

// The run, its closing line, and --archive.
int RunCommand::Options::run_and_close(const Suite &suite, const PluginSet &plugins, ResultPath &result_path) {
    RunSummary summary;
    try {
        summary = run_suite(suite, plugins, opts);
    } catch (const SuiteError &e) {
        throw BadRunInput{e.what()};
    } catch (const JournalError &e) {
        // Bad input (another run's journal, a damaged one) before anything
        // ran; a journal that cannot be appended to is the environment's.
        if (!e.during_run()) throw BadRunInput{fmt::format("opbench run: {}", e.what())};
        std::cerr << "opbench run: " << printable(e.what()) << "\n";
        return exit_keeping_journal(result_path, "run");
    } catch (const std::exception &e) {
        std::cerr << "opbench run: " << printable(e.what()) << "\n";
        return exit_keeping_journal(result_path, "run");
    }
    std::cout << "\n" << summary_line(summary) << "\n";
    if (!summary.out_path.empty()) std::cout << "  result set: " << summary.out_path << "\n";
    // Incomplete: interrupted by a signal, or (no signal) a case the run was
    // asked for has no entries (runner.cpp's every_case_logged, which says why).
    const int signal_status = interrupt_exit_status();
    if (!summary.complete)
        std::cout << fmt::format("  incomplete: {}; `opbench run --resume {}` finishes it\n",
                                 signal_status ? "interrupted" : "cases without entries",
                                 summary.out_path.empty() ? std::string("<result set>") : summary.out_path);
    for (const auto &e : summary.output_errors) std::cerr << "opbench run: " << e << "\n";
    if (!summary.complete) return signal_status ? signal_status : kExitEnvironment;
    if (!summary.output_errors.empty()) return kExitEnvironment;
    if (!archive_dir.empty()) {
        if (const int rc = archive(summary.out_path); rc != 0) return rc;
    }
    return summary.failed > 0 ? kExitFailedCases : 0;
}

int RunCommand::Options::archive(const std::string &result_set) {
    try {
        const ArchiveEntry e = archive_store(archive_dir, read_result_set(result_set));
        std::cout << "opbench: archived -> " << (fs::path(archive_dir) / e.path).string() << "\n";
    } catch (const std::exception &e) {
        std::cerr << "opbench run: --archive: " << printable(e.what()) << "\n";
        return kExitEnvironment;
    }
    return 0;
}

} // namespace opbench
