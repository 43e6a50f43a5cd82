// Tests for harness/suite/suite.cpp: parsing, defaults and overrides, sweep
// expansion (cartesian and zipped), every error kind with its position, and
// the suites shipped in suites/.
#include "suite/suite.hpp"
#include "suite/case_names.hpp"

#include "build_config.hpp"
#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace opbench {
namespace {

// The error parse_suite raises for `text`; fails the test when it accepts it.
SuiteError error_of(std::string_view text, const SuiteOptions &options = {}) {
    try {
        (void)parse_suite(text, "t.toml", options);
    } catch (const SuiteError &e) {
        return e;
    }
    throw std::logic_error("parse_suite accepted a suite that should be refused:\n" + std::string(text));
}

void expect_at(const SuiteError &e, int line, int column) {
    EXPECT_EQ(e.where().file, "t.toml") << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, column) << e.what();
    EXPECT_EQ(std::string(e.what()),
              "t.toml:" + std::to_string(line) + ":" + std::to_string(column) + ": " + e.message());
}

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// ---- valid suites -------------------------------------------------------------

TEST(SuiteParse, MetadataDefaultsAndPerCaseOverrides) {
    const char *text = R"([suite]
name = "demo"
description = "what it is for"

[defaults]
backends = ["naive", "onednn"]
dtypes = "bf16"
warmup = 5
min_time = 0.2
max_time = 3
min_samples = 7
noise = 0.02
repetitions = 9
cache = "cold"
threads = 4

[[case]]
op = "matmul"
m = 8
n = 16
k = 32

[[case]]
op = "add"
name = "residual"
rows = 4
cols = 8
dtype = "f16"
backends = "cuda"
warmup = 0
cache = "warm"
threads = 1
)";
    Suite s = parse_suite(text, "t.toml");
    EXPECT_EQ(s.name, "demo");
    EXPECT_EQ(s.description, "what it is for");
    EXPECT_EQ(s.path, "t.toml");
    ASSERT_EQ(s.cases.size(), 2u);

    const Case &mm = s.cases[0];
    EXPECT_EQ(mm.name, "");
    EXPECT_EQ(mm.desc.op, OPB_OP_MATMUL);
    EXPECT_EQ(mm.desc.dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(mm.desc.struct_size, sizeof(opb_op_desc));
    EXPECT_EQ(mm.desc.p.matmul.batch, 1); // default
    EXPECT_EQ(mm.desc.p.matmul.m, 8);
    EXPECT_EQ(mm.desc.p.matmul.n, 16);
    EXPECT_EQ(mm.desc.p.matmul.k, 32);
    EXPECT_EQ(mm.desc.p.matmul.trans_a, 0);
    EXPECT_EQ(mm.desc.p.matmul.trans_b, 0);
    EXPECT_EQ(mm.desc.p.matmul.has_bias, 0);
    EXPECT_EQ(mm.backends, (std::vector<std::string>{"naive", "onednn"}));
    EXPECT_EQ(mm.settings.warmup, 5);
    EXPECT_DOUBLE_EQ(mm.settings.min_time, 0.2);
    EXPECT_DOUBLE_EQ(mm.settings.max_time, 3.0);
    EXPECT_EQ(mm.settings.min_samples, 7);
    EXPECT_DOUBLE_EQ(mm.settings.noise, 0.02);
    EXPECT_EQ(mm.settings.repetitions, 9);
    EXPECT_EQ(mm.settings.cache, CacheState::cold);
    EXPECT_EQ(mm.settings.threads, 4);
    EXPECT_EQ(mm.desc.threads, 4);
    EXPECT_EQ(mm.where.line, 17);
    EXPECT_EQ(mm.where.column, 1);

    const Case &add = s.cases[1];
    EXPECT_EQ(add.name, "residual");
    EXPECT_EQ(add.desc.op, OPB_OP_ADD);
    EXPECT_EQ(add.desc.dtype, OPB_DTYPE_F16);
    EXPECT_EQ(add.desc.p.eltwise.rows, 4);
    EXPECT_EQ(add.desc.p.eltwise.cols, 8);
    EXPECT_EQ(add.backends, (std::vector<std::string>{"cuda"}));
    EXPECT_EQ(add.settings.warmup, 0);
    EXPECT_EQ(add.settings.cache, CacheState::warm);
    EXPECT_EQ(add.settings.threads, 1);
    EXPECT_EQ(add.desc.threads, 1);
    EXPECT_EQ(add.settings.repetitions, 9); // inherited
    EXPECT_EQ(add.where.line, 23);
}

TEST(SuiteParse, BuiltInDefaultsWhenTheSuiteGivesNone) {
    Suite s = parse_suite(R"([suite]
name = "d"
[[case]]
op = "layernorm"
rows = 2
cols = 3
[[case]]
op = "rmsnorm"
rows = 2
cols = 3
[[case]]
op = "attention"
heads = 2
seq = 8
head_dim = 4
[[case]]
op = "softmax"
rows = 2
cols = 3
)",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 4u);
    const MeasureSettings builtin;
    for (const auto &c : s.cases) {
        EXPECT_EQ(c.desc.dtype, OPB_DTYPE_F32);
        EXPECT_EQ(c.desc.variant, 0);
        EXPECT_EQ(c.backends, (std::vector<std::string>{"naive", "onednn", "cuda"}));
        EXPECT_EQ(c.settings.warmup, builtin.warmup);
        EXPECT_EQ(c.settings.repetitions, builtin.repetitions);
        EXPECT_EQ(c.settings.cache, builtin.cache);
        EXPECT_EQ(c.settings.threads, 0);
        EXPECT_EQ(c.desc.threads, resolve_threads(0)) << "0 reaches backends resolved to the affinity mask";
    }
    EXPECT_FLOAT_EQ(s.cases[0].desc.p.norm.eps, 1e-5f);
    EXPECT_FLOAT_EQ(s.cases[1].desc.p.norm.eps, 1e-6f);
    const auto &att = s.cases[2].desc.p.attention;
    EXPECT_EQ(att.batch, 1);
    EXPECT_EQ(att.seq_q, 8);
    EXPECT_EQ(att.seq_kv, 8);
    EXPECT_EQ(att.scale, 0.0f); // 0 = the op's default, 1/sqrt(head_dim)
    EXPECT_EQ(att.causal, 0);
    EXPECT_EQ(s.cases[3].desc.p.softmax.batch, 1);
    EXPECT_EQ(s.cases[3].desc.p.softmax.scale, 0.0f);
}

