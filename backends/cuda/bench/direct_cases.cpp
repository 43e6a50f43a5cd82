#include "direct_cases.hpp"

#include "opbench/ops.hpp"

#include <cstdio>
#include <cstring>
#include <limits>
#include <regex>
#include <sstream>

namespace opbench::cuda_direct {

const char *dtype_label(Dtype t) {
    switch (t) {
    case Dtype::F32: return "f32";
    case Dtype::Tf32: return "tf32";
    case Dtype::Bf16: return "bf16";
    case Dtype::Fp8: return "fp8";
    }
    return "?";
}
const char *opbench_dtype(Dtype t) {
    switch (t) {
    case Dtype::Bf16: return "bf16";
    case Dtype::Fp8: return "f8e4m3"; // opbench's dtype name (issue 42), its cases with out_dtype "bf16"
    default: return "f32";
    }
}
const char *opbench_variant(Dtype t) { return t == Dtype::Tf32 ? "tf32" : "default"; }
int operand_bytes(Dtype t) { return t == Dtype::Bf16 ? 2 : t == Dtype::Fp8 ? 1 : 4; }
int output_bytes(Dtype t) { return t == Dtype::F32 || t == Dtype::Tf32 ? 4 : 2; }

const char *cache_label(Cache c) { return c == Cache::Cold ? "cold" : "warm"; }
const char *timing_label(Timing t) { return t == Timing::Canonical ? "canonical" : "opbench-order"; }

std::vector<Case> default_cases() {
    std::vector<Case> out;
    struct Named {
        MatmulShape s;
        const char *where;
        bool quick_dtypes; // quick.toml runs f32 only except its batched case
    };
    const Named matmuls[] = {
        // suites/gemm.toml
        {{1, 512, 512, 512, false, false, false}, "gemm:square", false},
        {{1, 1024, 1024, 1024, false, false, false}, "gemm:square", false},
        {{1, 2048, 2048, 2048, false, false, false}, "gemm:square", false},
        {{1, 2048, 2304, 768, false, true, true}, "gemm:linear", false},
        {{1, 2048, 3072, 768, false, true, true}, "gemm:linear", false},
        {{1, 2048, 768, 3072, false, true, true}, "gemm:linear", false},
        {{1, 2048, 4096, 4096, false, true, true}, "gemm:linear", false},
        {{1, 2048, 11008, 4096, false, true, true}, "gemm:linear", false},
        {{1, 1, 4096, 4096, false, true, false}, "gemm:linear.decode", false},
        {{1, 16, 4096, 4096, false, true, false}, "gemm:linear.decode", false},
        // suites/quick.toml
        {{1, 64, 64, 64, false, false, false}, "quick:matmul.square", true},
        {{1, 32, 96, 64, false, true, true}, "quick:matmul.linear", true},
        {{4, 16, 24, 32, true, false, false}, "quick:matmul.batched", true},
    };
    for (Dtype t : {Dtype::F32, Dtype::Tf32, Dtype::Bf16, Dtype::Fp8})
        for (const Named &m : matmuls) {
            Case c;
            c.op = Op::Matmul;
            c.dtype = t;
            c.mm = m.s;
            c.suite_case = m.where;
            if (t == Dtype::Fp8) {
                if (m.s.trans_a) continue; // no TN form without moving A
                c.mm.trans_b = true;       // B stored [N, K]: TN
            }
            out.push_back(c);
        }
    const std::pair<AttentionShape, const char *> attentions[] = {
        {{1, 32, 32, 1024, 1024, 128, true}, "attention:prefill.bf16"},
        {{1, 32, 32, 4096, 4096, 128, true}, "attention:prefill.bf16"},
        {{4, 16, 16, 4096, 4096, 128, true}, "flashattention-3"},
        {{4, 16, 16, 4096, 4096, 128, false}, "flashattention-3"},
    };
    for (const auto &[s, where] : attentions) {
        Case c;
        c.op = Op::Attention;
        c.dtype = Dtype::Bf16;
        c.at = s;
        c.suite_case = where;
        out.push_back(c);
    }
    return out;
}

std::string case_name(const Case &c, Cache cache, Timing timing) {
    std::string n;
    auto dim = [&](const char *k, int64_t v) { n += std::string("/") + k + ":" + std::to_string(v); };
    if (c.op == Op::Matmul) {
        const MatmulShape &s = c.mm;
        n = "matmul";
        dim("B", s.batch), dim("M", s.m), dim("N", s.n), dim("K", s.k);
        if (s.trans_a) n += "/tA:1";
        if (s.trans_b) n += "/tB:1";
        if (s.bias) n += "/bias:1";
        if (c.dtype == Dtype::Fp8) n += "/out:bf16"; // D in bf16, as opbench names such a case
        n += std::string("/variant:") + opbench_variant(c.dtype);
    } else {
        const AttentionShape &s = c.at;
        n = "attention";
        dim("B", s.batch), dim("H", s.heads);
        if (s.kv_heads > 0 && s.kv_heads != s.heads) dim("KVH", s.kv_heads);
        if (s.seq_q == s.seq_kv) {
            dim("S", s.seq_q);
        } else {
            dim("Sq", s.seq_q), dim("Skv", s.seq_kv);
        }
        dim("D", s.head_dim), dim("causal", s.causal ? 1 : 0);
        n += "/variant:fused";
    }
    n += std::string("/dt:") + opbench_dtype(c.dtype);
    if (cache == Cache::Cold) n += "/cache:cold";
    n += "/be:cuda-direct";
    if (timing == Timing::OpbenchOrder) n += "/timing:opbench-order";
    return n;
}

namespace {
opb_op_desc describe(const Case &c) {
    if (c.op == Op::Matmul) {
        opb_op_desc d = make_desc(OPB_OP_MATMUL, c.dtype == Dtype::Bf16 ? OPB_DTYPE_BF16 : OPB_DTYPE_F32);
        d.p.matmul.batch = c.mm.batch;
        d.p.matmul.m = c.mm.m;
        d.p.matmul.n = c.mm.n;
        d.p.matmul.k = c.mm.k;
        d.p.matmul.trans_a = c.mm.trans_a;
        d.p.matmul.trans_b = c.mm.trans_b;
        d.p.matmul.has_bias = c.mm.bias;
        return d;
    }
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_BF16, OPB_ATTENTION_FUSED);
    auto &p = d.p.attention;
    p.batch = c.at.batch;
    p.heads = c.at.heads;
    p.kv_heads = c.at.kv_heads;
    p.seq_q = c.at.seq_q;
    p.seq_kv = c.at.seq_kv;
    p.head_dim = c.at.head_dim;
    p.causal = c.at.causal;
    return d;
}
} // namespace

