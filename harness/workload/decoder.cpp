#include "workload/decoder.hpp"

#include "plugin/plugin_loader.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

namespace opbench::workload {

std::string_view component_name(Component c) {
    static constexpr std::string_view names[kComponentCount] = {
        "embed",  "attn_norm", "qkv",     "attention", "attn_out",     "attn_residual", "mlp_norm",
        "mlp_in", "mlp_act",   "mlp_mul", "mlp_down",  "mlp_residual", "rope"};
    return names[static_cast<int>(c)];
}

std::string describe_op(const opb_op_desc &d) {
    std::string s(op_name(d.op));
    switch (d.op) {
    case OPB_OP_MATMUL: {
        const auto &p = d.p.matmul;
        if (p.batch != 1) s += fmt::format(" batch={}", p.batch);
        s += fmt::format(" M={} N={} K={}", p.m, p.n, p.k);
        if (p.trans_b) s += " trans_b";
        if (p.has_bias) s += " bias";
        break;
    }
    case OPB_OP_LAYERNORM:
    case OPB_OP_RMSNORM: s += fmt::format(" rows={} cols={}", d.p.norm.rows, d.p.norm.cols); break;
    case OPB_OP_GELU:
    case OPB_OP_SILU:
    case OPB_OP_ADD: s += fmt::format(" rows={} cols={}", d.p.eltwise.rows, d.p.eltwise.cols); break;
    case OPB_OP_ATTENTION: {
        const auto &p = d.p.attention;
        if (p.heads != 1) s += fmt::format(" heads={}", p.heads);
        if (attention_kv_heads(p) != p.heads) s += fmt::format(" kv_heads={}", p.kv_heads);
        s += fmt::format(" seq_q={} seq_kv={} head_dim={}{}", p.seq_q, p.seq_kv, p.head_dim, p.causal ? " causal" : "");
        break;
    }
    case OPB_OP_ROPE: {
        const auto &p = d.p.rope;
        s += fmt::format(" heads={} kv_heads={} seq={} head_dim={} position={}", p.heads, rope_kv_heads(p), p.seq,
                         p.head_dim, p.position);
        break;
    }
    case OPB_OP_QUANTIZE:
        s += fmt::format(" rows={} cols={} to {}", d.p.quantize.rows, d.p.quantize.cols,
                         dtype_name(d.p.quantize.out_dtype));
        break;
    default: break;
    }
    if (d.variant != 0) s += fmt::format(" variant={}", variant_name(d.op, d.variant));
    return s + fmt::format(" {}", dtype_name(d.dtype));
}

// ---- weights ------------------------------------------------------------------

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

float round_to_dtype(float v, int dtype) {
    if (dtype == OPB_DTYPE_F32) return v;
    float slot = 0.0f; // room for any dtype; only its first two bytes are used here
    store_from_f32(&slot, dtype, 0, v);
    return load_as_f32(&slot, dtype, 0);
}

// offset + scale * U(-1, 1), rounded to the dtype. Each tensor has its own
// stream, so changing one tensor's size leaves the others' values alone.
// Element i is a hash of (seed, i) (splitmix64): a Llama-7B-sized layer has
// 2e8 weights, and this is several times faster than a Mersenne twister.
std::vector<float> random_tensor(uint64_t seed, int64_t n, float scale, float offset, int dtype) {
    std::vector<float> v(static_cast<std::size_t>(n));
    const uint64_t base = splitmix64(seed);
    for (std::size_t i = 0; i < v.size(); ++i) {
        // The top 24 bits as a uniform in [-1, 1): exact in a float.
        const float u = float(splitmix64(base + i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
        v[i] = round_to_dtype(offset + scale * u, dtype);
    }
    return v;
}

LayerWeights make_layer_weights(const DecoderConfig &c, int64_t layer) {
    const int64_t d = c.hidden, f = c.ffn_width();
    int id = 0;
    auto seed = [&] { return splitmix64(c.seed ^ splitmix64(uint64_t(layer) * 64 + uint64_t(++id))); };
    // U(-a, a) with a = sqrt(3 / fan_in) has variance 1 / fan_in: a projection
    // keeps its input's scale, so attention scores are O(1), not saturated.
    auto weight = [&](int64_t rows, int64_t fan_in) {
        return random_tensor(seed(), rows * fan_in, std::sqrt(3.0f / float(fan_in)), 0.0f, c.act_dtype());
    };
    // A norm's beta (act dtype) or a linear layer's bias (bias dtype: f32 beside int8 and FP8 weights).
    auto small_as = [&](int64_t n, bool present, int dtype) {
        auto s = seed(); // drawn either way: presence of one tensor never shifts another's values
        return present ? random_tensor(s, n, 0.1f, 0.0f, dtype) : std::vector<float>{};
    };
    auto small = [&](int64_t n, bool present) { return small_as(n, present, c.act_dtype()); };
    auto bias = [&](int64_t n, bool present) { return small_as(n, present, c.bias_dtype()); };
    auto gamma = [&](int64_t n) { return random_tensor(seed(), n, 0.1f, 1.0f, c.act_dtype()); };
    const bool ln = c.norm == NormKind::layernorm;
    const bool gated = c.gated();
    // Q and O are heads x head_dim wide, K and V kv_heads x head_dim (both d
    // for a multi-head model with head_dim = hidden / heads).
    const int64_t qd = c.q_width(), kvd = c.kv_width();
    LayerWeights w;
    w.norm1_gamma = gamma(d);
    w.norm1_beta = small(d, ln);
    w.wq = weight(qd, d);
    w.wk = weight(kvd, d);
    w.wv = weight(kvd, d);
    w.bq = bias(qd, c.has_qkv_bias());
    w.bk = bias(kvd, c.has_qkv_bias());
    w.bv = bias(kvd, c.has_qkv_bias());
    w.wo = weight(d, qd); // [in = qd, out = d]
    w.bo = bias(d, c.bias);
    w.norm2_gamma = gamma(d);
    w.norm2_beta = small(d, ln);
    w.w_up = weight(f, d);
    w.b_up = bias(f, c.bias);
    {
        auto s = seed();
        if (gated) w.w_gate = random_tensor(s, f * d, std::sqrt(3.0f / float(d)), 0.0f, c.act_dtype());
    }
    w.b_gate = bias(f, c.bias && gated);
    w.w_down = weight(d, f);
    w.b_down = bias(d, c.bias);
    return w;
}

std::vector<float> make_embeddings(const DecoderConfig &c) {
    return random_tensor(splitmix64(c.seed ^ 0xe3bedull), c.batch * c.context() * c.hidden, 1.0f, 0.0f, c.act_dtype());
}

} // namespace

DecoderWeights make_decoder_weights(const DecoderConfig &config) {
    DecoderWeights w;
    for (int64_t l = 0; l < config.layers; ++l) w.layers.push_back(make_layer_weights(config, l));
    w.embeddings = make_embeddings(config);
    return w;
}

DecoderMemory estimate_decoder_memory(const DecoderConfig &c) {
    const uint64_t e = dtype_size(c.act_dtype()), d = uint64_t(c.hidden), f = uint64_t(c.ffn_width());
    const uint64_t L = uint64_t(c.layers), B = uint64_t(c.batch), ctx = uint64_t(c.context());
    const uint64_t H = uint64_t(c.heads), T = B * uint64_t(c.prompt); // the largest step: prefill
    const uint64_t qd = uint64_t(c.q_width()), kvd = uint64_t(c.kv_width());
    const bool ln = c.norm == NormKind::layernorm, gated = c.gated();
    // Per layer, as make_layer_weights draws them: the linear layers' weights
    // (int8 layers: one byte each, plus an f32 scale per output channel; FP8
    // layers: one byte each, plus an f32 scale per matrix, and with decode
    // steps Wo twice, DecoderRun::upload_linear_weights), then the norms'
    // parameters (e bytes each) and the biases (f32 beside int8 and FP8).
    const uint64_t linear = 2 * qd * d + 2 * kvd * d + (gated ? 3 : 2) * d * f;
    const uint64_t channels = qd + 2 * kvd + d + (gated ? 2 : 1) * f + d;
    const uint64_t matrices = gated ? 7 : 6;
    uint64_t layer = c.int8_linear()  ? linear + 4 * channels
                     : c.fp8_linear() ? linear + (c.generate > 0 ? qd * d : 0) + 4 * matrices
                                      : linear * e;
    layer += 2 * d * (ln ? 2 : 1) * e;
    uint64_t biases = 0;
    if (c.has_qkv_bias()) biases += qd + 2 * kvd;
    if (c.bias) biases += d + (gated ? 2 : 1) * f + d;
    layer += biases * dtype_size(c.bias_dtype());
    DecoderMemory m;
    m.weights = L * layer + B * ctx * d * e;
    m.kv_cache = 2 * L * B * ctx * kvd * e;
    // BufferSet: hidden[L + 1], normed, acc[2], attn_res, mlp_out of [T, d];
    // q, o (and q_rot with RoPE) of [T, qd]; partial [H, T, d]; up, gate,
    // act, prod of [T, f]; with RoPE k_new of [prompt, head_dim]; int8
    // layers' (and FP8 layers') quantised input [T, max(d, qd, f)] of one
    // byte each; FP8 layers' two activation scales (f32).
    m.activations = ((L + 1 + 1 + 2 + 1 + 1 + H) * T * d + (c.rope ? 3 : 2) * T * qd + 4 * T * f +
                     (c.rope ? uint64_t(c.prompt * c.head_dim()) : 0)) *
                    e;
    if (c.quantized_linear()) m.activations += T * std::max({d, qd, f});
    if (c.fp8_linear()) m.activations += 2 * sizeof(float);
    return m;
}

// Every attention plan the run prepares (decoder.hpp): prefill per
// (sequence, head) over the prompt, each decode step per (sequence, K/V
// head) over its group; bounded as the op table bounds one.
DeviceMemoryNeed estimate_decoder_device_memory(const DecoderConfig &c) {
    const DecoderMemory m = estimate_decoder_memory(c);
    DeviceMemoryNeed need{m.weights, m.kv_cache, m.activations, 0};
    const int64_t G = c.heads / std::max<int64_t>(1, c.kv_head_count());
    opb_op_desc d{};
    d.op = OPB_OP_ATTENTION;
    d.variant = c.attention_variant;
    d.dtype = c.act_dtype();
    for (int64_t step = 0; step <= c.generate; ++step) {
        const int64_t S = step == 0 ? c.prompt : 1, L = step == 0 ? 0 : c.prompt + step - 1;
        const bool decode = S == 1;
        d.p.attention = {1, decode ? G : 1, S, L + S, c.head_dim(), 0.0f, 1, decode ? 1 : 0};
        need.workspace += workspace_bound(d);
    }
    return need;
}

// ---- backend buffers --------------------------------------------------------------

struct DecoderRun::LayerBuffers {
    void *norm1_gamma = nullptr, *norm1_beta = nullptr;
    void *wq = nullptr, *wk = nullptr, *wv = nullptr, *bq = nullptr, *bk = nullptr, *bv = nullptr;
    void *wo = nullptr, *bo = nullptr;
    void *wo_heads = nullptr; // FP8: Wo per head, [heads, hidden, head_dim] (prefill); wo is then [hidden, q width]
    void *norm2_gamma = nullptr, *norm2_beta = nullptr;
    void *w_up = nullptr, *b_up = nullptr, *w_gate = nullptr, *b_gate = nullptr;
    void *w_down = nullptr, *b_down = nullptr;
    // int8 layers: each weight's per-output-channel scales (f32); FP8 layers: its one scale
    void *s_q = nullptr, *s_k = nullptr, *s_v = nullptr, *s_o = nullptr;
    void *s_up = nullptr, *s_gate = nullptr, *s_down = nullptr;
    void *k_cache = nullptr, *v_cache = nullptr; // [batch, kv_heads, context, head_dim]
};

// Pointers into backend memory. Activations are sized for the largest step
// (prefill: tokens = batch x prompt) and reused by every layer and step.
struct DecoderRun::BufferSet {
    std::vector<LayerBuffers> layers;
    std::vector<void *> hidden; // [layers + 1]: hidden[0] = embeddings, hidden[l + 1] = layer l's output
    void *normed = nullptr;     // [tokens, hidden]
    // q: decode [tokens, heads x head_dim]; prefill [heads, tokens, head_dim],
    // or with RoPE [batch, heads, seq, head_dim] (so that a K/V head's query
    // heads are adjacent for the rope call). o: decode as q; prefill
    // [heads, tokens, head_dim].
    void *q = nullptr, *o = nullptr;
    void *q_rot = nullptr;   // RoPE only: q rotated, q's layout
    void *k_new = nullptr;   // RoPE only: one (sequence, K/V head)'s new K rows [seq, head_dim] before rotation
    void *partial = nullptr; // prefill [heads, tokens, hidden]: per-head output projections
    void *acc[2] = {nullptr, nullptr}; // [tokens, hidden]: the head reduction's running sum
    void *attn_res = nullptr;          // [tokens, hidden]
    void *up = nullptr, *gate = nullptr, *act = nullptr, *prod = nullptr; // [tokens, ffn]
    void *mlp_out = nullptr;                                              // [tokens, hidden]
    // int8 (FP8) layers: the layer input quantised to u8 (e4m3), [tokens, max(hidden, q width, ffn)]
    void *xq = nullptr;
    void *act_scales = nullptr; // FP8 layers: f32 [2], the a_scale tensors: kInputScale, kHiddenScale
};

DecoderRun::DecoderRun(BackendInstance &backend, const DecoderConfig &config)
    : be_(backend), config_(config), elem_(dtype_size(config.act_dtype())) {
    if (auto e = config_.validate(); !e.empty()) throw WorkloadFailure{"failed", "decoder: " + e};
}

DecoderRun::~DecoderRun() {
    for (auto &[key, entry] : plans_)
        if (entry.second) be_.api().release(be_.handle(), entry.second);
    for (void *p : allocations_) be_.api().free(be_.handle(), p);
}

void *DecoderRun::alloc(uint64_t bytes, uint64_t &counter) {
    void *p = nullptr;
    opb_status s = be_.api().alloc(be_.handle(), bytes, &p);
    if (s != OPB_OK)
        throw WorkloadFailure{"failed", fmt::format("decoder: alloc of {} bytes: {}", bytes, be_.error_text(s))};
    allocations_.push_back(p);
    counter += bytes;
    return p;
}

void DecoderRun::upload(void *dst, const std::vector<float> &values, int dtype) {
    std::vector<uint8_t> bytes(values.size() * dtype_size(dtype));
    for (std::size_t i = 0; i < values.size(); ++i) store_from_f32(bytes.data(), dtype, int64_t(i), values[i]);
    copy_bytes_in(dst, bytes.data(), bytes.size(), "weights");
}

void DecoderRun::copy_bytes_in(void *dst, const void *src, uint64_t bytes, const char *what) {
    opb_status s = be_.api().copy_in(be_.handle(), dst, src, bytes);
    if (s != OPB_OK)
        throw WorkloadFailure{"failed", fmt::format("decoder: copy_in of {}: {}", what, be_.error_text(s))};
}

namespace {
// Where element (r, k) of a [rows, cols] matrix goes: stored as it is when
// n is 0; else in blocks of n rows, each transposed ([rows / n, cols, n]).
int64_t laid_out_at(int64_t r, int64_t k, int64_t cols, int64_t n) {
    return n == 0 ? r * cols + k : (r / n) * n * cols + k * n + r % n;
}
} // namespace

// Symmetric per-output-channel quantisation, as int8 inference stores a
// linear layer: scale = max |w| / 63 over the channel, s8 = round(w / scale).
// 7 bits, as quantisers for x86 without VNNI keep them: AVX2's vpmaddubsw adds
// two u8 x s8 products in s16 and saturates beyond (docs/measurement.md,
// "int8 weights"; at full range onednn's int8 decoder missed naive's by NMSE
// 1e-3 on this project's Zen 4).
// `w` is [rows, cols]; its output channels are its rows when channel_rows,
// else its columns. Stored [rows, cols] when transposed_blocks_of is 0;
// else each block of that many rows is stored transposed, one after another
// ([rows / n, cols, n]): n = rows is the whole [cols, rows], n = head_dim
// gives each head its own dense [in, head_dim].
void DecoderRun::upload_int8(void *&dst, void *&scale_dst, const std::vector<float> &w, int64_t rows, int64_t cols,
                             bool channel_rows, int64_t transposed_blocks_of) {
    const int64_t channels = channel_rows ? rows : cols;
    std::vector<float> scale(std::size_t(channels), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k) {
            float &m = scale[std::size_t(channel_rows ? r : k)];
            m = std::max(m, std::fabs(w[std::size_t(r * cols + k)]));
        }
    for (float &m : scale) m = m > 0.0f ? m / 63.0f : 1.0f;
    std::vector<int8_t> q(w.size());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k) {
            const float v = w[std::size_t(r * cols + k)] / scale[std::size_t(channel_rows ? r : k)];
            q[std::size_t(laid_out_at(r, k, cols, transposed_blocks_of))] =
                static_cast<int8_t>(saturate_int8(v, OPB_DTYPE_S8));
        }
    dst = alloc(q.size(), footprint_.weights);
    scale_dst = alloc(scale.size() * sizeof(float), footprint_.weights);
    copy_bytes_in(dst, q.data(), q.size(), "int8 weights");
    copy_bytes_in(scale_dst, scale.data(), scale.size() * sizeof(float), "int8 weight scales");
}

// Per-tensor FP8 quantisation, as FP8 checkpoints store a linear layer: one
// f32 scale for the matrix, max |w| / 448 (e4m3's largest value), and
// e4m3 = w / scale rounded to nearest even. `w` is [rows, cols]; each of
// `layouts` (laid_out_at's n: 0 as it is, else blocks of n rows each
// transposed) gets its own copy of the same bytes, and all share the scale.
void DecoderRun::upload_fp8(std::initializer_list<std::pair<void **, int64_t>> layouts, void *&scale_dst,
                            const std::vector<float> &w, int64_t rows, int64_t cols) {
    float amax = 0.0f;
    for (float v : w) amax = std::max(amax, std::fabs(v));
    const float scale = amax > 0.0f ? amax / 448.0f : 1.0f;
    std::vector<uint8_t> q(w.size());
    for (auto [dst, n] : layouts) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t k = 0; k < cols; ++k)
                q[std::size_t(laid_out_at(r, k, cols, n))] = f32_to_e4m3(w[std::size_t(r * cols + k)] / scale);
        *dst = alloc(q.size(), footprint_.weights);
        copy_bytes_in(*dst, q.data(), q.size(), "FP8 weights");
    }
    scale_dst = alloc(sizeof(float), footprint_.weights);
    copy_bytes_in(scale_dst, &scale, sizeof(float), "FP8 weight scales");
}

