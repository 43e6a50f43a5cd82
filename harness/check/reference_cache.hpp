// Inputs and reference outputs of the case being run, computed once and
// shared by every backend of that case (cases run backend after backend).
// With a ReferenceStore (full mode), reference outputs also persist on disk
// across runs (reference_store.hpp).
#pragma once

#include "plugin/plugin_loader.hpp"
#include "measure/recipe.hpp"
#include "check/reference_store.hpp"
#include "check/verify.hpp"

#include "opbench/ops.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

using HostBuffers = std::vector<std::vector<uint8_t>>;

class ReferenceCache {
public:
    // `reference` may be null: every case then fails with `missing_reason`.
    ReferenceCache(BackendInstance *reference, std::string reference_name, std::string missing_reason);

    // Keep reference outputs in `store` too (null: memory only), under keys
    // naming the reference backend as `backend_version` says.
    void use_store(ReferenceStore *store, std::string backend_version);

    // The seed of case number `index`'s inputs (its position: stable across
    // runs of the same suite).
    [[nodiscard]] static uint64_t input_seed(std::size_t index) { return 0x6f7062656e6368ull + index; }

    // Inputs of case number `index`.
    const HostTensors &inputs(std::size_t index, const opb_op_desc &desc);

    // The reference backend's outputs for those inputs: from memory, the
    // store, or computed now. Throws MeasureFailure ("cannot verify: ...")
    // when the reference cannot run the case; the failure is remembered for
    // the case's other backends.
    const HostBuffers &outputs(std::size_t index, const opb_op_desc &desc);
    // Where the last outputs() came from: "computed" or "cache" (the store).
    [[nodiscard]] const std::string &source() const { return source_; }

private:
    HostBuffers compute(const HostTensors &host, const opb_op_desc &desc);

    BackendInstance *reference_;
    std::string reference_name_, missing_reason_;
    ReferenceStore *store_ = nullptr;
    std::string backend_version_;
    std::size_t cached_ = SIZE_MAX;
    HostTensors inputs_;
    std::optional<HostBuffers> outputs_;
    std::string error_, source_;
};

} // namespace opbench