TEST(SuiteParse, AttentionSeqHiddenVariantAndScale) {
    Suite s = parse_suite(R"([suite]
name = "a"
[[case]]
op = "attention"
batch = 2
heads = 12
hidden = 768
seq = 1024
seq_q = 1
causal = true
scale = 0.125
variant = "fused"
dtype = "bf16"
)",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 1u);
    const auto &d = s.cases[0].desc;
    EXPECT_EQ(d.op, OPB_OP_ATTENTION);
    EXPECT_EQ(d.variant, OPB_ATTENTION_FUSED);
    EXPECT_EQ(d.dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(d.p.attention.batch, 2);
    EXPECT_EQ(d.p.attention.heads, 12);
    EXPECT_EQ(d.p.attention.head_dim, 64); // hidden / heads
    EXPECT_EQ(d.p.attention.seq_q, 1);     // seq_q wins over seq
    EXPECT_EQ(d.p.attention.seq_kv, 1024); // from seq
    EXPECT_EQ(d.p.attention.causal, 1);
    EXPECT_FLOAT_EQ(d.p.attention.scale, 0.125f);
}

TEST(SuiteParse, MatmulFlagsGeluVariantSoftmaxOptions) {
    Suite s = parse_suite(R"([suite]
name = "f"
[[case]]
op = "matmul"
batch = 3
m = 4
n = 5
k = 6
trans_a = true
trans_b = true
bias = true
variant = "tf32"
[[case]]
op = "gelu"
rows = 2
cols = 2
variant = "tanh"
[[case]]
op = "softmax"
batch = 2
rows = 3
cols = 5
scale = 2
causal = true
[[case]]
op = "layernorm"
rows = 1
cols = 1
eps = 1e-3
)",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 4u);
    const auto &mm = s.cases[0].desc;
    EXPECT_EQ(mm.p.matmul.batch, 3);
    EXPECT_EQ(mm.p.matmul.trans_a, 1);
    EXPECT_EQ(mm.p.matmul.trans_b, 1);
    EXPECT_EQ(mm.p.matmul.has_bias, 1);
    EXPECT_EQ(mm.variant, OPB_MATMUL_TF32);
    EXPECT_EQ(s.cases[1].desc.variant, OPB_GELU_TANH);
    EXPECT_EQ(s.cases[2].desc.p.softmax.batch, 2);
    EXPECT_FLOAT_EQ(s.cases[2].desc.p.softmax.scale, 2.0f); // an integer is accepted as a number
    EXPECT_EQ(s.cases[2].desc.p.softmax.causal, 1);
    EXPECT_FLOAT_EQ(s.cases[3].desc.p.norm.eps, 1e-3f);
}

TEST(SuiteParse, ContentHashIsSha256OfTheBytes) {
    // Known answer computed with `printf '...' | sha256sum`.
    const std::string text = "[suite]\nname = \"h\"\n[[case]]\nop = \"silu\"\nrows = 1\ncols = 1\n";
    Suite s = parse_suite(text, "t.toml");
    EXPECT_EQ(s.content_hash, "b6536117d0c020ada657c6936571902ee1b88ae08e9c3104000f7fa17e1cee1a");
    // A comment changes the bytes, so the hash, though not the cases.
    Suite s2 = parse_suite(text + "# note\n", "t.toml");
    EXPECT_NE(s2.content_hash, s.content_hash);
    EXPECT_EQ(s2.cases.size(), s.cases.size());
}

TEST(SuiteLoadFile, ReadsTheFileAndHashesItsBytes) {
    const auto path = std::filesystem::temp_directory_path() / "opbench_suite_test_load.toml";
    const std::string text = "[suite]\nname = \"h\"\n[[case]]\nop = \"silu\"\nrows = 1\ncols = 1\n";
    {
        std::ofstream out(path, std::ios::binary);
        out << text;
    }
    Suite s = load_suite_file(path.string());
    std::filesystem::remove(path);
    EXPECT_EQ(s.path, path.string());
    EXPECT_EQ(s.content_hash, parse_suite(text, "x").content_hash);
    ASSERT_EQ(s.cases.size(), 1u);
    EXPECT_EQ(s.cases[0].where.file, path.string());
}

// ---- expansion ----------------------------------------------------------------

TEST(SuiteExpansion, CartesianCountAndOrderFollowTheDocumentedKeyOrder) {
    // Keys written in a different order from the canonical one: the order of
    // expansion must not depend on how the file is laid out.
    Suite s = parse_suite(R"([suite]
name = "x"
[[case]]
dtype = ["f32", "bf16"]
op = "matmul"
n = [32, 48, 96]
m = [64, 128]
k = 16
)",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 12u);
    std::size_t i = 0;
    for (int64_t m : {64, 128})
        for (int64_t n : {32, 48, 96})
            for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_BF16}) {
                const auto &d = s.cases[i++].desc;
                EXPECT_EQ(d.p.matmul.m, m) << "case " << i - 1;
                EXPECT_EQ(d.p.matmul.n, n) << "case " << i - 1;
                EXPECT_EQ(d.dtype, dt) << "case " << i - 1;
                EXPECT_EQ(d.p.matmul.k, 16);
            }
}

TEST(SuiteExpansion, DefaultsListsAndSettingsListsAreAxesToo) {
    Suite s = parse_suite(R"([suite]
name = "x"
[defaults]
dtypes = ["f32", "f16"]
[[case]]
op = "attention"
heads = 2
head_dim = 8
seq = [16, 32]
causal = [false, true]
variant = ["composed", "fused"]
threads = [1, 2]
)",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 2u * 2 * 2 * 2 * 2);
    // seq slowest, then causal, variant, dtype, threads fastest.
    std::size_t i = 0;
    for (int64_t seq : {16, 32})
        for (int causal : {0, 1})
            for (int variant : {OPB_ATTENTION_COMPOSED, OPB_ATTENTION_FUSED})
                for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_F16})
                    for (int threads : {1, 2}) {
                        const Case &c = s.cases[i++];
                        EXPECT_EQ(c.desc.p.attention.seq_q, seq);
                        EXPECT_EQ(c.desc.p.attention.causal, causal);
                        EXPECT_EQ(c.desc.variant, variant);
                        EXPECT_EQ(c.desc.dtype, dt);
                        EXPECT_EQ(c.settings.threads, threads);
                        EXPECT_EQ(c.desc.threads, threads);
                    }
}

TEST(SuiteExpansion, ZippedShapesRowsNamesAndRemainingSweeps) {
    Suite s = parse_suite(R"([suite]
name = "z"
[[case]]
op = "matmul"
name = "gpt2"
m = 1024
bias = true
dtype = ["f32", "bf16"]
shapes = [
  {name = "attn.qkv", n = 2304, k = 768},
  {name = "mlp.fc", n = 3072, k = 768, bias = false},
  {n = 7, k = 5, m = [1, 2]},
]
)",
                          "t.toml");
    // rows vary slowest; row 3 sweeps m itself.
    ASSERT_EQ(s.cases.size(), 2u + 2u + 4u);
    EXPECT_EQ(s.cases[0].name, "gpt2.attn.qkv");
    EXPECT_EQ(s.cases[0].desc.dtype, OPB_DTYPE_F32);
    EXPECT_EQ(s.cases[1].name, "gpt2.attn.qkv");
    EXPECT_EQ(s.cases[1].desc.dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(s.cases[0].desc.p.matmul.m, 1024);
    EXPECT_EQ(s.cases[0].desc.p.matmul.n, 2304);
    EXPECT_EQ(s.cases[0].desc.p.matmul.k, 768);
    EXPECT_EQ(s.cases[0].desc.p.matmul.has_bias, 1);
    EXPECT_EQ(s.cases[0].where.line, 10); // the row, not the [[case]] header
    EXPECT_EQ(s.cases[0].where.column, 3);
    EXPECT_EQ(s.cases[2].name, "gpt2.mlp.fc");
    EXPECT_EQ(s.cases[2].desc.p.matmul.has_bias, 0); // the row overrides the case
    EXPECT_EQ(s.cases[4].name, "gpt2");              // a row without a name keeps the case's
    EXPECT_EQ(s.cases[4].desc.p.matmul.m, 1);
    EXPECT_EQ(s.cases[4].desc.dtype, OPB_DTYPE_F32);
    EXPECT_EQ(s.cases[5].desc.p.matmul.m, 1);
    EXPECT_EQ(s.cases[5].desc.dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(s.cases[6].desc.p.matmul.m, 2);
    EXPECT_EQ(s.cases[7].desc.p.matmul.m, 2);
    EXPECT_EQ(s.cases[7].desc.p.matmul.n, 7);
}

TEST(SuiteExpansion, ZippedShapesAsArrayOfTablesAndWithoutCaseName) {
    Suite s = parse_suite(R"([suite]
name = "z"
[[case]]
op = "add"
[[case.shapes]]
name = "small"
rows = 2
cols = 2
[[case.shapes]]
name = "big"
rows = 8
cols = 8
)",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 2u);
    EXPECT_EQ(s.cases[0].name, "small");
    EXPECT_EQ(s.cases[1].name, "big");
    EXPECT_EQ(s.cases[1].desc.p.eltwise.rows, 8);
}

// ---- errors: each names its line and column ---------------------------------------

TEST(SuiteErrors, TomlSyntaxErrorCarriesTomlPlusPlusPosition) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = [1,,2]\n");
    expect_at(e, 5, 11);
    EXPECT_TRUE(has(e.message(), "TOML syntax error")) << e.what();
}

