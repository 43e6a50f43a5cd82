// Inputs and reference outputs of the case being run, computed once and
// shared by every backend of that case (cases run backend after backend).
#pragma once

#include "plugin_loader.hpp"
#include "recipe.hpp"
#include "verify.hpp"

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

    // Inputs of case number `index` (its position seeds them: stable across
    // runs of the same suite).
    const HostTensors &inputs(std::size_t index, const opb_op_desc &desc);

    // The reference backend's outputs for those inputs. Throws MeasureFailure
    // ("cannot verify: ...") when the reference cannot run the case; the
    // failure is remembered for the case's other backends.
    const HostBuffers &outputs(std::size_t index, const opb_op_desc &desc);

private:
    BackendInstance *reference_;
    std::string reference_name_, missing_reason_;
    std::size_t cached_ = SIZE_MAX;
    HostTensors inputs_;
    std::optional<HostBuffers> outputs_;
    std::string error_;
};

} // namespace opbench

namespace opbench {

class BackendWork;

// The check step for a backend case: the worst NMSE of its outputs against
// `reference`, passed when within `max_nmse` (tolerance_for(desc)).
[[nodiscard]] CheckVerdict check_against_reference(const BackendWork &work, const HostBuffers &reference,
                                                   const opb_op_desc &desc, double max_nmse);

} // namespace opbench