std::pair<const opb_op_desc *, opb_plan *> DecoderRun::plan_for(const opb_op_desc &desc) {
    std::string key(reinterpret_cast<const char *>(&desc), sizeof desc);
    auto [it, inserted] = plans_.try_emplace(key, desc, nullptr);
    const opb_op_desc *stored = &it->second.first;
    if (!prepared_ && !buf_) return {stored, nullptr}; // describing only
    if (it->second.second) return {stored, it->second.second};
    uint64_t workspace = 0;
    opb_status s = be_.api().prepare(be_.handle(), &desc, &it->second.second, &workspace);
    if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
        throw WorkloadFailure{"skipped", describe_op(desc) + ": " + be_.error_text(s)};
    if (s != OPB_OK) throw WorkloadFailure{"failed", describe_op(desc) + ": prepare: " + be_.error_text(s)};
    footprint_.workspace += workspace;
    ++footprint_.plans;
    return {stored, it->second.second};
}

int64_t DecoderRun::tokens_in_step(int step) const { return config_.batch * (step == 0 ? config_.prompt : 1); }

std::size_t DecoderRun::calls_in_step(int step) const {
    return step < static_cast<int>(programs_.size()) ? programs_[step].calls.size() : 0;
}

double DecoderRun::flops_in_step(int step) const {
    double total = 0;
    for (const Call &k : programs_.at(std::size_t(step)).calls)
        if (k.desc) total += op_flops(*k.desc);
    return total;
}