TEST(SuiteErrors, UnknownOpListsValidOps) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmull\"\nm = 1\n");
    expect_at(e, 4, 6);
    EXPECT_TRUE(has(e.message(), "unknown op 'matmull'")) << e.what();
    EXPECT_TRUE(has(e.message(), "valid: matmul, softmax, layernorm, rmsnorm, gelu, silu, add, attention, rope"))
        << e.what();
}

TEST(SuiteErrors, MissingOpListsValidOps) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nrows = 1\n");
    expect_at(e, 3, 1);
    EXPECT_TRUE(has(e.message(), "no 'op'")) << e.what();
    EXPECT_TRUE(has(e.message(), "matmul, softmax")) << e.what();
}

TEST(SuiteErrors, UnknownKeyForOpListsValidKeys) {
    // `heads` is an attention key, not a matmul one.
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 1\n  heads = 2\n");
    expect_at(e, 6, 3);
    EXPECT_TRUE(has(e.message(), "unknown key 'heads'")) << e.what();
    EXPECT_TRUE(has(e.message(), "for op matmul")) << e.what();
    EXPECT_TRUE(has(e.message(), "batch, m, n, k, trans_a, trans_b, bias")) << e.what();
    EXPECT_TRUE(has(e.message(), "repetitions")) << e.what();
}

TEST(SuiteErrors, UnknownKeyInAShapesRowListsValidKeys) {
    auto e =
        error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nshapes = [{rows = 1, cols = 1, op = \"silu\"}]\n");
    expect_at(e, 5, 32);
    EXPECT_TRUE(has(e.message(), "unknown key 'op'")) << e.what();
    EXPECT_TRUE(has(e.message(), "valid: name, rows, cols")) << e.what();
}

TEST(SuiteErrors, UnknownKeyInDefaultsAndSuiteAndTopLevel) {
    auto d = error_of("[suite]\nname = \"x\"\n[defaults]\ndtype = \"f32\"\n");
    expect_at(d, 4, 1);
    EXPECT_TRUE(has(d.message(), "valid: backends, dtypes, plugins, warmup")) << d.what();

    auto s = error_of("[suite]\nname = \"x\"\nauthor = \"me\"\n");
    expect_at(s, 3, 1);
    EXPECT_TRUE(has(s.message(), "valid: name, description")) << s.what();

    auto t = error_of("[suite]\nname = \"x\"\n[cases]\n");
    expect_at(t, 3, 2);
    EXPECT_TRUE(has(t.message(), "valid: suite, defaults, case")) << t.what();
}

TEST(SuiteErrors, UnknownDtypeListsValidDtypes) {
    auto e =
        error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = 1\ncols = 1\ndtype = [\"f32\", \"fp16\"]\n");
    expect_at(e, 7, 17);
    EXPECT_TRUE(has(e.message(), "unknown dtype 'fp16' (valid: f32, bf16, f16, s8, f8e4m3)")) << e.what();
}

TEST(SuiteErrors, UnknownDtypeInDefaultsIsReportedEvenWhenEveryCaseOverrides) {
    auto e = error_of("[suite]\nname = \"x\"\n[defaults]\ndtypes = [\"f64\"]\n[[case]]\nop = "
                      "\"add\"\nrows = 1\ncols = 1\ndtype = \"f32\"\n");
    expect_at(e, 4, 11);
    EXPECT_TRUE(has(e.message(), "valid: f32, bf16, f16")) << e.what();
}

TEST(SuiteErrors, UnknownVariantListsTheOpsVariants) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = 1\nseq = "
                      "4\nhead_dim = 4\nvariant = \"flash\"\n");
    expect_at(e, 8, 11);
    EXPECT_TRUE(has(e.message(), "unknown variant for op attention 'flash'")) << e.what();
    EXPECT_TRUE(has(e.message(), "valid: composed, fused")) << e.what();

    auto g = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"gelu\"\nrows = 1\ncols = 1\nvariant = \"fast\"\n");
    expect_at(g, 7, 11);
    EXPECT_TRUE(has(g.message(), "valid: erf, tanh")) << g.what();
}

TEST(SuiteErrors, UnknownCacheModeListsValidModes) {
    auto e = error_of("[suite]\nname = \"x\"\n[defaults]\ncache = \"hot\"\n");
    expect_at(e, 4, 9);
    EXPECT_TRUE(has(e.message(), "unknown cache mode 'hot' (valid: warm, cold)")) << e.what();
}

TEST(SuiteErrors, UnknownBackendListsKnownOnesOnlyWhenTheyAreGiven) {
    const char *text = "[suite]\nname = \"x\"\n[defaults]\nbackends = [\"naive\", \"cudnn\"]\n"
                       "[[case]]\nop = \"add\"\nrows = 1\ncols = 1\n";
    SuiteOptions known;
    known.known_backends = {"naive", "onednn", "cuda"};
    auto e = error_of(text, known);
    expect_at(e, 4, 22);
    EXPECT_TRUE(has(e.message(), "unknown backend 'cudnn' (valid: naive, onednn, cuda)")) << e.what();
    // With no known list, any name passes (the runner reports it as skipped).
    Suite s = parse_suite(text, "t.toml");
    EXPECT_EQ(s.cases.at(0).backends, (std::vector<std::string>{"naive", "cudnn"}));
}

TEST(SuiteErrors, WrongValueTypesNameTheExpectedType) {
    auto str = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = \"big\"\nn = 1\nk = 1\n");
    expect_at(str, 5, 5);
    EXPECT_TRUE(has(str.message(), "'m' must be an integer, got string \"big\"")) << str.what();

    auto flt = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 1\nn = 2.0\nk = 1\n");
    expect_at(flt, 6, 5);
    EXPECT_TRUE(has(flt.message(), "must be an integer, got floating-point 2")) << flt.what();

    auto flag = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 1\nn = 1\nk = 1\ntrans_b = 1\n");
    expect_at(flag, 8, 11);
    EXPECT_TRUE(has(flag.message(), "'trans_b' must be true or false, got integer 1")) << flag.what();

    auto num = error_of("[suite]\nname = \"x\"\n[defaults]\nmin_time = \"1s\"\n");
    expect_at(num, 4, 12);
    EXPECT_TRUE(has(num.message(), "'min_time' must be a number")) << num.what();

    auto name = error_of("[suite]\nname = 3\n");
    expect_at(name, 2, 8);
    EXPECT_TRUE(has(name.message(), "'name' must be a string")) << name.what();

    auto single = error_of("[suite]\nname = \"x\"\n[case]\nop = \"add\"\n");
    expect_at(single, 3, 1);
    EXPECT_TRUE(has(single.message(), "write [[case]]")) << single.what();

    auto nested = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = [[1, 2]]\ncols = 1\n");
    expect_at(nested, 5, 9);
    EXPECT_TRUE(has(nested.message(), "nested list")) << nested.what();
}

