// opbench SDK — small C++ helpers for writing a backend plugin.
//
// Optional: a plugin may implement plugin.h directly. These helpers cover
// what every backend otherwise writes again: the last-error string, memory
// accounting (current / peak / workspace, reported to the host), aligned host
// allocations, turning C++ exceptions into status codes at the boundary,
// checking the struct headers the host passes (check_struct, write_struct,
// read_op_desc), answering for ops a backend does not run
// (unsupported_op), and a CPU plugin's copy_in / copy_out
// (copy_host_memory). Standard library only.
#ifndef OPBENCH_BACKEND_HELPERS_HPP
#define OPBENCH_BACKEND_HELPERS_HPP

#include "ops.hpp"
#include "plugin.h"
#include "two_halves.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
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

// copy_in / copy_out of a CPU plugin, whose memory is host memory. A copy
// of hundreds of MB into freshly allocated memory is mostly the first
// touch of its pages (about 12 us per 4 KiB page on a KVM guest of this
// project, issue 44): two threads, each copying its half, take about half
// as long (two_halves.hpp). Smaller copies, such as a decoder step's timed
// copy of its embeddings, stay on the calling thread.
inline constexpr uint64_t kCopyWorthAThread = uint64_t(64) << 20;
inline void copy_host_memory(void *dst, const void *src, uint64_t bytes) {
    auto *d = static_cast<unsigned char *>(dst);
    const auto *s = static_cast<const unsigned char *>(src);
    in_two_halves(int64_t(bytes), bytes >= kCopyWorthAThread,
                  [&](int64_t begin, int64_t end) { std::memcpy(d + begin, s + begin, std::size_t(end - begin)); });
}

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

// ---- struct headers ------------------------------------------------------------
//
// Every struct in plugin.h begins with struct_size and abi_version. A plugin
// accepts any minor of its major and never touches a byte beyond the
// struct_size it was given; these helpers are that rule, written once.

// The size of ABI 1.0's opb_op_desc: later minors only append after the union,
// so every host of major 1 sends at least this much.
inline constexpr std::size_t kOpDescSize_1_0 =
    offsetof(opb_op_desc, p) + sizeof(static_cast<opb_op_desc *>(nullptr)->p);
// The header every struct starts with.
inline constexpr std::size_t kStructHeaderSize = 2 * sizeof(uint32_t);

// The least struct_size a plugin accepts for each struct the host passes: it
// must hold the first field the plugin reads or fills (for a description,
// all of ABI 1.0's). Fields beyond a caller's struct_size are left alone.
constexpr std::size_t min_struct_size(const opb_op_desc *) { return kOpDescSize_1_0; }
constexpr std::size_t min_struct_size(const opb_device_info *) {
    return offsetof(opb_device_info, kind) + sizeof(int32_t);
}
constexpr std::size_t min_struct_size(const opb_memory_stats *) {
    return offsetof(opb_memory_stats, current_bytes) + sizeof(uint64_t);
}

inline std::string abi_text(uint32_t v) {
    return std::to_string(OPB_ABI_MAJOR(v)) + "." + std::to_string(OPB_ABI_MINOR(v));
}

// OPB_OK when `s` is not NULL, speaks this plugin's ABI major and holds at
// least `needed` bytes (default: min_struct_size); otherwise OPB_ERR_INVALID
// with "<backend>: <what>...".
template <class T>
[[nodiscard]] opb_status check_struct(BackendBase *b, std::string_view backend, const char *what, const T *s,
                                      std::size_t needed = min_struct_size(static_cast<const T *>(nullptr))) {
    const std::string where = std::string(backend) + ": " + what;
    if (!s) return b->fail(OPB_ERR_INVALID, where + " is NULL");
    if (OPB_ABI_MAJOR(s->abi_version) != OPB_ABI_VERSION_MAJOR)
        return b->fail(OPB_ERR_INVALID, where + ".abi_version is " + abi_text(s->abi_version) +
                                            ", this plugin speaks " + abi_text(OPB_ABI_VERSION) +
                                            " (majors must match)");
    if (s->struct_size < needed)
        return b->fail(OPB_ERR_INVALID, where + ".struct_size is " + std::to_string(s->struct_size) +
                                            ", expected at least " + std::to_string(needed));
    return OPB_OK;
}

// Copies `filled` into the caller's `out`, leaving out's header as the caller
// wrote it and no byte beyond out->struct_size touched. `out` passed check_struct.
template <class T>
void write_struct(T *out, const T &filled) {
    const std::size_t size = out->struct_size < sizeof(T) ? out->struct_size : sizeof(T);
    if (size <= kStructHeaderSize) return;
    std::memcpy(reinterpret_cast<char *>(out) + kStructHeaderSize,
                reinterpret_cast<const char *>(&filled) + kStructHeaderSize, size - kStructHeaderSize);
}

// The whole of a backend's memory_stats entry point: `out` checked, then
// filled from the instance's MemoryAccount, only the caller's fields written.
//   opb_status memory_stats(opb_backend *b, opb_memory_stats *out) {
//       return b ? sdk::memory_stats(self(b), "mybackend", out) : OPB_ERR_INVALID;
//   }
inline opb_status memory_stats(BackendBase *b, std::string_view backend, opb_memory_stats *out) {
    if (opb_status s = check_struct(b, backend, "opb_memory_stats", out); s != OPB_OK) return s;
    opb_memory_stats stats;
    std::memset(&stats, 0, sizeof stats);
    b->memory.fill(&stats);
    write_struct(out, stats);
    return OPB_OK;
}

// OPB_ERR_UNSUPPORTED for an op this backend does not run, with the reason:
// the host then records the case as skipped, never as failed. Use it for ops
// the backend has no code for, including ops newer than the SDK it was built
// with. `offers` (optional) names what it does run.
[[nodiscard]] inline opb_status unsupported_op(BackendBase *b, std::string_view backend, int op,
                                               std::string_view offers = {}) {
    const OpInfo *row = op_info(op);
    std::string what =
        row ? std::string(row->name)
            : "op " + std::to_string(op) + " (unknown to this plugin's SDK, ABI " + abi_text(OPB_ABI_VERSION) + ")";
    std::string message = std::string(backend) + ": " + what + ": not offered by this backend";
    if (!offers.empty()) message += " (it offers " + std::string(offers) + ")";
    return b->fail(OPB_ERR_UNSUPPORTED, message);
}

// Reads the host's op description into `out`: the header checked (at least
// ABI 1.0's size), the struct copied (a field this SDK has and the host's
// struct lacks reads as 0), an op this SDK does not know answered by
// unsupported_op, a malformed description by OPB_ERR_INVALID.
[[nodiscard]] inline opb_status read_op_desc(BackendBase *b, std::string_view backend, const opb_op_desc *in,
                                             opb_op_desc &out) {
    if (opb_status s = check_struct(b, backend, "opb_op_desc", in); s != OPB_OK) return s;
    std::memset(&out, 0, sizeof out);
    std::memcpy(&out, in, in->struct_size < sizeof out ? in->struct_size : sizeof out);
    out.struct_size = sizeof out; // the copy holds exactly this SDK's layout
    if (!op_info(out.op)) return unsupported_op(b, backend, out.op);
    if (std::string e = validate_desc(out); !e.empty())
        return b->fail(OPB_ERR_INVALID,
                       std::string(backend) + ": invalid " + std::string(op_name(out.op)) + " description: " + e);
    return OPB_OK;
}

} // namespace opbench::sdk

#endif // OPBENCH_BACKEND_HELPERS_HPP
