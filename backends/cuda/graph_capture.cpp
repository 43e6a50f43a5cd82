#include "graph_capture.hpp"

namespace opbench::cuda {

namespace {
std::string cuda_failure(const char *what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}
} // namespace

std::string CapturedGraph::capture(cudaStream_t stream, int calls, const std::function<std::string()> &issue_one) {
    release();
    // Thread-local: another thread's unrelated CUDA calls do not break it.
    cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuda_failure("cudaStreamBeginCapture", e);
    }
    std::string why;
    for (int k = 0; k < calls && why.empty(); ++k) why = issue_one();
    // Always end the capture, so the stream leaves capture mode even when a
    // call failed; an invalidated capture returns its error here.
    cudaGraph_t graph = nullptr;
    e = cudaStreamEndCapture(stream, &graph);
    if (why.empty() && e != cudaSuccess) why = cuda_failure("cudaStreamEndCapture", e);
    if (why.empty() && (e = cudaGraphInstantiate(&exec_, graph, 0)) != cudaSuccess) {
        exec_ = nullptr;
        why = cuda_failure("cudaGraphInstantiate", e);
    }
    if (!why.empty()) {
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError(); // the refusal is reported, not left for the next call to find
        return "CUDA graph capture of " + std::to_string(calls) + " calls: " + why;
    }
    graph_ = graph;
    return {};
}

cudaError_t CapturedGraph::launch(cudaStream_t stream) const {
    if (!exec_) return cudaErrorInvalidValue;
    return cudaGraphLaunch(exec_, stream);
}

void CapturedGraph::release() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
}

} // namespace opbench::cuda