TEST(SuiteErrors, ZeroAndNegativeDimsAreRefused) {
    auto zero = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = [4, 0]\ncols = 1\n");
    expect_at(zero, 5, 12);
    EXPECT_TRUE(has(zero.message(), "'rows' must be > 0, got 0")) << zero.what();

    auto neg = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = -2\nseq = 4\nhead_dim = 4\n");
    expect_at(neg, 5, 9);
    EXPECT_TRUE(has(neg.message(), "'heads' must be > 0, got -2")) << neg.what();

    auto eps = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"rmsnorm\"\nrows = 1\ncols = 1\neps = 0.0\n");
    expect_at(eps, 7, 7);
    EXPECT_TRUE(has(eps.message(), "'eps' must be > 0")) << eps.what();

    auto reps = error_of("[suite]\nname = \"x\"\n[defaults]\nrepetitions = 0\n");
    expect_at(reps, 4, 15);
    EXPECT_TRUE(has(reps.message(), "'repetitions' must be between 1 and")) << reps.what();
}

TEST(SuiteErrors, HiddenNotDividingHeadsIsRefusedAtTheHiddenValue) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = 12\nseq = "
                      "8\nhidden = [768, 1000]\n");
    expect_at(e, 7, 16);
    EXPECT_TRUE(has(e.message(), "hidden 1000 is not divisible by heads 12")) << e.what();
}

TEST(SuiteErrors, KvHeadsNotDividingHeadsIsRefusedAtTheKvHeadsValue) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = 32\nseq = "
                      "8\nhead_dim = 4\nkv_heads = [8, 12]\n");
    expect_at(e, 8, 16);
    EXPECT_TRUE(has(e.message(), "heads 32 is not a multiple of kv_heads 12")) << e.what();
}

TEST(Suite, KvHeadsDefaultsToHeadsAndNamesOnlyGroupedCases) {
    Suite s = parse_suite("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = 32\nseq_q = 1\n"
                          "seq_kv = 4096\nhead_dim = 128\nkv_heads = [32, 8]\n[[case]]\nop = \"attention\"\n"
                          "heads = 4\nseq = 8\nhead_dim = 8\n",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 3u);
    EXPECT_EQ(attention_kv_heads(s.cases[0].desc.p.attention), 32);
    EXPECT_EQ(s.cases[1].desc.p.attention.kv_heads, 8);
    EXPECT_EQ(attention_kv_heads(s.cases[2].desc.p.attention), 4); // not given: = heads
    EXPECT_EQ(benchmark_name(s.cases[0], "naive").find("KVH"), std::string::npos);
    EXPECT_NE(benchmark_name(s.cases[1], "naive").find("/KVH:8/"), std::string::npos)
        << benchmark_name(s.cases[1], "naive");
    EXPECT_EQ(shape_params(s.cases[2].desc)["KVH"], 4);
}

// int8 weights: dtype "s8" on matmul, with activations (u8 default) and
// out_dtype (f32 default) keys of that dtype only.
TEST(Suite, Int8MatmulTakesActivationsAndOutDtypeAndNamesOnlyTheNonDefaults) {
    Suite s = parse_suite("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 8\nk = 16\n"
                          "dtype = [\"f32\", \"s8\"]\n[[case]]\nop = \"matmul\"\nm = 4\nn = 8\nk = 16\n"
                          "dtype = \"s8\"\nactivations = \"s8\"\nout_dtype = \"bf16\"\n",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 3u);
    const auto &def = s.cases[1].desc.p.matmul, &given = s.cases[2].desc.p.matmul;
    EXPECT_EQ(s.cases[1].desc.dtype, OPB_DTYPE_S8);
    EXPECT_EQ(def.act_dtype, OPB_DTYPE_U8);
    EXPECT_EQ(def.act_zero_point, 128);
    EXPECT_EQ(def.out_dtype, OPB_DTYPE_F32);
    EXPECT_EQ(given.act_dtype, OPB_DTYPE_S8);
    EXPECT_EQ(given.act_zero_point, 0);
    EXPECT_EQ(given.out_dtype, OPB_DTYPE_BF16);
    // The default s8 case's name differs from the f32 one's only in dt:.
    EXPECT_EQ(benchmark_name(s.cases[0], "onednn"), "matmul/B:1/M:4/N:8/K:16/variant:default/dt:f32/be:onednn");
    EXPECT_EQ(benchmark_name(s.cases[1], "onednn"), "matmul/B:1/M:4/N:8/K:16/variant:default/dt:s8/be:onednn");
    EXPECT_EQ(benchmark_name(s.cases[2], "onednn"),
              "matmul/B:1/M:4/N:8/K:16/act:s8/out:bf16/variant:default/dt:s8/be:onednn");
    // Result params: an f32 matmul's are those of every earlier set; s8's add the two.
    EXPECT_FALSE(shape_params(s.cases[0].desc).contains("activations"));
    EXPECT_EQ(shape_params(s.cases[1].desc)["activations"], "u8");
    EXPECT_EQ(shape_params(s.cases[2].desc)["out_dtype"], "bf16");
}

TEST(SuiteErrors, Int8KeysOnAnotherDtypeAreRefusedAtTheKey) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 8\nk = 16\n"
                      "activations = \"u8\"\n");
    expect_at(e, 8, 15);
    EXPECT_TRUE(has(e.message(), "'activations' is a setting of int8 weights (dtype = \"s8\"); this case's dtype is f32"))
        << e.what();
}

TEST(SuiteErrors, S8OnAnOpOtherThanMatmulIsRefusedAtTheDtype) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"softmax\"\nrows = 4\ncols = 8\n"
                      "dtype = [\"f32\", \"s8\"]\n");
    expect_at(e, 7, 17);
    EXPECT_TRUE(has(e.message(), "dtype s8 (int8 weights) is for matmul only")) << e.what();
    // u8 is not a dtype at all; an unknown activation type lists the valid ones.
    e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 8\nk = 16\ndtype = \"u8\"\n");
    expect_at(e, 8, 9);
    EXPECT_TRUE(has(e.message(), "unknown dtype 'u8' (valid: f32, bf16, f16, s8, f8e4m3)")) << e.what();
    e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 8\nk = 16\ndtype = \"s8\"\n"
                 "activations = \"int4\"\n");
    expect_at(e, 9, 15);
    EXPECT_TRUE(has(e.message(), "unknown value of 'activations' 'int4' (valid: u8, s8)")) << e.what();
    e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 8\nk = 16\ndtype = \"s8\"\n"
                 "variant = \"tf32\"\n");
    EXPECT_TRUE(has(e.message(), "int8 weights (dtype s8) have variant default only")) << e.what();
}