double DecoderRun::bytes_in_step(int step) const {
    double total = 0;
    for (const Call &k : programs_.at(std::size_t(step)).calls)
        if (k.desc) total += op_bytes(*k.desc);
    return total;
}

// K and V, per layer, kv_heads x head_dim each: grouped-query attention
// caches kv_heads / heads of what multi-head attention would.
uint64_t DecoderRun::kv_bytes_per_token() const {
    return 2ull * uint64_t(config_.layers) * uint64_t(config_.kv_width()) * elem_;
}

// int8 layers' activation scales (u8 with zero point 128 keeps
// [-128, 127] x scale): a normalised layer input or an attention output is
// O(1) (decoder.hpp: weights scaled by 1/sqrt(fan_in)), an MLP hidden value
// (gate x up) up to ~10. Static, as a calibrated int8 model's are; powers
// of two, so x / scale is exact in every backend. FP8 layers use the same
// two (e4m3 keeps up to 448 x scale: |x| < 7168 and 3584), where they only
// place the values in e4m3's exponent range; 3 mantissa bits are the step.
constexpr float kInputScale = 1.0f / 16.0f; // |x| < 8
constexpr float kHiddenScale = 1.0f / 8.0f; // |x| < 16
constexpr float kActScales[] = {kInputScale, kHiddenScale}; // FP8: BufferSet::act_scales, in this order

