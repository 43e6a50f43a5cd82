// The cuda plugin's kernel timeline from CUPTI's activity API; see kernel_timeline.hpp.
#include "kernel_timeline.hpp"

#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace opbench::cuda {
namespace {

// libcupti's entry points, resolved once with dlopen (the plugin loads without it).
struct Cupti {
    std::string missing; // why it could not be loaded; empty when loaded
    decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
    decltype(&cuptiActivityEnable) enable = nullptr;
    decltype(&cuptiActivityDisable) disable = nullptr;
    decltype(&cuptiActivityFlushAll) flush_all = nullptr;
    decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
    decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
    decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
    decltype(&cuptiGetResultString) result_string = nullptr;
    bool callbacks_registered = false;
};

template <class F>
bool resolve(void *lib, const char *name, F &out) {
    out = reinterpret_cast<F>(dlsym(lib, name));
    return out != nullptr;
}

Cupti load_cupti() {
    Cupti c;
    void *lib = nullptr;
    std::string tried;
    for (const char *name : {"libcupti.so.13", "libcupti.so"}) {
        if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
        const char *e = dlerror();
        tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
    }
    if (!lib) {
        c.missing = "CUPTI: libcupti not found (the CUDA toolkit's lib64 holds it): " + tried;
        return c;
    }
    const bool all = resolve(lib, "cuptiActivityRegisterCallbacks", c.register_callbacks) &&
                     resolve(lib, "cuptiActivityEnable", c.enable) && resolve(lib, "cuptiActivityDisable", c.disable) &&
                     resolve(lib, "cuptiActivityFlushAll", c.flush_all) &&
                     resolve(lib, "cuptiActivityGetNextRecord", c.next_record) &&
                     resolve(lib, "cuptiActivityPushExternalCorrelationId", c.push) &&
                     resolve(lib, "cuptiActivityPopExternalCorrelationId", c.pop) &&
                     resolve(lib, "cuptiGetResultString", c.result_string);
    if (!all) c.missing = "CUPTI: libcupti lacks the activity API this plugin was built against (CUDA 13)";
    return c;
}

Cupti &cupti() {
    static Cupti c = load_cupti();
    return c;
}

std::string cupti_error(const char *what, CUptiResult r) {
    const char *text = nullptr;
    if (cupti().result_string) cupti().result_string(r, &text);
    std::string out = std::string("CUPTI: ") + what + ": " + (text ? text : std::to_string(int(r)));
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        out += " (the driver lets only admins profile: NVreg_RestrictProfilingToAdminUsers=0 or root)";
    return out;
}

// CUPTI's buffers: handed out on request, kept when completed until end() reads them.
constexpr size_t kBufferBytes = 8u << 20;
std::mutex g_buffers_mutex;
std::vector<std::pair<uint8_t *, size_t>> g_completed; // buffer, valid bytes

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0; // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
    std::lock_guard lock(g_buffers_mutex);
    g_completed.emplace_back(buffer, valid);
}

// The API kinds are enabled for their correlation ids only: CUPTI writes an
// external correlation record before each API record (cuBLASLt and cuDNN
// launch through the driver API, our kernels through the runtime's).
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

// One record as read from CUPTI's buffers, before its call and scope are known.
struct Raw {
    int32_t kind;
    uint64_t start, end;
    uint32_t stream, correlation;
    std::string name;
};

