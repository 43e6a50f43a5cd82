// oneDNN backend: the plugin table (plugin.h) over the plans built in
// onednn_plans.cpp. Every entry runs inside sdk::guarded so no exception
// crosses the C boundary.
#include "onednn_backend.hpp"
#include "opbench/host_cpu.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace opbench::onednn {
namespace {

Backend *self(opb_backend *b) { return reinterpret_cast<Backend *>(b); }

const char *runtime_name(unsigned rt) {
    switch (rt) {
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "unknown";
    }
}

std::string cpu_model_name() {
    std::string name = opbench::host::cpu_model_name();
    return name.empty() ? "unknown CPU" : name;
}

// Reads a host-supplied description (sdk::read_op_desc: header, copy, validation).
std::optional<opb_op_desc> read_desc(Backend *b, const opb_op_desc *in, opb_status &st) {
    opb_op_desc d;
    st = sdk::read_op_desc(b, "onednn", in, d);
    if (st != OPB_OK) return std::nullopt;
    return d;
}

void *alloc_workspace(Backend *b, uint64_t bytes, const std::string &what) {
    const uint64_t rounded = (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!p)
        throw std::runtime_error("onednn: cannot allocate " + std::to_string(bytes) + " bytes of workspace for " +
                                 what);
    b->memory.workspace_acquired(bytes);
    return p;
}

void release_plan(Backend *b, Plan *plan) {
    for (auto [p, bytes] : plan->buffers) {
        std::free(p);
        b->memory.workspace_released(bytes);
    }
    delete plan;
}

// Allocates the recipe's buffers and a scratchpad shared by its steps (they
// run one after another), creates the primitives (JIT happens here) and
// prebuilds each step's argument list.
Plan *instantiate(Backend *b, const Recipe &r, int threads) {
    auto plan = std::make_unique<Plan>();
    plan->threads = threads;
    // Buffers are released by release_plan if anything below throws.
    struct Guard {
        Backend *b;
        std::unique_ptr<Plan> &p;
        ~Guard() {
            if (p) release_plan(b, p.release());
        }
    } guard{b, plan};

    std::vector<void *> bufs;
    for (const auto &spec : r.buffers) {
        void *p = alloc_workspace(b, spec.bytes, spec.what);
        plan->buffers.push_back({p, spec.bytes});
        plan->workspace_bytes += spec.bytes;
        if (spec.init) spec.init(p);
        bufs.push_back(p);
    }
    std::size_t scratch = 0;
    for (const auto &s : r.steps) scratch = std::max(scratch, s.pd.scratchpad_desc().get_size());
    void *scratch_ptr = nullptr;
    if (scratch > 0) {
        scratch_ptr = alloc_workspace(b, scratch, "oneDNN scratchpad");
        plan->buffers.push_back({scratch_ptr, scratch});
        plan->workspace_bytes += scratch;
    }

    plan->bindings.resize(r.tensor_count);
    plan->bound.assign(r.tensor_count, nullptr);
    plan->memories.reserve(64);
    for (const auto &s : r.steps) {
        Plan::Step step{dnnl::primitive(s.pd.get()), {}, s.scope.empty() ? s.what : s.scope};
        for (const auto &[arg, ref] : s.args) {
            void *handle = ref.kind == MemRef::Buffer ? bufs.at(ref.index) : DNNL_MEMORY_NONE;
            dnnl::memory m(ref.md, b->engine, handle);
            if (ref.kind == MemRef::Tensor) plan->bindings.at(ref.index).push_back(m);
            step.args.push_back({arg, m.get()});
            plan->memories.push_back(std::move(m));
        }
        if (scratch_ptr) {
            dnnl::memory m(s.pd.scratchpad_desc(), b->engine, scratch_ptr);
            step.args.push_back({DNNL_ARG_SCRATCHPAD, m.get()});
            plan->memories.push_back(std::move(m));
        }
        if (!plan->impl.empty()) plan->impl += ", ";
        plan->impl += s.what + ": " + s.pd.impl_info_str();
        plan->steps.push_back(std::move(step));
    }
    if (r.own_kernel) {
        plan->own_kernel = r.own_kernel;
        plan->own_buffers = bufs;
        plan->impl = "own kernel (no oneDNN primitive)";
    }
    return plan.release();
}

char g_library_versions[64] = "oneDNN";

opb_status api_create(const opb_host_services *services, opb_backend **out) {
    if (!out) return OPB_ERR_INVALID;
    try {
        auto *b = new Backend(services);
        *out = reinterpret_cast<opb_backend *>(b);
        return OPB_OK;
    } catch (const std::exception &e) {
        if (services)
            services->log(services->host, OPB_LOG_ERROR, (std::string("onednn: create failed: ") + e.what()).c_str());
        return OPB_ERR_DEVICE;
    } catch (...) {
        return OPB_ERR_INTERNAL;
    }
}

void api_destroy(opb_backend *b) { delete self(b); }

const char *api_last_error(opb_backend *b) { return self(b)->error.c_str(); }

opb_status api_probe(opb_backend *b) {
    // The CPU engine and stream were created in create(): if that worked, the
    // backend runs here.
    return guarded(self(b), [&] { return OPB_OK; });
}

opb_status api_device_info(opb_backend *bb, opb_device_info *out) {
    auto *b = self(bb);
    return guarded(b, [&] {
        if (opb_status s = sdk::check_struct(b, "onednn", "opb_device_info", out); s != OPB_OK) return s;
        opb_device_info info;
        std::memset(&info, 0, sizeof info);
        info.kind = OPB_DEVICE_CPU;
        std::snprintf(info.name, sizeof info.name, "%s", cpu_model_name().c_str());
        const long page = sysconf(_SC_PAGESIZE);
        info.total_memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(page);
        info.free_memory = uint64_t(sysconf(_SC_AVPHYS_PAGES)) * uint64_t(page);
        sdk::write_struct(out, info);
        return OPB_OK;
    });
}

opb_status api_supports(opb_backend *bb, const opb_op_desc *in) {
    auto *b = self(bb);
    return guarded(b, [&] {
        opb_status st = OPB_OK;
        auto d = read_desc(b, in, st);
        if (!d) return st;
        try {
            (void)make_recipe(*b, *d);
        } catch (const Unsupported &e) {
            return b->fail(OPB_ERR_UNSUPPORTED, e.what());
        } catch (const UnknownOp &e) {
            return sdk::unsupported_op(b, "onednn", e.op);
        }
        return OPB_OK;
    });
}

opb_status api_alloc(opb_backend *bb, uint64_t bytes, void **out) {
    auto *b = self(bb);
    return guarded(b, [&] {
        if (!out) return b->fail(OPB_ERR_INVALID, "onednn: alloc: out is NULL");
        *out = b->host.allocate(bytes, b->memory);
        if (!*out)
            return b->fail(OPB_ERR_OUT_OF_MEMORY,
                           "onednn: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
        return OPB_OK;
    });
}

void api_free(opb_backend *b, void *p) { self(b)->host.release(p, self(b)->memory); }

opb_status api_copy(opb_backend *bb, void *dst, const void *src, uint64_t bytes, const char *what) {
    auto *b = self(bb);
    if (bytes > 0 && (!dst || !src)) return b->fail(OPB_ERR_INVALID, std::string("onednn: ") + what + ": NULL pointer");
    sdk::copy_host_memory(dst, src, bytes);
    return OPB_OK;
}
opb_status api_copy_in(opb_backend *b, void *dst, const void *src, uint64_t bytes) {
    return api_copy(b, dst, src, bytes, "copy_in");
}
opb_status api_copy_out(opb_backend *b, void *dst, const void *src, uint64_t bytes) {
    return api_copy(b, dst, src, bytes, "copy_out");
}

opb_status api_prepare(opb_backend *bb, const opb_op_desc *in, opb_plan **out, uint64_t *workspace_bytes) {
    auto *b = self(bb);
    return guarded(b, [&] {
        if (!out) return b->fail(OPB_ERR_INVALID, "onednn: prepare: out is NULL");
        opb_status st = OPB_OK;
        auto d = read_desc(b, in, st);
        if (!d) return st;
        const int threads = b->threads_for(*d);
        // oneDNN sizes its kernels and work split for the current team size,
        // so the thread count is set before the primitives are created.
        apply_threads(threads);
        Plan *plan = nullptr;
        try {
            plan = instantiate(b, make_recipe(*b, *d), threads);
            plan->op_scope = op_name(d->op).data(); // a view of a string literal
        } catch (const Unsupported &e) {
            return b->fail(OPB_ERR_UNSUPPORTED, e.what());
        } catch (const UnknownOp &e) {
            return sdk::unsupported_op(b, "onednn", e.op);
        }
        b->log(OPB_LOG_DEBUG, "onednn: " + std::string(op_name(d->op)) + " " + std::string(dtype_name(d->dtype)) +
                                  " threads=" + std::to_string(threads) + ": " + plan->impl);
        *out = reinterpret_cast<opb_plan *>(plan);
        if (workspace_bytes) *workspace_bytes = plan->workspace_bytes;
        return OPB_OK;
    });
}

opb_status api_execute(opb_backend *bb, opb_plan *pp, void *const *tensors, int32_t count) {
    auto *b = self(bb);
    auto *plan = reinterpret_cast<Plan *>(pp);
    return guarded(b, [&] {
        if (!plan) return b->fail(OPB_ERR_INVALID, "onednn: execute: plan is NULL");
        if (count != static_cast<int32_t>(plan->bindings.size()) || (count > 0 && !tensors))
            return b->fail(OPB_ERR_INVALID, "onednn: execute: the plan takes " + std::to_string(plan->bindings.size()) +
                                                " tensors, got " + std::to_string(count));
        for (int32_t i = 0; i < count; ++i) {
            if (!tensors[i])
                return b->fail(OPB_ERR_INVALID, "onednn: execute: tensor " + std::to_string(i) + " is NULL");
            if (tensors[i] == plan->bound[i]) continue; // same buffers as last time
            for (auto &m : plan->bindings[i]) m.set_data_handle(tensors[i]);
            plan->bound[i] = tensors[i];
        }
        apply_threads(plan->threads);
        auto run_step = [&](std::size_t s) {
            const auto &step = plan->steps[s];
            const dnnl_status_t rc = dnnl_primitive_execute(step.prim.get(), b->stream.get(),
                                                            static_cast<int>(step.args.size()), step.args.data());
            if (rc != dnnl_success)
                return b->fail(OPB_ERR_DEVICE, "onednn: execute: step " + std::to_string(s) +
                                                   " failed with oneDNN status " + std::to_string(int(rc)));
            return OPB_OK;
        };
        OPB_SCOPE(b->scopes, plan->op_scope);
        if (plan->own_kernel) {
            plan->own_kernel(tensors, plan->own_buffers);
            return OPB_OK;
        }
        // A plan of one step is the op itself: a scope of its own would only
        // repeat the op's (matmul inside matmul).
        if (plan->steps.size() == 1) return run_step(0);
        for (std::size_t s = 0; s < plan->steps.size(); ++s) {
            OPB_SCOPE(b->scopes, plan->steps[s].scope.c_str());
            if (const opb_status st = run_step(s); st != OPB_OK) return st;
        }
        return OPB_OK;
    });
}

void api_release(opb_backend *b, opb_plan *p) {
    if (p) release_plan(self(b), reinterpret_cast<Plan *>(p));
}

opb_status api_synchronize(opb_backend *bb) {
    auto *b = self(bb);
    return guarded(b, [&] {
        b->stream.wait();
        return OPB_OK;
    });
}

opb_status api_memory_stats(opb_backend *bb, opb_memory_stats *out) {
    return sdk::memory_stats(self(bb), "onednn", out);
}

void api_reset_peak(opb_backend *b) { self(b)->memory.reset_peak(); }

void api_info(opb_backend *bb, opb_info_fn fn, void *user) {
    auto *b = self(bb);
    if (!fn) return;
    (void)guarded(b, [&] {
        const dnnl_version_t *v = dnnl_version();
        const std::string version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                    std::to_string(v->patch) + " (git " + v->hash + ")";
        fn(user, "onednn_version", version.c_str());
        fn(user, "onednn_isa", isa_name(dnnl::get_effective_cpu_isa()));
        fn(user, "onednn_cpu_runtime", runtime_name(v->cpu_runtime));
        fn(user, "onednn_default_threads", std::to_string(b->default_threads).c_str());
        // The generic key the host's bottleneck analysis reads (threads used when a case sets none).
        fn(user, "default_threads", std::to_string(b->default_threads).c_str());
        fn(user, "onednn_verbose", "set ONEDNN_VERBOSE=1 to print each primitive's implementation");
        return OPB_OK;
    });
}

const opb_backend_api kApi = {
    sizeof(opb_backend_api),
    OPB_ABI_VERSION,
    "onednn",
    "0.1.0",
    "oneDNN CPU primitives (AVX-512 / AVX512-BF16 / AMX where the CPU has them)",
    g_library_versions,
    api_create,
    api_destroy,
    api_last_error,
    api_probe,
    api_device_info,
    api_supports,
    api_alloc,
    api_free,
    api_copy_in,
    api_copy_out,
    api_prepare,
    api_execute,
    api_release,
    api_synchronize,
    api_memory_stats,
    api_reset_peak,
    nullptr, // timer_start: host timing is exact for a synchronous CPU stream
    nullptr, // timer_stop
    api_info,
    nullptr, // flush_cache: the host's CPU cache eviction applies
};

} // namespace

// "All cores" (threads = 0) is OpenMP's team size as the process started:
// the number of cores, or OMP_NUM_THREADS when the user set it. Read once, at
// load, because prepare/execute change the calling thread's team size.
const int kProcessDefaultThreads = omp_get_max_threads();

Backend::Backend(const opb_host_services *s)
    : BackendBase(s, false), engine(dnnl::engine::kind::cpu, 0), stream(engine), scopes(s),
      default_threads(kProcessDefaultThreads) {}

Backend::~Backend() = default;

} // namespace opbench::onednn

OPB_PLUGIN_ENTRY(host_version) {
    if (OPB_ABI_MAJOR(host_version) != OPB_ABI_VERSION_MAJOR) return nullptr;
    const dnnl_version_t *v = dnnl_version();
    std::snprintf(opbench::onednn::g_library_versions, sizeof opbench::onednn::g_library_versions, "oneDNN %d.%d.%d",
                  v->major, v->minor, v->patch);
    return &opbench::onednn::kApi;
}
