// opbench SDK — small C++ helpers for writing a backend plugin.
//
// Optional: a plugin may implement plugin.h directly. These helpers cover
// what every backend otherwise writes again: the last-error string, memory
// accounting (current / peak / workspace, reported to the host), aligned host
// allocations, and turning C++ exceptions into status codes at the boundary.
// Standard library only.
#ifndef OPBENCH_BACKEND_HELPERS_HPP
#define OPBENCH_BACKEND_HELPERS_HPP

#include "plugin.h"

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

namespace opbench::sdk {

// Current / peak bytes of memory a backend owns, reported to the host's
// allocation accounting as it changes.
class MemoryCounter {
public:
    explicit MemoryCounter(const opb_host_services *services, bool is_device)
        : services_(services), is_device_(is_device) {}

    void allocated(uint64_t bytes) {
        current_ += bytes;
        if (current_ > peak_) peak_ = current_;
        if (services_) services_->on_alloc(services_->host, bytes, is_device_);
    }
    void freed(uint64_t bytes) {
        current_ = bytes > current_ ? 0 : current_ - bytes;
        if (services_) services_->on_free(services_->host, bytes, is_device_);
    }
    void workspace_acquired(uint64_t bytes) {
        workspace_ += bytes;
        allocated(bytes);
    }
    void workspace_released(uint64_t bytes) {
        workspace_ = bytes > workspace_ ? 0 : workspace_ - bytes;
        freed(bytes);
    }
    void reset_peak() { peak_ = current_; }
    void fill(opb_memory_stats *out) const {
        out->current_bytes = current_;
        out->peak_bytes = peak_;
        out->workspace_bytes = workspace_;
    }

private:
    const opb_host_services *services_;
    int32_t is_device_;
    uint64_t current_ = 0, peak_ = 0, workspace_ = 0;
};

// State every backend instance has. Derive the backend's instance from it and
// reinterpret_cast between opb_backend* and the derived type at the boundary.
struct BackendBase {
    explicit BackendBase(const opb_host_services *s, bool device_memory = false)
        : services(s), memory(s, device_memory) {}
    virtual ~BackendBase() = default;

    const opb_host_services *services;
    MemoryCounter memory;
    std::string error;

    // Record the message for last_error and return `status`.
    opb_status fail(opb_status status, std::string message) {
        error = std::move(message);
        return status;
    }
    void log(opb_log_level level, const std::string &message) const {
        if (services) services->log(services->host, level, message.c_str());
    }
};

// 64-byte aligned host memory that remembers each block's size so free can
// account for it.
class AlignedHostAllocator {
public:
    void *allocate(uint64_t bytes, MemoryCounter &counter) {
        const uint64_t rounded = (bytes + 63) / 64 * 64;
        void *p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
        if (!p) return nullptr;
        std::lock_guard<std::mutex> lock(mutex_);
        sizes_[p] = bytes;
        counter.allocated(bytes);
        return p;
    }
    void release(void *p, MemoryCounter &counter) {
        if (!p) return;
        uint64_t bytes = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = sizes_.find(p);
            if (it == sizes_.end()) return; // not ours: ignore rather than corrupt the heap
            bytes = it->second;
            sizes_.erase(it);
        }
        std::free(p);
        counter.freed(bytes);
    }

private:
    std::mutex mutex_;
    std::unordered_map<void *, uint64_t> sizes_;
};

// Run `body` (returning opb_status) and turn any escaping exception into a
// status plus message, so no exception crosses the C boundary.
template <class Body>
opb_status guarded(BackendBase *b, Body &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return b->fail(OPB_ERR_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::exception &e) {
        return b->fail(OPB_ERR_INTERNAL, e.what());
    } catch (...) {
        return b->fail(OPB_ERR_INTERNAL, "unknown C++ exception");
    }
}

} // namespace opbench::sdk

#endif // OPBENCH_BACKEND_HELPERS_HPP
