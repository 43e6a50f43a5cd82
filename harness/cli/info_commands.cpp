#include "cli/info_commands.hpp"

#include "build_config.hpp"
#include "cli/exit_codes.hpp"
#include "cli/known_backends.hpp"
#include "cli/printable.hpp"
#include "machine/machine.hpp"
#include "opbench/ops.hpp"
#include "plugin/backend_facts.hpp"
#include "plugin/device_probe.hpp"
#include "plugin/plugin_variant.hpp"
#include "readers/result_set_reader.hpp"
#include "run/git_commit.hpp"
#include "suite/case_names.hpp"
#include "suite/suite.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// suites/ of the source tree, else ./suites.
fs::path suites_dir() {
    fs::path src = fs::path(OPBENCH_SOURCE_ROOT) / "suites";
    std::error_code ec;
    if (fs::is_directory(src, ec)) return src;
    return fs::current_path() / "suites";
}

// One line of `list` or `validate`: `prefix` as it is (its aligned columns),
// then `text` word-wrapped to the terminal (a plugin's reason or a suite's
// description runs to 200 columns), its later lines indented by
// continuation_indent.
void print_listed(const std::string &prefix, const std::string &text, std::size_t continuation_indent) {
    const std::size_t width = display_width(prefix);
    std::string out = wrap_words(text, continuation_indent, width);
    if (out.empty()) out = std::string(width, ' ') + "\n";
    std::cout << prefix << out.substr(width);
}

// The suites in `dir` (and its subfolders: suites/models/), named relative to it.
std::vector<fs::path> suite_files(const fs::path &dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->path().extension() == ".toml") files.push_back(it->path().lexically_relative(dir));
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

int list_command(const PluginSet &plugins) {
    std::cout << "opbench " << OPBENCH_VERSION << " (" << git_commit() << "), plugin ABI "
              << OPB_ABI_VERSION_MAJOR << "." << OPB_ABI_VERSION_MINOR << "\n\nBackends:\n";
    if (plugins.plugins.empty()) std::cout << "  (none found; set OPBENCH_PLUGIN_PATH)\n";
    constexpr std::size_t kDetail = 13; // under the backend's name column
    for (const auto &p : plugins.plugins) {
        BackendInstance be(p);
        nlohmann::json ctx = backend_context(be, &p);
        print_listed(fmt::format("  {:<10} {:<8} ", p.name(), ctx["version"].get<std::string>()),
                     be.usable() ? "usable" : "NOT usable: " + be.unusable_reason(), kDetail + 2);
        auto detail = [&](const std::string &text) { print_listed(std::string(kDetail, ' '), text, kDetail + 2); };
        detail(ctx["description"].get<std::string>());
        if (!ctx["library_versions"].get<std::string>().empty())
            detail("libraries: " + ctx["library_versions"].get<std::string>());
        if (ctx.contains("device"))
            detail(fmt::format("device: {} ({})", ctx["device"]["name"].get<std::string>(),
                               ctx["device"]["kind"].get<std::string>()));
        if (ctx.contains("info"))
            for (const auto &[k, v] : ctx["info"].items()) detail(k + ": " + v.get<std::string>());
        detail("from " + p.path);
    }
    for (const auto &f : plugins.failures) print_listed("  refused: ", f.reason, 4);
    for (const auto &f : plugins.ignored)
        print_listed("  ignored: ", f + " (plugin directories load only opbench-backend-*.so files)", 4);

    // The ops whose dtype may be s8 and f8e4m3 (ops.hpp dtype_error).
    std::vector<std::string_view> int8_weight_ops, fp8_ops;
    for (const OpInfo &row : kOps) {
        if (dtype_error(row.op, OPB_DTYPE_S8).empty()) int8_weight_ops.push_back(row.name);
        if (dtype_error(row.op, OPB_DTYPE_F8_E4M3).empty()) fp8_ops.push_back(row.name);
    }
    std::cout << fmt::format("\nOps (dtypes: f32, bf16, f16; s8, int8 weights: {}; f8e4m3, FP8: {}):\n",
                             fmt::join(int8_weight_ops, ", "), fmt::join(fp8_ops, ", "));
    for (const OpInfo &row : kOps) {
        auto variants = variant_names(row.op);
        std::cout << fmt::format("  {:<10} variants: {}\n", row.name, fmt::join(variants, ", "));
    }

    const fs::path dir = suites_dir();
    std::cout << "\nSuites (" << dir.string() << "):\n";
    SuiteOptions so{known_backends(plugins)};
    for (const auto &f : suite_files(dir)) {
        try {
            Suite s = load_suite_file((dir / f).string(), so);
            const std::string workloads = s.workloads.empty() ? "" : fmt::format(", {} workloads", s.workloads.size());
            print_listed(fmt::format("  {:<30} {:>4} cases{}  ", f.string(), s.cases.size(), workloads), s.description,
                         4);
        } catch (const SuiteError &e) {
            print_listed(fmt::format("  {:<30} INVALID: ", f.string()), e.what(), 4);
        }
    }
    return 0;
}