// Builds one step's program: the embedding copy, then per layer the calls of
// each part (norm, Q, K/V, attention, output projection, MLP) with their
// tensors. Before prepare() every pointer is null: it only describes.
class DecoderRun::StepBuilder {
public:
    StepBuilder(DecoderRun &run, int step)
        : run_(run), c(run.config_), B(c.batch), H(c.heads), Dh(c.head_dim()), d(c.hidden), F(c.ffn_width()),
          KVH(c.kv_head_count()), G(H / KVH), qd(c.q_width()), C(c.context()), S(step == 0 ? c.prompt : 1),
          L(step == 0 ? 0 : c.prompt + step - 1), T(B * S), decode(S == 1), step_(step),
          bs(run.buf_ ? *run.buf_ : none_) {
        if (!run.buf_) {
            none_.layers.resize(std::size_t(c.layers));
            none_.hidden.resize(std::size_t(c.layers + 1));
        }
    }
    StepBuilder(const StepBuilder &) = delete; // bs may refer to none_
    StepBuilder &operator=(const StepBuilder &) = delete;

    StepProgram build() {
        embed();
        for (int64_t l = 0; l < c.layers; ++l) add_layer(l);
        return std::move(prog_);
    }

private:
    DecoderRun &run_;
    const DecoderConfig &c;
    const int64_t B, H, Dh, d, F; // batch, heads, head_dim, hidden, ffn
    const int64_t KVH, G, qd, C;  // K/V heads, query heads per K/V head, q width, context
    const int64_t S;              // new tokens per sequence
    const int64_t L;              // cache rows before this step
    const int64_t T;              // tokens in the step
    const bool decode;            // heads side by side (see decoder.hpp)
    const int step_;
    BufferSet none_; // describing only: every pointer null
    const BufferSet &bs;
    StepProgram prog_;
    int64_t layer_ = -1;

    // Element offset into a buffer; stays null while only describing.
    void *at(void *base, int64_t elems) const { return bytes_at(base, elems * int64_t(run_.elem_)); }
    static void *bytes_at(void *base, int64_t bytes) { return base ? static_cast<char *>(base) + bytes : nullptr; }
    // Element offset of (sequence b, head h)'s S rows of Q.
    int64_t q_at(int64_t b, int64_t h) const {
        return decode ? b * qd + h * Dh : c.rope ? (b * H + h) * S * Dh : (h * B + b) * S * Dh;
    }