// FP8 (issue 42): dtype "f8e4m3" on matmul, out_dtype (f32 default) its only
// key of its own, named when bf16; the tensors 1-byte A and B, f32 scales.
TEST(Suite, Fp8MatmulTakesOutDtypeAndNamesItsDtype) {
    Suite s = parse_suite("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 16\nk = 32\n"
                          "trans_b = true\ndtype = [\"bf16\", \"f8e4m3\"]\n[[case]]\nop = \"matmul\"\nm = 4\n"
                          "n = 16\nk = 32\ntrans_b = true\nbias = true\ndtype = \"f8e4m3\"\nout_dtype = \"bf16\"\n",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 3u);
    EXPECT_EQ(s.cases[1].desc.dtype, OPB_DTYPE_F8_E4M3);
    EXPECT_EQ(s.cases[1].desc.p.matmul.out_dtype, OPB_DTYPE_F32);
    EXPECT_EQ(s.cases[2].desc.p.matmul.out_dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(benchmark_name(s.cases[1], "naive"), "matmul/B:1/M:4/N:16/K:32/tB:1/variant:default/dt:f8e4m3/be:naive");
    EXPECT_EQ(benchmark_name(s.cases[2], "naive"),
              "matmul/B:1/M:4/N:16/K:32/tB:1/bias:1/out:bf16/variant:default/dt:f8e4m3/be:naive");
    EXPECT_EQ(shape_params(s.cases[2].desc)["out_dtype"], "bf16");
    EXPECT_FALSE(shape_params(s.cases[0].desc).contains("out_dtype"));
    const auto t = op_tensors(s.cases[2].desc);
    ASSERT_EQ(t.size(), 6u);
    EXPECT_EQ(t[0].dtype, OPB_DTYPE_F8_E4M3);
    EXPECT_EQ(t[2].name, "a_scale");
    EXPECT_EQ(t[3].name, "b_scale");
    EXPECT_EQ(t[5].dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(op_bytes(s.cases[2].desc), 4 * 32 + 32 * 16 + 4 + 4 + 4 * 16 + 2 * 4 * 16);
    // An ABI 1.4 plugin is never given it; a 1.5 one is.
    EXPECT_NE(plugin_abi_gap(s.cases[1].desc, (1u << 16) | 4u).find("FP8 matmul (dtype f8e4m3)"), std::string::npos);
    EXPECT_EQ(plugin_abi_gap(s.cases[1].desc, (1u << 16) | 5u), "");
}

// FP8 attention (issue 42, ABI 1.7): dtype "f8e4m3" on attention parses, is
// named by its dtype, carries four f32 scale tensors and an e4m3 O, and is
// never given to a plugin older than ABI 1.7.
TEST(Suite, Fp8AttentionParsesAndNeedsAbi17) {
    Suite s = parse_suite("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = 2\nseq = 16\n"
                          "head_dim = 64\nvariant = \"fused\"\ndtype = [\"bf16\", \"f8e4m3\"]\n",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 2u);
    const Case &c = s.cases[1];
    EXPECT_EQ(c.desc.dtype, OPB_DTYPE_F8_E4M3);
    EXPECT_EQ(validate_desc(c.desc), "");
    EXPECT_EQ(benchmark_name(c, "naive"), "attention/B:1/H:2/S:16/D:64/causal:0/variant:fused/dt:f8e4m3/be:naive");
    const auto t = op_tensors(c.desc);
    ASSERT_EQ(t.size(), 8u);
    EXPECT_EQ(t[3].name, "q_scale");
    EXPECT_EQ(t[6].name, "o_scale");
    EXPECT_EQ(t[7].dtype, OPB_DTYPE_F8_E4M3);
    EXPECT_EQ(desc_needs_abi_minor(c.desc), 7u);
    EXPECT_NE(plugin_abi_gap(c.desc, (1u << 16) | 6u).find("FP8 attention (dtype f8e4m3)"), std::string::npos);
    EXPECT_EQ(plugin_abi_gap(c.desc, (1u << 16) | 7u), "");
    EXPECT_EQ(desc_needs_abi_minor(s.cases[0].desc), 0u); // the bf16 twin needs nothing new
}

TEST(SuiteErrors, Fp8OnAnOpOtherThanMatmulAndItsWrongKeysAreRefused) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"softmax\"\nrows = 4\ncols = 8\n"
                      "dtype = [\"f32\", \"f8e4m3\"]\n");
    expect_at(e, 7, 17);
    EXPECT_TRUE(has(e.message(), "dtype f8e4m3 (FP8 with per-tensor scales) is for matmul")) << e.what();
    e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 16\nk = 32\ndtype = \"f8e4m3\"\n"
                 "activations = \"u8\"\n");
    EXPECT_TRUE(has(e.message(), "'activations' is a setting of int8 weights")) << e.what();
    e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 16\nk = 32\ndtype = \"f8e4m3\"\n"
                 "variant = \"tf32\"\n");
    EXPECT_TRUE(has(e.message(), "FP8 (dtype f8e4m3) has variant default only")) << e.what();
    e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 4\nn = 16\nk = 32\n"
                 "out_dtype = \"bf16\"\n");
    EXPECT_TRUE(has(e.message(), "'out_dtype' is a setting of int8 weights (dtype = \"s8\") and FP8")) << e.what();
}

TEST(SuiteErrors, HeadDimAndHiddenTogetherAreRefused) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"attention\"\nheads = 2\nseq = "
                      "8\nhead_dim = 4\nhidden = 8\n");
    expect_at(e, 8, 1);
    EXPECT_TRUE(has(e.message(), "not both")) << e.what();
    EXPECT_TRUE(has(e.message(), "t.toml:7:1")) << e.what();
}

TEST(SuiteErrors, MissingRequiredShapeKeyNamesIt) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 1\nk = 1\n");
    expect_at(e, 3, 1);
    EXPECT_TRUE(has(e.message(), "op matmul needs 'n'")) << e.what();

    auto row = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = 1\nshapes = [{cols = 1}, {}]\n");
    expect_at(row, 6, 23); // the row that lacks it
    EXPECT_TRUE(has(row.message(), "op add needs 'cols'")) << row.what();
}

TEST(SuiteErrors, EmptyListAxisIsRefused) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = 1\ncols = []\n");
    expect_at(e, 6, 8);
    EXPECT_TRUE(has(e.message(), "'cols' is an empty list")) << e.what();

    auto shapes = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nshapes = []\n");
    expect_at(shapes, 5, 10);
    EXPECT_TRUE(has(shapes.message(), "'shapes' is an empty list")) << shapes.what();

    auto be = error_of("[suite]\nname = \"x\"\n[defaults]\nbackends = []\n");
    expect_at(be, 4, 12);
    EXPECT_TRUE(has(be.message(), "'backends' is an empty list")) << be.what();
}

TEST(SuiteErrors, DuplicateSweepValueIsRefused) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"add\"\nrows = [1, 2, 1]\ncols = 1\n");
    expect_at(e, 5, 15);
    EXPECT_TRUE(has(e.message(), "lists 1 twice (first at t.toml:5:9)")) << e.what();
}

TEST(SuiteErrors, SweepOverTheCaseLimitIsRefusedAtItsTable) {
    // 50 * 50 * 50 = 125000 > 100000.
    std::string list = "[";
    for (int i = 1; i <= 50; ++i) list += std::to_string(i) + (i < 50 ? ", " : "]");
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = " + list + "\nn = " + list +
                      "\nk = " + list + "\n");
    expect_at(e, 3, 1);
    EXPECT_TRUE(has(e.message(), "more than 100000 cases")) << e.what();
}

TEST(SuiteErrors, SuiteOverTheCaseLimitIsRefusedAtTheCaseThatCrossesIt) {
    // 60000 each: every case is within the limit, the suite is not.
    std::string list = "[";
    for (int i = 1; i <= 300; ++i) list += std::to_string(i) + (i < 300 ? ", " : "]");
    std::string c = "[[case]]\nop = \"add\"\nrows = " + list + "\ncols = " + list + "\n";
    // 300 * 300 = 90000 per case.
    auto e = error_of("[suite]\nname = \"x\"\n" + c + c);
    expect_at(e, 7, 1);
    EXPECT_TRUE(has(e.message(), "the suite expands to more than 100000 cases")) << e.what();
}

TEST(SuiteErrors, SuiteWithoutCasesIsRefused) {
    auto e = error_of("[suite]\nname = \"x\"\n[defaults]\nwarmup = 1\n");
    expect_at(e, 1, 1);
    EXPECT_TRUE(has(e.message(), "no [[case]] or [[workload]] tables")) << e.what();

    auto empty = error_of("case = []\n[suite]\nname = \"x\"\n");
    expect_at(empty, 1, 8);
    EXPECT_TRUE(has(empty.message(), "no cases")) << empty.what();
}

TEST(SuiteErrors, MissingSuiteTableOrName) {
    auto none = error_of("[[case]]\nop = \"add\"\nrows = 1\ncols = 1\n");
    expect_at(none, 1, 1);
    EXPECT_TRUE(has(none.message(), "missing [suite]")) << none.what();

    auto noname = error_of("# a comment\n[suite]\ndescription = \"d\"\n");
    expect_at(noname, 2, 1);
    EXPECT_TRUE(has(noname.message(), "[suite] has no 'name'")) << noname.what();
}

