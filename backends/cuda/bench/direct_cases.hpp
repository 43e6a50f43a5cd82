// The direct cuBLASLt / cuDNN reference (issue 41 item 5): everything that
// needs no GPU, so it is unit-tested on machines without one
// (tests/backends/cuda/cuda_direct_cases_test.cpp): the shapes (those of
// suites/gemm.toml, suites/quick.toml and the attention prefill shapes), the
// names (opbench's, with be:cuda-direct), FLOPs (opbench's convention, from
// plugins/opbench/ops.hpp), the command line, the sampling rule, the host
// references the outputs are checked against, and the JSON written.
//
// No CUDA header here: direct_bench.cpp holds every CUDA, cuBLASLt and cuDNN call.
#ifndef OPBENCH_CUDA_DIRECT_CASES_HPP
#define OPBENCH_CUDA_DIRECT_CASES_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace opbench::cuda_direct {

// What a matmul runs as. Tf32: f32 operands and output, TF32 tensor-core math
// (opbench's dtype f32, variant tf32). Fp8: e4m3 operands, bf16 output and
// bias, f32 accumulation; opbench has no such matmul, so these entries have no
// opbench counterpart (they set the device's FP8 rate beside the others).
enum class Dtype { F32, Tf32, Bf16, Fp8 };
const char *dtype_label(Dtype t);     // "f32", "tf32", "bf16", "fp8"
const char *opbench_dtype(Dtype t);   // "f32", "f32", "bf16", "f8e4m3"
const char *opbench_variant(Dtype t); // matmul: "default" or "tf32"
int operand_bytes(Dtype t);           // A, B elements: 4, 4, 2, 1
int output_bytes(Dtype t);            // D and bias elements: 4, 4, 2, 2 (fp8 writes bf16)

struct MatmulShape {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool trans_a = false, trans_b = false, bias = false;
};

// Fused attention (cuDNN's SDPA graph), bf16, Q/O [B,H,Sq,D], K/V [B,KVH,Skv,D].
struct AttentionShape {
    int64_t batch = 1, heads = 0, kv_heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
    bool causal = false;
};

enum class Op { Matmul, Attention };

struct Case {
    Op op = Op::Matmul;
    Dtype dtype = Dtype::F32; // attention: Bf16
    MatmulShape mm;
    AttentionShape at;
    std::string suite_case; // where the shape comes from, e.g. "gemm:linear"
};

// The built-in cases, in run order: gemm.toml's square, linear and
// linear.decode shapes and quick.toml's matmuls in f32, tf32, bf16 and fp8
// (fp8 as TN, B stored [N, K]: cuBLASLt's FP8 layout before Blackwell; none
// for a transposed A), then bf16 fused attention: attention.toml's
// prefill.bf16 (B 1, H 32, D 128, S 1024 and 4096, causal) and the
// FlashAttention-3 paper's setting (B 4, S 4096, H 16, D 128; causal and not).
std::vector<Case> default_cases();

enum class Cache { Cold, Warm };
// canonical: the stop event right after the launches. opbench_order: as
// opbench's recipe does today (harness/measure/recipe.cpp), the stream is
// synchronised before the stop event is recorded, so the host's wake-up and
// the event's submission fall inside the interval.
enum class Timing { Canonical, OpbenchOrder };
const char *cache_label(Cache c);   // "cold", "warm"
const char *timing_label(Timing t); // "canonical", "opbench-order"

// opbench's name for the case (harness/suite/case_names.cpp) with backend
// cuda-direct, then /cache:cold when cold (as opbench) and /timing:opbench-order
// when so timed, e.g.
// matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16/be:cuda-direct/cache:cold
std::string case_name(const Case &c, Cache cache, Timing timing);

// FLOPs by opbench's convention (plugins/opbench/ops.hpp op_flops): matmul
// 2·B·M·N·K (+ B·M·N with a bias); attention B·H·visible pairs·(4·D + 6).
double case_flops(const Case &c);
// The FlashAttention papers' convention, for setting attention beside their
// figures: 4·B·H·Sq·Skv·D, halved when causal. Matmul: case_flops.
double paper_flops(const Case &c);

// ---- the command line ------------------------------------------------------------

struct Options {
    bool help = false, list = false;
    std::string filter; // ECMAScript regex on the names; empty: all
    std::vector<Cache> caches{Cache::Cold};
    std::vector<Timing> timings{Timing::Canonical, Timing::OpbenchOrder};
    int warmup = 2;         // untimed calls after the checked one
    double min_time = 0.5;  // seconds of samples at least, per repetition
    double max_time = 2.0;  // wall seconds per repetition at most (flushes included)
    int min_samples = 5;    // samples at least, per repetition
    int repetitions = 3;    // the figure is the median of the repetitions' medians
    int calls = 1;          // back-to-back calls per sample, warm only (cold: always 1)
    bool sdpa_stats = true; // the SDPA graph writes the softmax stats, as the plugin's does
    std::string out;        // JSON file; empty: none
};

// Parses argv (argv[0] skipped). On error: nullopt and `error` says why.
std::optional<Options> parse_args(int argc, const char *const *argv, std::string &error);
std::string usage_text();

// Which cases the options select, in order (the filter applies to the cold,
// canonical name).
std::vector<Case> select_cases(const std::vector<Case> &all, const Options &o, std::string &error);

// ---- sampling ----------------------------------------------------------------------