double case_flops(const Case &c) { return op_flops(describe(c)); }

double paper_flops(const Case &c) {
    if (c.op == Op::Matmul) return case_flops(c);
    const AttentionShape &s = c.at;
    const double f = 4.0 * double(s.batch) * double(s.heads) * double(s.seq_q) * double(s.seq_kv) * double(s.head_dim);
    return s.causal ? f / 2 : f;
}

// ---- the command line ------------------------------------------------------------

std::string usage_text() {
    return "usage: cuda-direct-bench [options]\n"
           "  cuBLASLt matmuls (f32, tf32, bf16; fp8 e4m3 on sm_89+) and cuDNN's SDPA graph (bf16 fused\n"
           "  attention) called directly, on the shapes of suites/gemm.toml, suites/quick.toml and the\n"
           "  attention prefill shapes, timed as opbench's cuda backend times them (CUDA events, the L2\n"
           "  flushed by a memset of twice its size before each sample when cold).\n"
           "  --list                 print the case names and exit (needs no GPU)\n"
           "  --filter REGEX         only the cases whose cold canonical name matches (ECMAScript)\n"
           "  --cache cold|warm|both L2 state before each sample (default cold)\n"
           "  --timing canonical|opbench-order|both\n"
           "                         stop event right after the launches, or after a stream\n"
           "                         synchronize as opbench's recipe records it (default both)\n"
           "  --warmup N             untimed calls after the checked one (default 2)\n"
           "  --min-time S           seconds of samples at least, per repetition (default 0.5)\n"
           "  --max-time S           wall seconds per repetition at most (default 2)\n"
           "  --min-samples N        samples at least, per repetition (default 5)\n"
           "  --repetitions N        repetitions; the figure is the median of their medians (default 3)\n"
           "  --calls N              back-to-back calls per sample, warm only (default 1)\n"
           "  --no-sdpa-stats        the SDPA graph without the softmax-stats output (inference form;\n"
           "                         opbench's plugin writes them)\n"
           "  --out FILE             write the results as JSON\n"
           "exit: 0 every selected case passed or was skipped with a reason, 1 a case failed,\n"
           "      2 bad usage, 3 no usable GPU\n";
}