    void call(Component comp, const opb_op_desc &desc, std::initializer_list<void *> tensors) {
        Call k;
        k.component = comp;
        k.layer = int(layer_);
        std::tie(k.desc, k.plan) = run_.plan_for(desc);
        k.first_tensor = prog_.tensors.size();
        k.tensor_count = static_cast<int32_t>(tensors.size());
        prog_.tensors.insert(prog_.tensors.end(), tensors.begin(), tensors.end());
        prog_.calls.push_back(k);
    }
    opb_op_desc base_desc(int op, int variant = 0) const {
        opb_op_desc desc = make_desc(op, c.act_dtype(), variant);
        desc.threads = c.threads;
        return desc;
    }
    opb_op_desc matmul(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_b, bool bias) const {
        opb_op_desc desc = base_desc(OPB_OP_MATMUL);
        desc.p.matmul = {batch, m, n, k, 0, trans_b ? 1 : 0, bias ? 1 : 0, 0, 0.0f, 0, 0};
        return desc;
    }
    opb_op_desc rows_cols(int op, int64_t rows, int64_t cols, int variant = 0) const {
        opb_op_desc desc = base_desc(op, variant);
        desc.p.eltwise = {rows, cols};
        return desc;
    }
    void norm(Component comp, void *x, void *gamma, void *beta, void *y) {
        const bool ln = c.norm == NormKind::layernorm;
        opb_op_desc desc = base_desc(ln ? OPB_OP_LAYERNORM : OPB_OP_RMSNORM);
        desc.p.norm = {T, d, c.eps};
        if (ln)
            call(comp, desc, {x, gamma, beta, y});
        else
            call(comp, desc, {x, gamma, y});
    }
    // A linear layer's weight: its buffers, the element offset of the slice
    // a call uses, and that slice's first output channel (the offset of its
    // bias and, for int8 layers, of its scales).
    struct Weight {
        void *w = nullptr, *scale = nullptr, *bias = nullptr;
        int64_t offset = 0, channel = 0;
    };
    // A linear layer's matmul. int8 layers: s8 weights, u8 activations at
    // `act_scale` (what quantize_input wrote), f32 out. FP8 layers: e4m3
    // weights stored [out, in] (trans_b, the one layout cuBLASLt's FP8 GEMM
    // takes) and e4m3 activations, bf16 out; the scales are tensors (linear()).
    opb_op_desc linear_desc(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_b, bool bias,
                            float act_scale) const {
        if (c.fp8_linear()) {
            opb_op_desc desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F8_E4M3);
            desc.threads = c.threads;
            desc.p.matmul = {batch, m, n, k, 0, 1, bias ? 1 : 0, 0, 0.0f, 0, c.act_dtype()};
            return desc;
        }
        if (!c.int8_linear()) return matmul(batch, m, n, k, trans_b, bias);
        opb_op_desc desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
        desc.threads = c.threads;
        desc.p.matmul = {
            batch,        m, n, k, 0, trans_b ? 1 : 0, bias ? 1 : 0, OPB_DTYPE_U8, act_scale, kDefaultU8ZeroPoint,
            OPB_DTYPE_F32};
        return desc;
    }
    // int8 (FP8) layers: the layer input's `elems` elements quantised to u8
    // (e4m3) into xq, timed with the layer it feeds (`comp`).
    void quantize_input(Component comp, void *in, int64_t elems, float scale) {
        if (!c.quantized_linear()) return;
        opb_op_desc desc = base_desc(OPB_OP_QUANTIZE);
        if (c.fp8_linear())
            desc.p.quantize = {T, elems / T, scale, 0, OPB_DTYPE_F8_E4M3};
        else
            desc.p.quantize = {T, elems / T, scale, kDefaultU8ZeroPoint, OPB_DTYPE_U8};
        call(comp, desc, {in, bs.xq});
    }
    // The a_scale tensor of an FP8 layer whose input quantize_input wrote at `act_scale`.
    void *act_scale_tensor(float act_scale) const {
        const int64_t i = act_scale == kHiddenScale ? 1 : 0;
        return bytes_at(bs.act_scales, i * int64_t(sizeof(float)));
    }
    // in[in_at..] . W (+ bias) into out; for an int8 or FP8 layer A is the
    // same elements of xq (`act_scale` the scale it was quantised at), and
    // the scales go between B and the bias, as plugin.h and ops.hpp order
    // the tensors: int8 the weight's per-channel scales, FP8 a_scale then
    // b_scale (the weight's one scale).
    void linear(Component comp, const opb_op_desc &desc, void *in, int64_t in_at, const Weight &w, void *out,
                float act_scale) {
        void *bias = bytes_at(w.bias, w.channel * int64_t(dtype_size(c.bias_dtype())));
        const bool has_bias = desc.p.matmul.has_bias != 0;
        if (c.fp8_linear()) {
            void *a = bytes_at(bs.xq, in_at), *b = bytes_at(w.w, w.offset), *a_scale = act_scale_tensor(act_scale);
            if (has_bias)
                call(comp, desc, {a, b, a_scale, w.scale, bias, out});
            else
                call(comp, desc, {a, b, a_scale, w.scale, out});
            return;
        }
        if (c.int8_linear()) {
            void *a = bytes_at(bs.xq, in_at), *b = bytes_at(w.w, w.offset);
            void *scale = bytes_at(w.scale, w.channel * int64_t(sizeof(float)));
            if (has_bias)
                call(comp, desc, {a, b, scale, bias, out});
            else
                call(comp, desc, {a, b, scale, out});
            return;
        }
        void *a = at(in, in_at), *b = at(w.w, w.offset);
        if (has_bias)
            call(comp, desc, {a, b, bias, out});
        else
            call(comp, desc, {a, b, out});
    }

    void embed() {
        Call k;
        k.component = Component::embed;
        k.dst = bs.hidden[0];
        k.bytes = uint64_t(T * d) * run_.elem_;
        k.host_src = step_ < static_cast<int>(run_.step_inputs_.size()) ? run_.step_inputs_[step_].data() : nullptr;
        prog_.calls.push_back(k);
    }

    void add_layer(int64_t l) {
        layer_ = l;
        const LayerBuffers &w = bs.layers[std::size_t(l)];
        void *x = bs.hidden[std::size_t(l)];
        norm(Component::attn_norm, x, w.norm1_gamma, w.norm1_beta, bs.normed);
        quantize_input(Component::qkv, bs.normed, T * d, kInputScale);
        query(w);
        keys_values(w);
        attention(w, c.rope ? bs.q_rot : bs.q);
        void *attn = output_projection(w);
        call(Component::attn_residual, rows_cols(OPB_OP_ADD, T, d), {x, attn, bs.attn_res});
        mlp(w, bs.hidden[std::size_t(l + 1)]);
    }

    // Q: decode, one matmul -> [tokens, heads x head_dim] (each head's row
    // dense); prefill, one matmul per head -> [heads, tokens, head_dim], or
    // with RoPE one per (sequence, head) -> [batch, heads, seq, head_dim].
    // Head h's weights start at element h*Dh*d: rows h*Dh.. of the [out, in]
    // matrix, or for int8 its own [in, head_dim] block, which has no one
    // matrix of every head, so int8 decode runs one matmul per (token, head).
    void query(const LayerBuffers &w) {
        const bool qkv_bias = c.has_qkv_bias(), trans_b = !c.int8_linear();
        auto head = [&](int64_t h) { return Weight{w.wq, w.s_q, w.bq, h * Dh * d, h * Dh}; };
        if (decode && !c.int8_linear()) {
            linear(Component::qkv, linear_desc(1, T, qd, d, true, qkv_bias, kInputScale), bs.normed, 0, head(0), bs.q,
                   kInputScale);
        } else if (decode || c.rope) {
            for (int64_t b = 0; b < B; ++b)
                for (int64_t h = 0; h < H; ++h)
                    linear(Component::qkv, linear_desc(1, S, Dh, d, trans_b, qkv_bias, kInputScale), bs.normed,
                           b * S * d, head(h), at(bs.q, q_at(b, h)), kInputScale);
        } else {
            for (int64_t h = 0; h < H; ++h)
                linear(Component::qkv, linear_desc(1, T, Dh, d, trans_b, qkv_bias, kInputScale), bs.normed, 0, head(h),
                       at(bs.q, h * T * Dh), kInputScale);
        }
    }

    // K, V: per sequence and K/V head, written as rows L..L+S of the cache
    // slab; with RoPE, K goes to k_new and the rope call writes it there
    // rotated, together with the K/V head's group of query heads (adjacent
    // in q: [G, S, head_dim]), at positions L..L+S.
    void keys_values(const LayerBuffers &w) {
        const bool qkv_bias = c.has_qkv_bias(), trans_b = !c.int8_linear(); // int8: [in, head_dim] blocks
        opb_op_desc rope_desc = base_desc(OPB_OP_ROPE, c.rope_variant);
        rope_desc.p.rope = {1, G, 1, S, Dh, Dh, c.rope_theta, L};
        for (int64_t b = 0; b < B; ++b)
            for (int64_t kh = 0; kh < KVH; ++kh) {
                const int64_t slab_row = ((b * KVH + kh) * C + L) * Dh;
                const opb_op_desc desc = linear_desc(1, S, Dh, d, trans_b, qkv_bias, kInputScale);
                linear(Component::qkv, desc, bs.normed, b * S * d, {w.wk, w.s_k, w.bk, kh * Dh * d, kh * Dh},
                       c.rope ? bs.k_new : at(w.k_cache, slab_row), kInputScale);
                linear(Component::qkv, desc, bs.normed, b * S * d, {w.wv, w.s_v, w.bv, kh * Dh * d, kh * Dh},
                       at(w.v_cache, slab_row), kInputScale);
                if (c.rope)
                    call(Component::rope, rope_desc,
                         {at(bs.q, q_at(b, kh * G)), bs.k_new, at(bs.q_rot, q_at(b, kh * G)), at(w.k_cache, slab_row)});
            }
    }

    // Against the L + S cache rows of the K/V head. Decode: per (sequence,
    // K/V head), its G query heads at once (adjacent in q), so K and V are
    // read once per group; prefill: per (sequence, head).
    void attention(const LayerBuffers &w, void *q_used) {
        opb_op_desc desc = base_desc(OPB_OP_ATTENTION, c.attention_variant);
        if (decode) {
            desc.p.attention = {1, G, 1, L + 1, Dh, 0.0f, 1, 1};
            for (int64_t b = 0; b < B; ++b)
                for (int64_t kh = 0; kh < KVH; ++kh) {
                    const int64_t qo = q_at(b, kh * G), slab = (b * KVH + kh) * C * Dh;
                    call(Component::attention, desc,
                         {at(q_used, qo), at(w.k_cache, slab), at(w.v_cache, slab), at(bs.o, qo)});
                }
            return;
        }
        desc.p.attention = {1, 1, S, L + S, Dh, 0.0f, 1, 0};
        for (int64_t b = 0; b < B; ++b)
            for (int64_t h = 0; h < H; ++h) {
                const int64_t slab = (b * KVH + h / G) * C * Dh;
                call(
                    Component::attention, desc,
                    {at(q_used, q_at(b, h)), at(w.k_cache, slab), at(w.v_cache, slab), at(bs.o, (h * B + b) * S * Dh)});
            }
    }

    // The output projection; returns the buffer that holds it.
    void *output_projection(const LayerBuffers &w) {
        quantize_input(Component::attn_out, bs.o, T * qd, kInputScale);
        if (decode) { // FP8: wo is [out, in] (trans_b)
            linear(Component::attn_out, linear_desc(1, T, d, qd, c.fp8_linear(), c.bias, kInputScale), bs.o, 0,
                   {w.wo, w.s_o, w.bo}, bs.partial, kInputScale);
            return bs.partial;
        }
        // Head h's output times rows h*Dh.. of Wo ([in, out]: dense): head 0
        // carries the bias, heads 1.. are one batched matmul (an int8 layer's
        // scales, one per output column, serve every head). FP8: each head's
        // [out, head_dim] block of wo_heads, at the same offsets.
        void *wo = c.fp8_linear() ? w.wo_heads : w.wo;
        linear(Component::attn_out, linear_desc(1, T, d, Dh, false, c.bias, kInputScale), bs.o, 0, {wo, w.s_o, w.bo},
               bs.partial, kInputScale);
        if (H > 1)
            linear(Component::attn_out, linear_desc(H - 1, T, d, Dh, false, false, kInputScale), bs.o, T * Dh,
                   {wo, w.s_o, nullptr, Dh * d, 0}, at(bs.partial, T * d), kInputScale);
        // Sum of the per-head partials, out of place (no add runs in place).
        void *attn = bs.partial;
        for (int64_t h = 1; h < H; ++h) {
            void *dst = bs.acc[h % 2];
            call(Component::attn_out, rows_cols(OPB_OP_ADD, T, d), {attn, at(bs.partial, h * T * d), dst});
            attn = dst;
        }
        return attn;
    }

    // The MLP and its residual, into `out` (the layer's output).
    void mlp(const LayerBuffers &w, void *out) {
        norm(Component::mlp_norm, bs.attn_res, w.norm2_gamma, w.norm2_beta, bs.normed);
        quantize_input(Component::mlp_in, bs.normed, T * d, kInputScale);
        // int8 layers store the MLP's weights [in, out] (upload_weights).
        const bool trans_b = !c.int8_linear();
        linear(Component::mlp_in, linear_desc(1, T, F, d, trans_b, c.bias, kInputScale), bs.normed, 0,
               {w.w_up, w.s_up, w.b_up}, bs.up, kInputScale);
        void *hidden_act = bs.act;
        switch (c.mlp) {
        case MlpKind::gelu:
            call(Component::mlp_act, rows_cols(OPB_OP_GELU, T, F, c.gelu_variant), {bs.up, bs.act});
            break;
        case MlpKind::silu: call(Component::mlp_act, rows_cols(OPB_OP_SILU, T, F), {bs.up, bs.act}); break;
        case MlpKind::swiglu:
        case MlpKind::geglu:
            linear(Component::mlp_in, linear_desc(1, T, F, d, trans_b, c.bias, kInputScale), bs.normed, 0,
                   {w.w_gate, w.s_gate, w.b_gate}, bs.gate, kInputScale);
            if (c.mlp == MlpKind::geglu)
                call(Component::mlp_act, rows_cols(OPB_OP_GELU, T, F, OPB_GELU_TANH), {bs.gate, bs.act});
            else
                call(Component::mlp_act, rows_cols(OPB_OP_SILU, T, F), {bs.gate, bs.act});
            // silu(gate) * up: T*F independent 1x1 products.
            call(Component::mlp_mul, matmul(T * F, 1, 1, 1, false, false), {bs.act, bs.up, bs.prod});
            hidden_act = bs.prod;
            break;
        }
        quantize_input(Component::mlp_down, hidden_act, T * F, kHiddenScale);
        linear(Component::mlp_down, linear_desc(1, T, d, F, trans_b, c.bias, kHiddenScale), hidden_act, 0,
               {w.w_down, w.s_down, w.b_down}, bs.mlp_out, kHiddenScale);
        call(Component::mlp_residual, rows_cols(OPB_OP_ADD, T, d), {bs.attn_res, bs.mlp_out, out});
    }
};