TEST(SuiteErrors, MaxTimeBelowMinTimeIsRefusedAtMaxTime) {
    auto e = error_of("[suite]\nname = \"x\"\n[defaults]\nmin_time = 1.0\n[[case]]\nop = "
                      "\"add\"\nrows = 1\ncols = 1\nmax_time = 0.5\n");
    expect_at(e, 9, 12);
    EXPECT_TRUE(has(e.message(), "max_time (0.5 s) is less than min_time (1 s)")) << e.what();
}

TEST(SuiteErrors, ValuesThatOverflowTheDescriptionAreRefusedByValidateDesc) {
    // Finite as a TOML double, infinite as the description's float.
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"softmax\"\nrows = 1\ncols = 1\nscale = 1e39\n");
    expect_at(e, 3, 1);
    EXPECT_TRUE(has(e.message(), "invalid softmax: scale must be finite")) << e.what();
}

TEST(SuiteErrors, TensorsBeyond2To53ElementsAreRefused) {
    auto e = error_of("[suite]\nname = \"x\"\n[[case]]\nop = \"matmul\"\nm = 134217728\nn = "
                      "1\nk = 134217728\n");
    expect_at(e, 3, 1);
    EXPECT_TRUE(has(e.message(), "matmul tensor A would hold")) << e.what();
}

TEST(SuiteErrors, UnreadableFileNamesThePath) {
    const std::string path = "/nonexistent-dir/opbench/none.toml";
    try {
        (void)load_suite_file(path);
        FAIL() << "load_suite_file accepted a missing file";
    } catch (const SuiteError &e) {
        EXPECT_EQ(e.where().file, path);
        EXPECT_EQ(e.where().line, 0);
        EXPECT_TRUE(has(e.what(), path + ": cannot open suite file")) << e.what();
    }
}

// ---- names and input limits (issue 9) -------------------------------------------------

TEST(SuiteErrors, ControlCharacterInANameIsRefusedWithItsPosition) {
    // A control character in a case name used to reach the benchmark name and
    // break the result set's JSON after the whole run.
    SuiteError e =
        error_of("[suite]\nname = \"s\"\n[[case]]\nop = \"add\"\nname = \"a\\u0001b\"\nrows = 1\ncols = 1\n");
    expect_at(e, 5, 8);
    EXPECT_TRUE(has(e.message(), "control character U+0001 at byte 2")) << e.what();

    SuiteError row = error_of("[suite]\nname = \"s\"\n[[case]]\nop = \"add\"\nshapes = [{rows = 1, cols = 1, "
                              "name = \"x\\ny\"}]\n");
    expect_at(row, 5, 39);
    EXPECT_TRUE(has(row.message(), "U+000A at byte 2")) << row.what();

    SuiteError suite = error_of("[suite]\nname = \"tab\\there\"\n[[case]]\nop = \"add\"\nrows = 1\ncols = 1\n");
    expect_at(suite, 2, 8);
    EXPECT_TRUE(has(suite.message(), "U+0009 at byte 4")) << suite.what();

    EXPECT_TRUE(has(error_of("[suite]\nname = \"s\\u007f\"\n[[case]]\nop = \"add\"\nrows = 1\ncols = 1\n").message(),
                    "U+007F"));
}

TEST(SuiteParse, PrintablePunctuationInANameIsKept) {
    Suite s = parse_suite("[suite]\nname = \"s\"\n[[case]]\nop = \"add\"\nname = 'q\"b\\s é'\nrows = 1\ncols = 1\n",
                          "t.toml");
    ASSERT_EQ(s.cases.size(), 1u);
    EXPECT_EQ(s.cases[0].name, "q\"b\\s é");
}

// A long sweep list: the duplicate check is O(n log n), so a duplicate at
// the end of a long list is found (with both positions) without a stall.
TEST(SuiteErrors, ADuplicateAtTheEndOfALongSweepListNamesBothPositions) {
    std::string list = "m = [";
    for (int i = 1; i <= 60000; ++i) list += std::to_string(i) + ",";
    list += "777]";
    SuiteError e = error_of("[suite]\nname = \"s\"\n[[case]]\nop = \"matmul\"\nn = 1\nk = 1\n" + list + "\n");
    EXPECT_TRUE(has(e.message(), "'m' lists 777 twice (first at t.toml:7:")) << e.what();
}

TEST(SuiteErrors, ASweepListLongerThanTheCaseLimitIsRefusedAtOnce) {
    std::string list = "m = [1";
    for (int i = 0; i < 200000; ++i) list += ",1";
    list += "]";
    SuiteError e = error_of("[suite]\nname = \"s\"\n[[case]]\nop = \"matmul\"\nn = 1\nk = 1\n" + list + "\n");
    expect_at(e, 7, 5);
    EXPECT_TRUE(has(e.message(), "'m' lists 200001 values; a sweep axis holds at most 100000")) << e.what();
}

SuiteError load_error(const std::string &path) {
    try {
        (void)load_suite_file(path);
    } catch (const SuiteError &e) {
        return e;
    }
    throw std::logic_error("load_suite_file accepted " + path);
}

TEST(SuiteErrors, OnlyRegularFilesAreRead) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("opbench-suite-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::create_symlink("/dev/zero", dir / "zero.toml"); // once read 4 GB, then aborted
    ASSERT_EQ(::mkfifo((dir / "fifo.toml").c_str(), 0600), 0);
    for (const fs::path &p : {fs::path("/dev/zero"), dir / "zero.toml", dir / "fifo.toml"}) {
        SuiteError e = load_error(p.string());
        EXPECT_TRUE(has(e.what(), p.string() + ": is not a regular file")) << e.what();
    }
    EXPECT_TRUE(has(load_error(dir.string()).what(), "is a directory")) << dir;
    fs::remove_all(dir);
}

TEST(SuiteErrors, AFileOverTheSizeCapIsRefusedBeforeParsing) {
    namespace fs = std::filesystem;
    const fs::path path = fs::temp_directory_path() / ("opbench-big-" + std::to_string(::getpid()) + ".toml");
    {
        std::ofstream out(path);
        const std::string comment = "# " + std::string(1022, 'x') + "\n";
        for (int i = 0; i < 17 * 1024; ++i) out << comment; // 17 MiB
    }
    SuiteError e = load_error(path.string());
    fs::remove(path);
    EXPECT_TRUE(has(e.what(), "larger than 16 MiB")) << e.what();
}

// ---- shipped suites -----------------------------------------------------------------

const std::filesystem::path kSuitesDir = std::filesystem::path(OPBENCH_SOURCE_ROOT) / "suites";
const SuiteOptions kAllBackends{{"naive", "onednn", "cuda"}};

TEST(ShippedSuites, EverySuiteInSuitesDirLoads) {
    std::set<std::string> found;
    for (const auto &entry : std::filesystem::directory_iterator(kSuitesDir)) {
        if (entry.path().extension() != ".toml") continue;
        found.insert(entry.path().filename().string());
        SCOPED_TRACE(entry.path().string());
        Suite s = load_suite_file(entry.path().string(), kAllBackends);
        EXPECT_EQ(s.name, entry.path().stem().string());
        EXPECT_FALSE(s.description.empty());
        EXPECT_FALSE(s.cases.empty() && s.workloads.empty()); // something to measure
        EXPECT_EQ(s.content_hash.size(), 64u);
        for (const auto &c : s.cases) EXPECT_EQ(validate_desc(c.desc), "");
    }
    for (auto name :
         {"quick.toml", "gemm.toml", "attention.toml", "norms.toml", "transformer-shapes.toml", "decoder.toml"})
        EXPECT_TRUE(found.count(name)) << name << " is missing from " << kSuitesDir;
}