namespace {
bool parse_int(const std::string &s, int lo, int hi, int &out) {
    try {
        std::size_t used = 0;
        const long v = std::stol(s, &used);
        if (used != s.size() || v < lo || v > hi) return false;
        out = static_cast<int>(v);
        return true;
    } catch (...) {
        return false;
    }
}
bool parse_seconds(const std::string &s, double &out) {
    try {
        std::size_t used = 0;
        const double v = std::stod(s, &used);
        if (used != s.size() || !(v > 0) || v > 3600) return false;
        out = v;
        return true;
    } catch (...) {
        return false;
    }
}
} // namespace

std::optional<Options> parse_args(int argc, const char *const *argv, std::string &error) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], value;
        bool has_value = false;
        if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
            has_value = true;
        }
        auto next = [&](std::string &v) {
            if (has_value) {
                v = value;
                return true;
            }
            if (i + 1 >= argc) {
                error = a + " needs a value";
                return false;
            }
            v = argv[++i];
            return true;
        };
        auto flag = [&]() {
            if (has_value) error = a + " takes no value";
            return !has_value;
        };
        std::string v;
        if (a == "-h" || a == "--help") {
            if (!flag()) return std::nullopt;
            o.help = true;
        } else if (a == "--list") {
            if (!flag()) return std::nullopt;
            o.list = true;
        } else if (a == "--no-sdpa-stats") {
            if (!flag()) return std::nullopt;
            o.sdpa_stats = false;
        } else if (a == "--filter") {
            if (!next(o.filter)) return std::nullopt;
        } else if (a == "--out") {
            if (!next(o.out)) return std::nullopt;
            if (o.out.empty()) return error = "--out needs a file name", std::nullopt;
        } else if (a == "--cache") {
            if (!next(v)) return std::nullopt;
            if (v == "cold")
                o.caches = {Cache::Cold};
            else if (v == "warm")
                o.caches = {Cache::Warm};
            else if (v == "both")
                o.caches = {Cache::Cold, Cache::Warm};
            else
                return error = "--cache: '" + v + "' is not cold, warm or both", std::nullopt;
        } else if (a == "--timing") {
            if (!next(v)) return std::nullopt;
            if (v == "canonical")
                o.timings = {Timing::Canonical};
            else if (v == "opbench-order")
                o.timings = {Timing::OpbenchOrder};
            else if (v == "both")
                o.timings = {Timing::Canonical, Timing::OpbenchOrder};
            else
                return error = "--timing: '" + v + "' is not canonical, opbench-order or both", std::nullopt;
        } else if (a == "--warmup" || a == "--min-samples" || a == "--repetitions" || a == "--calls") {
            if (!next(v)) return std::nullopt;
            int *dst = a == "--warmup"        ? &o.warmup
                       : a == "--min-samples" ? &o.min_samples
                       : a == "--repetitions" ? &o.repetitions
                                              : &o.calls;
            const int lo = a == "--warmup" ? 0 : 1;
            if (!parse_int(v, lo, 1000000, *dst))
                return error = a + ": '" + v + "' is not an integer in " + std::to_string(lo) + "..1000000",
                       std::nullopt;
        } else if (a == "--min-time" || a == "--max-time") {
            if (!next(v)) return std::nullopt;
            if (!parse_seconds(v, a == "--min-time" ? o.min_time : o.max_time))
                return error = a + ": '" + v + "' is not a number of seconds in (0, 3600]", std::nullopt;
        } else {
            return error = "unknown argument '" + std::string(argv[i]) + "'", std::nullopt;
        }
    }
    if (o.max_time < o.min_time)
        return error =
                   "--max-time " + std::to_string(o.max_time) + " is below --min-time " + std::to_string(o.min_time),
               std::nullopt;
    return o;
}