DecoderRun::StepProgram DecoderRun::build_step(int step) { return StepBuilder(*this, step).build(); }

std::optional<WorkloadFailure> DecoderRun::unsupported() {
    if (plans_.empty())
        for (int s = 0; s < steps(); ++s) (void)build_step(s);
    for (const auto &[key, entry] : plans_) {
        if (std::string gap = plugin_abi_gap(entry.first, be_.api().abi_version); !gap.empty())
            return WorkloadFailure{"skipped", "needs " + describe_op(entry.first) + ": " + gap};
        opb_status s = be_.api().supports(be_.handle(), &entry.first);
        if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
            return WorkloadFailure{"skipped", "needs " + describe_op(entry.first) + ": " + be_.error_text(s)};
        if (s != OPB_OK)
            return WorkloadFailure{"failed", "supports(" + describe_op(entry.first) + "): " + be_.error_text(s)};
    }
    return std::nullopt;
}

// Weights, one layer at a time: the host copy of a Llama-7B-sized layer is
// 0.8 GB in f32, so it is not kept once the backend has it. Each layer's
// K/V cache beside them.
void DecoderRun::upload_weights(BufferSet &bs) {
    const DecoderConfig &c = config_;
    const uint64_t cache_bytes = uint64_t(c.batch * c.kv_width() * c.context()) * elem_;
    for (int64_t l = 0; l < c.layers; ++l) {
        const LayerWeights w = make_layer_weights(c, l);
        LayerBuffers lb;
        auto put = [&](void *&dst, const std::vector<float> &v, int dtype) {
            if (v.empty()) return;
            dst = alloc(uint64_t(v.size()) * dtype_size(dtype), footprint_.weights);
            upload(dst, v, dtype);
        };
        for (auto [dst, v] : {std::pair{&lb.norm1_gamma, &w.norm1_gamma},
                              {&lb.norm1_beta, &w.norm1_beta},
                              {&lb.norm2_gamma, &w.norm2_gamma},
                              {&lb.norm2_beta, &w.norm2_beta}})
            put(*dst, *v, c.act_dtype());
        for (auto [dst, v] : {std::pair{&lb.bq, &w.bq},
                              {&lb.bk, &w.bk},
                              {&lb.bv, &w.bv},
                              {&lb.bo, &w.bo},
                              {&lb.b_up, &w.b_up},
                              {&lb.b_gate, &w.b_gate},
                              {&lb.b_down, &w.b_down}})
            put(*dst, *v, c.bias_dtype());
        upload_linear_weights(lb, w);
        lb.k_cache = alloc(cache_bytes, footprint_.kv_cache);
        lb.v_cache = alloc(cache_bytes, footprint_.kv_cache);
        bs.layers.push_back(lb);
    }
}

