// Fused attention through cuDNN 9's backend API: the SDPA (flash attention)
// operation graph of planning.hpp (plan_sdpa) built as backend descriptors,
// finalized into an execution plan, and run. Kept apart from backend.cpp, as
// onednn keeps its plans apart from its plugin table: this file speaks cuDNN
// only, the backend allocates the buffers and reports the errors.
#pragma once

#include "planning.hpp"

#include "opbench/plugin.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>
#include <vector>

namespace opbench::cuda {

// A cuDNN call sequence's outcome: OPB_OK, or the status for the harness
// (UNSUPPORTED: cuDNN refused the graph, recorded as skipped) and why.
struct CudnnResult {
    opb_status status = OPB_OK;
    std::string message;
};

// "step: CUDNN_STATUS_... (cuDNN's own account of the last failure)".
std::string cudnn_error(const std::string &step, cudnnStatus_t s);

// A prepared cuDNN SDPA graph: every backend descriptor it created (destroyed
// in reverse order), the finalized execution plan and its workspace size.
struct CudnnSdpa {
    SdpaGraph graph;
    std::vector<cudnnBackendDescriptor_t> owned;
    cudnnBackendDescriptor_t plan = nullptr;
    int64_t workspace_size = 0;
    CudnnSdpa() = default;
    CudnnSdpa(const CudnnSdpa &) = delete;
    CudnnSdpa &operator=(const CudnnSdpa &) = delete;
    ~CudnnSdpa() {
        if (plan) cudnnBackendDestroyDescriptor(plan);
        for (auto it = owned.rbegin(); it != owned.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
    }
};

// Builds the SDPA operation graph of planning.hpp with cuDNN backend
// descriptors, asks the heuristics for engine configurations and finalizes the
// first one that this GPU/cuDNN accepts as an execution plan, into `S` (which
// owns every descriptor it created). Any cuDNN refusal is OPB_ERR_UNSUPPORTED
// naming the step and cuDNN's status.
CudnnResult build_sdpa_plan(cudnnHandle_t cudnn, const opb_op_desc &d, const cudaDeviceProp &prop, CudnnSdpa &S);

// Binds Q, K, V, O (`t`, in execute's order; FP8 also its four scales),
// the stats buffer, FP8's plan scalars (SdpaGraph::binding; null for
// bf16/f16) and the by-value scalars to their uids and runs the plan on `stream`.
CudnnResult run_sdpa_plan(cudnnHandle_t cudnn, cudaStream_t stream, const CudnnSdpa &S, void *const *t, void *stats,
                          void *fp8_scalars, void *workspace);

} // namespace opbench::cuda