// The records of every completed buffer (freed), and the external ids by correlation.
void drain(std::vector<Raw> &out, std::map<uint32_t, uint64_t> &calls, std::map<uint32_t, uint64_t> &scopes) {
    std::vector<std::pair<uint8_t *, size_t>> buffers;
    {
        std::lock_guard lock(g_buffers_mutex);
        buffers.swap(g_completed);
    }
    for (auto [buffer, valid] : buffers) {
        CUpti_Activity *record = nullptr;
        while (cupti().next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
            switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            case CUPTI_ACTIVITY_KIND_KERNEL: {
                const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
                out.push_back({OPB_ACTIVITY_KERNEL, k->start, k->end, k->streamId, k->correlationId,
                               demangled(k->name)});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto *m = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
                out.push_back({OPB_ACTIVITY_MEMCPY, m->start, m->end, m->streamId, m->correlationId, "memcpy"});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto *m = reinterpret_cast<const CUpti_ActivityMemset4 *>(record);
                out.push_back({OPB_ACTIVITY_MEMSET, m->start, m->end, m->streamId, m->correlationId, "memset"});
                break;
            }
            case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                const auto *x = reinterpret_cast<const CUpti_ActivityExternalCorrelation *>(record);
                if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) calls[x->correlationId] = x->externalId;
                if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) scopes[x->correlationId] = x->externalId;
                break;
            }
            default: break;
            }
        }
        std::free(buffer);
    }
}

} // namespace

std::string demangled(const char *mangled) {
    if (!mangled) return "(unnamed kernel)";
    int status = 0;
    char *d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string out = status == 0 && d ? d : mangled;
    std::free(d);
    return out;
}

std::string KernelTimeline::begin() {
    Cupti &c = cupti();
    if (!c.missing.empty()) return c.missing;
    if (!c.callbacks_registered) {
        if (CUptiResult r = c.register_callbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS)
            return cupti_error("cuptiActivityRegisterCallbacks", r);
        c.callbacks_registered = true;
    }
    { // a buffer completed after an earlier window's end holds none of this window's records
        std::vector<Raw> stale;
        std::map<uint32_t, uint64_t> calls, scopes;
        drain(stale, calls, scopes);
    }
    for (CUpti_ActivityKind kind : kKinds)
        if (CUptiResult r = c.enable(kind); r != CUPTI_SUCCESS) {
            for (CUpti_ActivityKind k : kKinds) c.disable(k);
            return cupti_error("cuptiActivityEnable", r);
        }
    recording_ = true;
    calls_ = 0;
    scope_names_.clear();
    return {};
}

std::string KernelTimeline::end(opb_activity_fn fn, void *user) {
    if (!recording_) return "activity_end without a successful activity_begin";
    recording_ = false;
    Cupti &c = cupti();
    const CUptiResult flushed = c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (CUpti_ActivityKind kind : kKinds) c.disable(kind);
    std::vector<Raw> raw;
    std::map<uint32_t, uint64_t> calls, scopes;
    drain(raw, calls, scopes);
    if (flushed != CUPTI_SUCCESS) return cupti_error("cuptiActivityFlushAll", flushed);
    std::stable_sort(raw.begin(), raw.end(), [](const Raw &a, const Raw &b) { return a.start < b.start; });
    for (const Raw &r : raw) {
        opb_activity a;
        std::memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        a.abi_version = OPB_ABI_VERSION;
        a.kind = r.kind;
        const auto call = calls.find(r.correlation);
        a.call = call == calls.end() ? -1 : int32_t(call->second) - 1;
        a.start_ns = r.start;
        a.end_ns = std::max(r.end, r.start);
        a.stream = r.stream;
        a.name = r.name.c_str();
        const auto scope = scopes.find(r.correlation);
        if (scope != scopes.end() && scope->second >= 1 && scope->second <= scope_names_.size())
            a.scope = scope_names_[scope->second - 1];
        fn(user, &a);
    }
    return {};
}

void KernelTimeline::call_begin() {
    if (recording_) cupti().push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, uint64_t(++calls_)); // call index + 1
}

void KernelTimeline::call_end() {
    uint64_t id = 0;
    if (recording_) cupti().pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

void KernelTimeline::scope_begin(const char *name) {
    if (!recording_) return;
    auto it = std::find(scope_names_.begin(), scope_names_.end(), name);
    if (it == scope_names_.end()) it = scope_names_.insert(scope_names_.end(), name);
    cupti().push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, uint64_t(it - scope_names_.begin()) + 1);
}

void KernelTimeline::scope_end() {
    uint64_t id = 0;
    if (recording_) cupti().pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &id);
}

} // namespace opbench::cuda