// The linear layers' weights in the dtype; as int8 laid out so that no
// matmul reads a transposed B (oneDNN 2.6's int8 matmul repacks a transposed
// B on every call, inside the timed step): Q, K and V as one dense
// [in, head_dim] block per head, Wo as it is ([in, out]), the MLP's [in, out];
// as FP8 all [out, in] (trans_b), Wo included, which the prefill's per-head
// calls read as one [out, head_dim] block per head (wo_heads) and the decode
// steps whole (wo): an [out, in] matrix has no dense per-head slice, so with
// decode steps it is held twice.
void DecoderRun::upload_linear_weights(LayerBuffers &lb, const LayerWeights &w) {
    const DecoderConfig &c = config_;
    const int64_t d = c.hidden, f = c.ffn_width(), qd = c.q_width(), kvd = c.kv_width();
    if (c.fp8_linear()) {
        upload_fp8({{&lb.wq, 0}}, lb.s_q, w.wq, qd, d);
        upload_fp8({{&lb.wk, 0}}, lb.s_k, w.wk, kvd, d);
        upload_fp8({{&lb.wv, 0}}, lb.s_v, w.wv, kvd, d);
        if (c.generate > 0) // w.wo is [in = qd, out = d]
            upload_fp8({{&lb.wo_heads, c.head_dim()}, {&lb.wo, qd}}, lb.s_o, w.wo, qd, d);
        else
            upload_fp8({{&lb.wo_heads, c.head_dim()}}, lb.s_o, w.wo, qd, d);
        upload_fp8({{&lb.w_up, 0}}, lb.s_up, w.w_up, f, d);
        if (c.gated()) upload_fp8({{&lb.w_gate, 0}}, lb.s_gate, w.w_gate, f, d);
        upload_fp8({{&lb.w_down, 0}}, lb.s_down, w.w_down, d, f);
        return;
    }
    if (!c.int8_linear()) {
        for (auto [dst, v] : {std::pair{&lb.wq, &w.wq},
                              {&lb.wk, &w.wk},
                              {&lb.wv, &w.wv},
                              {&lb.wo, &w.wo},
                              {&lb.w_up, &w.w_up},
                              {&lb.w_gate, &w.w_gate},
                              {&lb.w_down, &w.w_down}})
            if (!v->empty()) {
                *dst = alloc(uint64_t(v->size()) * elem_, footprint_.weights);
                upload(*dst, *v, c.act_dtype());
            }
        return;
    }
    const int64_t dh = c.head_dim();
    upload_int8(lb.wq, lb.s_q, w.wq, qd, d, true, dh);
    upload_int8(lb.wk, lb.s_k, w.wk, kvd, d, true, dh);
    upload_int8(lb.wv, lb.s_v, w.wv, kvd, d, true, dh);
    upload_int8(lb.wo, lb.s_o, w.wo, qd, d, false, 0);
    upload_int8(lb.w_up, lb.s_up, w.w_up, f, d, true, f);
    if (c.gated()) upload_int8(lb.w_gate, lb.s_gate, w.w_gate, f, d, true, f);
    upload_int8(lb.w_down, lb.s_down, w.w_down, d, f, true, d);
}

