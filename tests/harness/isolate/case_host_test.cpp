// Tests of harness/case_host: what crosses the worker boundary comes back
// unchanged, the recipe's phases map onto the reported ones, and the case
// timeout follows the settings.
#include "isolate/case_host.hpp"
#include "measure/recipe.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace opbench;
using nlohmann::json;

namespace {

TEST(CaseHost, AJobCrossesTheBoundaryUnchanged) {
    CaseJob job;
    job.case_index = 7;
    job.name = "attention/B:1/H:2/Sq:64/Skv:64/D:32/causal:1/variant:fused/dt:bf16/be:onednn";
    job.backend = "onednn";
    job.desc = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_BF16, OPB_ATTENTION_FUSED);
    job.desc.p.attention = {1, 2, 64, 64, 32, 0.125f, 1, 0};
    job.desc.threads = 3;
    job.settings.warmup = 4;
    job.settings.max_time = 0.25;
    job.settings.cache = CacheState::cold;
    job.settings.timeout = 12.5;
    job.nmse_threshold = 1e-5;
    job.timer_overhead = 2.5e-8;

    const CaseJob back = json(job).get<CaseJob>();
    EXPECT_EQ(back.case_index, 7u);
    EXPECT_EQ(back.name, job.name);
    EXPECT_EQ(back.backend, "onednn");
    EXPECT_EQ(std::memcmp(&back.desc, &job.desc, sizeof job.desc), 0) << "the description, byte for byte";
    for (const SettingInfo &s : measurement_settings()) EXPECT_EQ(s.get(back.settings), s.get(job.settings)) << s.key;
    EXPECT_EQ(back.nmse_threshold, 1e-5);
    EXPECT_EQ(back.timer_overhead, 2.5e-8);
}

// A backend's probe answer (backend_facts.hpp) comes back from its worker unchanged.
TEST(CaseHost, BackendFactsRoundTrip) {
    BackendFacts f;
    f.context = {{"name", "x"}, {"usable", true}, {"device", {{"kind", "cpu"}}}};
    f.supports = {{CaseStatus::passed, ""},
                  {CaseStatus::skipped, "x: bf16 is not supported"},
                  {CaseStatus::failed, "supports: OPB_ERR_INTERNAL"}};
    const BackendFacts back = json(f).get<BackendFacts>();
    EXPECT_TRUE(back.usable());
    EXPECT_EQ(back.context, f.context);
    ASSERT_EQ(back.supports.size(), 3u);
    EXPECT_EQ(back.supports[1].status, CaseStatus::skipped);
    EXPECT_EQ(back.supports[1].reason, "x: bf16 is not supported");
    EXPECT_EQ(back.supports[2].status, CaseStatus::failed);

    opb_backend_api api{};
    api.name = "x";
    api.version = "2";
    api.abi_version = OPB_ABI_VERSION;
    const BackendFacts faulted = faulted_backend(api, "x", "crashed: SIGSEGV in create");
    EXPECT_EQ(faulted.status, CaseStatus::failed);
    EXPECT_EQ(faulted.reason, "crashed: SIGSEGV in create (backend 'x')");
    EXPECT_EQ(faulted.context["usable"], false);
    EXPECT_EQ(faulted.context["unusable_reason"], faulted.reason);
    EXPECT_EQ(faulted.context["version"], "2") << "from the plugin's table, with no call into it";
    EXPECT_FALSE(json(faulted).get<BackendFacts>().usable());
}

TEST(CaseHost, ActivationAndMemoryFiguresRoundTrip) {
    Activation a;
    a.status = CaseStatus::failed;
    a.reason = "verification failed: NMSE nan exceeds 1e-05";
    a.nmse = std::nan("");
    a.preparation.warmup_calls = 3;
    a.preparation.calls_per_sample = 16;
    a.workspace_bytes = 4096;
    const Activation b = json(a).get<Activation>();
    EXPECT_EQ(b.status, CaseStatus::failed);
    EXPECT_EQ(b.reason, a.reason);
    EXPECT_TRUE(std::isnan(b.nmse)) << "a NaN NMSE stays NaN (JSON has no NaN)";
    EXPECT_EQ(b.preparation.warmup_calls, 3);
    EXPECT_EQ(b.preparation.calls_per_sample, 16);
    EXPECT_EQ(b.workspace_bytes, 4096u);

    MemoryFigures m;
    m.workspace_bytes = 1;
    m.plugin_peak_bytes = 2;
    m.host_accounted_peak = 3;
    m.device_accounted_peak = 4;
    m.heap_peak_bytes = 5;
    m.allocs_per_call = 0.5;
    m.alloc_bytes_per_call = 64;
    m.rss_peak_bytes = 1ull << 40;
    m.heap_tracked = true;
    m.rss_peak_reset = true;
    const MemoryFigures n = json(m).get<MemoryFigures>();
    EXPECT_EQ(json(n), json(m));
    EXPECT_EQ(n.rss_peak_bytes, 1ull << 40);
}

TEST(CaseHost, RecipePhasesMapOntoReportedPhases) {
    EXPECT_EQ(case_phase_of(phase::prepare), "prepare");
    EXPECT_EQ(case_phase_of(phase::check), "verify");
    EXPECT_EQ(case_phase_of(phase::warmup), "execute");
    EXPECT_EQ(case_phase_of(phase::choose_batch), "execute");
    EXPECT_EQ(case_phase_of(phase::sample), "execute");
}

TEST(CaseHost, TheTimeoutIsGenerousByDefaultAndExactWhenSet) {
    MeasureSettings s;
    s.repetitions = 9;
    s.max_time = 2.0;
    EXPECT_DOUBLE_EQ(case_timeout_seconds(s), 60.0 + 10.0 * 9 * 2.0);
    s.timeout = 1.5;
    EXPECT_DOUBLE_EQ(case_timeout_seconds(s), 1.5);
}

TEST(CaseHost, IsolationNames) {
    EXPECT_EQ(isolation_from_name("process"), Isolation::process);
    EXPECT_EQ(isolation_from_name("none"), Isolation::none);
    EXPECT_EQ(isolation_from_name("thread"), std::nullopt);
    EXPECT_EQ(isolation_name(Isolation::process), "process");
}

} // namespace
