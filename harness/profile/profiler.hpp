// Profiling (issue 12): where the time goes inside a case.
//
// The Profiler records spans: the host's own phases (run, case, prepare,
// verify, warmup, repetition, sample, execute, synchronize), the scopes a
// plugin marks through the host services (OPB_SCOPE in plugins/opbench/scope.hpp),
// and device spans measured by a backend's device timer. Spans nest per
// thread; each carries its thread id and the heap allocations made while it
// was open (from the interposer, harness/measure/alloc_tracker.hpp). A counter track
// samples live heap and device memory.
//
// Spans stay in the profiler for the whole run, so a trace (harness/profile/trace.hpp)
// and the hot-path tree of each case x backend (build_scope_tree over the
// range of spans recorded for it) read the same data. What is recorded at all
// is the caller's choice: the runner records only the samples its schedule
// selects, so a long run stays small.
#pragma once

#include "plugin/scope_sink.hpp"
#include "writers/units.hpp"

#include "writers/writer.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace opbench {

enum class SpanKind : uint8_t {
    host,   // the harness's own phase
    plugin, // a scope a plugin marked
    device, // time the device spent, from the backend's device timer
    kernel, // one kernel or copy of the kernel timeline (ABI 1.6), on its stream's track
};
[[nodiscard]] const char *span_kind_name(SpanKind k);

// The thread id device spans are recorded on (they are no OS thread's).
inline constexpr int32_t kDeviceThread = -1;
// The thread ids of the kernel timeline's spans: one track per stream.
[[nodiscard]] constexpr int32_t kernel_thread(uint32_t stream) { return -2 - int32_t(stream & 0x3fffffffu); }
[[nodiscard]] constexpr bool is_kernel_thread(int32_t thread) { return thread <= -2; }
[[nodiscard]] constexpr uint32_t stream_of_thread(int32_t thread) { return uint32_t(-2 - thread); }

struct Span {
    uint32_t name = 0; // Profiler::name(name)
    SpanKind kind = SpanKind::host;
    int32_t thread = 0;                // OS thread id (gettid), or kDeviceThread
    int32_t parent = -1;               // index of the enclosing span on this thread; -1 at the top
    int64_t begin_ns = 0, end_ns = -1; // since the profiler was made; end -1 while open
    uint64_t allocs = 0;               // heap allocations while open (children included, the profiler's own excluded)
    uint64_t alloc_bytes = 0;          // bytes those allocations requested
    int32_t args = -1;                 // Profiler::args(args) (case parameters...), -1: none

    [[nodiscard]] double seconds() const { return double(end_ns - begin_ns) * 1e-9; }
};

// Live memory at one moment: the process heap (interposer) and the device
// memory the backend reported through the host services.
struct MemorySample {
    int64_t t_ns = 0;
    uint64_t heap_bytes = 0;
    std::optional<uint64_t> device_bytes;
};

// Thread-safe: spans may begin and end on any thread (each thread has its own
// stack); a span ends on the thread that began it.
class Profiler : public ScopeSink {
public:
    Profiler();
    Profiler(const Profiler &) = delete;
    Profiler &operator=(const Profiler &) = delete;

    // Opens a span on the calling thread. `args` (a JSON object) goes into
    // the trace with the span.
    // Returns the span's begin time (now_ns() as it opened).
    int64_t begin(std::string_view name, SpanKind kind = SpanKind::host, nlohmann::json args = nullptr);
    // Closes the calling thread's innermost open span. Without one, counted
    // in unmatched_ends() and otherwise ignored (a plugin's bug must not
    // break the run).
    void end();
    // A plugin's scope (ScopeSink): a span of kind plugin.
    void plugin_scope_begin(const char *name) override { begin(name, SpanKind::plugin); }
    void plugin_scope_end() override { end(); }
    // A closed span of `seconds` on the device track, starting at begin_ns.
    void device_span(std::string_view name, int64_t begin_ns, double seconds);
    // A closed kernel-timeline span [begin_ns, end_ns) on `stream`'s track,
    // times on the profiler's clock (aligned by the caller). Left out of
    // the hot-path trees: it is the device's, not a scope of the host's.
    void kernel_span(std::string_view name, int64_t begin_ns, int64_t end_ns, uint32_t stream,
                     nlohmann::json args = nullptr);
    void memory(uint64_t heap_bytes, std::optional<uint64_t> device_bytes);

