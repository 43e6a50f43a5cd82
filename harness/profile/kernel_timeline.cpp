// The kernel timeline; see kernel_timeline.hpp.
#include "profile/kernel_timeline.hpp"

#include "writers/units.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace opbench {

CallTimeline call_timeline(std::vector<DeviceActivity> records) {
    CallTimeline t;
    t.count = records.size();
    if (records.empty()) return t;
    std::stable_sort(records.begin(), records.end(),
                     [](const DeviceActivity &a, const DeviceActivity &b) { return a.start_ns < b.start_ns; });
    t.call = records.front().call;
    const int64_t first = records.front().start_ns;
    int64_t covered_to = first; // the busy intervals' union reaches here
    for (const DeviceActivity &r : records) {
        const int64_t end = std::max(r.end_ns, r.start_ns);
        if (r.start_ns > covered_to) { // idle from covered_to to this start
            t.gaps_ns.push_back(r.start_ns - covered_to);
            covered_to = r.start_ns;
        }
        if (end > covered_to) {
            t.busy_ns += end - covered_to;
            covered_to = end;
        }
    }
    t.span_ns = covered_to - first;
    t.kernels = std::move(records);
    return t;
}

std::vector<CallTimeline> split_calls(const std::vector<DeviceActivity> &records) {
    std::map<int32_t, std::vector<DeviceActivity>> by_call;
    for (const DeviceActivity &r : records) by_call[r.call < 0 ? -1 : r.call].push_back(r);
    std::vector<CallTimeline> out;
    for (auto &[call, rs] : by_call) {
        out.push_back(call_timeline(std::move(rs)));
        out.back().call = call;
    }
    return out;
}

int64_t device_to_host_offset(const std::vector<DeviceActivity> &records, int64_t host_first_launch_ns) {
    if (records.empty()) return 0;
    int64_t first = records.front().start_ns;
    for (const DeviceActivity &r : records) first = std::min(first, r.start_ns);
    return host_first_launch_ns - first;
}

void KernelTimeline::add_sample(const std::vector<DeviceActivity> &records) {
    for (const DeviceActivity &r : records) scope_busy_ns[r.scope] += std::max<int64_t>(0, r.end_ns - r.start_ns);
    for (CallTimeline &c : split_calls(records)) {
        c.sample = samples;
        if (calls.size() >= kExampleCalls) {
            c.kernels.clear(); // the figures are kept; the names only for the first calls
            c.kernels.shrink_to_fit();
        }
        calls.push_back(std::move(c));
    }
    ++samples;
}

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double seconds(int64_t ns) { return double(ns) * 1e-9; }

nlohmann::json example_call(const CallTimeline &c) {
    nlohmann::json kernels = nlohmann::json::array(), gaps = nlohmann::json::array();
    const int64_t t0 = c.kernels.empty() ? 0 : c.kernels.front().start_ns;
    for (const DeviceActivity &k : c.kernels)
        kernels.push_back({{"name", k.name},
                           {"scope", k.scope},
                           {"kind", k.kind == 1 ? "memcpy" : k.kind == 2 ? "memset" : "kernel"},
                           {"stream", k.stream},
                           {"start_seconds", seconds(k.start_ns - t0)},
                           {"duration_seconds", seconds(k.end_ns - k.start_ns)}});
    for (int64_t g : c.gaps_ns) gaps.push_back(seconds(g));
    return {{"sample", c.sample},        {"call", c.call},         {"span_seconds", seconds(c.span_ns)},
            {"busy_seconds", seconds(c.busy_ns)}, {"gaps_seconds", gaps}, {"kernels", kernels}};
}

} // namespace

nlohmann::json kernel_timeline_json(const KernelTimeline &t) {
    if (!t.refused.empty()) return {{"status", "refused"}, {"reason", t.refused}};
    if (t.empty()) return {{"status", "empty"}, {"samples", t.samples}};
    std::vector<double> count, span, busy, gap, busy_share;
    double max_gap = 0;
    int64_t total_span = 0;
    for (const CallTimeline &c : t.calls) {
        count.push_back(double(c.count));
        span.push_back(seconds(c.span_ns));
        busy.push_back(seconds(c.busy_ns));
        gap.push_back(seconds(c.gap_ns()));
        busy_share.push_back(c.busy_share());
        total_span += c.span_ns;
        for (int64_t g : c.gaps_ns) max_gap = std::max(max_gap, seconds(g));
    }
    const double calls = double(t.calls.size());
    // Each plugin scope's summed record time per call, and its share of the
    // calls' device spans: the components on device time.
    nlohmann::json scopes = nlohmann::json::array();
    for (const auto &[scope, ns] : t.scope_busy_ns)
        if (!scope.empty())
            scopes.push_back({{"scope", scope},
                              {"seconds_per_call", seconds(ns) / calls},
                              {"share", total_span > 0 ? double(ns) / double(total_span) : 0.0}});
    nlohmann::json examples = nlohmann::json::array();
    for (const CallTimeline &c : t.calls)
        if (!c.kernels.empty()) examples.push_back(example_call(c));
    const double share = median(busy_share);
    return {{"status", "recorded"},
            {"samples", t.samples},
            {"calls", t.calls.size()},
            {"kernels_per_call", median(count)},
            {"kernels_per_call_min", *std::min_element(count.begin(), count.end())},
            {"kernels_per_call_max", *std::max_element(count.begin(), count.end())},
            {"device_seconds_per_call", median(span)},
            {"busy_seconds_per_call", median(busy)},
            {"gap_seconds_per_call", median(gap)},
            {"busy_share", share},
            {"gap_share", 1.0 - share},
            {"max_gap_seconds", max_gap},
            {"gap_bound_share", kGapBoundShare},
            {"gap_bound", is_gap_bound(median(count), 1.0 - share)},
            {"scopes", scopes},
            {"example_calls", examples}};
}

std::string kernel_timeline_line(const KernelTimeline &t) {
    if (!t.refused.empty()) return "refused: " + t.refused;
    if (t.empty()) return "the backend recorded no device work";
    const nlohmann::json j = kernel_timeline_json(t);
    return fmt::format("{:g} kernels per call, GPU busy {:.0f}% of {}, gaps {:.0f}% (max {})",
                       j["kernels_per_call"].get<double>(), 100.0 * j["busy_share"].get<double>(),
                       format_seconds(j["device_seconds_per_call"].get<double>()),
                       100.0 * j["gap_share"].get<double>(), format_seconds(j["max_gap_seconds"].get<double>()));
}

} // namespace opbench