std::vector<Case> select_cases(const std::vector<Case> &all, const Options &o, std::string &error) {
    if (o.filter.empty()) return all;
    std::regex re;
    try {
        re = std::regex(o.filter, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
        error = "--filter '" + o.filter + "': " + e.what();
        return {};
    }
    std::vector<Case> out;
    for (const Case &c : all)
        if (std::regex_search(case_name(c, Cache::Cold, Timing::Canonical), re)) out.push_back(c);
    if (out.empty()) error = "--filter '" + o.filter + "' selects no case (--list shows them)";
    return out;
}

// ---- sampling ----------------------------------------------------------------------

bool sampling_done(const Options &o, std::size_t samples, double sample_seconds, double wall_seconds) {
    if (samples == 0) return false;
    if (wall_seconds >= o.max_time) return true;
    return samples >= static_cast<std::size_t>(o.min_samples) && sample_seconds >= o.min_time;
}

double median(std::vector<double> v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// ---- host references ----------------------------------------------------------------

uint16_t to_bf16_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0; // NaN
    u += 0x7fffu + ((u >> 16) & 1u);                    // round to nearest even
    return static_cast<uint16_t>(u >> 16);
}
float from_bf16_bits(uint16_t b) {
    const uint32_t u = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

double from_e4m3_bits(uint8_t b) {
    const int sign = b >> 7, exp = (b >> 3) & 15, man = b & 7;
    if (exp == 15 && man == 7) return std::numeric_limits<double>::quiet_NaN();
    const double mag = exp == 0 ? std::ldexp(man / 8.0, -6) : std::ldexp(1.0 + man / 8.0, exp - 7);
    return sign ? -mag : mag;
}
namespace {
// splitmix64 of (seed, i): reproducible, no state, any index in any order.
uint64_t mix(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
} // namespace

uint8_t input_e4m3(uint64_t seed, uint64_t i) {
    // A random sign and magnitude 2^-3 .. 1.875 (normal codes, exponent field
    // 4..7, any mantissa): no subnormal, no zero, no NaN.
    const uint64_t z = mix(seed, i);
    return static_cast<uint8_t>(((z >> 63) ? 0x80 : 0) | (0x20 + (z & 0x1f)));
}

double input_value(uint64_t seed, uint64_t i, Dtype t) {
    if (t == Dtype::Fp8) return from_e4m3_bits(input_e4m3(seed, i));
    const double u = double(mix(seed, i) >> 11) * 0x1.0p-53 * 2.0 - 1.0; // [-1, 1)
    const float f = static_cast<float>(u);
    return t == Dtype::Bf16 ? from_bf16_bits(to_bf16_bits(f)) : f;
}

double matmul_tolerance(Dtype t) {
    switch (t) {
    case Dtype::F32: return 1e-5;  // f32 accumulation over K
    case Dtype::Tf32: return 4e-3; // operands rounded to 10 mantissa bits
    default: return 1e-2;          // bf16 output (8 bits), f32 accumulation
    }
}

// ---- results -------------------------------------------------------------------------

double Entry::spread() const {
    if (repetition_medians.size() < 2) return 0;
    const auto [lo, hi] = std::minmax_element(repetition_medians.begin(), repetition_medians.end());
    return (*hi - *lo) / 2 / median_seconds();
}

std::string console_line(const Entry &e) {
    char buf[256];
    if (e.status != "passed") {
        std::snprintf(buf, sizeof buf, "%-8s %s", e.status.c_str(), e.reason.c_str());
        return e.name + "\n    " + buf;
    }
    const double t = e.median_seconds();
    std::snprintf(buf, sizeof buf, "%10.2f us  %8.2f TFLOP/s  spread %5.2f%%", t * 1e6, case_flops(e.c) / t * 1e-12,
                  e.spread() * 100);
    std::string line = e.name + "\n    " + buf;
    if (e.c.op == Op::Attention) {
        std::snprintf(buf, sizeof buf, "  (%.2f TFLOP/s by the FlashAttention papers' count)",
                      paper_flops(e.c) / t * 1e-12);
        line += buf;
    }
    return line;
}

std::string json_escape(const std::string &s) {
    std::string o;
    for (unsigned char ch : s) {
        switch (ch) {
        case '"': o += "\\\""; break;
        case '\\': o += "\\\\"; break;
        case '\n': o += "\\n"; break;
        case '\t': o += "\\t"; break;
        case '\r': o += "\\r"; break;
        default:
            if (ch < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", ch);
                o += b;
            } else {
                o += static_cast<char>(ch);
            }
        }
    }
    return o;
}

namespace {
std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[40];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}
std::string str(const std::string &s) { return "\"" + json_escape(s) + "\""; }
const char *boolean(bool b) { return b ? "true" : "false"; }

// The params object opbench writes for the same case (results/README.md).
std::string params_json(const Case &c) {
    std::ostringstream p;
    if (c.op == Op::Matmul) {
        const MatmulShape &s = c.mm;
        p << "{\"B\": " << s.batch << ", \"K\": " << s.k << ", \"M\": " << s.m << ", \"N\": " << s.n
          << ", \"bias\": " << boolean(s.bias) << ", \"trans_a\": " << boolean(s.trans_a)
          << ", \"trans_b\": " << boolean(s.trans_b)
          << (c.dtype == Dtype::Fp8 ? ", \"out_dtype\": \"bf16\"}" : "}");
    } else {
        const AttentionShape &s = c.at;
        p << "{\"B\": " << s.batch << ", \"D\": " << s.head_dim << ", \"H\": " << s.heads
          << ", \"KVH\": " << (s.kv_heads > 0 ? s.kv_heads : s.heads) << ", \"Skv\": " << s.seq_kv
          << ", \"Sq\": " << s.seq_q << ", \"causal\": " << boolean(s.causal) << "}";
    }
    return p.str();
}
} // namespace

void write_json(std::ostream &os, const Device &d, const Options &o, const std::vector<Entry> &entries,
                const std::string &date) {
    os << "{\n  \"context\": {\n    \"program\": \"cuda-direct-bench\",\n    \"date\": " << str(date) << ",\n"
       << "    \"device\": {\"name\": " << str(d.name) << ", \"uuid\": " << str(d.uuid) << ", \"cc\": " << str(d.cc)
       << ", \"sm_count\": " << d.sm_count << ", \"l2_bytes\": " << d.l2_bytes
       << ", \"memory_bytes\": " << d.memory_bytes << ", \"sm_clock_mhz\": " << d.sm_clock_mhz << "},\n"
       << "    \"versions\": {\"driver\": " << str(d.driver) << ", \"runtime\": " << str(d.runtime)
       << ", \"cublaslt\": " << str(d.cublaslt) << ", \"cudnn\": " << str(d.cudnn) << "},\n"
       << "    \"settings\": {\"warmup\": " << o.warmup << ", \"min_time\": " << num(o.min_time)
       << ", \"max_time\": " << num(o.max_time) << ", \"min_samples\": " << o.min_samples
       << ", \"repetitions\": " << o.repetitions << ", \"calls\": " << o.calls
       << ", \"sdpa_stats\": " << boolean(o.sdpa_stats) << ", \"filter\": " << str(o.filter)
       << ", \"flush_bytes\": " << 2 * d.l2_bytes << "}\n  },\n  \"entries\": [";
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry &e = entries[i];
        const double t = e.median_seconds();
        const bool ok = e.status == "passed" && std::isfinite(t) && t > 0;
        os << (i ? ",\n" : "\n") << "    {\"name\": " << str(e.name)
           << ", \"op\": " << str(e.c.op == Op::Matmul ? "matmul" : "attention")
           << ", \"dtype\": " << str(opbench_dtype(e.c.dtype))
           << ", \"variant\": " << str(e.c.op == Op::Matmul ? opbench_variant(e.c.dtype) : "fused")
           << ", \"label\": " << str(dtype_label(e.c.dtype)) << ", \"suite_case\": " << str(e.c.suite_case)
           << ", \"params\": " << params_json(e.c) << ", \"cache\": " << str(cache_label(e.cache))
           << ", \"timing\": " << str(timing_label(e.timing)) << ", \"status\": " << str(e.status)
           << ", \"reason\": " << str(e.reason) << ", \"flops\": " << num(case_flops(e.c))
           << ", \"paper_flops\": " << num(paper_flops(e.c)) << ", \"seconds_per_call\": " << (ok ? num(t) : "null")
           << ", \"tflops\": " << (ok ? num(case_flops(e.c) / t * 1e-12) : "null")
           << ", \"paper_tflops\": " << (ok ? num(paper_flops(e.c) / t * 1e-12) : "null")
           << ", \"spread\": " << (ok ? num(e.spread()) : "null") << ", \"repetition_medians\": [";
        for (std::size_t r = 0; r < e.repetition_medians.size(); ++r)
            os << (r ? ", " : "") << num(e.repetition_medians[r]);
        os << "], \"samples\": [";
        for (std::size_t r = 0; r < e.samples.size(); ++r) os << (r ? ", " : "") << e.samples[r];
        os << "], \"calls_per_sample\": " << e.calls_per_sample
           << ", \"check_error\": " << (e.check_error >= 0 ? num(e.check_error) : "null")
           << ", \"kernel\": " << str(e.kernel) << ", \"workspace_bytes\": " << e.workspace_bytes << "}";
    }
    os << "\n  ]\n}\n";
}

} // namespace opbench::cuda_direct
