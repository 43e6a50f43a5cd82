// Tests of harness/case_host: what crosses the worker boundary (as the
// pipe's CBOR, isolate/worker.hpp) comes back unchanged, the recipe's phases
// map onto the reported ones, and the case timeout follows the settings.
#include "isolate/case_host.hpp"
#include "measure/recipe.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace opbench;
using nlohmann::json;

namespace {

// What the other end of the worker pipe reads: the value through CBOR.
template <class T>
T across_the_pipe(const T &value) {
    return json::from_cbor(json::to_cbor(json(value))).get<T>();
}

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
    job.verify = VerifyMode::off;
    job.check_seed = 99;
    job.reference_store_dir = "/tmp/refs";
    job.reference_store_key = "k";

    const CaseJob back = across_the_pipe(job);
    EXPECT_EQ(back.case_index, 7u);
    EXPECT_EQ(back.name, job.name);
    EXPECT_EQ(back.backend, "onednn");
    EXPECT_EQ(std::memcmp(&back.desc, &job.desc, sizeof job.desc), 0) << "the description, byte for byte";
    for (const SettingInfo &s : measurement_settings()) EXPECT_EQ(s.get(back.settings), s.get(job.settings)) << s.key;
    EXPECT_EQ(back.nmse_threshold, 1e-5);
    EXPECT_EQ(back.timer_overhead, 2.5e-8);
    EXPECT_EQ(back.verify, VerifyMode::off);
    EXPECT_EQ(back.check_seed, 99u);
    EXPECT_EQ(back.reference_store_dir, "/tmp/refs");
    EXPECT_EQ(back.reference_store_key, "k");
    EXPECT_TRUE(back.detail.is_null()) << "an op case has no detail";
    EXPECT_FALSE(back.one_process) << "an op case's repetitions spread over the pool";
    json named = json(job);
    EXPECT_EQ(named["verify"], "off") << "the mode by name";
    named["verify"] = "thorough";
    EXPECT_EQ(named.get<CaseJob>().verify, VerifyMode::full) << "an unknown mode reads as full";
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
    a.checked = true;
    a.verification.mode = VerifyMode::fast;
    a.verification.method = "freivalds";
    a.verification.nmse = std::numeric_limits<double>::infinity();
    a.verification.worst_index = 7;
    a.reference_problem = "store full";
    const Activation b = across_the_pipe(a);
    EXPECT_EQ(b.status, CaseStatus::failed);
    EXPECT_EQ(b.reason, a.reason);
    EXPECT_TRUE(std::isnan(b.nmse)) << "a NaN NMSE stays NaN";
    EXPECT_EQ(b.preparation.warmup_calls, 3);
    EXPECT_EQ(b.preparation.calls_per_sample, 16);
    EXPECT_EQ(b.workspace_bytes, 4096u);
    EXPECT_TRUE(b.checked);
    EXPECT_EQ(b.verification.method, "freivalds");
    ASSERT_TRUE(b.verification.nmse);
    EXPECT_TRUE(std::isinf(*b.verification.nmse)) << "an infinite check error stays infinite";
    EXPECT_FALSE(b.verification.max_nmse) << "a figure not taken stays absent";
    EXPECT_EQ(b.verification.worst_index, 7);
    EXPECT_EQ(b.reference_problem, "store full");
    EXPECT_TRUE(b.detail.is_null());

    // A job kind's own detail crosses as it is (the workload's: workload_entry_test).
    a.detail = json{{"check_where", "decode step 3, layer 1"}, {"tokens_per_call", 4}};
    const Activation w = across_the_pipe(a);
    EXPECT_EQ(w.detail, a.detail) << "a job kind's activation keeps its detail";