TEST(ShippedSuites, QuickCoversEveryOpBothAttentionVariantsAndBothGeluForms) {
    Suite s = load_suite_file((kSuitesDir / "quick.toml").string(), kAllBackends);
    std::set<int> ops;
    std::set<int> attention_variants, gelu_variants;
    for (const auto &c : s.cases) {
        ops.insert(c.desc.op);
        if (c.desc.op == OPB_OP_ATTENTION) attention_variants.insert(c.desc.variant);
        if (c.desc.op == OPB_OP_GELU) gelu_variants.insert(c.desc.variant);
        // CI runs it on the naive backend: every case stays tiny.
        EXPECT_LT(op_flops(c.desc), 5e7) << c.name << " at " << c.where.str();
        // Worst-case sampling time of a case on one backend stays small.
        EXPECT_LE(c.settings.repetitions * c.settings.max_time, 1.5) << c.where.str();
        EXPECT_EQ(c.backends, (std::vector<std::string>{"naive", "onednn", "cuda"}));
    }
    for (int op = 0; op < OPB_OP_COUNT; ++op) EXPECT_TRUE(ops.count(op)) << "quick.toml lacks op " << op_name(op);
    EXPECT_EQ(attention_variants, (std::set<int>{OPB_ATTENTION_COMPOSED, OPB_ATTENTION_FUSED}));
    EXPECT_EQ(gelu_variants, (std::set<int>{OPB_GELU_ERF, OPB_GELU_TANH}));
}

// suites/attention.toml: FP8 attention (ABI 1.7) beside bf16 at the same
// fused shapes, in one case so that compare's level table pairs them, small
// enough for naive.
TEST(ShippedSuites, AttentionPutsBf16AndFp8OfTheSameShapeSideBySide) {
    Suite s = load_suite_file((kSuitesDir / "attention.toml").string(), kAllBackends);
    std::map<std::string, std::set<int>> dtypes_by_shape;
    int fp8 = 0;
    for (const auto &c : s.cases) {
        if (c.desc.dtype != OPB_DTYPE_F8_E4M3 && c.name != "prefill.fp8") continue;
        EXPECT_EQ(c.name, "prefill.fp8") << c.where.str();
        EXPECT_EQ(c.desc.variant, OPB_ATTENTION_FUSED) << c.where.str();
        EXPECT_LT(op_flops(c.desc), 5e8) << c.where.str(); // well under a second on naive
        EXPECT_EQ(c.desc.p.attention.seq_q, c.desc.p.attention.seq_kv); // cuDNN FP8's causal mask on Hopper
        if (c.desc.dtype == OPB_DTYPE_F8_E4M3) {
            EXPECT_EQ(desc_needs_abi_minor(c.desc), 7u);
        }
        std::string name = benchmark_name(c, "naive");
        name.erase(name.find("/dt:"), name.find("/be:") - name.find("/dt:"));
        dtypes_by_shape[name].insert(c.desc.dtype);
        fp8 += c.desc.dtype == OPB_DTYPE_F8_E4M3;
    }
    EXPECT_EQ(fp8, 4);
    ASSERT_EQ(dtypes_by_shape.size(), 4u);
    for (const auto &[name, dts] : dtypes_by_shape)
        EXPECT_EQ(dts, (std::set<int>{OPB_DTYPE_BF16, OPB_DTYPE_F8_E4M3})) << name;
}

// suites/int8.toml: each linear layer in f32, bf16 and s8, whose names differ
// in dt: alone (so its rows line up), naive only where a call stays short.
TEST(ShippedSuites, Int8PutsF32Bf16AndS8OfEachLayerSideBySide) {
    Suite s = load_suite_file((kSuitesDir / "int8.toml").string(), kAllBackends);
    std::map<std::string, std::set<int>> dtypes_by_shape;
    int s8 = 0;
    for (const auto &c : s.cases) {
        EXPECT_EQ(c.desc.op, OPB_OP_MATMUL);
        std::string name = benchmark_name(c, "onednn");
        name.erase(name.find("/dt:"), name.find("/be:") - name.find("/dt:"));
        dtypes_by_shape[name].insert(c.desc.dtype);
        s8 += c.desc.dtype == OPB_DTYPE_S8;
        if (op_flops(c.desc) > 1e9) { // over a second per call on naive
            EXPECT_EQ(c.backends, std::vector<std::string>{"onednn"}) << c.where.str();
        }
    }
    EXPECT_GE(s8, 6);
    int triplets = 0;
    for (const auto &[name, dts] : dtypes_by_shape)
        triplets += dts == std::set<int>{OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_S8};
    EXPECT_GE(triplets, 4);
}

// suites/gemm.toml and suites/models/: FP8 levels beside bf16 of the same
// shapes, in the TN layout cuBLASLt's FP8 GEMM takes.
TEST(ShippedSuites, GemmAndModelSuitesCarryFp8LevelsInTheTnLayout) {
    for (const std::string path : {"gemm.toml", "models/llama-3-8b.toml", "models/qwen2.5-7b-full.toml"}) {
        SCOPED_TRACE(path);
        Suite s = load_suite_file((kSuitesDir / path).string(), kAllBackends);
        std::map<std::string, std::set<int>> dtypes_by_shape;
        for (const auto &c : s.cases) {
            if (c.desc.op != OPB_OP_MATMUL) continue;
            if (c.desc.dtype == OPB_DTYPE_F8_E4M3) {
                EXPECT_TRUE(c.desc.p.matmul.trans_b && !c.desc.p.matmul.trans_a) << c.where.str();
                EXPECT_EQ(c.desc.p.matmul.k % 16, 0) << c.where.str();
                EXPECT_EQ(c.desc.p.matmul.n % 16, 0) << c.where.str();
            }
            std::string name = benchmark_name(c, "cuda");
            name.erase(name.find("/dt:"), name.find("/be:") - name.find("/dt:"));
            dtypes_by_shape[name].insert(c.desc.dtype);
        }
        int pairs = 0;
        for (const auto &[name, dts] : dtypes_by_shape)
            pairs += dts.count(OPB_DTYPE_BF16) && dts.count(OPB_DTYPE_F8_E4M3);
        EXPECT_GE(pairs, 4);
    }
}

// suites/models/: each model's default and -full suite parse, validate, and
// carry the model's grouped-query attention and RoPE (scripts/model_suites.py).
TEST(ShippedSuites, ModelSuitesValidateWithTheirKvHeadsAndRope) {
    struct Model {
        const char *name;
        int64_t heads, kv_heads, head_dim;
        float theta;
    };
    for (const Model m : {Model{"llama-3-8b", 32, 8, 128, 500000.0f}, Model{"mistral-7b", 32, 8, 128, 10000.0f},
                          Model{"qwen2.5-7b", 28, 4, 128, 1000000.0f}, Model{"phi-3-mini", 32, 32, 96, 10000.0f},
                          Model{"gemma-2-9b", 16, 8, 256, 10000.0f}})
        for (const std::string suffix : {"", "-full"}) {
            const std::string name = std::string(m.name) + suffix;
            SCOPED_TRACE(name);
            Suite s = load_suite_file((kSuitesDir / "models" / (name + ".toml")).string(), kAllBackends);
            EXPECT_EQ(s.name, name);
            std::set<int64_t> decode_caches, prefill_lengths;
            int rope_cases = 0;
            for (const auto &c : s.cases) {
                EXPECT_EQ(validate_desc(c.desc), "") << c.where.str();
                if (c.desc.op == OPB_OP_ATTENTION) {
                    const auto &p = c.desc.p.attention;
                    EXPECT_EQ(p.heads, m.heads);
                    EXPECT_EQ(attention_kv_heads(p), m.kv_heads);
                    EXPECT_EQ(p.head_dim, m.head_dim);
                    if (p.seq_q == 1)
                        decode_caches.insert(p.seq_kv);
                    else
                        prefill_lengths.insert(p.seq_q);
                }
                if (c.desc.op == OPB_OP_ROPE) {
                    ++rope_cases;
                    EXPECT_FLOAT_EQ(c.desc.p.rope.theta, m.theta);
                    EXPECT_EQ(rope_kv_heads(c.desc.p.rope), m.kv_heads);
                }
            }
            EXPECT_EQ(decode_caches, (std::set<int64_t>{1024, 8192}));
            EXPECT_EQ(prefill_lengths, (std::set<int64_t>{128, 2048}));
            EXPECT_GT(rope_cases, 0);
        }
    Suite d = load_suite_file((kSuitesDir / "models" / "model-decoders.toml").string(), kAllBackends);
    EXPECT_EQ(d.workloads.size(), 8u); // Llama-3-8B at f32, bf16, s8 and f8e4m3, four models at f32
}

