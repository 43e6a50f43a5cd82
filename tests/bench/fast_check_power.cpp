// Fast verification's power (issue 10, "Proof"): how often the SDK's fast
// checks catch one injected error, at the sizes the unit tests cannot afford.
//
//   matmul     M = N = K = n (default 4096), f32 and bf16: a correct C computed
//              as a CPU backend does (f32 accumulation, output rounded), then
//              per trial one element at a seeded random place made wrong, and
//              freivalds_matmul run with the trial's seed. Error models:
//                rms   the element off by ±rms(C) (the size of a typical value)
//                half  off by ±rms(C)/2         (a quarter of the trials, at least 20)
//                zero  the element set to 0     (a skipped store; as many)
//              The correct C is also checked under every trial's seed (false
//              alarms).
//   attention  GPT-2-small-like (12 heads, seq 1024, head_dim 64, causal),
//              f32 and bf16: per trial one row made wrong, sampled_attention
//              with the trial's seed. Models: "scaled" (the row times 0.8: stays
//              within the values of V) and "garbage" (one element of the row
//              off by 10 x the largest |V|).
//
// Prints one table row per (op, dtype, model): trials, caught, seconds per check.
//   fast_check_power [--n 4096] [--trials 100] [--only matmul|attention]
// Standard library and the SDK only.
#include "opbench/fast_checks.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace opbench;

namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

Bytes random_tensor(int64_t n, int dt, std::mt19937_64 &rng) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Bytes b(size_t(n) * dtype_size(dt));
    for (int64_t i = 0; i < n; ++i) store_from_f32(b.data(), dt, i, dist(rng));
    return b;
}

std::vector<float> as_f32(const Bytes &b, int dt) {
    std::vector<float> f(b.size() / dtype_size(dt));
    for (size_t i = 0; i < f.size(); ++i) f[i] = load_as_f32(b.data(), dt, int64_t(i));
    return f;
}

