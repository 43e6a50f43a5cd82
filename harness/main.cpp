// opbench: the command-line program. Each subcommand is a small function;
// the work lives in the harness modules.
#include "readers/analyze.hpp"
#include "readers/archive.hpp"
#include "cli/benchmark_flags.hpp"
#include "build_config.hpp"
#include "isolate/case_host.hpp"
#include "run/context.hpp"
#include "plugin/backend_facts.hpp"
#include "cli/cpu_list.hpp"
#include "git_version.hpp"
#include "run/interrupt.hpp"
#include "run/journal.hpp"
#include "machine/machine.hpp"
#include "measure/memory_estimate.hpp"
#include "cli/output_path.hpp"
#include "plugin/plugin_loader.hpp"
#include "cli/reader_commands.hpp"
#include "cli/ab_command.hpp"
#include "plugin/plugin_variant.hpp"
#include "entry/results.hpp"
#include "run/run_environment.hpp"
#include "run/run_log.hpp"
#include "run/runner.hpp"
#include "measure/settings.hpp"
#include "suite/suite.hpp"
#include "writers/writer.hpp"
#include "opbench/ops.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

namespace fs = std::filesystem;
using namespace opbench;

namespace {

// Exit codes: 0 all good, 1 a case failed verification or execution,
// 2 bad input (usage, suite), 3 an environment problem (output not writable).
constexpr int kExitFailedCases = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitEnvironment = 3;

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

// Names a suite may use as backends: the design's three plus every plugin
// found or refused by name, so a typo is caught while an unbuilt or refused
// backend is merely skipped (with the loader's reason).
std::vector<std::string> known_backends(const PluginSet &plugins) {
    std::set<std::string> names = {"naive", "onednn", "cuda"};
    for (const auto &n : plugins.names_with_refused()) names.insert(n);
    return {names.begin(), names.end()};
}

void print_refused(const PluginSet &plugins) {
    for (const auto &f : plugins.failures) std::cerr << "opbench: refused plugin " << f.reason << "\n";
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

// suites/ of the source tree, else ./suites.
fs::path suites_dir() {
    fs::path src = fs::path(OPBENCH_SOURCE_ROOT) / "suites";
    std::error_code ec;
    if (fs::is_directory(src, ec)) return src;
    return fs::current_path() / "suites";
}

int cmd_list(const PluginSet &plugins) {
    std::cout << "opbench " << OPBENCH_VERSION << " (" << OPBENCH_GIT_COMMIT << "), plugin ABI "
              << OPB_ABI_VERSION_MAJOR << "." << OPB_ABI_VERSION_MINOR << "\n\nBackends:\n";
    if (plugins.plugins.empty()) std::cout << "  (none found; set OPBENCH_PLUGIN_PATH)\n";
    for (const auto &p : plugins.plugins) {
        BackendInstance be(p);
        nlohmann::json ctx = backend_context(be, &p);
        std::cout << fmt::format("  {:<10} {:<8} {}\n", p.name(), ctx["version"].get<std::string>(),
                                 be.usable() ? "usable" : "NOT usable: " + be.unusable_reason());
        std::cout << fmt::format("  {:<10} {}\n", "", ctx["description"].get<std::string>());
        if (!ctx["library_versions"].get<std::string>().empty())
            std::cout << fmt::format("  {:<10} libraries: {}\n", "", ctx["library_versions"].get<std::string>());
        if (ctx.contains("device"))
            std::cout << fmt::format("  {:<10} device: {} ({})\n", "", ctx["device"]["name"].get<std::string>(),
                                     ctx["device"]["kind"].get<std::string>());
        if (ctx.contains("info"))
            for (const auto &[k, v] : ctx["info"].items())
                std::cout << fmt::format("  {:<10} {}: {}\n", "", k, v.get<std::string>());
        std::cout << fmt::format("  {:<10} from {}\n", "", p.path);
    }
    for (const auto &f : plugins.failures) std::cout << "  refused: " << f.reason << "\n";
    for (const auto &f : plugins.ignored)
        std::cout << "  ignored: " << f << " (plugin directories load only opbench-backend-*.so files)\n";

    std::cout << "\nOps (dtypes: f32, bf16, f16):\n";
    for (const OpInfo &row : kOps) {
        auto variants = variant_names(row.op);
        std::cout << fmt::format("  {:<10} variants: {}\n", row.name, fmt::join(variants, ", "));
    }

    std::cout << "\nSuites (" << suites_dir().string() << "):\n";
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(suites_dir(), ec))
        if (e.path().extension() == ".toml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    SuiteOptions so{known_backends(plugins)};
    for (const auto &f : files) {
        try {
            Suite s = load_suite_file(f.string(), so);
            const std::string workloads = s.workloads.empty() ? "" : fmt::format(", {} workloads", s.workloads.size());
            std::cout << fmt::format("  {:<26} {:>4} cases{}  {}\n", f.filename().string(), s.cases.size(), workloads,
                                     s.description);
        } catch (const SuiteError &e) {
            std::cout << fmt::format("  {:<26} INVALID: {}\n", f.filename().string(), e.what());
        }
    }
    return 0;
}

int cmd_validate(const std::vector<std::string> &paths, const PluginSet &plugins) {
    SuiteOptions so{known_backends(plugins)};
    int rc = 0;
    for (const auto &path : paths) {
        try {
            Suite s = load_suite_file(path, so);
            for (const auto &w : s.warnings) std::cerr << w << "\n"; // used, not refused: still ok
            check_unique_names(s.cases);
            std::size_t runs = 0;
            std::set<std::string> ops;
            for (const auto &c : s.cases) {
                runs += c.backends.size();
                ops.insert(std::string(op_name(c.desc.op)));
            }
            std::cout << fmt::format("{}: ok: suite '{}', {} cases ({} case x backend runs), ops: {}\n", path, s.name,
                                     s.cases.size(), runs, fmt::join(ops, ", "));
            // Workloads: one entry per phase x backend.
            for (const auto &w : s.workloads)
                std::cout << fmt::format("  workload {} '{}': hidden {}, layers {}, prompt {}, generate {}; "
                                         "phases {}, {} phase x backend runs\n",
                                         w.kind, w.name, w.decoder.hidden, w.decoder.layers, w.decoder.prompt,
                                         w.decoder.generate, w.phases.size(), w.phases.size() * w.backends.size());
        } catch (const SuiteError &e) {
            std::cerr << e.what() << "\n";
            rc = kExitBadInput;
        }
    }
    return rc;
}

int cmd_machine(bool refresh) {
    CachedMachinePeaks c = load_or_measure(refresh);
    const MachinePeaks &p = c.peaks;
    std::cout << fmt::format("{} ({} cores), {} {}\n", p.cpu_model, p.cores,
                             c.from_cache ? "cached figures from" : "measured now, cached in", c.path.string());
    std::cout << fmt::format("measured {} in {:.1f} s; f32 kernel: {}\n\n", p.measured_at, p.measure_seconds,
                             p.fma_isa);
    std::cout << fmt::format("{:>8} {:>14} {:>14} {:>12} {:>12}\n", "threads", "f32 GFLOP/s", "bf16 GFLOP/s",
                             "triad GB/s", "copy GB/s");
    for (const ThreadPeaks &t : {p.one_thread, p.all_threads})
        std::cout << fmt::format("{:>8} {:>14.1f} {:>14} {:>12.1f} {:>12.1f}\n", t.threads, t.f32_gflops,
                                 p.has_bf16 ? fmt::format("{:.1f}", t.bf16_gflops) : std::string("-"), t.triad_gbps,
                                 t.copy_gbps);
    if (!p.notes.empty()) std::cout << "\nnotes: " << p.notes << "\n";
    if (!c.warning.empty()) std::cerr << "opbench machine: warning: " << c.warning << "\n";
    return 0;
}

// An environment failure during a run (a full disk): exit 3, keeping the
// result set's reservation and the journal of what finished, so the printed
// command resumes it once the cause is fixed.
int exit_keeping_journal(ResultPath &result_path) {
    if (!result_path.path().empty() && fs::exists(journal_path_for(result_path.path()))) {
        result_path.keep();
        std::cerr << fmt::format("opbench run: the finished cases are kept in {}; once the cause is fixed, "
                                 "`opbench run --resume {}` finishes the run\n",
                                 journal_path_for(result_path.path()), result_path.path());
    }
    return kExitEnvironment;
}

// What `run --resume` may change (its help says so): where cases run, how
// long one may take, the trace and the console. Every other option would
// change what the run measures, so it is refused with --resume.
constexpr std::string_view kResumeMayChange[] = {
    "--isolate", "--case-timeout", "--trace",   "--trace-schedule",
    "--force",   "--no-progress",  "--verbose", "--allow-insecure-plugins"};
bool resume_may_change(std::string_view name) {
    return std::find(std::begin(kResumeMayChange), std::end(kResumeMayChange), name) != std::end(kResumeMayChange);
}
bool resume_option_takes_value(std::string_view name) {
    return name == "--isolate" || name == "--case-timeout" || name == "--trace" || name == "--trace-schedule";
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

// The arguments of `run` that --resume replays: everything after `run`
// except where the result set goes (the journal says that) and --resume.
std::vector<std::string> replayable_run_args(int argc, char **argv) {
    std::vector<std::string> out;
    int i = 1;
    while (i < argc && std::string_view(argv[i]) != "run") ++i;
    for (++i; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--out" || a == "--resume") {
            ++i; // and its value
            continue;
        }
        if (a.rfind("--out=", 0) == 0 || a.rfind("--resume=", 0) == 0 || a == "--no-out") continue;
        out.emplace_back(a);
    }
    return out;
}

int run_cli(int argc, char **argv, const std::string &resume_journal) {
    CLI::App app{"opbench: benchmark transformer ops on interchangeable backends.\n"
                 "Backends are plugins found in the build tree, the install dir and OPBENCH_PLUGIN_PATH."};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(OPBENCH_VERSION) + " (" + OPBENCH_GIT_COMMIT + ")");

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

    auto *run = app.add_subcommand("run", "run a suite: verify each case (--verify), measure, "
                                          "write a result set.\nArguments --benchmark_* go to Google Benchmark.");
    std::string suite_path, backends_csv, out_path;
    RunOptions opts;
    bool no_out = false, no_progress = false, force = false;
    // Not required here: `run --resume FILE` takes the suite from the journal.
    run->add_option("suite", suite_path, "suite TOML file (not with --resume)");
    std::string resume_from, isolate = "process", mem_limit_text;
    run->add_option("--resume", resume_from,
                    "continue an interrupted run: its result set (\"complete\": false) or its .journal; the "
                    "finished cases are kept, the rest run with the same arguments. Only --isolate, "
                    "--case-timeout, --trace, --trace-schedule, --force, --no-progress, --verbose and "
                    "--allow-insecure-plugins may be given with it (they replace the run's own); any other "
                    "option is refused");
    run->add_option("--isolate", isolate,
                    "where cases run: 'process' (a worker process per backend: a plugin's crash, exit or hang "
                    "costs only its case) or 'none' (in opbench itself, for a debugger)")
        ->check(CLI::IsMember({"process", "none"}))
        ->capture_default_str();
    run->add_option("--mem-limit", mem_limit_text,
                    "memory a case may need at most, e.g. 8G or 512M (default: what the machine has available); "
                    "a case estimated above it is skipped, never started");
    auto *backends_opt =
        run->add_option("--backends", backends_csv, "comma-separated backends, replacing the suite's lists");
    auto *out_opt = run->add_option("--out", out_path,
                                    "result set path (default results/<suite>-<UTC time>.json); an existing "
                                    "file is refused unless --force");
    run->add_flag("--no-out", no_out, "write no result set")->excludes(out_opt);
    run->add_flag("--force", force, "replace an existing --out or --trace file (a regular file only)");
    add_trust_flag(run);
    std::string archive_dir, shard_text;
    run->add_option("--archive", archive_dir,
                    "also store the result set in this archive: DIR/<machine>/<suite>/<UTC time>-<commit>.json");
    run->add_option("--shard", shard_text,
                    "run shard i of n of the suite's cases (1/4 .. 4/4; merge with opbench merge)");
    run->add_flag("--verbose", opts.verbose, "Google Benchmark's line per repetition instead of one line per case");
    run->add_option("--reference", opts.reference, "backend whose output is the reference")->capture_default_str();
    std::vector<std::string> plugin_specs;
    run->add_option("--plugin", plugin_specs,
                    "one more build of a backend, as its own backend NAME@VARIANT: NAME@VARIANT=PATH (e.g. "
                    "onednn@new=build/backends/onednn/opbench-backend-onednn.so); name it in --backends")
        ->type_name("SPEC");
    // One option per measurement setting, from the table (settings.hpp).
    // Values are checked against the table's range; a bad one exits 2.
    for (const SettingInfo &info : measurement_settings()) {
        const std::string help = fmt::format("{} ({}; built-in default {}; suite key `{}`)", info.help,
                                             range_text(info), default_text(info), info.key);
        auto store = [&opts, &info](double v) {
            v = floored_override(info, std::string(info.cli_flag), v, opts.setting_warnings);
            if (auto why = check_setting(info, v)) throw CLI::ValidationError(std::string(info.cli_flag), *why);
            opts.overrides.set(info, v);
        };
        if (info.type == SettingType::cache)
            run->add_option_function<std::string>(
                   std::string(info.cli_flag), [store](const std::string &v) { store(v == "cold" ? 1.0 : 0.0); }, help)
                ->check(CLI::IsMember({"warm", "cold"}))
                ->type_name(std::string(info.value_name));
        else if (info.type == SettingType::integer)
            run->add_option_function<long long>(
                   std::string(info.cli_flag), [store](long long v) { store(double(v)); }, help)
                ->type_name(std::string(info.value_name));
        else
            run->add_option_function<double>(std::string(info.cli_flag), store, help)
                ->type_name(std::string(info.value_name));
    }
    std::string verify_mode = "fast";
    run->add_option("--verify", verify_mode,
                    "how each case's output is checked before it is timed: full (against the reference backend "
                    "on the whole case; references kept in the cache dir), fast (matmul: Freivalds' check, "
                    "attention: exact rows on a sample, other ops in full; the reference never runs for matmul "
                    "and attention), off (nothing checked: entries are marked unverified)")
        ->check(CLI::IsMember({"full", "fast", "off"}))
        ->capture_default_str();
    bool no_reference_cache = false;
    run->add_flag("--no-reference-cache", no_reference_cache,
                  "--verify full: compute every reference, neither reading nor writing the on-disk cache");
    run->add_flag("--no-progress", no_progress, "no progress lines on a terminal");
    std::string cpus_csv;
    run->add_option("--cpus", cpus_csv,
                    "pin opbench and its backends' threads to these CPUs, as taskset -c writes them (0-3,6)");
    run->add_flag("--profile", opts.profile.hot_path,
                  "record where the time goes (docs/profiling.md): hot-path table per case x backend, top "
                  "scopes, `profile` arrays; recorded samples are left out of the timings");
    run->add_option("--trace", opts.profile.trace_path,
                    "write a Chrome trace (Perfetto, chrome://tracing, speedscope) of the recorded samples")
        ->type_name("FILE");
    std::string trace_schedule;
    run->add_option("--trace-schedule", trace_schedule,
                    "which samples of each case x backend --profile/--trace record, as the PyTorch profiler: "
                    "wait=N,warmup=N,active=N,repeat=N[,skip_first=N] (default " +
                        to_string(TraceSchedule{}) + ")")
        ->type_name("SPEC");
    run->allow_extras();

    auto *machine = app.add_subcommand("machine", "measure this machine's peak FLOP/s and memory bandwidth "
                                                  "(cached per machine; used for rooflines)");
    bool refresh = false;
    machine->add_flag("--refresh", refresh, "measure again even if cached");

    auto *analyze = app.add_subcommand("analyze", "rank a result set's bottlenecks (kind, severity, suggestion; "
                                                  "attention's components when profiled); loads no plugin");
    std::string analyze_path;
    std::size_t analyze_top = 20;
    analyze->add_option("result_set", analyze_path, "result set JSON written by `opbench run`")->required();
    analyze->add_option("--top", analyze_top, "show this many cases")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);

