#include "result_set.hpp"

#include "analyze.hpp"
#include "atomic_file.hpp"
#include "context.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace opbench {

nlohmann::json run_context_json(const RunContext &c) {
    nlohmann::json ctx = opbench_context(*c.suite, *c.cases, c.sessions->backends, c.sessions->missing,
                                         c.reference_backend, c.benchmark_args, c.timer_overhead_seconds);
    ctx["machine_peaks"] = c.machine->peaks;
    ctx["machine_peaks_cache"] = c.machine->path.string();
    ctx["measurement"]["call_overhead_seconds"] = c.call_overhead_seconds;
    ctx["measurement"]["cpus"] = c.cpus;
    ctx["warnings"] = c.warnings;
    // A profiling run says so: its timings are not to be mixed with plain runs'.
    ctx["profiling"] = c.profiling ? c.profiling->options().context() : nlohmann::json{{"enabled", false}};
    if (c.shard) ctx["shard"] = {{"index", c.shard->index}, {"count", c.shard->count}};
    return ctx;
}

std::vector<nlohmann::json> case_entries(std::vector<nlohmann::json> gb_entries, const CaseResult &result) {
    const bool ran = !gb_entries.empty();
    nlohmann::json gb = {{"benchmarks", std::move(gb_entries)}};
    const std::vector<CaseResult> one = {result};
    std::vector<const CaseResult *> unmeasured;
    if (!ran) unmeasured.push_back(&one.front());
    nlohmann::json enriched = enrich_result_set(std::move(gb), one, unmeasured, nlohmann::json::object());
    std::vector<nlohmann::json> out;
    for (auto &e : enriched["benchmarks"]) out.push_back(std::move(e));
    return out;
}

Document assemble_result_set(nlohmann::json gb, const std::vector<CaseResult> &results,
                             const std::vector<const CaseResult *> &unmeasured, const RunContext &c) {
    Document doc;
    doc.data = enrich_result_set(std::move(gb), results, unmeasured, run_context_json(c));
    add_run_analysis(doc.data, c.profiling);
    return doc;
}

void add_run_analysis(nlohmann::json &result_set, const ProfileSession *profiling) {
    add_bottlenecks(result_set);
    if (profiling && profiling->options().hot_path) attach_profiles(result_set, profiling->cases());
}

void write_result_set(const std::string &gb_json_path, const std::string &out_path, const std::string &format,
                      const std::vector<CaseResult> &results, const std::vector<const CaseResult *> &unmeasured,
                      const RunContext &context) {
    const Writer *writer = find_writer(format);
    if (!writer) throw std::runtime_error("no output writer '" + format + "' (known: " + writer_names() + ")");
    nlohmann::json gb;
    {
        std::ifstream in(gb_json_path);
        if (!in) throw std::runtime_error("Google Benchmark wrote no JSON to " + gb_json_path);
        in >> gb;
    }
    std::error_code ec;
    std::filesystem::remove(gb_json_path, ec);
    write_file_atomically(out_path, writer->write(assemble_result_set(std::move(gb), results, unmeasured, context)));
}

} // namespace opbench
