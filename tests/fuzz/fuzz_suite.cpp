// libFuzzer target: the suite loader. Any text must either load or be
// refused with a SuiteError ("file:line:column: ..."); any other exception,
// a crash, a leak, undefined behaviour or a hang is a finding. Loaded suites
// also go through what a run does with them first: unique benchmark names,
// result fields and the op model's figures.
#include "entry/results.hpp"
#include "suite/suite.hpp"

#include "opbench/ops.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    using namespace opbench;
    static const SuiteOptions options{{"naive", "onednn", "cuda"}};
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    Suite suite;
    try {
        suite = parse_suite(text, "fuzz.toml", options);
    } catch (const SuiteError &e) {
        // A refusal must say where: "fuzz.toml" (whole file) or "fuzz.toml:L:C: ...".
        if (std::string_view(e.what()).rfind("fuzz.toml", 0) != 0) std::abort();
        return 0;
    }
    if (suite.cases.empty() || suite.content_hash.size() != 64) std::abort();
    try {
        check_unique_names(suite.cases);
    } catch (const SuiteError &) {
        return 0; // two cases measure the same: refused, as validate does
    }
    for (const Case &c : suite.cases) {
        if (c.backends.empty() || !validate_desc(c.desc).empty()) std::abort();
        CaseResult r;
        r.source = &c;
        r.backend = c.backends.front();
        r.name = benchmark_name(c, r.backend);
        (void)case_fields(r).dump(); // what a result entry would carry
    }
    return 0;
}
