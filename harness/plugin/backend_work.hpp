// One case on one backend as MeasuredWork (recipe.hpp): its tensors in the
// backend's memory, its prepared plan, and the cold-cache flush. Failures
// throw MeasureFailure (skipped when the backend says unsupported/unavailable).
#pragma once

#include "plugin/plugin_loader.hpp"
#include "measure/recipe.hpp"
#include "plugin/host_tensors.hpp"

#include "opbench/ops.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace opbench {

// Tensors of one case living in one backend's memory, freed on destruction.
class BackendTensors {
public:
    BackendTensors(BackendInstance &be, const HostTensors &host);
    ~BackendTensors();
    BackendTensors(const BackendTensors &) = delete;
    BackendTensors &operator=(const BackendTensors &) = delete;

    void *const *data() const { return ptrs_.data(); }
    int32_t count() const { return static_cast<int32_t>(ptrs_.size()); }
    void *at(std::size_t i) const { return ptrs_[i]; }

private:
    BackendInstance &be_;
    std::vector<void *> ptrs_;
};

// A prepared plan, released on destruction.
class PreparedPlan {
public:
    PreparedPlan(BackendInstance &be, const opb_op_desc &desc);
    ~PreparedPlan();
    PreparedPlan(const PreparedPlan &) = delete;
    PreparedPlan &operator=(const PreparedPlan &) = delete;

    opb_plan *get() const { return plan_; }
    uint64_t workspace_bytes() const { return workspace_bytes_; }

private:
    BackendInstance &be_;
    opb_plan *plan_ = nullptr;
    uint64_t workspace_bytes_ = 0;
};

void execute_once(BackendInstance &be, opb_plan *plan, const BackendTensors &t);
void synchronize(BackendInstance &be);

// Copies every output tensor (layout.is_output) back to the host.
[[nodiscard]] std::vector<std::vector<uint8_t>> read_outputs(BackendInstance &be, const BackendTensors &t,
                                                             const HostTensors &layout);

// A buffer twice the last-level cache (256 MiB when sysfs does not say),
// written between samples of a cold-cache case so that no operand is left in
// the CPU caches. Made once per run, before any case's peaks are reset.
class CacheEvictor {
public:
    CacheEvictor();
    void evict();
    std::size_t bytes() const { return buffer_.size(); }

private:
    std::vector<uint8_t> buffer_;
};

// The case `desc` with inputs `host` on backend `be`.
class BackendWork final : public MeasuredWork {
public:
    // `evictor` may be null when the case runs warm.
    BackendWork(BackendInstance &be, const opb_op_desc &desc, const HostTensors &host, CacheEvictor *evictor);

    void prepare() override;
    void execute() override;
    void synchronize() override;
    void flush_cache() override;
    bool has_device_timer() const override;
    void device_timer_start() override;
    double device_timer_stop() override;
    // ABI 1.5's entries, through plugin/device_probe.hpp.
    double host_timer_seconds() override;
    double sustained_clock_mhz() override;
    void clock_begin() override;
    ClockReading clock_end() override;
    // ABI 1.6's graph entries (launch graph): the reason names the backend.
    std::string graph_prepare(int calls) override;
    void graph_launch() override;
    void graph_release() override;

    // After prepare().
    [[nodiscard]] std::vector<std::vector<uint8_t>> outputs() const;
    [[nodiscard]] uint64_t workspace_bytes() const { return plan_ ? plan_->workspace_bytes() : 0; }
    // Frees the graph, tensors and plan (before the memory figures of the next case).
    void release();
    ~BackendWork() override;

private:
    BackendInstance &be_;
    const opb_op_desc &desc_;
    const HostTensors &host_;
    CacheEvictor *evictor_;
    std::unique_ptr<BackendTensors> tensors_;
    std::unique_ptr<PreparedPlan> plan_;
    double sustained_mhz_ = -1; // asked once: < 0 not yet
    bool graph_held_ = false;   // the plugin holds a graph of this work's calls
};

} // namespace opbench
