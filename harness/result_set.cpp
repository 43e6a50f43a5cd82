#include "result_set.hpp"

#include "atomic_file.hpp"
#include "context.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace opbench {

Document assemble_result_set(nlohmann::json gb, const std::vector<CaseResult> &results,
                             const std::vector<const CaseResult *> &unmeasured, const RunContext &c) {
    nlohmann::json ctx = opbench_context(*c.suite, *c.cases, c.sessions->backends, c.sessions->missing,
                                         c.reference_backend, c.benchmark_args, c.timer_overhead_seconds);
    ctx["machine_peaks"] = c.machine->peaks;
    ctx["machine_peaks_cache"] = c.machine->path.string();
    ctx["measurement"]["call_overhead_seconds"] = c.call_overhead_seconds;
    ctx["measurement"]["cpus"] = c.cpus;
    ctx["warnings"] = c.warnings;
    Document doc;
    doc.data = enrich_result_set(std::move(gb), results, unmeasured, ctx);
    return doc;
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
