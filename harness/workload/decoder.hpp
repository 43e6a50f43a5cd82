// A pre-norm transformer decoder (one layer or a small model) run on one
// backend through the plugin API only: alloc / copy_in / prepare / execute.
//
// Each layer, for the tokens of one step (the prompt in prefill, one token
// per sequence in a decode step), at cache position L:
//
//   x ── norm ── Q,K,V projection ── (RoPE) ── attention (KV cache) ── output projection ──(+x)── h
//   h ── norm ── MLP (gelu | silu | swiglu | geglu) ──────────────────────────────────────(+h)── out
//
// The op set has no copy, slice, transpose or elementwise multiply, so the
// wiring is chosen so that every op reads and writes dense tensors where they
// already lie (decoder.cpp says how, op by op):
//   * the KV cache is one [seq = prompt + generate, head_dim] slab per
//     (sequence, head); the K and V projections of head h write their rows
//     straight into rows L.. of that slab (one matmul per sequence and head),
//     so nothing is copied into the cache;
//   * attention runs per (sequence, head) over the slab's first L + S rows,
//     which are dense; the plugin.h bottom-right causal alignment makes
//     seq_q = S against seq_kv = L + S exactly "a new token sees the cache
//     and itself";
//   * a decode step (one token) keeps heads side by side ([tokens, hidden]),
//     so Q is one matmul and the output projection one matmul;
//   * prefill keeps heads apart ([heads, tokens, head_dim]); the output
//     projection is then one matmul per head (head 0 with the bias, heads
//     1.. as one batched matmul) into per-head partial sums, reduced with a
//     chain of out-of-place adds; the residual add follows;
//   * swiglu's silu(gate) * up is a batched 1x1 matmul (batch = tokens x ffn);
//   * grouped-query attention (kv_heads < heads): the cache holds kv_heads
//     slabs per sequence; a decode step's attention runs per K/V head over
//     its group of query heads (adjacent in [tokens, heads x head_dim]);
//   * RoPE: K is projected into a scratch [seq, head_dim], and one rope call
//     per (sequence, K/V head) rotates it into the cache slab together with
//     the group's query heads; prefill then lays Q out [batch, heads, seq,
//     head_dim] (one Q matmul per sequence and head) so that the group is
//     adjacent.
// Every plan any step needs is prepared in prepare(), outside timing; a step
// issues execute calls only (and one copy_in: the step's token embeddings, as
// an embedding lookup would).
#pragma once

#include "suite/decoder_config.hpp"

#include "measure/memory_estimate.hpp"

#include "opbench/plugin.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opbench {
class BackendInstance;
}

