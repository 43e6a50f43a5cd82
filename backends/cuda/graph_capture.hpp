// The cuda plugin's graph launch mode (ABI 1.6 graph_prepare / graph_launch /
// graph_release, issue 41 item 3): a sample's k calls captured once from the
// backend's stream into a CUDA graph (cudaStreamBeginCapture ...
// cudaStreamEndCapture, cudaGraphInstantiate), each sample one
// cudaGraphLaunch on that stream. A library that refuses capture (a call
// that synchronises or allocates while the stream captures) ends the
// capture with an error: capture() says why in one line and holds nothing,
// and the host measures the calls back to back instead.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

namespace opbench::cuda {

class CapturedGraph {
public:
    CapturedGraph() = default;
    CapturedGraph(const CapturedGraph &) = delete;
    CapturedGraph &operator=(const CapturedGraph &) = delete;
    ~CapturedGraph() { release(); }

    // Captures `calls` runs of `issue_one` (which enqueues one call on
    // `stream` and returns "" or why it failed) into a new graph, replacing
    // any held; "" or why not, with nothing held then.
    [[nodiscard]] std::string capture(cudaStream_t stream, int calls, const std::function<std::string()> &issue_one);
    // One replay on `stream`; cudaSuccess or the launch's error.
    [[nodiscard]] cudaError_t launch(cudaStream_t stream) const;
    [[nodiscard]] bool held() const { return exec_ != nullptr; }
    void release();

private:
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
};

} // namespace opbench::cuda