    [[nodiscard]] int64_t now_ns() const;

    // Number of spans recorded so far (open ones included): a position to
    // build a tree from, or to roll back to.
    [[nodiscard]] std::size_t mark() const;
    // Drops the spans recorded since `mark` (a warmup step of the schedule:
    // recorded so its cost is paid, then not kept). Every one must be closed.
    // Memory samples taken since are dropped too.
    void discard_since(std::size_t mark);

    // Read access; call while no other thread records.
    [[nodiscard]] const std::vector<Span> &spans() const { return spans_; }
    [[nodiscard]] const std::vector<MemorySample> &memory_samples() const { return memory_; }
    [[nodiscard]] const std::string &name(uint32_t id) const { return names_[id]; }
    [[nodiscard]] const nlohmann::json &args(int32_t id) const { return args_[std::size_t(id)]; }
    [[nodiscard]] uint64_t unmatched_ends() const { return unmatched_ends_; }
    [[nodiscard]] std::size_t open_spans() const;

private:
    struct StringHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    uint32_t intern(std::string_view name);
    void add_closed_span(std::string_view name, Span s, nlohmann::json args);

    mutable std::mutex mutex_;
    int64_t origin_ns_;
    std::vector<Span> spans_;
    std::vector<std::string> names_;
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> name_ids_;
    std::vector<nlohmann::json> args_;
    std::vector<MemorySample> memory_;
    std::unordered_map<int32_t, std::vector<int32_t>> open_; // thread -> stack of open span indices
    uint64_t unmatched_ends_ = 0;
    // The profiler's own heap allocations (its vectors growing), kept out of
    // the spans' figures.
    uint64_t own_allocs_ = 0, own_bytes_ = 0;
    std::vector<uint64_t> own_at_begin_allocs_, own_at_begin_bytes_; // per span, parallel to spans_
};

// ---- the hot-path tree --------------------------------------------------------

// All spans with the same path (names from the top) on the same thread, merged.
struct ScopeNode {
    std::string name;
    std::string path; // "case/repetition/sample/execute/<a plugin scope>"
    int parent = -1;  // index in ScopeTree::nodes; -1 at the top
    int depth = 0;
    int32_t thread = 0;
    SpanKind kind = SpanKind::host;
    uint64_t calls = 0;
    double total_s = 0, self_s = 0; // self: total less the children's totals
    double min_s = std::numeric_limits<double>::infinity(), max_s = 0;
    uint64_t allocs = 0, alloc_bytes = 0; // summed over calls, children included
    std::vector<int> children;

    [[nodiscard]] double mean_s() const { return calls ? total_s / double(calls) : 0.0; }
};

struct ScopeTree {
    std::vector<ScopeNode> nodes; // depth first: every parent before its children
    [[nodiscard]] const ScopeNode *find(std::string_view path) const;
    [[nodiscard]] bool empty() const { return nodes.empty(); }
};

// Merges spans [from, to) of `profiler`. A span whose parent lies before
// `from` is at the top. Open spans are left out.
[[nodiscard]] ScopeTree build_scope_tree(const Profiler &profiler, std::size_t from, std::size_t to);

// The hot-path table of one case x backend: scope (indented by depth), thread,
// calls, total, self, mean, min, max, % of parent, allocations and bytes per call.
[[nodiscard]] Table hot_path_table(const ScopeTree &tree, const std::string &title);

// A result entry's `profile` array: {scope, path, parent, thread, kind, calls,
// total_s, self_s, min_s, max_s, allocs, bytes} per node, allocs and bytes
// summed over its calls.
[[nodiscard]] nlohmann::json profile_json(const ScopeTree &tree);

// The flat "top scopes" table across a run: self time summed per (backend,
// scope name), largest first, with its share of all the self time recorded.
struct BackendTree {
    std::string backend;
    const ScopeTree *tree;
};
// `within`: only nodes at or below a node of that name (the recorded
// samples: "sample"), so the containers around them do not crowd the table;
// empty: every node.
[[nodiscard]] Table top_scopes_table(const std::vector<BackendTree> &trees, std::size_t limit = 15,
                                     std::string_view within = {});

} // namespace opbench