int validate_command(const std::vector<std::string> &paths, const PluginSet &plugins) {
    int rc = 0;
    for (const auto &path : paths) {
        try {
            // The suite's own plugin builds, checked as `run` checks them: a
            // suite naming /etc/passwd as a plugin is not ok (issue 44).
            PluginSet with_builds = plugins;
            add_plugin_variants(with_builds, plugin_builds(path, {}), plugins.allow_insecure);
            Suite s = load_suite_file(path, SuiteOptions{known_backends(with_builds)});
            for (const auto &w : s.warnings) std::cerr << w << "\n"; // used, not refused: still ok
            check_unique_names(s.cases);
            std::size_t runs = 0;
            std::set<std::string> ops;
            for (const auto &c : s.cases) {
                runs += c.backends.size();
                ops.insert(std::string(op_name(c.desc.op)));
            }
            print_listed(path + ": ",
                         fmt::format("ok: suite '{}', {} cases ({} case x backend runs), ops: {}", s.name,
                                     s.cases.size(), runs, ops.empty() ? "none" : fmt::to_string(fmt::join(ops, ", "))),
                         4);
            // Workloads: one entry per phase x backend. The dtype tells apart
            // one name's levels (f32, bf16, s8).
            for (const auto &w : s.workloads)
                std::cout << fmt::format("  {} '{}' {}: hidden {}, layers {}, prompt {}, generate {}; "
                                         "{} phases x {} backends\n",
                                         w.kind, w.name, dtype_name(w.decoder.dtype), w.decoder.hidden,
                                         w.decoder.layers, w.decoder.prompt, w.decoder.generate, w.phases.size(),
                                         w.backends.size());
        } catch (const SuiteError &e) {
            std::cerr << printable(e.what()) << "\n";
            rc = kExitBadInput;
        } catch (const PluginSpecError &e) {
            std::cerr << "opbench validate: " << printable(e.what()) << "\n";
            rc = kExitBadInput;
        }
    }
    return rc;
}

namespace {

// The roofs each device plugin measures behind ABI 1.5 (issue 41), cached
// per device like the CPU's peaks; a plugin without the entry or without a
// usable device prints nothing.
void print_device_roofs(bool refresh) {
    const PluginSet plugins = discover_plugins(default_plugin_search_paths());
    for (const LoadedPlugin &p : plugins.plugins) {
        if (!OPB_API_HAS(p.api, measure_roofs)) continue;
        BackendInstance be(p);
        if (!be.usable()) continue;
        try {
            const auto c = load_or_measure_device_roofs(be, machine_cache_dir(), refresh);
            if (!c) continue;
            std::cout << fmt::format("\ndevice roofs of backend {}{}\n", p.name(),
                                     c->from_cache ? ", cached" : fmt::format(", measured now in {:.1f} s",
                                                                              c->roofs.measure_seconds));
            for (const std::string &line : device_roofs_lines(c->roofs)) std::cout << printable(line) << "\n";
            if (!c->warning.empty()) std::cerr << wrap_words(printable("device roofs not cached: " + c->warning), 4, 0);
        } catch (const std::exception &e) {
            std::cerr << wrap_words(printable(fmt::format("{}: no device roofs: {}", p.name(), e.what())), 4, 0);
        }
    }
}

} // namespace