// Activations, sized for the largest step (prefill: batch x prompt tokens).
void DecoderRun::allocate_activations(BufferSet &bs) {
    const DecoderConfig &c = config_;
    const int64_t d = c.hidden, F = c.ffn_width(), H = c.heads;
    const int64_t T = c.batch * c.prompt; // the largest step
    auto bytes = [&](int64_t elems) { return uint64_t(elems) * elem_; };
    uint64_t &act = footprint_.activations;
    for (int64_t l = 0; l <= c.layers; ++l) bs.hidden.push_back(alloc(bytes(T * d), act));
    bs.normed = alloc(bytes(T * d), act);
    bs.q = alloc(bytes(T * c.q_width()), act);
    bs.o = alloc(bytes(T * c.q_width()), act);
    if (c.rope) {
        bs.q_rot = alloc(bytes(T * c.q_width()), act);
        bs.k_new = alloc(bytes(c.prompt * c.head_dim()), act);
    }
    bs.partial = alloc(bytes(H * T * d), act);
    bs.acc[0] = alloc(bytes(T * d), act);
    bs.acc[1] = alloc(bytes(T * d), act);
    bs.attn_res = alloc(bytes(T * d), act);
    bs.up = alloc(bytes(T * F), act);
    bs.act = alloc(bytes(T * F), act);
    if (c.gated()) {
        bs.gate = alloc(bytes(T * F), act);
        bs.prod = alloc(bytes(T * F), act);
    }
    bs.mlp_out = alloc(bytes(T * d), act);
    if (c.quantized_linear()) bs.xq = alloc(uint64_t(T * std::max({d, c.q_width(), F})), act);
    if (c.fp8_linear()) {
        bs.act_scales = alloc(sizeof kActScales, act);
        copy_bytes_in(bs.act_scales, kActScales, sizeof kActScales, "FP8 activation scales");
    }
}

// Each step's token embeddings, in the dtype, laid out as hidden[0] wants
// them ([batch, new tokens, hidden]).
void DecoderRun::make_step_inputs() {
    const DecoderConfig &c = config_;
    const int64_t B = c.batch, d = c.hidden, C = c.context();
    const std::vector<float> emb = make_embeddings(c);
    step_inputs_.clear();
    for (int s = 0; s < steps(); ++s) {
        const int64_t S = s == 0 ? c.prompt : 1, first = s == 0 ? 0 : c.prompt + s - 1;
        std::vector<uint8_t> in(std::size_t(uint64_t(B * S * d) * elem_));
        int64_t i = 0;
        for (int64_t b = 0; b < B; ++b)
            for (int64_t p = first; p < first + S; ++p)
                for (int64_t j = 0; j < d; ++j)
                    store_from_f32(in.data(), c.act_dtype(), i++, emb[std::size_t((b * C + p) * d + j)]);
        step_inputs_.push_back(std::move(in));
    }
}

void DecoderRun::prepare() {
    if (prepared_) return;
    auto bs = std::make_unique<BufferSet>();
    upload_weights(*bs);
    allocate_activations(*bs);
    buf_ = std::move(bs);
    make_step_inputs();
    programs_.clear();
    for (int s = 0; s < steps(); ++s) programs_.push_back(build_step(s));
    prepared_ = true;
}

void DecoderRun::issue(const Call &k, const StepProgram &p) {
    opb_status s;
    if (k.desc) {
        s = be_.api().execute(be_.handle(), k.plan, p.tensors.data() + k.first_tensor, k.tensor_count);
    } else {
        s = be_.api().copy_in(be_.handle(), k.dst, k.host_src, k.bytes);
    }
    if (s != OPB_OK)
        throw WorkloadFailure{"failed", fmt::format("decoder {}: {}: {}", component_name(k.component),
                                                    k.desc ? "execute" : "copy_in", be_.error_text(s))};
}

void DecoderRun::run_step(int step) {
    const StepProgram &p = programs_.at(std::size_t(step));
    for (const Call &k : p.calls) issue(k, p);
}

void DecoderRun::run_step(int step, ComponentObserver &observer) {
    const StepProgram &p = programs_.at(std::size_t(step));
    std::size_t i = 0;
    while (i < p.calls.size()) {
        const Component comp = p.calls[i].component;
        const int layer = p.calls[i].layer;
        observer.begin(comp, layer);
        try {
            for (; i < p.calls.size() && p.calls[i].component == comp && p.calls[i].layer == layer; ++i)
                issue(p.calls[i], p);
        } catch (...) {
            observer.end(comp, layer);
            throw;
        }
        observer.end(comp, layer);
    }
}

void DecoderRun::synchronize() {
    opb_status s = be_.api().synchronize(be_.handle());
    if (s != OPB_OK) throw WorkloadFailure{"failed", "decoder: synchronize: " + be_.error_text(s)};
}

std::vector<std::vector<float>> DecoderRun::layer_outputs(int step) const {
    const int64_t n = tokens_in_step(step) * config_.hidden;
    std::vector<std::vector<float>> out;
    std::vector<uint8_t> raw(std::size_t(n) * elem_);
    for (int64_t l = 0; l < config_.layers; ++l) {
        opb_status s = be_.api().copy_out(be_.handle(), raw.data(), buf_->hidden[std::size_t(l + 1)], raw.size());
        if (s != OPB_OK)
            throw WorkloadFailure{"failed", fmt::format("decoder: copy_out of layer {}: {}", l, be_.error_text(s))};
        std::vector<float> v(static_cast<std::size_t>(n));
        for (int64_t i = 0; i < n; ++i) v[std::size_t(i)] = load_as_f32(raw.data(), config_.act_dtype(), i);
        out.push_back(std::move(v));
    }
    return out;
}

} // namespace opbench::workload