    // compare, report, history, merge, archive: they read result sets and
    // return before any plugin is loaded.
    ReaderCommands readers(app);
    AbCommand ab(app); // paired A/B runs: loads its own plugins

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version exit 0; a usage error is bad input (2).
        return app.exit(e) == 0 ? 0 : kExitBadInput;
    }
    if (*analyze) return cmd_analyze(analyze_path, analyze_top, std::cout, std::cerr);
    if (std::optional<int> rc = readers.run()) return *rc;
    if (std::optional<int> rc = ab.run()) return *rc;

    // Pinning must precede plugin loading: OpenMP runtimes read the mask at load.
    if (*run && run->count("--cpus") > 0) {
        try {
            opts.cpus = parse_cpu_list(cpus_csv);
        } catch (const std::invalid_argument &e) {
            std::cerr << "opbench run: --cpus: " << e.what() << "\n";
            return kExitBadInput;
        }
        try {
            pin_process_to_cpus(opts.cpus);
        } catch (const std::exception &e) {
            std::cerr << "opbench run: --cpus: " << e.what() << "\n";
            return kExitBadInput;
        }
    }

    PluginSet plugins = discover_plugins(default_plugin_search_paths(), DiscoverOptions{allow_insecure_plugins});
    if (*run) { // builds named by --plugin: the same trust and ABI checks, bad input when refused
        try {
            std::vector<PluginVariantSpec> specs;
            for (const auto &text : plugin_specs) specs.push_back(parse_plugin_spec(text));
            add_plugin_variants(plugins, specs, allow_insecure_plugins);
        } catch (const PluginSpecError &e) {
            std::cerr << "opbench run: " << e.what() << "\n";
            return kExitBadInput;
        }
    }

    if (*list) return cmd_list(plugins);
    if (*validate) {
        print_refused(plugins);
        return cmd_validate(validate_paths, plugins);
    }
    if (*machine) return cmd_machine(refresh);

    // run
    if (!resume_from.empty()) {
        if (!resume_journal.empty() || !suite_path.empty()) {
            std::cerr << "opbench run: --resume takes the interrupted run's suite and arguments from its journal: "
                         "give no suite file with it\n";
            return kExitBadInput;
        }
        // Options given with --resume: the ones that leave what is measured
        // alone replace the run's own; any other is refused, never ignored.
        std::vector<std::string> refused, changes;
        for (const CLI::Option *opt : run->get_options()) {
            const std::string name = opt->get_name();
            if (opt->count() == 0 || name == "--resume") continue;
            if (!resume_may_change(name)) {
                refused.push_back(name);
                continue;
            }
            changes.push_back(name);
            if (resume_option_takes_value(name)) changes.push_back(opt->results().empty() ? "" : opt->results().back());
        }
        if (!refused.empty()) {
            std::cerr << fmt::format("opbench run: --resume continues the run with its own settings, and {} would "
                                     "change what it measures: drop {}, or start a new run. With --resume only "
                                     "these may change: {}\n",
                                     fmt::join(refused, ", "), refused.size() == 1 ? "it" : "them",
                                     fmt::join(kResumeMayChange, ", "));
            return kExitBadInput;
        }
        try {
            const std::string journal = fs::absolute(journal_to_resume(resume_from)).string();
            const JournalContents done = read_journal(journal);
            const nlohmann::json &h = done.header;
            std::vector<std::string> args = {argv[0], "run"};
            std::vector<std::string> recorded;
            for (const auto &a : h.at("args")) recorded.push_back(a.get<std::string>());
            for (auto &a : without_options(recorded, changes)) args.push_back(std::move(a));
            args.insert(args.end(), changes.begin(), changes.end());
            args.push_back("--out");
            args.push_back(h.at("out").get<std::string>());
            // Relative paths in the arguments meant the first run's directory.
            std::error_code ec;
            fs::current_path(h.at("cwd").get<std::string>(), ec);
            if (ec)
                throw JournalError(fmt::format("{}: cannot return to the run's directory {}: {}", journal,
                                               h.at("cwd").get<std::string>(), ec.message()));
            const auto finished = std::count_if(done.entries.begin(), done.entries.end(),
                                                [](const nlohmann::json &e) { return e.contains("case"); });
            std::cerr << fmt::format("opbench: resuming {} ({} case x backend finished) from {}\n",
                                     h.at("out").get<std::string>(), finished, journal);
            std::vector<char *> replay;
            for (auto &a : args) replay.push_back(a.data());
            return run_cli(static_cast<int>(replay.size()), replay.data(), journal);
        } catch (const JournalError &e) {
            std::cerr << "opbench run: --resume: " << e.what() << "\n";
            return kExitBadInput;
        } catch (const nlohmann::json::exception &e) {
            std::cerr << "opbench run: --resume: the journal's first line lacks what a resume needs (" << e.what()
                      << ")\n";
            return kExitBadInput;
        }
    }
    if (suite_path.empty()) {
        std::cerr << "opbench run: a suite file is required (or --resume FILE)\n";
        return kExitBadInput;
    }
    opts.isolation = *isolation_from_name(isolate);
    if (run->count("--mem-limit") > 0) { // given empty is an error, not "no limit"
        opts.mem_limit = parse_memory_size(mem_limit_text);
        if (!opts.mem_limit) {
            std::cerr << "opbench run: --mem-limit: '" << mem_limit_text
                      << "' is not a size (a number with K, M, G or T, e.g. 8G)\n";
            return kExitBadInput;
        }
    }
    opts.command_args = replayable_run_args(argc, argv);
    opts.resume_journal = resume_journal;
    print_refused(plugins);
    for (const auto &extra : run->remaining())
        if (extra.rfind("--benchmark_", 0) != 0) {
            std::cerr << "opbench run: unknown argument '" << extra
                      << "' (opbench's options are listed by --help; Google Benchmark's start with --benchmark_)\n";
            return kExitBadInput;
        }
    try {
        // Google Benchmark's min time and repetitions mean opbench's own
        // settings: each repetition is one adaptive measurement by opbench.
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
        opts.benchmark_args = std::move(flags.pass_through);
    } catch (const BenchmarkFlagError &e) {
        std::cerr << "opbench run: " << e.what() << "\n";
        return kExitBadInput;
    }
    Suite suite;
    try {
        suite = load_suite_file(suite_path, SuiteOptions{known_backends(plugins)});
    } catch (const SuiteError &e) {
        std::cerr << e.what() << "\n";
        return kExitBadInput;
    }
    for (const auto &w : suite.warnings) {
        std::cerr << w << "\n";
        add_warning(opts.setting_warnings, w);
    }
    if (backends_opt->count() > 0) {
        opts.backends = split_list(backends_csv);
        const auto known = known_backends(plugins);
        if (opts.backends.empty()) {
            std::cerr << fmt::format("opbench run: --backends names no backend (known: {}); leave it out to run "
                                     "each case's own list\n",
                                     fmt::join(known, ", "));
            return kExitBadInput;
        }
        for (const auto &b : opts.backends)
            if (std::find(known.begin(), known.end(), b) == known.end()) {
                std::cerr << fmt::format("opbench run: --backends: unknown backend '{}' (known: {})\n", b,
                                         fmt::join(known, ", "));
                return kExitBadInput;
            }
    }
    if (!plugins.find(opts.reference)) {
        std::cerr << fmt::format("opbench run: the reference backend '{}' is not loaded (loaded: {}); every case "
                                 "is verified against it: build it (-Dnaive=enabled) or choose --reference\n",
                                 opts.reference, fmt::join(plugins.names(), ", "));
        return kExitBadInput;
    }
    if (run->count("--shard") > 0) { // given empty is an error, not "no shard"
        try {
            opts.shard = parse_shard(shard_text);
            suite.cases = shard_cases(suite.cases, *opts.shard);
        } catch (const std::invalid_argument &e) {
            std::cerr << "opbench run: " << e.what() << "\n";
            return kExitBadInput;
        }
    }
    if (no_out && !archive_dir.empty()) {
        std::cerr << "opbench run: --archive stores the result set, so it cannot go with --no-out\n";
        return kExitBadInput;
    }
    // The trace follows --out's rule, checked now, not after the run: never
    // the suite, a result set or journal, a device, directory or FIFO, and an
    // existing file only with --force.
    if (run->count("--trace") > 0) {
        OutputFile trace{"--trace", opts.profile.trace_path, force, {suite_path}, {}};
        if (!resume_journal.empty()) trace.inputs.push_back(resume_journal);
        // Before --out is reserved (a refused trace leaves nothing behind);
        // a default --out is a fresh name no trace can hold.
        if (!no_out && !out_path.empty())
            trace.other_outputs = {{"--out", out_path}, {"the run's journal", journal_path_for(out_path)}};
        try {
            check_output_file(trace);
        } catch (const OutputPathError &e) {
            std::cerr << "opbench run: " << e.what() << "\n";
            return kExitBadInput;
        }
    }
    // Checked and reserved before the first case runs, so no run ends in
    // "cannot write". The finished (or interrupted) result set is renamed over
    // this very path; a resumed run may replace its own incomplete set.
    ResultPath result_path;
    if (!no_out) {
        if (out_opt->count() > 0 && out_path.empty()) {
            std::cerr << "opbench run: --out is empty; give a file name, or --no-out\n";
            return kExitBadInput;
        }
        try {
            OutputRequest request{out_path, force, suite_path};
            request.resuming = !resume_journal.empty();
            result_path = reserve_result_path(request, suite.name);
        } catch (const OutputPathError &e) {
            std::cerr << "opbench run: " << e.what() << "\n";
            return kExitBadInput;
        }
        opts.out_path = result_path.path();
    }
    opts.progress = !no_progress;
    if (!trace_schedule.empty()) {
        if (!opts.profile.enabled()) {
            std::cerr << "opbench run: --trace-schedule chooses what --profile or --trace records; give one of them\n";
            return kExitBadInput;
        }
        try {
            opts.profile.schedule = parse_trace_schedule(trace_schedule);
        } catch (const ScheduleError &e) {
            std::cerr << "opbench run: " << e.what() << "\n";
            return kExitBadInput;
        }
    }
    opts.verify = *verify_mode_from_name(verify_mode); // CLI11 checked the name
    opts.reference_store = !no_reference_cache;

    RunSummary summary;
    try {
        summary = run_suite(suite, plugins, opts);
    } catch (const SuiteError &e) {
        std::cerr << e.what() << "\n";
        return kExitBadInput;
    } catch (const JournalError &e) {
        // Bad input (another run's journal, a damaged one) before anything
        // ran; a journal that cannot be appended to is the environment's.
        std::cerr << "opbench run: " << e.what() << "\n";
        return e.during_run() ? exit_keeping_journal(result_path) : kExitBadInput;
    } catch (const std::exception &e) {
        std::cerr << "opbench run: " << e.what() << "\n";
        return exit_keeping_journal(result_path);
    }
    std::cout << "\n" << summary_line(summary);
    if (!summary.out_path.empty()) std::cout << " -> " << summary.out_path;
    if (!summary.complete)
        std::cout << fmt::format(" (incomplete: interrupted; `opbench run --resume {}` finishes it)",
                                 summary.out_path.empty() ? std::string("<result set>") : summary.out_path);
    std::cout << "\n";
    for (const auto &e : summary.output_errors) std::cerr << "opbench run: " << e << "\n";
    if (!summary.complete) return interrupt_exit_status();
    if (!summary.output_errors.empty()) return kExitEnvironment;
    if (!archive_dir.empty()) {
        try {
            const ArchiveEntry e = archive_store(archive_dir, read_result_set(summary.out_path));
            std::cout << "opbench: archived -> " << (fs::path(archive_dir) / e.path).string() << "\n";
        } catch (const std::exception &e) {
            std::cerr << "opbench run: --archive: " << e.what() << "\n";
            return kExitEnvironment;
        }
    }
    return summary.failed > 0 ? kExitFailedCases : 0;
}

} // namespace

int main(int argc, char **argv) {
    // The hidden worker mode (case_host.hpp): opbench starts itself this way
    // to run one backend's cases in a process of their own.
    if (argc > 1 && std::string_view(argv[1]) == "__worker") return case_worker_main(argc, argv);
    install_interrupt_handling(); // before any thread exists: signals go to one watcher thread
    return run_cli(argc, argv, "");
}
