// Synthetic result sets for the readers' tests (compare, level tables,
// archive, merge, report): the same shape `opbench run` writes
// (results/README.md), with times chosen by the test; and a temporary
// directory for the tests that write files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace opbench::test {

struct FakeCase {
    std::string op = "add";
    std::string backend = "naive";
    std::string dtype = "f32";
    std::string variant = "default";
    std::string name; // the suite's case name
    nlohmann::json params = {{"R", 32}, {"C", 128}};
    std::string status = "passed"; // passed | failed | skipped | starved
    std::string reason;
    std::vector<double> medians = {1e-5, 1e-5, 1e-5}; // seconds, one per repetition
    std::vector<bool> target_met;                     // per repetition; empty: all met
    std::vector<int> processes;                       // per repetition: stats.process; empty: not written
    // Per repetition: stats.starved (with a starved_share of 0.7, else 0);
    // empty: no starvation figures (a set from before them). A `starved`
    // entry writes its medians as the error entry's starved_repetitions.
    std::vector<bool> starved;
    int threads = 0;
    std::string cache = "warm";
    double flops = 4096, bytes = 49152;
    std::string bound = "memory-bound";
    double pct_compute = 1.0, pct_bandwidth = 10.0;
    std::string bandwidth_roof; // the roofline's; empty: not written (a set from before the cache roofs)
    // Issue 28: the roof the backend's ISA chose (written with
    // compute_roof_by_isa = true) and the entry's above-100% cause; empty: not written.
    std::string compute_roof, above_roof_cause;
    uint64_t plugin_peak_bytes = 49152;
    std::string phase; // a workload entry's ("prefill", "decode"); empty: an op case
};

struct FakeSet {
    std::string suite = "quick";
    std::string suite_sha = "35d603d672b9a5717ff59c7a3a5717a32acf4c5b6e94bcea55d8e5d6ac07333f";
    std::string commit = "abc123def456";
    std::string build_type = "release";
    std::string timestamp = "2026-11-22T14:50:51Z";
    std::string host = "vm";
    std::string cpu_model = "AMD EPYC";
    int cores = 2;
    std::string onednn_isa = "avx512_core_bf16";
    std::vector<FakeCase> cases;
};

// The benchmark name the harness gives a case (results.cpp's rule, enough of it).
inline std::string fake_name(const FakeCase &c) {
    std::string n = c.op;
    for (const auto &[k, v] : c.params.items()) n += "/" + k + ":" + v.dump();
    if (c.variant != "default") n += "/variant:" + c.variant;
    if (!c.phase.empty()) n += "/phase:" + c.phase;
    n += "/dt:" + c.dtype;
    if (c.threads > 0) n += "/thr:" + std::to_string(c.threads);
    if (c.cache != "warm") n += "/cache:" + c.cache;
    n += "/be:" + c.backend;
    if (!c.name.empty()) n += "/case:" + c.name;
    return n;
}