TEST(ShippedSuites, TransformerShapesNamesCasesAfterWhereTheyOccur) {
    Suite s = load_suite_file((kSuitesDir / "transformer-shapes.toml").string(), kAllBackends);
    auto find = [&](const std::string &name) -> const Case * {
        for (const auto &c : s.cases)
            if (c.name == name) return &c;
        return nullptr;
    };
    const Case *qkv = find("gpt2-small.attn.qkv");
    ASSERT_NE(qkv, nullptr);
    EXPECT_EQ(qkv->desc.op, OPB_OP_MATMUL);
    EXPECT_EQ(qkv->desc.p.matmul.n, 3 * 768);
    EXPECT_EQ(qkv->desc.p.matmul.k, 768);
    const Case *att = find("llama-7b.attn");
    ASSERT_NE(att, nullptr);
    EXPECT_EQ(att->desc.op, OPB_OP_ATTENTION);
    EXPECT_EQ(att->desc.p.attention.heads, 32);
    EXPECT_EQ(att->desc.p.attention.head_dim, 128);
    EXPECT_EQ(att->desc.p.attention.causal, 1);
    EXPECT_NE(find("bert-base.attn"), nullptr);
    for (const auto &c : s.cases) {
        EXPECT_FALSE(c.name.empty()) << c.where.str();
        EXPECT_EQ(c.backends, (std::vector<std::string>{"naive", "onednn", "cuda"}));
    }
}

} // namespace
} // namespace opbench

// A min_time below its floor is used as the floor, with one warning per place
// (however many cases a [defaults] key reaches), and the cases say 0.0001.
TEST(Suite, AMinTimeBelowItsFloorIsRaisedWithOneWarningPerPlace) {
    using namespace opbench;
    const Suite s = parse_suite("[suite]\nname = \"x\"\n[defaults]\nbackends = [\"naive\"]\nmin_time = 1e-9\n"
                                "[[case]]\nop = \"add\"\nrows = [4, 8]\ncols = 4\n"
                                "[[case]]\nop = \"add\"\nrows = 16\ncols = 4\nmin_time = [0, 0.5]\n",
                                "t.toml");
    ASSERT_EQ(s.cases.size(), 4u);
    EXPECT_EQ(s.cases[0].settings.min_time, 1e-4);
    EXPECT_EQ(s.cases[1].settings.min_time, 1e-4);
    EXPECT_EQ(s.cases[2].settings.min_time, 1e-4);
    EXPECT_EQ(s.cases[3].settings.min_time, 0.5);
    EXPECT_EQ(s.warnings,
              (std::vector<std::string>{"t.toml:5:12: warning: 'min_time' 1e-09 is below its floor; using 0.0001",
                                        "t.toml:14:13: warning: 'min_time' 0 is below its floor; using 0.0001"}));
    EXPECT_THROW((void)parse_suite("[suite]\nname = \"x\"\n[defaults]\nmin_time = -1\n", "t.toml"), SuiteError)
        << "a negative time is no request for the shortest one";
}

// Settings out of their table's range fail at their location, in short words.
TEST(SuiteErrors, SettingRangesFromTheTable) {
    using namespace opbench;
    try {
        (void)parse_suite("[suite]\nname = \"x\"\n[defaults]\nthreads = 100000\n", "t.toml");
        FAIL() << "threads = 100000 must be refused";
    } catch (const SuiteError &e) {
        EXPECT_EQ(std::string(e.what()), "t.toml:4:11: 'threads' must be between 0 and 1024, got 100000");
    }
    try {
        (void)parse_suite("[suite]\nname = \"x\"\n[defaults]\nmin_time = 1e-9\nmax_time = 1e-9\n", "t.toml");
        FAIL() << "max_time below its floor must be refused";
    } catch (const SuiteError &e) {
        EXPECT_EQ(std::string(e.what()), "t.toml:5:12: 'max_time' must be between 0.001 and 3600, got 1e-09");
    }
    try {
        (void)parse_suite("[suite]\nname = \"x\"\n[defaults]\nnoise = 1e300\n", "t.toml");
        FAIL();
    } catch (const SuiteError &e) {
        EXPECT_LT(std::string(e.what()).size(), 100u) << e.what();
    }
}

namespace opbench {
namespace {

// Issue 20: a suite's [defaults] plugins names builds as --plugin does; a
// relative path is from the suite file's directory, and the builds' names
// are backends the suite's lists may use.
TEST(SuitePlugins, BuildsFromTheSuiteFileAreKnownBackends) {
    const std::string text = "[suite]\nname = \"p\"\n[defaults]\nbackends = [\"onednn@base\", \"onednn@new\"]\n"
                             "plugins = [\"onednn@base=old/b.so\", \"onednn@new=/abs/n.so\"]\n"
                             "[[case]]\nop = \"add\"\nrows = 2\ncols = 2\n";
    SuiteOptions known;
    known.known_backends = {"naive", "onednn", "cuda"};
    const Suite s = parse_suite(text, "suites/ab/p.toml", known);
    ASSERT_EQ(s.plugins.size(), 2u);
    EXPECT_EQ(s.plugins[0].instance(), "onednn@base");
    EXPECT_EQ(s.plugins[0].path, "suites/ab/old/b.so") << "relative to the suite's directory";
    EXPECT_EQ(s.plugins[1].path, "/abs/n.so");
    EXPECT_EQ(s.plugins[0].origin, "suites/ab/p.toml:5:12: plugins") << "load errors name the suite entry";
    ASSERT_EQ(s.cases.size(), 1u);
    EXPECT_EQ(s.cases[0].backends, (std::vector<std::string>{"onednn@base", "onednn@new"}));

    // Without the plugins key those names are unknown.
    std::string without = text;
    without.erase(without.find("plugins ="), without.find("[[case]]") - without.find("plugins ="));
    EXPECT_TRUE(has(error_of(without, known).message(), "unknown backend 'onednn@base'"));
}

TEST(SuitePlugins, BadEntriesAreRefusedWhereTheyStand) {
    auto suite = [](const std::string &plugins) {
        return "[suite]\nname = \"p\"\n[defaults]\nplugins = " + plugins + "\n[[case]]\nop = \"add\"\nrows = 2\ncols = 2\n";
    };
    SuiteError e = error_of(suite("\"naive@b=x.so\""));
    expect_at(e, 4, 11);
    EXPECT_TRUE(has(e.message(), "'plugins' must be a list of \"NAME@VARIANT=PATH\" strings")) << e.what();
    e = error_of(suite("[\"naive@b=x.so\", \"naive\"]"));
    expect_at(e, 4, 28);
    EXPECT_TRUE(has(e.message(), "plugins: 'naive': expected NAME@VARIANT=PATH")) << e.what();
    e = error_of(suite("[\"naive@b=x.so\", \"naive@b=y.so\"]"));
    EXPECT_TRUE(has(e.message(), "'naive@b' is given twice")) << e.what();
    e = error_of(suite("[3]"));
    EXPECT_TRUE(has(e.message(), "'plugins' must be a string")) << e.what();
}

} // namespace
} // namespace opbench
