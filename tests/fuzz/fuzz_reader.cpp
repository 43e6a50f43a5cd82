// libFuzzer target: the readers' one way in (issue 19). The input is a file
// compare, report, history, merge and archive read: parse_result_set (JSON,
// the schema check of results/README.md, the opbench context, cases and
// repetitions); what it accepts goes through what those readers do with it
// (valid_times, labels, the machine id, compare_sets against itself, the
// comparison's document, merge_result_sets). ResultSetError is the expected
// refusal; any other exception, a crash or UB is a finding.
#include "readers/compare.hpp"
#include "readers/merge.hpp"
#include "readers/result_set_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    opbench::ResultSet set;
    try {
        set = opbench::parse_result_set(text, "fuzz.json");
    } catch (const opbench::ResultSetError &) {
        return 0; // refused with a message: the expected outcome
    }
    (void)set.machine_id();
    (void)set.suite_name();
    (void)set.commit();
    (void)set.timestamp();
    for (const auto &c : set.cases) {
        (void)c.label();
        (void)c.shape();
        (void)c.match_key_with_settings();
        (void)opbench::valid_times(c);
    }
    opbench::ResultSet other = set;
    other.path = "other.json";
    const opbench::Comparison cmp = opbench::compare_sets({set, other}, opbench::CompareOptions{});
    (void)opbench::comparison_document(cmp);
    try {
        (void)opbench::merge_result_sets({set, other}, opbench::MergeOptions{});
    } catch (const opbench::MergeError &) {
        // the same cases in both parts: refused with a message
    }
    return 0;
}