inline nlohmann::json fake_set_json(const FakeSet &s) {
    nlohmann::json ctx = {
        {"date", s.timestamp},
        {"host_name", s.host},
        {"executable", "opbench"},
        {"num_cpus", s.cores},
        {"library_build_type", "debug"},
        {"opbench",
         {{"schema_version", 1},
          {"timestamp", s.timestamp},
          {"build", {{"git_commit", s.commit}, {"build_type", s.build_type}, {"compiler", "gcc 12.2.0"}}},
          {"machine",
           {{"cpu_model", s.cpu_model},
            {"logical_cores", s.cores},
            {"allowed_cores", s.cores},
            {"memory_total_bytes", 25276510208.0},
            {"isa", {{"avx2", true}, {"avx512f", true}}}}},
          {"suite", {{"name", s.suite}, {"sha256", s.suite_sha}, {"cases", s.cases.size()}}},
          {"backends",
           {{"naive", {{"library_versions", ""}}},
            {"onednn", {{"library_versions", "oneDNN 2.6.3"}, {"info", {{"onednn_isa", s.onednn_isa}}}}}}},
          {"measurement", {{"reference_backend", "naive"}, {"cpus", nlohmann::json::array()}}},
          {"machine_peaks",
           {{"cores", s.cores},
            {"all_threads", {{"f32_gflops", 500.0}, {"bf16_gflops", 1000.0}, {"triad_gbps", 70.0}, {"threads", 2}}},
            {"one_thread", {{"f32_gflops", 250.0}, {"bf16_gflops", 500.0}, {"triad_gbps", 40.0}, {"threads", 1}}}}}}}};
    nlohmann::json benchmarks = nlohmann::json::array();
    for (const auto &c : s.cases) {
        const std::string name = fake_name(c) + "/manual_time";
        nlohmann::json fields = {{"op", c.op},
                                 {"backend", c.backend},
                                 {"dtype", c.dtype},
                                 {"variant", c.variant},
                                 {"case", c.name},
                                 {"params", c.params},
                                 {"flops", c.flops},
                                 {"bytes", c.bytes},
                                 {"arithmetic_intensity", c.flops / c.bytes},
                                 {"status", c.status},
                                 {"reason", c.reason},
                                 {"reference", c.backend == "naive"},
                                 {"settings",
                                  {{"threads", c.threads},
                                   {"cache", c.cache},
                                   {"noise_target", 0.01},
                                   {"min_time", 0.01},
                                   {"max_time", 0.05}}},
                                 {"memory", {{"plugin_peak_bytes", c.plugin_peak_bytes}, {"heap_peak_bytes", 0}}},
                                 {"roofline", c.status == "passed"
                                                  ? nlohmann::json{{"bound", c.bound},
                                                                   {"pct_peak_compute", c.pct_compute},
                                                                   {"pct_peak_bandwidth", c.pct_bandwidth},
                                                                   {"ridge_point", 7.1}}
                                                  : nlohmann::json()}};
        if (!c.phase.empty()) fields["phase"] = c.phase;
        if (!c.bandwidth_roof.empty() && c.status == "passed") fields["roofline"]["bandwidth_roof"] = c.bandwidth_roof;
        if (!c.compute_roof.empty() && c.status == "passed") {
            fields["roofline"]["compute_roof"] = c.compute_roof;
            fields["roofline"]["compute_roof_by_isa"] = true;
        }
        if (!c.above_roof_cause.empty() && c.status == "passed")
            fields["roofline"]["above_roof_cause"] = c.above_roof_cause;
        if (c.status != "passed") {
            nlohmann::json e = {{"name", name},
                                {"run_name", name},
                                {"run_type", "iteration"},
                                {"repetitions", 1},
                                {"repetition_index", 0},
                                {"iterations", 0},
                                {"real_time", 0},
                                {"cpu_time", 0},
                                {"time_unit", "us"},
                                {"error_occurred", true},
                                {"error_message", c.status + ": " + c.reason}};
            if (c.status == "starved") {
                e["starved_repetitions"] = nlohmann::json::array();
                for (double m : c.medians)
                    e["starved_repetitions"].push_back(
                        {{"samples", 7}, {"median", m}, {"min", m}, {"noise", 0.002}, {"noise_target_met", true},
                         {"timed_out", false}, {"starved", true}, {"starved_share", 0.7}, {"remeasured", 2}});
            }
            e.update(fields);
            benchmarks.push_back(e);
            continue;
        }
        for (std::size_t i = 0; i < c.medians.size(); ++i) {
            const bool met = c.target_met.empty() || c.target_met[i];
            std::vector<double> samples;
            for (int k = -3; k <= 3; ++k) samples.push_back(c.medians[i] * (1 + 0.001 * k));
            nlohmann::json e = {{"name", name},
                                {"run_name", name},
                                {"run_type", "iteration"},
                                {"repetitions", c.medians.size()},
                                {"repetition_index", i},
                                {"iterations", 100},
                                {"real_time", c.medians[i] * 1e6},
                                {"cpu_time", c.medians[i] * 1e6},
                                {"time_unit", "us"},
                                {"stats",
                                 {{"samples", samples.size()},
                                  {"median", c.medians[i]},
                                  {"min", samples.front()},
                                  {"noise", met ? 0.002 : 0.05},
                                  {"noise_target_met", met},
                                  {"timed_out", !met},
                                  {"sample_times", samples}}}};
            if (i < c.processes.size()) e["stats"]["process"] = c.processes[i];
            if (i < c.starved.size()) {
                e["stats"]["starved"] = bool(c.starved[i]);
                e["stats"]["starved_share"] = c.starved[i] ? 0.7 : 0.0;
                e["stats"]["remeasured"] = c.starved[i] ? 2 : 0;
            }
            e.update(fields);
            benchmarks.push_back(e);
        }
        // Google Benchmark's aggregates, which readers must ignore.
        nlohmann::json agg = {{"name", name + "_median"},   {"run_name", name},      {"run_type", "aggregate"},
                              {"aggregate_name", "median"}, {"real_time", 123456.0}, {"time_unit", "us"}};
        agg.update(fields);
        benchmarks.push_back(agg);
    }
    return {{"context", ctx}, {"benchmarks", benchmarks}};
}

// Writes the set under `dir` as `file` and returns the path.
inline std::string write_fake_set(const std::filesystem::path &dir, const std::string &file, const FakeSet &s) {
    std::filesystem::create_directories(dir);
    const auto path = dir / file;
    std::ofstream(path) << fake_set_json(s).dump(1);
    return path.string();
}

// A fresh temporary directory, removed by the destructor.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        char tmpl[] = "/tmp/opbench-test-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

// Repetition medians around `center`, spread by +-`spread` (relative).
inline std::vector<double> reps(double center, int n = 9, double spread = 0.005) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(center * (1 + spread * (double(i % 5) - 2) / 2));
    return v;
}

} // namespace opbench::test
