#include "entry/op_case_entry.hpp"

#include "check/reference_cache.hpp"
#include "suite/case_names.hpp"

#include "opbench/ops.hpp"

namespace opbench {

uint64_t fast_check_seed(std::size_t case_index) {
    return ReferenceCache::input_seed(case_index) ^ 0x9e3779b97f4a7c15ull;
}

OpCaseEntry::OpCaseEntry(const Case &c, std::size_t case_index, const std::string &backend,
                         const std::string &reference)
    : case_(c), case_index_(case_index) {
    result.source = &c;
    result.backend = backend;
    result.name = benchmark_name(c, backend);
    result.is_reference = backend == reference;
    result.nmse_threshold = tolerance_for(c.desc).max_nmse;
}

MemoryEstimate OpCaseEntry::memory_need(VerifyMode verify) const {
    const OpInfo *row = op_info(case_.desc.op);
    const bool reference_runs =
        verify == VerifyMode::full || (verify == VerifyMode::fast && !(row && row->fast_check));
    return estimate_case_memory(case_.desc, reference_runs);
}

CaseJob OpCaseEntry::job(const JobDefaults &d) const {
    CaseJob job;
    job.case_index = case_index_;
    job.name = result.name;
    job.backend = result.backend;
    job.desc = case_.desc;
    job.settings = case_.settings;
    job.nmse_threshold = result.nmse_threshold;
    job.timer_overhead = d.timer_overhead;
    job.verify = d.verify;
    job.check_seed = fast_check_seed(case_index_);
    job.reference_store_dir = d.reference_store_dir;
    job.reference_store_key = d.reference_store_key;
    return job;
}

CallWork OpCaseEntry::call_work() const {
    return CallWork{op_flops(case_.desc), op_bytes(case_.desc), case_.desc.dtype, case_.desc.threads};
}

EntryFacts OpCaseEntry::identity_facts() const {
    EntryFacts f;
    f.op = op_name(case_.desc.op);
    f.variant = variant_name(case_.desc.op, case_.desc.variant);
    f.dtype = dtype_name(case_.desc.dtype);
    f.flops = op_flops(case_.desc);
    f.bytes = op_bytes(case_.desc);
    return f;
}

nlohmann::json OpCaseEntry::counters(const RepetitionRecord &rec) const {
    // Rates at the repetition's median time per call; none (0) for a
    // throttled repetition, whose time is the fallen clock's (issue 41).
    const double t = rec.throttled ? 0.0 : rec.summary.median;
    nlohmann::json j = {{"FLOP/s", t > 0 ? op_flops(case_.desc) / t : 0.0},
                        {"bytes/s", t > 0 ? op_bytes(case_.desc) / t : 0.0},
                        {"AI", arithmetic_intensity(case_.desc)},
                        {"samples", double(rec.summary.n)}};
    const nlohmann::json params = shape_params(case_.desc);
    for (const auto &[key, value] : params.items())
        if (value.is_number()) j[key] = value.get<double>();
    return j;
}

std::string OpCaseEntry::label(const RepetitionRecord &rec) const {
    // An unverified entry says so on every line (and in JSON: "verified": false).
    std::string label = result.verification.mode == VerifyMode::off ? "UNVERIFIED, " : "";
    label += noise_label(rec);
    if (bound_at) label += ", " + bound_at(rec.summary.median);
    return label;
}

} // namespace opbench
