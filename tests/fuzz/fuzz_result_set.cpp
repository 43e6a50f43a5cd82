// libFuzzer target: JSON that opbench run reads back. Since the one result
// path (issue 16) a run no longer reads Google Benchmark's JSON back (its
// result-set entries are made from its own records: entry/entry.cpp), so
// what is left is the machine-peaks cache (machine/machine.hpp), read at the
// start of every run from ~/.cache/opbench. The input is parsed as JSON
// (nlohmann, as every reader does) and read as cached peaks; nlohmann's
// json::exception and the schema-version refusal are the expected answers
// to a document of the wrong shape; anything else (a crash, UB, another
// exception) is a finding. (The result-set readers have their own targets:
// fuzz_reader, fuzz_analyze, fuzz_archive_index.)
#include "machine/machine.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;
    try {
        (void)doc.get<opbench::MachinePeaks>();
    } catch (const nlohmann::json::exception &) {
        // wrong shape: refused
    } catch (const std::runtime_error &) {
        // schema version mismatch: refused with a message
    }
    return 0;
}