    FinishRecord f;
    f.memory.plugin_peak_bytes = 12;
    EXPECT_TRUE(across_the_pipe(f).detail.is_null());
    f.detail = json{{"components_from", "profile"}};
    const FinishRecord g = across_the_pipe(f);
    EXPECT_EQ(g.detail, f.detail);
    EXPECT_EQ(g.memory.plugin_peak_bytes, 12u);

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

// The records' JSON comes from nlohmann's macros, so a member's name is its
// key: renaming a member must show here, not as a worker reply that no longer
// reads. Status names are the result set's words; an unknown one reads as failed.
TEST(CaseHost, RecordsKeepTheirKeysOnTheWire) {
    auto keys = [](const json &j) {
        std::vector<std::string> k;
        for (const auto &[key, value] : j.items()) k.push_back(key);
        return k;
    };
    EXPECT_EQ(
        keys(json(RepetitionRecord{})),
        (std::vector<std::string>{"calls_per_sample", "clock_event_reasons", "clock_share", "cpu_seconds_per_call",
                                  "device_seconds_per_call", "host_seconds_per_call", "involuntary_switches",
                                  "power_watts", "process", "remeasured", "run_queue_wait_seconds", "run_queue_waits",
                                  "sample_times", "sm_clock_mhz", "starved", "starved_share", "summary", "target_met",
                                  "temperature_c", "threads_ran", "throttled", "timed_out", "unit_seconds",
                                  "wall_seconds_per_call"}));
    EXPECT_EQ(keys(json(PreparationRecord{})),
              (std::vector<std::string>{"batch_probe_seconds", "calls_per_sample", "check_error", "launch",
                                        "launch_fallback", "warmup_calls"}));
    EXPECT_EQ(keys(json(MemoryFigures{})),
              (std::vector<std::string>{"alloc_bytes_per_call", "allocs_per_call", "device_accounted_peak",
                                        "heap_peak_bytes", "heap_tracked", "host_accounted_peak", "plugin_peak_bytes",
                                        "rss_peak_bytes", "rss_peak_reset", "workspace_bytes"}));
    BackendFacts f;
    f.supports = {{CaseStatus::skipped, "no"}};
    const json fj = f;
    EXPECT_EQ(keys(fj), (std::vector<std::string>{"context", "reason", "status", "supports"}));
    EXPECT_EQ(fj["supports"][0], (json{{"status", "skipped"}, {"reason", "no"}}));
    for (CaseStatus s : {CaseStatus::passed, CaseStatus::failed, CaseStatus::skipped})
        EXPECT_EQ(json(s), std::string(case_status_name(s)));
    EXPECT_EQ(json("crashed").get<CaseStatus>(), CaseStatus::failed);
}

// A repetition crosses the pipe as CBOR: its summary's non-finite figures
// (no samples) come back as they were, NaN and +infinity, and a reply
// without `process` or `unit_seconds` reads as process 0 with no units.
TEST(CaseHost, ARepetitionCrossesThePipe) {
    RepetitionRecord r;
    r.summary.n = 0;
    r.summary.median = std::nan("");
    r.summary.noise = std::numeric_limits<double>::infinity();
    r.summary.min = 2e-6;
    r.sample_times = {2e-6, 3e-6};
    r.unit_seconds = {1e-3};
    r.process = 2;
    r.device_seconds_per_call = -1;
    const RepetitionRecord back = across_the_pipe(r);
    EXPECT_TRUE(std::isnan(back.summary.median));
    EXPECT_TRUE(std::isinf(back.summary.noise) && back.summary.noise > 0);
    EXPECT_EQ(back.summary.min, 2e-6);
    EXPECT_EQ(back.sample_times, r.sample_times);
    EXPECT_EQ(back.unit_seconds, r.unit_seconds);
    EXPECT_EQ(back.process, 2);
    EXPECT_EQ(back.device_seconds_per_call, -1);

    json older = json(r);
    older.erase("process");
    older.erase("unit_seconds");
    const RepetitionRecord o = older.get<RepetitionRecord>();
    EXPECT_EQ(o.process, 0);
    EXPECT_TRUE(o.unit_seconds.empty());
    EXPECT_EQ(o.sample_times, r.sample_times);
}

// Descriptions and settings cross as their bytes (measure/plain_bytes.hpp),
// a detail holding bytes keeps them, and a description of the wrong size (or
// not bytes at all) is refused with what it is rather than read as another
// case. (A workload's decoder: workload_entry_test.)
TEST(CaseHost, PlainDataCrossesAsItsBytes) {
    CaseJob job;
    job.desc = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F32, 0);
    job.detail = json{{"bytes", json::binary({0x00, 0xff, 0x10})}, {"phase", "decode"}};
    job.one_process = true;
    const json j = json::from_cbor(json::to_cbor(json(job)));
    EXPECT_EQ(j.at("desc").get_binary().size(), sizeof job.desc);
    EXPECT_EQ(j.at("settings").get_binary().size(), sizeof job.settings);
    const CaseJob back = j.get<CaseJob>();
    EXPECT_EQ(back.detail, job.detail) << "the detail, its bytes as bytes";
    EXPECT_TRUE(back.one_process);

    json shorter = j;
    shorter["desc"].get_binary().pop_back();
    try {
        (void)shorter.get<CaseJob>();
        ADD_FAILURE() << "a description a byte short was read";
    } catch (const std::invalid_argument &e) {
        EXPECT_EQ(std::string(e.what()), "case description of " + std::to_string(sizeof job.desc - 1) +
                                             " bytes, expected " + std::to_string(sizeof job.desc));
    }
    json text = j;
    text["settings"] = "00ff";
    EXPECT_THROW((void)text.get<CaseJob>(), json::type_error) << "settings must be bytes, not text";
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
