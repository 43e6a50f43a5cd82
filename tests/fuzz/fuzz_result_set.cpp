// libFuzzer target: reading a result set back. The input is parsed as JSON
// (nlohmann, as every reader does); a document that parses is put through
// enrich_result_set, the code that reads Google Benchmark's JSON back and
// matches its entries to cases, against a fixed two-case run. Whatever the
// input, the output must serialise and parse again to the same document
// (so a name or string never breaks the written JSON). nlohmann's
// json::exception is the expected refusal for a document of the wrong
// shape; anything else (a crash, UB, another exception) is a finding.
// A machine-peaks cache (the other JSON opbench reads back) is tried too.
#include "machine/machine.hpp"
#include "entry/results.hpp"
#include "suite/suite.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

struct FixedRun {
    opbench::Suite suite;
    std::vector<opbench::CaseResult> results;
    FixedRun() {
        suite = opbench::parse_suite("[suite]\nname = \"f\"\n[defaults]\nbackends = [\"naive\"]\n"
                                     "[[case]]\nop = \"add\"\nrows = 4\ncols = 4\n"
                                     "[[case]]\nop = \"matmul\"\nname = 'q\"\\\\'\nm = 2\nn = 3\nk = 4\n",
                                     "fixed.toml");
        for (const auto &c : suite.cases) {
            opbench::CaseResult r;
            r.source = &c;
            r.backend = "naive";
            r.name = opbench::benchmark_name(c, r.backend);
            r.repetitions.resize(2);
            results.push_back(r);
        }
        results.back().status = opbench::CaseStatus::skipped;
        results.back().reason = "a reason with \"quotes\" and \x01 control";
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static const FixedRun run;
    nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;
    try {
        nlohmann::json out =
            opbench::enrich_result_set(doc, run.results, {&run.results.back()}, nlohmann::json{{"schema_version", 1}});
        const std::string text = out.dump();
        if (nlohmann::json::parse(text) != out) std::abort();
    } catch (const nlohmann::json::exception &) {
        // wrong shape (e.g. "benchmarks" not an array): refused
    }
    try {
        (void)doc.get<opbench::MachinePeaks>();
    } catch (const nlohmann::json::exception &) {
    } catch (const std::runtime_error &) {
        // schema version mismatch: refused with a message
    }
    return 0;
}