// C = A·B with f32 accumulation, blocked over k so each C row stays in cache.
Bytes matmul_f32(const Bytes &A, const Bytes &B, int dt, int64_t n) {
    const auto a = as_f32(A, dt), b = as_f32(B, dt);
    std::vector<float> c(size_t(n * n), 0.0f);
    constexpr int64_t kBlock = 256;
    for (int64_t k0 = 0; k0 < n; k0 += kBlock)
        for (int64_t i = 0; i < n; ++i) {
            float *crow = c.data() + i * n;
            for (int64_t k = k0; k < std::min(n, k0 + kBlock); ++k) {
                const float aik = a[size_t(i * n + k)];
                const float *brow = b.data() + k * n;
                for (int64_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
            }
        }
    Bytes C(size_t(n * n) * dtype_size(dt));
    for (int64_t i = 0; i < n * n; ++i) store_from_f32(C.data(), dt, i, c[size_t(i)]);
    return C;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void row(const char *op, int dt, const char *model, int trials, int caught, double seconds) {
    std::printf("%-10s %-5s %-8s %7d %7d %9.1f%% %10.3f\n", op, std::string(dtype_name(dt)).c_str(), model, trials,
                caught, 100.0 * caught / trials, seconds / trials);
    std::fflush(stdout);
}

int run_matmul(int64_t n, int trials) {
    int failures = 0;
    for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_BF16}) {
        opb_op_desc d = make_desc(OPB_OP_MATMUL, dt);
        d.p.matmul = {1, n, n, n, 0, 0, 0, 0, 0.0f, 0, 0};
        std::mt19937_64 rng(2026);
        Bytes A = random_tensor(n * n, dt, rng), B = random_tensor(n * n, dt, rng);
        auto t0 = Clock::now();
        const Bytes good = matmul_f32(A, B, dt, n);
        std::fprintf(stderr, "%s C computed in %.1f s\n", std::string(dtype_name(dt)).c_str(), seconds_since(t0));
        double sq = 0.0;
        for (int64_t i = 0; i < n * n; ++i)
            sq += double(load_as_f32(good.data(), dt, i)) * load_as_f32(good.data(), dt, i);
        const double rms = std::sqrt(sq / double(n * n));

        auto check = [&](const Bytes &C, uint64_t seed) {
            const void *t[3] = {A.data(), B.data(), C.data()};
            FastCheckArgs a;
            a.desc = &d;
            a.tensors = t;
            a.count = 3;
            a.seed = seed;
            return freivalds_matmul(a);
        };

        // False alarms on the correct output, and how close the worst row came.
        int false_alarms = 0;
        double worst = 0.0, secs = 0.0;
        const int clean_trials = std::min(trials, 10);
        for (int s = 0; s < clean_trials; ++s) {
            t0 = Clock::now();
            FastCheckResult r = check(good, uint64_t(1000 + s));
            secs += seconds_since(t0);
            false_alarms += !r.passed;
            worst = std::max(worst, r.worst_ratio);
        }
        std::printf("%-10s %-5s %-8s %7d %7d %9s  (worst residual %.3f of tolerance; rms(C) %.2f)\n", "matmul",
                    std::string(dtype_name(dt)).c_str(), "correct", clean_trials, false_alarms, "alarms", worst, rms);
        failures += false_alarms;

        struct Model {
            const char *name;
            double scale; // of rms; 0 = set to zero
        };
        for (Model m : {Model{"rms", 1.0}, Model{"half", 0.5}, Model{"zero", 0.0}}) {
            std::mt19937_64 where(7);
            int caught = 0;
            secs = 0.0;
            // The claim is about rms-sized errors; the smaller models show the
            // detection limit with fewer trials (each costs a full check).
            const int model_trials = m.scale >= 1.0 ? trials : std::max(20, trials / 4);
            for (int t = 0; t < model_trials; ++t) {
                Bytes bad = good;
                const int64_t i = int64_t(where() % uint64_t(n * n));
                const double v = load_as_f32(bad.data(), dt, i);
                store_from_f32(bad.data(), dt, i, m.scale > 0 ? float(v + (t % 2 ? 1 : -1) * m.scale * rms) : 0.0f);
                t0 = Clock::now();
                caught += !check(bad, uint64_t(t)).passed;
                secs += seconds_since(t0);
            }
            row("matmul", dt, m.name, model_trials, caught, secs);
            if (m.scale >= 1.0) failures += model_trials - caught; // the claim: every one caught
        }
    }
    return failures;
}

