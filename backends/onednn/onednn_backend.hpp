// oneDNN backend: internal types shared by the plugin table
// (onednn_backend.cpp) and the per-op plan builders (onednn_plans.cpp).
// Nothing here crosses the plugin boundary.
#ifndef OPBENCH_BACKENDS_ONEDNN_BACKEND_HPP
#define OPBENCH_BACKENDS_ONEDNN_BACKEND_HPP

#include <opbench/backend_helpers.hpp>
#include <opbench/ops.hpp>
#include <opbench/plugin.h>
#include <opbench/scope.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace opbench::onednn {

// Where a primitive argument's memory lives: one of the op's tensors (bound at
// execute), or one of the plan's own buffers (allocated in prepare).
struct MemRef {
    enum Kind { Tensor, Buffer } kind;
    int index;             // tensor index in execute's order, or buffer index
    dnnl::memory::desc md; // how the primitive sees that memory
};

struct StepSpec {
    std::string what; // for messages: "matmul Q.K^T", "softmax", ...
    dnnl::primitive_desc_base pd;
    std::vector<std::pair<int, MemRef>> args; // DNNL_ARG_* -> memory
    std::string scope = {};                   // profiling scope of this step; empty: `what`
};

struct BufferSpec {
    std::string what;
    uint64_t bytes = 0;
    // Fills the buffer once in prepare (masks, zero means); may be empty.
    std::function<void(void *)> init;
};

// What an op needs, before anything is allocated or JIT-compiled: supports()
// builds a recipe (primitive descriptors only), prepare() instantiates it.
struct Recipe {
    std::vector<StepSpec> steps;
    std::vector<BufferSpec> buffers;
    int tensor_count = 0;
    // An op oneDNN 2.6 has no primitive for, run by this plugin's own code
    // instead of steps (rope: onednn_rope.cpp): called with execute's tensors
    // and the plan's buffers (allocated and initialised as `buffers` says).
    std::function<void(void *const *tensors, const std::vector<void *> &buffers)> own_kernel;
};

// A recipe turned into primitives, memory objects and owned buffers.
struct Plan {
    struct Step {
        dnnl::primitive prim;
        std::vector<dnnl_exec_arg_t> args; // prebuilt: execute allocates nothing
        std::string scope;                 // profiling scope (OPB_SCOPE) around the step
    };
    std::vector<Step> steps;
    std::vector<dnnl::memory> memories;               // keeps args' handles alive
    std::vector<std::vector<dnnl::memory>> bindings;  // per tensor: memories to point at it
    std::vector<void *> bound;                        // last pointer bound per tensor
    std::vector<std::pair<void *, uint64_t>> buffers; // workspace blocks (incl. scratchpad)
    uint64_t workspace_bytes = 0;
    int threads = 1;
    std::function<void(void *const *, const std::vector<void *> &)> own_kernel; // see Recipe
    std::vector<void *> own_buffers;                                            // its buffers
    std::string impl;            // implementation names oneDNN chose, for the log
    const char *op_scope = "op"; // profiling scope around all steps: the op's name
};

struct Backend : sdk::BackendBase {
    explicit Backend(const opb_host_services *s);
    ~Backend() override;

    dnnl::engine engine;
    dnnl::stream stream;
    sdk::AlignedHostAllocator host;
    sdk::ScopeHost scopes;   // profiling scopes: the op, and each step
    int default_threads = 1; // OpenMP's default team size at create()

    int threads_for(const opb_op_desc &d) const { return d.threads > 0 ? d.threads : default_threads; }
};

// Sets OpenMP's team size for the calling thread when it differs (cheap
// check, so execute can call it every time).
void apply_threads(int threads);

// Builds the recipe for `d`. Throws Unsupported (with the reason) when oneDNN
// 2.6 cannot express the op, dtype or shape; throws dnnl::error on library
// failures.
struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Thrown by make_recipe for an op it has no recipe for (an op newer than this
// backend): the boundary answers it with sdk::unsupported_op, a skip.
struct UnknownOp {
    int op;
};
Recipe make_recipe(const Backend &b, const opb_op_desc &d);

// RoPE (plugin.h, ROPE) as an own kernel: a cos/sin table per position and
// pair, computed in double in prepare (a buffer), then one pass over the
// rows of Q and K, OpenMP-parallel over rows (onednn_rope.cpp).
Recipe rope_recipe(const opb_op_desc &d);

// Effective ISA name, e.g. "avx512_core_bf16".
const char *isa_name(dnnl::cpu_isa isa);

} // namespace opbench::onednn

#endif
