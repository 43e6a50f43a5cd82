#include "check/reference_cache.hpp"

#include "plugin/backend_work.hpp"

namespace opbench {

ReferenceCache::ReferenceCache(BackendInstance *reference, std::string reference_name, std::string missing_reason)
    : reference_(reference), reference_name_(std::move(reference_name)), missing_reason_(std::move(missing_reason)) {}

void ReferenceCache::use_store(ReferenceStore *store, std::string backend_version) {
    store_ = store;
    backend_version_ = std::move(backend_version);
}

const HostTensors &ReferenceCache::inputs(std::size_t index, const opb_op_desc &desc) {
    if (cached_ != index) {
        cached_ = index;
        inputs_ = make_inputs(desc, input_seed(index));
        outputs_.reset();
        error_.clear();
    }
    return inputs_;
}

HostBuffers ReferenceCache::compute(const HostTensors &host, const opb_op_desc &desc) {
    BackendTensors t(*reference_, host);
    PreparedPlan plan(*reference_, desc);
    execute_once(*reference_, plan.get(), t);
    synchronize(*reference_);
    return read_outputs(*reference_, t, host);
}

const HostBuffers &ReferenceCache::outputs(std::size_t index, const opb_op_desc &desc) {
    const HostTensors &host = inputs(index, desc);
    if (outputs_) return *outputs_;
    if (!error_.empty()) throw MeasureFailure{CaseStatus::failed, error_};
    try {
        if (!reference_) throw MeasureFailure{CaseStatus::failed, missing_reason_};
        if (store_) {
            ReferenceKey key;
            key.desc = desc;
            key.input_seed = input_seed(index);
            key.backend = reference_name_;
            key.backend_version = backend_version_;
            outputs_ = store_->load_or_compute(
                key, host, [&] { return compute(host, desc); }, source_);
        } else {
            outputs_ = compute(host, desc);
            source_ = "computed";
        }
    } catch (const MeasureFailure &f) {
        error_ = "cannot verify: reference backend '" + reference_name_ + "': " + f.reason;
        throw MeasureFailure{CaseStatus::failed, error_};
    }
    return *outputs_;
}

} // namespace opbench
