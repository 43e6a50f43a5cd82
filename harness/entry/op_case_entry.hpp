// A case x backend as an entry (entry.hpp): one op call on the case's
// shape, checked as --verify says, measured by the recipe.
#pragma once

#include "entry/entry.hpp"

#include <cstddef>
#include <functional>

namespace opbench {

class OpCaseEntry final : public Entry {
public:
    // `c` outlives the entry; `case_index` seeds its inputs and keys the reference cache.
    OpCaseEntry(const Case &c, std::size_t case_index, const std::string &backend, const std::string &reference);

    [[nodiscard]] const Case &source() const { return case_; }
    [[nodiscard]] const Case *op_case() const override { return &case_; }
    [[nodiscard]] const MeasureSettings &settings() const override { return case_.settings; }
    [[nodiscard]] const char *time_unit() const override { return "us"; }
    [[nodiscard]] MemoryEstimate memory_need(VerifyMode verify) const override;
    [[nodiscard]] CaseJob job(const JobDefaults &defaults) const override;
    [[nodiscard]] CallWork call_work() const override;
    [[nodiscard]] nlohmann::json fields() const override { return case_fields(result); }
    [[nodiscard]] EntryFacts identity_facts() const override;
    [[nodiscard]] nlohmann::json counters(const RepetitionRecord &rec) const override;
    [[nodiscard]] std::string label(const RepetitionRecord &rec) const override;

    // The roofline bound at one repetition's median, for its label (set by the runner).
    std::function<std::string(double seconds)> bound_at;

private:
    const Case &case_;
    std::size_t case_index_;
};

// The fast checks' randomness for case number `case_index`: fixed by the
// case's position like its inputs, so a run repeats exactly; recorded in the entry.
[[nodiscard]] uint64_t fast_check_seed(std::size_t case_index);

} // namespace opbench
