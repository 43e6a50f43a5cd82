// The op table (plugins/opbench/ops.hpp, kOps) drives the harness: for every
// row, with no code that names an op, the suite parser accepts the row's keys
// and writes them into the description, sweeps them in the documented order,
// benchmark names show the row's labels, result fields carry its params, the
// tolerance comes from the row, and the naive backend's dispatch runs it.
// A new row is covered by these tests as soon as it is added.
#include "naive/kernels.hpp"
#include "entry/results.hpp"
#include "suite/suite.hpp"
#include "check/verify.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace opbench {
namespace {

// A value of each kind that every row accepts, different from every default.
std::string toml_value(const ParamInfo &p) {
    switch (p.kind) {
    case ParamKind::Dim: return "4";
    case ParamKind::Flag: return "true";
    case ParamKind::Scale: return "0.5";
    case ParamKind::PosReal: return "0.001";
    case ParamKind::Choice: return "\"" + std::string(p.choices.back()) + "\"";
    }
    return "";
}
double expected_value(const ParamInfo &p) {
    switch (p.kind) {
    case ParamKind::Dim: return 4;
    case ParamKind::Flag: return 1;
    case ParamKind::Scale: return 0.5;
    case ParamKind::PosReal: return double(0.001f);
    case ParamKind::Choice: return double(p.choices.size() - 1);
    }
    return 0;
}

// Keys a case of `row` gives: every parameter except one that conflicts with
// a key given before it (head_dim or hidden, not both) and those of one dtype
// only (int8 matmul's activations: int8_suite_test covers them).
std::vector<const ParamInfo *> given_params(const OpInfo &row) {
    std::vector<const ParamInfo *> out;
    for (const auto &p : row.params) {
        if (p.applies) continue;
        bool conflicts = false;
        for (auto *q : out)
            if (p.conflicts_with && std::string_view(p.conflicts_with) == q->key) conflicts = true;
        if (!conflicts) out.push_back(&p);
    }
    return out;
}

// A suite with one case of `row` giving every key of given_params, `swept`
// (if any) as the list [4, 8] and the other Dim keys as `fixed_dim` (default
// toml_value's 4).
std::string suite_for(const OpInfo &row, const ParamInfo *swept = nullptr, const char *fixed_dim = nullptr) {
    std::string s =
        "[suite]\nname = \"table\"\n[[case]]\nop = \"" + std::string(row.name) + "\"\nbackends = [\"naive\"]\n";
    for (auto *p : given_params(row))
        s += std::string(p->key) + " = " +
             (p == swept                               ? "[4, 8]"
              : fixed_dim && p->kind == ParamKind::Dim ? std::string(fixed_dim)
                                                       : toml_value(*p)) +
             "\n";
    return s;
}

class EveryRow : public ::testing::TestWithParam<int> {
protected:
    const OpInfo &row() const { return kOps[GetParam()]; }
};

TEST_P(EveryRow, SuiteParserWritesEachGivenKeyIntoTheDescription) {
    const Suite suite = parse_suite(suite_for(row()), "table.toml");
    ASSERT_EQ(suite.cases.size(), 1u);
    const opb_op_desc &d = suite.cases[0].desc;
    EXPECT_EQ(d.op, row().op);
    EXPECT_EQ(validate_desc(d), "");
    for (auto *p : given_params(row())) {
        // Scales read back as applied (effective_scale): 0.5 stays 0.5.
        EXPECT_EQ(p->value(d), expected_value(*p)) << row().name << " key " << p->key;
    }
}

TEST_P(EveryRow, DefaultsAreWrittenAndRequiredKeysAreRequired) {
    // Only the required keys (and what check_keys needs): defaults fill the rest.
    for (const auto &p : row().params) {
        if (!p.required) continue;
        std::string s = suite_for(row());
        const std::string line = std::string(p.key) + " = " + toml_value(p) + "\n";
        s.erase(s.find(line), line.size());
        try {
            (void)parse_suite(s, "table.toml");
            ADD_FAILURE() << row().name << " accepted a case without required '" << p.key << "'";
        } catch (const SuiteError &e) {
            EXPECT_NE(e.message().find("needs '" + std::string(p.key) + "'"), std::string::npos) << e.what();
        }
    }
    std::string minimal = "[suite]\nname = \"t\"\n[[case]]\nop = \"" + std::string(row().name) + "\"\n";
    for (auto *p : given_params(row()))
        if (!p->has_default) minimal += std::string(p->key) + " = " + toml_value(*p) + "\n";
    const Suite suite = parse_suite(minimal, "table.toml");
    ASSERT_EQ(suite.cases.size(), 1u);
    for (const auto &p : row().params)
        if (p.has_default && p.kind != ParamKind::Scale) { // scale reads back as applied
            EXPECT_EQ(p.value(suite.cases[0].desc),
                      p.kind == ParamKind::PosReal ? double(float(p.default_value)) : p.default_value)
                << row().name << " default of " << p.key;
        }
}

TEST_P(EveryRow, SweepsEachDimKeyAndNamesTellTheCasesApart) {
    for (auto *p : given_params(row())) {
        // Keys with no result field are aliases (attention's seq sets seq_q
        // and seq_kv, which the case also gives); the keys they set are swept.
        if (p->kind != ParamKind::Dim || !p->field) continue;
        // Keys bound by a rule across keys (heads a multiple of kv_heads,
        // rotary_dim <= head_dim) cannot all sweep 4 -> 8 against the same
        // fixed values: a key bounded by the others sweeps against 8s.
        Suite suite;
        try {
            suite = parse_suite(suite_for(row(), p), "table.toml");
        } catch (const SuiteError &) {
            suite = parse_suite(suite_for(row(), p, "8"), "table.toml");
        }
        ASSERT_EQ(suite.cases.size(), 2u) << row().name << " sweeping " << p->key;
        EXPECT_EQ(p->value(suite.cases[0].desc), 4) << p->key;
        EXPECT_EQ(p->value(suite.cases[1].desc), 8) << p->key;
        // A swept key changes the shape, so the name (check_unique_names) does too.
        EXPECT_NO_THROW(check_unique_names(suite.cases)) << row().name << " sweeping " << p->key;
    }
}

TEST_P(EveryRow, NamesAndResultFieldsComeFromTheRow) {
    const Suite suite = parse_suite(suite_for(row()), "table.toml");
    const Case &c = suite.cases[0];
    const std::string name = benchmark_name(c, "naive");
    EXPECT_EQ(name.rfind(std::string(row().name) + "/", 0), 0u) << name;
    for (const auto &p : row().params) {
        if (!p.label || p.name_rule == NameRule::Never || p.applies) continue;
        const double v = p.name_value ? p.name_value(c.desc) : p.value(c.desc);
        const bool shown = p.name_rule == NameRule::Always || v != 0.0;
        EXPECT_EQ(name.find("/" + std::string(p.label) + ":") != std::string::npos, shown)
            << name << " label " << p.label;
    }
    if (row().variants.size() > 1) {
        EXPECT_NE(name.find("/variant:"), std::string::npos) << name;
    }

    const nlohmann::json params = shape_params(c.desc);
    for (const auto &p : row().params) {
        if (!p.field) continue;
        if (p.applies && !p.applies(c.desc)) { // another dtype's parameter: not a field here
            EXPECT_FALSE(params.contains(p.field)) << row().name << " field " << p.field;
            continue;
        }
        ASSERT_TRUE(params.contains(p.field)) << row().name << " field " << p.field;
        const auto &f = params.at(p.field);
        if (p.kind == ParamKind::Flag)
            EXPECT_TRUE(f.is_boolean()) << p.field;
        else if (p.kind == ParamKind::Dim)
            EXPECT_TRUE(f.is_number_integer()) << p.field;
        else if (p.kind == ParamKind::Choice)
            EXPECT_TRUE(f.is_string()) << p.field;
        else
            EXPECT_TRUE(f.is_number_float()) << p.field;
    }
    CaseResult r;
    r.source = &c;
    r.backend = "naive";
    const nlohmann::json fields = case_fields(r);
    EXPECT_EQ(fields.at("op"), row().name);
    EXPECT_EQ(fields.at("variant"), row().variants[0].name);
    EXPECT_EQ(fields.at("params"), params);
    EXPECT_GT(fields.at("flops").get<double>(), 0.0);
    EXPECT_EQ(fields.at("bytes").get<double>(), op_bytes(c.desc));
}

TEST_P(EveryRow, EveryVariantVerifiesAgainstATolerance) {
    for (const auto &v : row().variants)
        for (int dt = 0; dt < 3; ++dt) {
            opb_op_desc d = parse_suite(suite_for(row()), "table.toml").cases[0].desc;
            d.variant = v.value;
            d.dtype = dt;
            const Tolerance t = tolerance_for(d);
            EXPECT_GT(t.max_nmse, 0.0) << row().name << " " << v.name;
            EXPECT_LT(t.max_nmse, 0.01) << row().name << " " << v.name;
            EXPECT_GT(std::string(t.why).size(), 0u);
        }
}

TEST_P(EveryRow, NaiveDispatchRunsEveryVariant) {
    ASSERT_TRUE(naive::has_kernel(row().op)) << row().name << " has no naive kernel";
    for (const auto &v : row().variants) {
        opb_op_desc d = parse_suite(suite_for(row()), "table.toml").cases[0].desc;
        d.variant = v.value;
        HostTensors t = make_inputs(d, 7);
        std::vector<void *> ptrs;
        for (auto &b : t.buffers) ptrs.push_back(b.data());
        std::vector<double> ws(naive::workspace_bytes(d) / sizeof(double) + 1);
        naive::run(d, ptrs.data(), ws.data());
        // Every output element written, and finite: a kernel that ran.
        const auto specs = op_tensors(d);
        for (std::size_t i = 0; i < specs.size(); ++i) {
            if (!specs[i].is_output) continue;
            double sum = 0;
            for (int64_t e = 0; e < specs[i].elements(); ++e) {
                const float x = load_as_f32(ptrs[i], specs[i].dtype, e); // int8 outputs: their own dtype
                ASSERT_TRUE(std::isfinite(x)) << row().name << " " << v.name;
                sum += std::fabs(x);
            }
            EXPECT_GT(sum, 0.0) << row().name << " " << v.name << ": output left zero";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(OpTable, EveryRow, ::testing::Range(0, int(std::size(kOps))),
                         [](const auto &info) { return std::string(kOps[info.param].name); });

} // namespace
} // namespace opbench
