#include "cli/ab_command.hpp"

#include "cli/known_backends.hpp"
#include "cli/printable.hpp"

#include "cli/cpu_list.hpp"
#include "cli/output_path.hpp"
#include "plugin/plugin_variant.hpp"
#include "run/interrupt.hpp"
#include "run/ab_run.hpp"
#include "run/code_under_test.hpp"
#include "run/paired_console.hpp"
#include "run/run_environment.hpp"
#include "suite/suite.hpp"

#include <fmt/format.h>

#include <iostream>
#include <regex>
#include <sched.h>
#include <stdexcept>

namespace opbench {

namespace {
constexpr int kExitFailedCases = 1, kExitBadInput = 2, kExitEnvironment = 3;

// Bad input found by a step of `opbench ab`: run() prints it and exits 2.
struct AbBadInput : std::runtime_error {
    using std::runtime_error::runtime_error;
};
} // namespace

struct AbCommand::Options {
    CLI::App *sub = nullptr;
    std::string suite_path, pair, out_path, verify = "fast", reference = "naive", cpus;
    std::string commit_under_test; // --commit-under-test
    std::vector<std::string> plugin_specs;
    PairedRunOptions run;
    bool no_out = false, force = false, allow_insecure = false, no_progress = false;

    // The steps of run(), in order; each throws AbBadInput for bad input.
    void pin_to_cpus();
    PluginSet plugins_with_builds(std::vector<PluginVariantSpec> &specs) const;
    void record_insecure(const PluginSet &plugins);
    void choose_pair(const std::vector<PluginVariantSpec> &specs, const PluginSet &plugins);
    void choose_reference(const PluginSet &plugins);
    Suite load_suite(const PluginSet &plugins) const; // throws SuiteError
    ResultPath reserve_out(const Suite &suite, const PluginSet &plugins);
    void print_start(const PluginSet &plugins) const;
    int run_pairs(const Suite &suite, const PluginSet &plugins) const;
};

AbCommand::AbCommand(CLI::App &app) : o_(std::make_unique<Options>()) {
    Options &o = *o_;
    o.sub = app.add_subcommand(
        "ab", "paired A/B run: two builds of one backend measured side by side (ABBA blocks, each in its own "
              "workers), a paired test per case; docs/measurement.md");
    o.sub->add_option("suite", o.suite_path, "suite TOML file: its cases that list the pair's backend run")
        ->required();
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
    auto *out = o.sub->add_option("--out", o.out_path,
                                  "result set path (default results/<suite>-<UTC time>.json); an existing file is "
                                  "refused unless --force");
    o.sub->add_flag("--no-out", o.no_out, "write no result set")->excludes(out);
    o.sub->add_flag("--force", o.force, "replace an existing --out file");
    o.sub->add_option("--commit-under-test", o.commit_under_test, kCommitUnderTestHelp);
    o.sub->add_flag("--no-progress", o.no_progress, "print no line per case, only the summary");
    o.sub->add_flag("--allow-insecure-plugins", o.allow_insecure,
                    "load plugin files even where others may write them (file or directory mode o+w)");
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
// returned object lives.
ResultPath AbCommand::Options::reserve_out(const Suite &suite, const PluginSet &plugins) {
    if (no_out) return {};
    ResultPath result_path;
    try {
        OutputRequest request;
        request.path = out_path;
        request.force = force;
        request.suite_path = suite_path;
        // --force never replaces what the run reads: opbench, its plugins
        // (both --plugin builds); the suite is refused by suite_path.
        request.inputs = {{"/proc/self/exe", "the opbench executable running"}};
        for (const auto &p : plugins.plugins) request.inputs.push_back({p.path, "the loaded plugin " + p.name()});
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
int AbCommand::Options::run_pairs(const Suite &suite, const PluginSet &plugins) const {
    PairedSummary summary;
    try {
        summary = run_paired(suite, plugins, run);
    } catch (const SuiteError &e) {
        std::cerr << printable(e.what()) << "\n";
        return kExitBadInput;
    } catch (const std::exception &e) {
        std::cerr << "opbench ab: " << printable(e.what()) << "\n";
        return kExitEnvironment;
    }
    std::cout << "\n" << paired_summary_line(summary, run);
    if (!summary.complete) std::cout << " (incomplete: interrupted)";
    std::cout << "\n";
    if (!summary.out_path.empty())
        std::cout << "  result set: " << summary.out_path << " (`opbench compare` on it shows the 95% intervals)\n";
    if (!summary.complete) return interrupt_exit_status();
    return summary.failed() > 0 ? kExitFailedCases : 0;
}

std::optional<int> AbCommand::run() {
    Options &o = *o_;
    if (!*o.sub) return std::nullopt;
    try {
        o.pin_to_cpus();
        std::vector<PluginVariantSpec> specs;
        const PluginSet plugins = o.plugins_with_builds(specs);
        o.record_insecure(plugins);
        o.run.code_under_test = code_under_test(o.commit_under_test);
        o.choose_pair(specs, plugins);
        o.choose_reference(plugins);
        o.run.verify = *verify_mode_from_name(o.verify);
        o.run.progress = !o.no_progress;
        for (const auto &f : plugins.failures) std::cerr << "opbench: refused plugin " << printable(f.reason) << "\n";
        Suite suite;
        try {
            suite = o.load_suite(plugins);
        } catch (const SuiteError &e) {
            std::cerr << printable(e.what()) << "\n";
            return kExitBadInput;
        }
        const ResultPath result_path = o.reserve_out(suite, plugins);
        o.print_start(plugins);
        return o.run_pairs(suite, plugins);
    } catch (const AbBadInput &e) {
        std::cerr << "opbench ab: " << printable(e.what()) << "\n";
        return kExitBadInput;
    }
}

} // namespace opbench