// Whether a repetition has sampled enough: at least min_samples and min_time
// of sample time, or max_time of wall time (flushes and synchronisation
// included) with at least one sample.
bool sampling_done(const Options &o, std::size_t samples, double sample_seconds, double wall_seconds);
double median(std::vector<double> v); // NaN for an empty vector

// ---- host references ----------------------------------------------------------------

// The values the program fills its inputs with (index i of a buffer): a
// fixed pseudo-random sequence, exactly representable in the dtype's operand
// type so that the host reference sees what the device reads: f32 and bf16
// (8 bits of mantissa) in [-1, 1); fp8 e4m3 (3 bits) a random sign and a
// magnitude in 2^-3 .. 1.875.
double input_value(uint64_t seed, uint64_t i, Dtype t);
uint16_t to_bf16_bits(float f); // round to nearest even
float from_bf16_bits(uint16_t b);
double from_e4m3_bits(uint8_t b);              // OCP e4m3: bias 7, no infinities, S.1111.111 is NaN
uint8_t input_e4m3(uint64_t seed, uint64_t i); // the fp8 code of input_value(seed, i, Fp8)

// Element (b, i, j) of row-major C = op(A) . op(B) (+ bias[j]) in float64,
// with A stored [B, M, K] ([B, K, M] when trans_a), B [B, K, N] ([B, N, K]
// when trans_b); `a`, `b`, `bias` give element values by flat index. Also
// the sum of |products| (the scale of the rounding error).
struct RefValue {
    double value = 0, abs_sum = 0;
};
template <class A, class B, class Bias>
RefValue matmul_ref(const MatmulShape &s, int64_t bi, int64_t i, int64_t j, A a, B b, Bias bias) {
    RefValue r;
    for (int64_t p = 0; p < s.k; ++p) {
        const int64_t ai = bi * s.m * s.k + (s.trans_a ? p * s.m + i : i * s.k + p);
        const int64_t bj = bi * s.k * s.n + (s.trans_b ? j * s.k + p : p * s.n + j);
        const double prod = a(ai) * b(bj);
        r.value += prod;
        r.abs_sum += prod < 0 ? -prod : prod;
    }
    if (s.bias) {
        r.value += bias(j);
        r.abs_sum += bias(j) < 0 ? -bias(j) : bias(j);
    }
    return r;
}
// Relative tolerance on |got - ref| / (abs_sum + |ref|) per matmul dtype.
double matmul_tolerance(Dtype t);

// Row (b, h, i) of attention O = softmax(scale Q K^T, causal bottom-right) V
// in float64; q, k, v give element values by flat index of their layouts.
template <class Q, class K, class V>
std::vector<double> attention_row_ref(const AttentionShape &s, int64_t bi, int64_t h, int64_t i, Q q, K k, V v) {
    const int64_t kvh = s.kv_heads > 0 ? s.kv_heads : s.heads, g = h / (s.heads / kvh);
    const double scale = 1.0 / std::sqrt(double(s.head_dim));
    const int64_t last = s.causal ? i + (s.seq_kv - s.seq_q) : s.seq_kv - 1; // bottom-right
    std::vector<double> score;
    double mx = -1e300;
    for (int64_t c = 0; c <= last && c < s.seq_kv; ++c) {
        double dot = 0;
        for (int64_t d = 0; d < s.head_dim; ++d)
            dot += q(((bi * s.heads + h) * s.seq_q + i) * s.head_dim + d) *
                   k(((bi * kvh + g) * s.seq_kv + c) * s.head_dim + d);
        score.push_back(dot * scale);
        mx = std::max(mx, score.back());
    }
    double z = 0;
    for (double &x : score) z += (x = std::exp(x - mx));
    std::vector<double> out(static_cast<std::size_t>(s.head_dim), 0.0);
    for (std::size_t c = 0; c < score.size(); ++c)
        for (int64_t d = 0; d < s.head_dim; ++d)
            out[d] += score[c] / z * v(((bi * kvh + g) * s.seq_kv + int64_t(c)) * s.head_dim + d);
    return out;
}

// ---- results -------------------------------------------------------------------------

struct Device {
    std::string name, uuid, cc; // cc "9.0"
    int sm_count = 0;
    int64_t l2_bytes = 0, memory_bytes = 0;
    int sm_clock_mhz = 0; // the clock attribute (maximum)
    std::string driver, runtime, cublaslt, cudnn;
};

struct Entry {
    std::string name;
    Case c;
    Cache cache = Cache::Cold;
    Timing timing = Timing::Canonical;
    std::string status = "passed"; // passed, skipped, failed
    std::string reason;
    std::vector<double> repetition_medians; // seconds per call
    std::vector<int> samples;               // per repetition
    int calls_per_sample = 1;
    double check_error = -1; // largest |got - ref| / scale of the sampled check; -1 none
    std::string kernel;      // cuBLASLt algorithm id / cuDNN engine, as the library names it
    uint64_t workspace_bytes = 0;

    double median_seconds() const { return median(repetition_medians); }
    double spread() const; // (max - min) / 2 / median of the repetitions' medians; 0 with one
};

// One console line per entry: name, µs per call, TFLOP/s, spread (or status and reason).
std::string console_line(const Entry &e);
void write_json(std::ostream &os, const Device &d, const Options &o, const std::vector<Entry> &entries,
                const std::string &date);
std::string json_escape(const std::string &s);

} // namespace opbench::cuda_direct

#endif // OPBENCH_CUDA_DIRECT_CASES_HPP