int machine_command(bool refresh) {
    CachedMachinePeaks c = load_or_measure(refresh);
    const MachinePeaks &p = c.peaks;
    // The cache's path on a line of its own: the CPU model and the path together passed 100 columns.
    if (c.from_cache)
        std::cout << fmt::format("{} ({} cores), cached figures from\n  {}\n", p.cpu_model, p.cores,
                                 printable(c.path.string()));
    else
        std::cout << fmt::format("{} ({} cores), measured now\n", p.cpu_model, p.cores);
    std::cout << fmt::format("measured {} in {:.1f} s; f32 kernel: {}; int8 kernel: {}\n\n", p.measured_at,
                             p.measure_seconds, p.fma_isa, p.int8_isa.empty() ? "-" : p.int8_isa);
    std::cout << fmt::format("{:>8} {:>14} {:>14} {:>14} {:>12} {:>12}\n", "threads", "f32 GFLOP/s", "bf16 GFLOP/s",
                             "int8 GOP/s", "triad GB/s", "copy GB/s");
    auto or_dash = [](bool measured, double v) { return measured ? fmt::format("{:.1f}", v) : std::string("-"); };
    for (const ThreadPeaks &t : {p.one_thread, p.all_threads})
        std::cout << fmt::format("{:>8} {:>14.1f} {:>14} {:>14} {:>12.1f} {:>12.1f}\n", t.threads, t.f32_gflops,
                                 or_dash(p.has_bf16, t.bf16_gflops), or_dash(t.int8_gops > 0, t.int8_gops),
                                 t.triad_gbps, t.copy_gbps);
    // AMX tile peaks (issue 28): the bf16 / int8 roofs of work oneDNN runs on tiles.
    if (p.amx == "measured") {
        std::cout << fmt::format("\n{:>8} {:>18} {:>16}\n", "threads", "AMX-BF16 GFLOP/s", "AMX-INT8 GOP/s");
        for (const ThreadPeaks &t : {p.one_thread, p.all_threads})
            std::cout << fmt::format("{:>8} {:>18} {:>16}\n", t.threads, or_dash(t.amx_bf16_gflops > 0, t.amx_bf16_gflops),
                                     or_dash(t.amx_int8_gops > 0, t.amx_int8_gops));
    } else {
        std::cout << "\n"
                  << wrap_words("AMX: " + (p.amx.empty() ? "not measured (figures from before schema 2)" : p.amx), 2,
                                0);
    }
    if (!p.cache_roofs.empty()) {
        // The roofs % of peak uses when a warm case's bytes fit a level (results/README.md, roofline).
        std::cout << fmt::format("\n{:>8} {:>12} {:>10} {:>18} {:>18}\n", "level", "size", "shared by",
                                 "1 thread GB/s", fmt::format("{} threads GB/s", p.cores));
        for (const CacheRoof &r : p.cache_roofs)
            std::cout << fmt::format("{:>8} {:>9} KiB {:>6} CPU {:>18.1f} {:>18.1f}\n", r.level, r.bytes >> 10,
                                     r.sharing_cpus, r.one_thread_gbps, r.all_threads_gbps);
        std::cout << fmt::format("{:>8} {:>12} {:>10} {:>18.1f} {:>18.1f}\n", "DRAM", "-", "-",
                                 p.one_thread.triad_gbps, p.all_threads.triad_gbps);
    }
    if (!p.notes.empty()) std::cout << "\n" << wrap_words("notes: " + p.notes, 2, 0);
    if (const std::string line = peaks_origin_line(c); !line.empty()) std::cerr << wrap_words(printable(line), 4, 0);
    print_device_roofs(refresh);
    return 0;
}

int machine_id_command() {
    // The same context a run writes (context.opbench.machine), read by the
    // same function every reader uses, so the id cannot drift from theirs.
    std::cout << machine_id(nlohmann::json{{"opbench", {{"machine", cpu_context()}}}}) << "\n";
    return 0;
}

} // namespace opbench