namespace opbench::workload {

// A failure of the workload on a backend: status "skipped" (an op it needs is
// not supported) or "failed" (allocation, prepare, execute, copy).
struct WorkloadFailure {
    std::string status;
    std::string reason;
};

// Parts of a layer whose plugin calls are timed together.
enum class Component {
    embed,         // copy_in of the step's token embeddings
    attn_norm,     // pre-attention layernorm / rmsnorm
    qkv,           // Q, K, V projections (K and V written into the cache)
    attention,     // scaled dot-product attention against the cache
    attn_out,      // output projection (prefill: per-head partials and their reduction)
    attn_residual, // x + attention output
    mlp_norm,      // pre-MLP norm
    mlp_in,        // up projection (and gate, for swiglu)
    mlp_act,       // gelu / silu
    mlp_mul,       // swiglu only: silu(gate) * up, as a batched 1x1 matmul
    mlp_down,      // down projection
    mlp_residual,  // h + MLP output
    rope,          // rotary embedding of Q and K (RoPE models), after qkv
};
inline constexpr int kComponentCount = 13;
[[nodiscard]] std::string_view component_name(Component c);

// Sees each component's run of plugin calls begin and end (a profiler's
// scopes: the component spans nest the plugin's own scopes), and each step
// of a phase call around them (DecoderPhaseWork::execute). Called on the
// thread that runs the step; no synchronize is added.
class ComponentObserver {
public:
    virtual ~ComponentObserver() = default;
    virtual void begin(Component c, int layer) = 0;
    virtual void end(Component c, int layer) = 0;
    virtual void step_begin(int /*step*/) {}
    virtual void step_end(int /*step*/) {}
};

// Host copies of the weights and inputs, as float, already rounded to the
// workload's dtype: exactly the values the backend receives (dtype s8: the
// f32 weights that upload quantises per output channel, decoder.cpp). Layouts:
//   wq, wk, wv, w_up, w_gate, w_down: [out, in] (nn.Linear; used with trans_b)
//   wo: [in, out] (GPT-2's Conv1D), so head h's rows h*head_dim.. are dense
//   embeddings: [batch, prompt + generate, hidden], the input of every position
struct LayerWeights {
    std::vector<float> norm1_gamma, norm1_beta; // beta: layernorm only
    std::vector<float> wq, wk, wv, bq, bk, bv;  // biases: empty without bias
    std::vector<float> wo, bo;
    std::vector<float> norm2_gamma, norm2_beta;
    std::vector<float> w_up, b_up, w_gate, b_gate; // gate: swiglu only
    std::vector<float> w_down, b_down;
};
struct DecoderWeights {
    std::vector<LayerWeights> layers;
    std::vector<float> embeddings;
};
// Deterministic in config.seed and the shape; weights scaled by 1/sqrt(fan_in)
// so activations stay O(1) through the layers.
[[nodiscard]] DecoderWeights make_decoder_weights(const DecoderConfig &config);

// What one decoder run holds in its backend, from the configuration alone
// (nothing allocated): weights and the input embeddings, the KV cache, and
// the activations of the largest step (prefill). For --mem-limit and the
// machine's available memory before the workload starts.
struct DecoderMemory {
    uint64_t weights = 0, kv_cache = 0, activations = 0;
    [[nodiscard]] uint64_t total() const { return weights + kv_cache + activations; }
};
[[nodiscard]] DecoderMemory estimate_decoder_memory(const DecoderConfig &config);

// What one decoder run holds in its backend's device memory when that is not
// the host's (a GPU: the entry is skipped before it runs when this exceeds
// the device's free memory; docs/decoder.md, "Memory"). In bytes, e the
// dtype's size (f32 for an int8 layer's activations and cache):
//   weights     = estimate_decoder_memory's: the layers' weights at the
//                 level's dtype (int8: 1 byte a weight + 4 a channel's
//                 scale), norms, biases, + batch x context x hidden x e of
//                 input embeddings
//   kv_cache    = 2 x layers x batch x context x kv_heads x head_dim x e
//   activations = estimate_decoder_memory's: the largest step's (prefill)
//                 buffers, shared by every layer and step
//   workspace   = the op table's bound (ops.hpp workspace_bound) summed over
//                 the run's distinct attention plans, all prepared at once:
//                 composed attention keeps 2 x 4 B x heads x seq_q x seq_kv a
//                 plan, so prefill 8 x prompt^2 (a one-token prompt: the
//                 decode layout, 8 x G) and decode step t = 1..generate
//                 8 x G x (prompt + t), G = heads / kv_heads; fused: 0.
// Not counted: a backend's own scratch beyond the op table (cuda: up to
// 32 MiB of cuBLASLt workspace a matmul plan) and its context.
[[nodiscard]] DeviceMemoryNeed estimate_decoder_device_memory(const DecoderConfig &config);

// The decoder on one backend instance. Steps: 0 is the prefill of the whole
// prompt; step t >= 1 decodes token t-1 after the prompt. A step reads the
// cache rows that earlier steps wrote, so run them in order once; after that
// any step may be run again (it rewrites its own cache rows with the same
// values), which is what a repeated measurement does.
class DecoderRun {
public:
    DecoderRun(BackendInstance &backend, const DecoderConfig &config);
    ~DecoderRun();
    DecoderRun(const DecoderRun &) = delete;
    DecoderRun &operator=(const DecoderRun &) = delete;

    // supports() on every distinct op the workload runs. The first refusal
    // names the op and shape with the backend's reason.
    [[nodiscard]] std::optional<WorkloadFailure> unsupported();

    // Allocates weights, cache and activations, copies the weights in, and
    // prepares every plan. Throws WorkloadFailure.
    void prepare();

