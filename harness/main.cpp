// opbench: the command-line program. Each subcommand is a small function;
// the work lives in the harness modules.
#include "benchmark_flags.hpp"
#include "build_config.hpp"
#include "context.hpp"
#include "cpu_list.hpp"
#include "git_version.hpp"
#include "machine.hpp"
#include "opbench/ops.hpp"
#include "output_path.hpp"
#include "plugin_loader.hpp"
#include "results.hpp"
#include "run_environment.hpp"
#include "runner.hpp"
#include "settings.hpp"
#include "writers/writer.hpp"
#include "suite.hpp"

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
            std::cout << fmt::format("  {:<26} {:>4} cases  {}\n", f.filename().string(), s.cases.size(),
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
            check_unique_names(s.cases);
            std::size_t runs = 0;
            std::set<std::string> ops;
            for (const auto &c : s.cases) {
                runs += c.backends.size();
                ops.insert(std::string(op_name(c.desc.op)));
            }
            std::cout << fmt::format("{}: ok: suite '{}', {} cases ({} case x backend runs), ops: {}\n",
                                     path, s.name, s.cases.size(), runs, fmt::join(ops, ", "));
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
                                 p.has_bf16 ? fmt::format("{:.1f}", t.bf16_gflops) : std::string("-"),
                                 t.triad_gbps, t.copy_gbps);
    if (!p.notes.empty()) std::cout << "\nnotes: " << p.notes << "\n";
    if (!c.warning.empty()) std::cerr << "opbench machine: warning: " << c.warning << "\n";
    return 0;
}

} // namespace

int main(int argc, char **argv) {
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

    auto *run = app.add_subcommand("run", "run a suite: verify each case against the reference, measure, "
                                          "write a result set.\nArguments --benchmark_* go to Google Benchmark.");
    std::string suite_path, backends_csv, out_path;
    RunOptions opts;
    bool no_out = false, no_progress = false, force = false;
    run->add_option("suite", suite_path, "suite TOML file")->required();
    auto *backends_opt =
        run->add_option("--backends", backends_csv, "comma-separated backends, replacing the suite's lists");
    auto *out_opt = run->add_option("--out", out_path,
                                    "result set path (default results/<suite>-<UTC time>.json); an existing "
                                    "file is refused unless --force");
    run->add_flag("--no-out", no_out, "write no result set")->excludes(out_opt);
    run->add_flag("--force", force, "replace an existing --out file (a regular file only)");
    add_trust_flag(run);
    run->add_option("--reference", opts.reference, "backend whose output is the reference")->capture_default_str();
    // One option per measurement setting, from the table (settings.hpp).
    // Values are checked against the table's range; a bad one exits 2.
    for (const SettingInfo &info : measurement_settings()) {
        const std::string help = fmt::format("{} ({}; built-in default {}; suite key `{}`)", info.help, range_text(info),
                                             default_text(info), info.key);
        auto store = [&opts, &info](double v) {
            if (auto why = check_setting(info, v)) throw CLI::ValidationError(std::string(info.cli_flag), *why);
            opts.overrides.set(info, v);
        };
        if (info.type == SettingType::cache)
            run->add_option_function<std::string>(
                   std::string(info.cli_flag),
                   [store](const std::string &v) { store(v == "cold" ? 1.0 : 0.0); }, help)
                ->check(CLI::IsMember({"warm", "cold"}))
                ->type_name(std::string(info.value_name));
        else if (info.type == SettingType::integer)
            run->add_option_function<long long>(std::string(info.cli_flag), [store](long long v) { store(double(v)); },
                                                help)
                ->type_name(std::string(info.value_name));
        else
            run->add_option_function<double>(std::string(info.cli_flag), store, help)
                ->type_name(std::string(info.value_name));
    }
    run->add_flag("--no-progress", no_progress, "no progress lines on a terminal");
    std::string cpus_csv;
    run->add_option("--cpus", cpus_csv,
                    "pin opbench and its backends' threads to these CPUs, as taskset -c writes them (0-3,6)");
    run->allow_extras();

    auto *machine = app.add_subcommand("machine", "measure this machine's peak FLOP/s and memory bandwidth "
                                                  "(cached per machine; used for rooflines)");
    bool refresh = false;
    machine->add_flag("--refresh", refresh, "measure again even if cached");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version exit 0; every bad input exits 2.
        return app.exit(e) == 0 ? 0 : kExitBadInput;
    }

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

    if (*list) return cmd_list(plugins);
    if (*validate) {
        print_refused(plugins);
        return cmd_validate(validate_paths, plugins);
    }
    if (*machine) return cmd_machine(refresh);

    // run
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
        for (auto [value, key] : {std::pair{flags.min_time, "min_time"},
                                  std::pair{flags.repetitions ? std::optional<double>(*flags.repetitions)
                                                              : std::nullopt,
                                            "repetitions"}}) {
            if (!value) continue;
            const SettingInfo &info = *find_setting(key);
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
    // Checked and reserved before the first case runs, so no run ends in "cannot write".
    ResultPath result_path;
    if (!no_out) {
        if (out_opt->count() > 0 && out_path.empty()) {
            std::cerr << "opbench run: --out is empty; give a file name, or --no-out\n";
            return kExitBadInput;
        }
        try {
            result_path = reserve_result_path(OutputRequest{out_path, force, suite_path}, suite.name);
        } catch (const OutputPathError &e) {
            std::cerr << "opbench run: " << e.what() << "\n";
            return kExitBadInput;
        }
        opts.out_path = result_path.path();
    }
    opts.progress = !no_progress;

    RunSummary summary;
    try {
        summary = run_suite(suite, plugins, opts);
    } catch (const SuiteError &e) {
        std::cerr << e.what() << "\n";
        return kExitBadInput;
    } catch (const std::exception &e) {
        std::cerr << "opbench run: " << e.what() << "\n";
        return kExitEnvironment;
    }
    std::cout << fmt::format("\nopbench: {} passed, {} failed, {} skipped", summary.passed, summary.failed,
                             summary.skipped);
    if (!summary.out_path.empty()) std::cout << " -> " << summary.out_path;
    std::cout << "\n";
    return summary.failed > 0 ? kExitFailedCases : 0;
}
