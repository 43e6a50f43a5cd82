#include "cli/ab_command.hpp"

#include "cli/cpu_list.hpp"
#include "cli/output_path.hpp"
#include "plugin/plugin_variant.hpp"
#include "run/interrupt.hpp"
#include "run/paired_run.hpp"
#include "run/run_environment.hpp"
#include "suite/suite.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sched.h>
#include <set>

namespace opbench {

namespace {
constexpr int kExitFailedCases = 1, kExitBadInput = 2, kExitEnvironment = 3;
} // namespace

struct AbCommand::Options {
    CLI::App *sub = nullptr;
    std::string suite_path, pair, out_path, verify = "fast", reference = "naive", cpus;
    std::vector<std::string> plugin_specs;
    PairedRunOptions run;
    bool no_out = false, force = false, allow_insecure = false, no_progress = false;
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
    o.sub->add_option("--reference", o.reference, "backend whose output verifies both sides")->capture_default_str();
    auto *out = o.sub->add_option("--out", o.out_path,
                                  "result set path (default results/<suite>-<UTC time>.json); an existing file is "
                                  "refused unless --force");
    o.sub->add_flag("--no-out", o.no_out, "write no result set")->excludes(out);
    o.sub->add_flag("--force", o.force, "replace an existing --out file");
    o.sub->add_flag("--no-progress", o.no_progress, "print no line per case, only the summary");
    o.sub->add_flag("--allow-insecure-plugins", o.allow_insecure,
                    "load plugin files even where others may write them (file or directory mode o+w)");
}

AbCommand::~AbCommand() = default;

std::optional<int> AbCommand::run() {
    Options &o = *o_;
    if (!*o.sub) return std::nullopt;
    auto bad = [](const std::string &what) {
        std::cerr << "opbench ab: " << what << "\n";
        return kExitBadInput;
    };
    // Before any plugin loads (OpenMP reads the mask at load) and before the
    // workers start (they inherit it). On a shared VM the vCPUs differ in
    // speed (each has its own neighbours on the host), and a worker stays
    // on one for a whole case: unpinned, an A/A case came out 13% "slower"
    // under load 14 (docs/measurement.md, "Paired A/B").
    std::vector<int> cpus;
    try {
        cpus = o.cpus.empty() ? std::vector<int>{sched_getcpu()} : parse_cpu_list(o.cpus);
        pin_process_to_cpus(cpus);
    } catch (const std::exception &e) {
        return bad(fmt::format("--cpus: {}", e.what()));
    }
    o.run.cpus = cpus;
    PluginSet plugins = discover_plugins(default_plugin_search_paths(), DiscoverOptions{o.allow_insecure});
    std::vector<PluginVariantSpec> specs;
    try {
        for (const auto &text : o.plugin_specs) specs.push_back(parse_plugin_spec(text));
        add_plugin_variants(plugins, specs, o.allow_insecure);
    } catch (const PluginSpecError &e) {
        return bad(e.what());
    }
    // The pair: --pair, else the two --plugin builds.
    if (!o.pair.empty()) {
        const auto comma = o.pair.find(',');
        if (comma == std::string::npos || o.pair.find(',', comma + 1) != std::string::npos)
            return bad(fmt::format("--pair '{}': expected BASE,NEW (two backends, e.g. naive@base,naive@new)", o.pair));
        o.run.base = o.pair.substr(0, comma);
        o.run.next = o.pair.substr(comma + 1);
    } else if (specs.size() == 2) {
        o.run.base = specs[0].instance();
        o.run.next = specs[1].instance();
    } else {
        return bad(fmt::format("give the two builds to compare: --plugin NAME@base=FILE --plugin NAME@new=FILE "
                               "(got {} --plugin), or --pair BASE,NEW",
                               specs.size()));
    }
    for (const std::string &name : {o.run.base, o.run.next})
        if (!plugins.find(name)) return bad(fmt::format("--pair: {}", plugins.why_unavailable(name)));
    if (o.run.base == o.run.next)
        return bad(fmt::format("--pair {},{}: the same backend twice; an A/A run names two variants of one file "
                               "(--plugin naive@a=F --plugin naive@b=F)",
                               o.run.base, o.run.next));
    if (variant_backend(o.run.base) != variant_backend(o.run.next))
        return bad(fmt::format("--pair {},{}: builds of two different backends; a paired run compares two builds "
                               "of one (NAME@base, NAME@new)",
                               o.run.base, o.run.next));
    o.run.reference = o.reference;
    if (!plugins.find(o.reference))
        return bad(fmt::format("the reference backend '{}' is not loaded: {}", o.reference,
                               plugins.why_unavailable(o.reference)));
    o.run.verify = *verify_mode_from_name(o.verify);
    o.run.progress = !o.no_progress;
    for (const auto &f : plugins.failures) std::cerr << "opbench: refused plugin " << f.reason << "\n";

    // As `opbench run`: the design's three and every plugin found, so a typo is caught.
    std::set<std::string> known = {"naive", "onednn", "cuda"};
    for (const auto &n : plugins.names_with_refused()) known.insert(n);
    const std::vector<std::string> names(known.begin(), known.end());
    Suite suite;
    try {
        suite = load_suite_file(o.suite_path, SuiteOptions{names});
    } catch (const SuiteError &e) {
        std::cerr << e.what() << "\n";
        return kExitBadInput;
    }
    ResultPath result_path;
    if (!o.no_out) {
        try {
            OutputRequest request;
            request.path = o.out_path;
            request.force = o.force;
            request.suite_path = o.suite_path;
            result_path = reserve_result_path(request, suite.name);
        } catch (const OutputPathError &e) {
            return bad(e.what());
        }
        o.run.out_path = result_path.path();
    }
    std::cout << fmt::format("opbench ab: {} -> {}: {} ABBA pairs per case, {:g} ms per repetition, on CPU {}\n"
                             "  {}: {}\n  {}: {}\n",
                             o.run.base, o.run.next, o.run.pairs, o.run.half_seconds * 1e3, fmt::join(cpus, ","),
                             o.run.base, plugins.find(o.run.base)->path, o.run.next, plugins.find(o.run.next)->path);
    if (o.run.progress)
        std::cout << paired_console_row("case", "base us", "new us", "new/base", "p", "verdict");
    PairedSummary summary;
    try {
        summary = run_paired(suite, plugins, o.run);
    } catch (const SuiteError &e) {
        std::cerr << e.what() << "\n";
        return kExitBadInput;
    } catch (const std::exception &e) {
        std::cerr << "opbench ab: " << e.what() << "\n";
        return kExitEnvironment;
    }
    std::cout << "\n" << paired_summary_line(summary, o.run);
    if (!summary.complete) std::cout << " (incomplete: interrupted)";
    std::cout << "\n";
    if (!summary.out_path.empty())
        std::cout << "  result set: " << summary.out_path << " (`opbench compare` on it shows the 95% intervals)\n";
    if (!summary.complete) return interrupt_exit_status();
    return summary.failed() > 0 ? kExitFailedCases : 0;
}

} // namespace opbench