    [[nodiscard]] int steps() const { return 1 + static_cast<int>(config_.generate); }
    // Tokens a step processes: batch x prompt for prefill, batch for a decode step.
    [[nodiscard]] int64_t tokens_in_step(int step) const;
    // Plugin calls (execute and copy_in) a step issues.
    [[nodiscard]] std::size_t calls_in_step(int step) const;
    // Work of a step: the sum of op_flops / op_bytes (ops.hpp) over its
    // execute calls, so GFLOP/s of a workload is comparable with its ops'.
    [[nodiscard]] double flops_in_step(int step) const;
    [[nodiscard]] double bytes_in_step(int step) const;

    // Issues the step's calls; does not synchronize. Throws WorkloadFailure.
    void run_step(int step);
    // The same, each component's calls bracketed by observer.begin/end.
    void run_step(int step, ComponentObserver &observer);
    void synchronize();

    // After run_step(step) + synchronize: every layer's output for the step's
    // tokens, [layers][tokens x hidden] as float (copy_out).
    [[nodiscard]] std::vector<std::vector<float>> layer_outputs(int step) const;

    // Bytes the workload allocated through the backend, by purpose.
    struct Footprint {
        uint64_t weights = 0, kv_cache = 0, activations = 0, workspace = 0;
        std::size_t plans = 0;
    };
    [[nodiscard]] const Footprint &footprint() const { return footprint_; }
    // KV cache bytes one token adds (per sequence): 2 x layers x hidden x dtype size.
    [[nodiscard]] uint64_t kv_bytes_per_token() const;

    const DecoderConfig &config() const { return config_; }

private:
    struct Call {
        Component component;
        int layer = -1;                    // -1: before the first layer (embed)
        opb_plan *plan = nullptr;          // null: a copy_in
        const opb_op_desc *desc = nullptr; // into plans_ (stable: a std::map node)
        std::size_t first_tensor = 0;
        int32_t tensor_count = 0;
        const void *host_src = nullptr; // copy_in
        void *dst = nullptr;
        uint64_t bytes = 0;
    };
    struct StepProgram {
        std::vector<Call> calls;
        std::vector<void *> tensors; // the calls' tensor pointer arrays, back to back
    };
    struct LayerBuffers; // one layer's weights and cache in the backend, decoder.cpp
    struct BufferSet;    // the backend pointers, decoder.cpp
    class StepBuilder; // one step's calls, decoder.cpp

    void *alloc(uint64_t bytes, uint64_t &counter);
    void upload(void *dst, const std::vector<float> &values, int dtype);
    void copy_bytes_in(void *dst, const void *src, uint64_t bytes, const char *what);
    void upload_int8(void *&dst, void *&scale_dst, const std::vector<float> &w, int64_t rows, int64_t cols,
                     bool channel_rows, int64_t transposed_blocks_of);
    void upload_fp8(std::initializer_list<std::pair<void **, int64_t>> layouts, void *&scale_dst,
                    const std::vector<float> &w, int64_t rows, int64_t cols);
    // Prepared plan for `desc` (one per distinct description); before
    // prepare() it only records the description and returns null.
    std::pair<const opb_op_desc *, opb_plan *> plan_for(const opb_op_desc &desc);
    StepProgram build_step(int step);
    // The parts of prepare(): backend memory, then the host inputs.
    void upload_weights(BufferSet &bs);
    void upload_linear_weights(LayerBuffers &lb, const LayerWeights &w);
    void allocate_activations(BufferSet &bs);
    void make_step_inputs();
    void issue(const Call &c, const StepProgram &p);

    BackendInstance &be_;
    DecoderConfig config_;
    std::size_t elem_ = 4;
    std::vector<void *> allocations_;
    std::map<std::string, std::pair<opb_op_desc, opb_plan *>> plans_; // key: the desc's bytes
    std::vector<std::vector<uint8_t>> step_inputs_;                   // host embeddings per step, in the dtype
    std::vector<StepProgram> programs_;
    Footprint footprint_;
    std::unique_ptr<BufferSet> buf_; // null until prepare(): steps are then only described
    bool prepared_ = false;
};

// One line naming an op and its shape: "matmul M=16 N=64 K=768 trans_b bias".
[[nodiscard]] std::string describe_op(const opb_op_desc &desc);

} // namespace opbench::workload
