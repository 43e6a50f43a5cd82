// harness/suite/workload_schema.cpp: [[workload]] tables in a suite.
#include "suite/suite.hpp"

#include "build_config.hpp"

#include <gtest/gtest.h>

#include <string>

namespace opbench {
namespace {

Suite parse(const std::string &text) { return parse_suite(text, "w.toml"); }

// The SuiteError's "file:line:column: message" for `text`; fails the test when it parses.
std::string schema_error_of(const std::string &text) {
    try {
        (void)parse(text);
    } catch (const SuiteError &e) {
        return e.what();
    }
    ADD_FAILURE() << "parsed without an error:\n" << text;
    return {};
}

bool has_text(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

const char *kHead = "[suite]\nname = \"w\"\n";

TEST(WorkloadSuite, DecoderTableWithDefaults) {
    const Suite s = parse(std::string(kHead) + R"(
[defaults]
backends = ["naive", "onednn"]
warmup = 1
repetitions = 3
dtypes = ["f32", "bf16"]   # a case sweep; workloads take their own dtype

[[workload]]
kind = "decoder"
name = "llama.layer"
hidden = 64
heads = 4
ffn = 96
prompt = 8
generate = 4
norm = "rmsnorm"
mlp = "swiglu"
bias = false
dtype = "bf16"
threads = 1
repetitions = 5
)");
    EXPECT_TRUE(s.cases.empty());
    ASSERT_EQ(s.workloads.size(), 1u);
    const WorkloadCase &w = s.workloads[0];
    EXPECT_EQ(w.name, "llama.layer");
    EXPECT_EQ(w.kind, "decoder");
    EXPECT_EQ(w.backends, (std::vector<std::string>{"naive", "onednn"}));
    EXPECT_EQ(w.settings.warmup, 1);      // from [defaults]
    EXPECT_EQ(w.settings.repetitions, 5); // the table's own wins
    EXPECT_EQ(w.settings.threads, 1);
    EXPECT_EQ(w.decoder.threads, 1); // copied into every op
    EXPECT_EQ(w.decoder.hidden, 64);
    EXPECT_EQ(w.decoder.head_dim(), 16);
    EXPECT_EQ(w.decoder.ffn_width(), 96);
    EXPECT_EQ(w.decoder.layers, 1);
    EXPECT_EQ(w.decoder.batch, 1);
    EXPECT_EQ(w.decoder.norm, workload::NormKind::rmsnorm);
    EXPECT_EQ(w.decoder.mlp, workload::MlpKind::swiglu);
    EXPECT_FALSE(w.decoder.bias);
    EXPECT_EQ(w.decoder.dtype, OPB_DTYPE_BF16);
    EXPECT_FLOAT_EQ(w.decoder.eps, 1e-6f); // rmsnorm's default
    EXPECT_EQ(w.phases, (std::vector<WorkloadCase::Phase>{WorkloadCase::Phase::prefill, WorkloadCase::Phase::decode}));
    EXPECT_EQ(w.where.line, 10);
}

TEST(WorkloadSuite, DefaultsOfAMinimalTable) {
    const Suite s = parse(std::string(kHead) + "[[workload]]\nname = \"g\"\nhidden = 32\nheads = 2\nprompt = 4\n");
    ASSERT_EQ(s.workloads.size(), 1u);
    const auto &c = s.workloads[0].decoder;
    EXPECT_EQ(c.ffn_width(), 128);
    EXPECT_EQ(c.norm, workload::NormKind::layernorm);
    EXPECT_EQ(c.mlp, workload::MlpKind::gelu);
    EXPECT_EQ(c.gelu_variant, OPB_GELU_TANH);
    EXPECT_TRUE(c.bias);
    EXPECT_FLOAT_EQ(c.eps, 1e-5f);
    EXPECT_EQ(s.workloads[0].phases, std::vector<WorkloadCase::Phase>{WorkloadCase::Phase::prefill});
    EXPECT_EQ(s.workloads[0].backends, (std::vector<std::string>{"naive", "onednn", "cuda"}));
}

TEST(WorkloadSuite, CasesAndWorkloadsTogether) {
    const Suite s = parse(std::string(kHead) + "[[case]]\nop = \"add\"\nrows = 2\ncols = 2\n"
                                               "[[workload]]\nname = \"g\"\nhidden = 32\nheads = 2\nprompt = 4\n");
    EXPECT_EQ(s.cases.size(), 1u);
    EXPECT_EQ(s.workloads.size(), 1u);
}

TEST(WorkloadSuite, ErrorsSayWhereAndWhatIsValid) {
    const std::string base = std::string(kHead) + "[[workload]]\nname = \"g\"\nheads = 2\nprompt = 4\n";
    std::string e = schema_error_of(base + "hidden = 30\nhiden = 3\n");
    EXPECT_TRUE(has_text(e, "w.toml:8:1: unknown key 'hiden' in [[workload]] (valid: kind, name, model, hidden")) << e;
    e = schema_error_of(base + "hidden = [32, 64]\n");
    EXPECT_TRUE(has_text(e, "w.toml:7:10: 'hidden' takes one value")) << e;
    e = schema_error_of(base + "hidden = 31\n");
    EXPECT_TRUE(has_text(e, "w.toml:7:10: 'hidden' 31 is not divisible by 'heads' 2")) << e;
    e = schema_error_of(base + "hidden = 32\nmlp = \"relu\"\n");
    EXPECT_TRUE(has_text(e, "w.toml:8:7: unknown mlp 'relu' (valid: gelu, silu, swiglu, geglu)")) << e;
    e = schema_error_of(base + "hidden = 32\nphases = [\"decode\"]\n");
    EXPECT_TRUE(has_text(e, "w.toml:8:11: phase \"decode\" needs 'generate' >= 1")) << e;
    e = schema_error_of(base + "hidden = 32\nkind = \"encoder\"\n");
    EXPECT_TRUE(has_text(e, "unknown kind 'encoder' (valid: decoder)")) << e;
    e = schema_error_of(std::string(kHead) + "[[workload]]\nhidden = 32\nheads = 2\nprompt = 4\n");
    EXPECT_TRUE(has_text(e, "w.toml:3:1: [[workload]] has no 'name'")) << e;
    e = schema_error_of(std::string(kHead) + "[[workload]]\nname = \"g\"\nheads = 2\nprompt = 4\n");
    EXPECT_TRUE(has_text(e, "[[workload]] 'g' needs 'hidden'")) << e;
    e = schema_error_of(base + "hidden = 32\n" + "[[workload]]\nname = \"g\"\nhidden = 32\nheads = 2\nprompt = 4\n");
    EXPECT_TRUE(has_text(e, "w.toml:8:1: workload name 'g' is used twice at dtype f32 (first at w.toml:3:1)")) << e;
    e = schema_error_of(base + "hidden = 32\nmin_time = 2\nmax_time = 1\n");
    EXPECT_TRUE(has_text(e, "max_time (1 s) is less than min_time (2 s)")) << e;
    e = schema_error_of(std::string(kHead) + "[workload]\nname = \"g\"\n");
    EXPECT_TRUE(has_text(e, "'workload' must be an array of tables")) << e;
    e = schema_error_of(kHead);
    EXPECT_TRUE(has_text(e, "no [[case]] or [[workload]] tables")) << e;
}

TEST(WorkloadSuite, ModelPresetFillsThePublishedShapeAndKeysOverrideIt) {
    Suite s = parse(std::string(kHead) +
                    "[[workload]]\nname = \"l3\"\nmodel = \"llama-3-8b\"\nlayers = 2\nprompt = 16\ngenerate = 4\n"
                    "[[workload]]\nname = \"g2\"\nmodel = \"gemma-2-9b\"\nlayers = 1\nprompt = 8\n"
                    "dtype = \"bf16\"\nrope_theta = 20000\n");
    ASSERT_EQ(s.workloads.size(), 2u);
    const workload::DecoderConfig &l3 = s.workloads[0].decoder;
    EXPECT_EQ(l3.hidden, 4096);
    EXPECT_EQ(l3.heads, 32);
    EXPECT_EQ(l3.kv_head_count(), 8);
    EXPECT_EQ(l3.head_dim(), 128);
    EXPECT_EQ(l3.ffn_width(), 14336);
    EXPECT_EQ(l3.layers, 2); // overridden: the model has 32
    EXPECT_EQ(l3.prompt, 16);
    EXPECT_EQ(l3.generate, 4);
    EXPECT_EQ(l3.norm, workload::NormKind::rmsnorm);
    EXPECT_EQ(l3.mlp, workload::MlpKind::swiglu);
    EXPECT_FALSE(l3.bias);
    EXPECT_TRUE(l3.rope);
    EXPECT_FLOAT_EQ(l3.rope_theta, 500000.0f);
    EXPECT_FLOAT_EQ(l3.eps, 1e-5f);
    const workload::DecoderConfig &g2 = s.workloads[1].decoder;
    EXPECT_EQ(g2.head_dim(), 256); // not hidden / heads = 224
    EXPECT_EQ(g2.q_width(), 4096);
    EXPECT_EQ(g2.kv_width(), 2048);
    EXPECT_EQ(g2.mlp, workload::MlpKind::geglu);
    EXPECT_EQ(g2.dtype, OPB_DTYPE_BF16);
    EXPECT_FLOAT_EQ(g2.rope_theta, 20000.0f);
    EXPECT_EQ(g2.layers, 1);
}

// One workload at its levels: the same name at f32, bf16 and s8 (int8 linear
// layers) is three workloads whose entries differ in dt:, the levels table's row.
TEST(WorkloadSuite, ANameRepeatsAtAnotherDtypeOnly) {
    const std::string one = "[[workload]]\nname = \"l3\"\nmodel = \"llama-3-8b\"\nlayers = 1\nprompt = 4\n";
    Suite s = parse(std::string(kHead) + one + one + "dtype = \"bf16\"\n" + one + "dtype = \"s8\"\n");
    ASSERT_EQ(s.workloads.size(), 3u);
    EXPECT_EQ(s.workloads[2].decoder.dtype, OPB_DTYPE_S8);
    EXPECT_TRUE(s.workloads[2].decoder.int8_linear());
    EXPECT_EQ(s.workloads[2].decoder.act_dtype(), OPB_DTYPE_F32); // everything but the int8 weights
    const std::string e = schema_error_of(std::string(kHead) + one + "dtype = \"s8\"\n" + one + "dtype = \"s8\"\n");
    EXPECT_TRUE(has_text(e, "w.toml:9:1: workload name 'l3' is used twice at dtype s8 (first at w.toml:3:1)")) << e;
    EXPECT_TRUE(has_text(schema_error_of(std::string(kHead) + one + "dtype = \"u8\"\n"), "unknown dtype 'u8'"));
}

// The FP8 level (issue 42): e4m3 layers, bf16 between them, f32 biases.
TEST(WorkloadSuite, Fp8IsALevelWithBf16ActivationsAndF32Biases) {
    const std::string one = "[[workload]]\nname = \"l3\"\nmodel = \"llama-3-8b\"\nlayers = 1\nprompt = 4\n";
    Suite s = parse(std::string(kHead) + one + one + "dtype = \"f8e4m3\"\n");
    ASSERT_EQ(s.workloads.size(), 2u);
    const workload::DecoderConfig &c = s.workloads[1].decoder;
    EXPECT_EQ(c.dtype, OPB_DTYPE_F8_E4M3);
    EXPECT_TRUE(c.fp8_linear() && c.quantized_linear() && !c.int8_linear());
    EXPECT_EQ(c.act_dtype(), OPB_DTYPE_BF16);
    EXPECT_EQ(c.bias_dtype(), OPB_DTYPE_F32);
    const std::string e = schema_error_of(std::string(kHead) + one + "dtype = \"fp8\"\n");
    EXPECT_TRUE(has_text(e, "unknown dtype 'fp8'")) << e;
    EXPECT_TRUE(has_text(e, "f8e4m3")) << e; // the valid names are listed
}

TEST(WorkloadSuite, ModelAndKvHeadsErrorsSayWhere) {
    const std::string base = std::string(kHead) + "[[workload]]\nname = \"g\"\nprompt = 4\n";
    std::string e = schema_error_of(base + "model = \"llama-4\"\n");
    EXPECT_TRUE(has_text(e, "w.toml:6:9: unknown model 'llama-4' (valid: llama-3-8b, mistral-7b, qwen2.5-7b, "
                            "phi-3-mini, gemma-2-9b)"))
        << e;
    e = schema_error_of(base + "hidden = 32\nheads = 4\nkv_heads = 3\n");
    EXPECT_TRUE(has_text(e, "w.toml:8:12: 'heads' 4 is not a multiple of 'kv_heads' 3")) << e;
    e = schema_error_of(base + "heads = 4\n");
    EXPECT_TRUE(has_text(e, "[[workload]] 'g' needs 'hidden' (or a 'model')")) << e;
}

TEST(WorkloadSuite, KnownBackendsAreChecked) {
    SuiteOptions opt;
    opt.known_backends = {"naive"};
    try {
        (void)parse_suite(std::string(kHead) +
                              "[[workload]]\nname = \"g\"\nhidden = 32\nheads = 2\nprompt = 4\nbackends = [\"tpu\"]\n",
                          "w.toml", opt);
        ADD_FAILURE() << "accepted an unknown backend";
    } catch (const SuiteError &e) {
        EXPECT_TRUE(has_text(e.what(), "w.toml:8:13: unknown backend 'tpu' (valid: naive)")) << e.what();
    }
}

// suites/decoder.toml: what its README and the issue promise.
TEST(WorkloadSuite, ShippedDecoderSuite) {
    const Suite s = load_suite_file(std::string(OPBENCH_SOURCE_ROOT) + "/suites/decoder.toml");
    ASSERT_EQ(s.workloads.size(), 3u);
    const auto &gpt2 = s.workloads[0].decoder;
    EXPECT_EQ(s.workloads[0].name, "gpt2-small.layer");
    EXPECT_EQ(gpt2.hidden, 768);
    EXPECT_EQ(gpt2.heads, 12);
    EXPECT_EQ(gpt2.ffn_width(), 3072);
    const auto &llama = s.workloads[1].decoder;
    EXPECT_EQ(llama.hidden, 4096);
    EXPECT_EQ(llama.heads, 32);
    EXPECT_EQ(llama.ffn_width(), 11008);
    EXPECT_EQ(llama.mlp, workload::MlpKind::swiglu);
    EXPECT_EQ(llama.norm, workload::NormKind::rmsnorm);
    const auto &tiny = s.workloads[2].decoder;
    EXPECT_EQ(tiny.layers, 4);
    EXPECT_EQ(tiny.hidden, 256);
    EXPECT_EQ(tiny.generate, 50);
    for (const auto &w : s.workloads) {
        EXPECT_EQ(w.decoder.batch, 1) << w.name;
        EXPECT_EQ(w.phases.size(), 2u) << w.name; // prefill and decode
    }
}

} // namespace
} // namespace opbench