int run_attention(int trials) {
    int failures = 0;
    for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_BF16}) {
        opb_op_desc d = make_desc(OPB_OP_ATTENTION, dt, OPB_ATTENTION_FUSED);
        d.p.attention = {1, 12, 1024, 1024, 64, 0.0f, 1, 0};
        const auto &p = d.p.attention;
        std::mt19937_64 rng(2027);
        const int64_t qn = p.batch * p.heads * p.seq_q * p.head_dim, kvn = p.batch * p.heads * p.seq_kv * p.head_dim;
        Bytes Q = random_tensor(qn, dt, rng), K = random_tensor(kvn, dt, rng), V = random_tensor(kvn, dt, rng);
        // O as a CPU backend computes it (f32 throughout, output rounded).
        Bytes good(size_t(qn) * dtype_size(dt));
        const float scale = effective_scale(d);
        std::vector<float> s(size_t(p.seq_kv)), acc(size_t(p.head_dim));
        for (int64_t bh = 0; bh < p.heads; ++bh)
            for (int64_t i = 0; i < p.seq_q; ++i) {
                const int64_t nv = causal_visible(i, p.seq_q, p.seq_kv);
                float mx = -INFINITY, sum = 0.0f;
                for (int64_t j = 0; j < nv; ++j) {
                    float dot = 0.0f;
                    for (int64_t k = 0; k < p.head_dim; ++k)
                        dot += load_as_f32(Q.data(), dt, (bh * p.seq_q + i) * p.head_dim + k) *
                               load_as_f32(K.data(), dt, (bh * p.seq_kv + j) * p.head_dim + k);
                    s[size_t(j)] = scale * dot;
                    mx = std::max(mx, s[size_t(j)]);
                }
                for (int64_t j = 0; j < nv; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] - mx));
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (int64_t j = 0; j < nv; ++j)
                    for (int64_t k = 0; k < p.head_dim; ++k)
                        acc[size_t(k)] +=
                            s[size_t(j)] / sum * load_as_f32(V.data(), dt, (bh * p.seq_kv + j) * p.head_dim + k);
                for (int64_t k = 0; k < p.head_dim; ++k)
                    store_from_f32(good.data(), dt, (bh * p.seq_q + i) * p.head_dim + k, acc[size_t(k)]);
            }
        auto check = [&](const Bytes &O, uint64_t seed) {
            const void *t[4] = {Q.data(), K.data(), V.data(), O.data()};
            FastCheckArgs a;
            a.desc = &d;
            a.tensors = t;
            a.count = 4;
            a.seed = seed;
            a.pointwise_max_error = pointwise_tolerance(dt, true, false).max_error;
            return sampled_attention(a);
        };
        int false_alarms = 0;
        for (int seed = 0; seed < 10; ++seed) false_alarms += !check(good, uint64_t(1000 + seed)).passed;
        const int64_t rows = p.heads * p.seq_q;
        const int64_t checked = int64_t(attention_checked_rows(d, 0).size());
        std::printf("%-10s %-5s %-8s %7d %7d %9s  (%lld of %lld rows checked exactly: %.2f%%)\n", "attention",
                    std::string(dtype_name(dt)).c_str(), "correct", 10, false_alarms, "alarms", (long long)checked,
                    (long long)rows, 100.0 * double(checked) / double(rows));
        failures += false_alarms;

        for (const char *model : {"scaled", "garbage"}) {
            std::mt19937_64 where(11);
            int caught = 0, caught_when_checked = 0, checked_trials = 0;
            double secs = 0.0;
            for (int t = 0; t < trials; ++t) {
                Bytes bad = good;
                const int64_t r = int64_t(where() % uint64_t(rows));
                if (std::strcmp(model, "scaled") == 0) {
                    for (int64_t k = 0; k < p.head_dim; ++k) {
                        const int64_t i = r * p.head_dim + k;
                        store_from_f32(bad.data(), dt, i, 0.8f * load_as_f32(bad.data(), dt, i));
                    }
                } else {
                    const int64_t i = r * p.head_dim + int64_t(where() % uint64_t(p.head_dim));
                    store_from_f32(bad.data(), dt, i, load_as_f32(bad.data(), dt, i) + 10.0f);
                }
                const auto sample = attention_checked_rows(d, uint64_t(t));
                const bool in_sample = std::count(sample.begin(), sample.end(), r) > 0;
                auto t0 = Clock::now();
                const bool hit = !check(bad, uint64_t(t)).passed;
                secs += seconds_since(t0);
                caught += hit;
                checked_trials += in_sample;
                caught_when_checked += in_sample && hit;
            }
            row("attention", dt, model, trials, caught, secs);
            std::printf("%-10s %-5s %-8s   row among the checked ones in %d trials, caught in %d of them\n", "", "", "",
                        checked_trials, caught_when_checked);
            failures += checked_trials - caught_when_checked; // the claim: caught whenever checked
        }
    }
    return failures;
}

} // namespace

int main(int argc, char **argv) {
    int64_t n = 4096;
    int trials = 100;
    std::string only;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--n")
            n = std::atoll(argv[i + 1]);
        else if (a == "--trials")
            trials = std::atoi(argv[i + 1]);
        else if (a == "--only")
            only = argv[i + 1];
        else {
            std::fprintf(stderr, "unknown option %s (valid: --n N, --trials T, --only matmul|attention)\n", a.c_str());
            return 2;
        }
    }
    std::printf("%-10s %-5s %-8s %7s %7s %10s %10s\n", "op", "dtype", "error", "trials", "caught", "rate", "s/check");
    int failures = 0;
    if (only.empty() || only == "matmul") failures += run_matmul(n, trials);
    if (only.empty() || only == "attention") failures += run_attention(trials);
    std::printf("%s\n", failures ? "CLAIM NOT MET (see rows above)"
                                 : "claims met: every rms-sized element error caught; "
                                   "every checked wrong row caught; no false alarm");
    return failures ? 1 : 0;
}
