// Profiling: span recording, the hot-path tree, its tables; see profiler.hpp.
#include "profile/profiler.hpp"
#include "writers/text_wrap.hpp"
#include "writers/units.hpp"

#include "measure/alloc_tracker.hpp"

#include <fmt/format.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace opbench {

const char *span_kind_name(SpanKind k) {
    switch (k) {
    case SpanKind::host: return "host";
    case SpanKind::plugin: return "plugin";
    case SpanKind::device: return "device";
    case SpanKind::kernel: return "kernel";
    }
    return "unknown";
}

namespace {

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int32_t this_thread_id() {
    thread_local const int32_t tid = static_cast<int32_t>(::syscall(SYS_gettid));
    return tid;
}

} // namespace

Profiler::Profiler() : origin_ns_(steady_ns()) {
    spans_.reserve(4096);
    own_at_begin_allocs_.reserve(4096);
    own_at_begin_bytes_.reserve(4096);
}

int64_t Profiler::now_ns() const { return steady_ns() - origin_ns_; }

uint32_t Profiler::intern(std::string_view name) {
    auto it = name_ids_.find(name);
    if (it != name_ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(names_.size());
    names_.emplace_back(name);
    name_ids_.emplace(std::string(name), id);
    return id;
}

int64_t Profiler::begin(std::string_view name, SpanKind kind, nlohmann::json args) {
    const int32_t tid = this_thread_id();
    std::lock_guard lock(mutex_);
    // Everything this function allocates is the profiler's, not the span's.
    const AllocCounters own0 = alloc_snapshot();
    Span s;
    s.name = intern(name);
    s.kind = kind;
    s.thread = tid;
    auto &stack = open_[tid];
    s.parent = stack.empty() ? -1 : stack.back();
    if (!args.is_null()) {
        s.args = static_cast<int32_t>(args_.size());
        args_.push_back(std::move(args));
    }
    stack.push_back(static_cast<int32_t>(spans_.size()));
    spans_.push_back(s);
    const AllocCounters own1 = alloc_snapshot();
    own_allocs_ += own1.calls - own0.calls;
    own_bytes_ += own1.bytes - own0.bytes;
    own_at_begin_allocs_.push_back(own_allocs_);
    own_at_begin_bytes_.push_back(own_bytes_);
    // The span's own figures start last, so the bookkeeping above is outside it.
    const AllocCounters heap = alloc_snapshot();
    Span &open = spans_.back();
    open.allocs = heap.calls;
    open.alloc_bytes = heap.bytes;
    open.begin_ns = now_ns();
    return open.begin_ns;
}

void Profiler::end() {
    const int64_t t = now_ns();
    const AllocCounters heap = alloc_snapshot();
    const int32_t tid = this_thread_id();
    std::lock_guard lock(mutex_);
    auto it = open_.find(tid);
    if (it == open_.end() || it->second.empty()) {
        ++unmatched_ends_;
        return;
    }
    const auto idx = static_cast<std::size_t>(it->second.back());
    it->second.pop_back();
    Span &s = spans_[idx];
    s.end_ns = t;
    const uint64_t own_allocs = own_allocs_ - own_at_begin_allocs_[idx];
    const uint64_t own_bytes = own_bytes_ - own_at_begin_bytes_[idx];
    const uint64_t calls = heap.calls - s.allocs, bytes = heap.bytes - s.alloc_bytes;
    s.allocs = calls > own_allocs ? calls - own_allocs : 0;
    s.alloc_bytes = bytes > own_bytes ? bytes - own_bytes : 0;
}

void Profiler::device_span(std::string_view name, int64_t begin_ns, double seconds) {
    Span s;
    s.kind = SpanKind::device;
    s.thread = kDeviceThread;
    s.begin_ns = begin_ns;
    s.end_ns = begin_ns + static_cast<int64_t>(std::llround(seconds * 1e9));
    add_closed_span(name, s, nullptr);
}

void Profiler::kernel_span(std::string_view name, int64_t begin_ns, int64_t end_ns, uint32_t stream,
                           nlohmann::json args) {
    Span s;
    s.kind = SpanKind::kernel;
    s.thread = kernel_thread(stream);
    s.begin_ns = begin_ns;
    s.end_ns = std::max(begin_ns, end_ns);
    add_closed_span(name, s, std::move(args));
}

// A span recorded whole (the device's: no begin and end on a host thread),
// with the profiler's own allocations for it kept out of every span's figures.
void Profiler::add_closed_span(std::string_view name, Span s, nlohmann::json args) {
    std::lock_guard lock(mutex_);
    const AllocCounters own0 = alloc_snapshot();
    s.name = intern(name);
    if (!args.is_null()) {
        s.args = int32_t(args_.size());
        args_.push_back(std::move(args));
    }
    spans_.push_back(s);
    own_at_begin_allocs_.push_back(own_allocs_);
    own_at_begin_bytes_.push_back(own_bytes_);
    const AllocCounters own1 = alloc_snapshot();
    own_allocs_ += own1.calls - own0.calls;
    own_bytes_ += own1.bytes - own0.bytes;
}

void Profiler::memory(uint64_t heap_bytes, std::optional<uint64_t> device_bytes) {
    const int64_t t = now_ns();
    std::lock_guard lock(mutex_);
    const AllocCounters own0 = alloc_snapshot();
    memory_.push_back({t, heap_bytes, device_bytes});
    const AllocCounters own1 = alloc_snapshot();
    own_allocs_ += own1.calls - own0.calls;
    own_bytes_ += own1.bytes - own0.bytes;
}

std::size_t Profiler::mark() const {
    std::lock_guard lock(mutex_);
    return spans_.size();
}

std::size_t Profiler::open_spans() const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto &[tid, stack] : open_) n += stack.size();
    return n;
}

void Profiler::discard_since(std::size_t mark) {
    std::lock_guard lock(mutex_);
    if (mark >= spans_.size()) return;
    for (std::size_t i = mark; i < spans_.size(); ++i)
        if (spans_[i].end_ns < 0)
            throw std::logic_error(
                fmt::format("profiler: cannot discard span '{}': still open", names_[spans_[i].name]));
    const int64_t since = spans_[mark].begin_ns;
    spans_.resize(mark);
    own_at_begin_allocs_.resize(mark);
    own_at_begin_bytes_.resize(mark);
    std::erase_if(memory_, [&](const MemorySample &m) { return m.t_ns >= since; });
}

// ---- the tree ---------------------------------------------------------------------

const ScopeNode *ScopeTree::find(std::string_view path) const {
    for (const auto &n : nodes)
        if (n.path == path) return &n;
    return nullptr;
}

ScopeTree build_scope_tree(const Profiler &profiler, std::size_t from, std::size_t to) {
    const auto &spans = profiler.spans();
    to = std::min(to, spans.size());
    // Merge by (parent node, name, thread) in recording order: a span begins
    // after its parent, so the parent's node exists when a child arrives.
    ScopeTree flat;
    std::map<std::tuple<int, uint32_t, int32_t>, int> node_of_key;
    std::vector<int> node_of_span(to > from ? to - from : 0, -1);
    for (std::size_t i = from; i < to; ++i) {
        const Span &s = spans[i];
        if (s.end_ns < 0 || s.kind == SpanKind::kernel) continue;
        int parent = -1;
        if (s.parent >= 0 && std::size_t(s.parent) >= from && std::size_t(s.parent) < to)
            parent = node_of_span[std::size_t(s.parent) - from];
        if (s.parent >= 0 && std::size_t(s.parent) >= from && parent < 0) continue; // parent left out
        const auto key = std::make_tuple(parent, s.name, s.thread);
        auto [it, inserted] = node_of_key.emplace(key, int(flat.nodes.size()));
        if (inserted) {
            ScopeNode n;
            n.name = profiler.name(s.name);
            n.parent = parent;
            n.thread = s.thread;
            n.kind = s.kind;
            if (parent >= 0) {
                n.depth = flat.nodes[std::size_t(parent)].depth + 1;
                n.path = flat.nodes[std::size_t(parent)].path + "/" + n.name;
                flat.nodes[std::size_t(parent)].children.push_back(it->second);
            } else {
                n.path = n.name;
            }
            flat.nodes.push_back(std::move(n));
        }
        ScopeNode &n = flat.nodes[std::size_t(it->second)];
        node_of_span[i - from] = it->second;
        const double d = s.seconds();
        ++n.calls;
        n.total_s += d;
        n.min_s = std::min(n.min_s, d);
        n.max_s = std::max(n.max_s, d);
        n.allocs += s.allocs;
        n.alloc_bytes += s.alloc_bytes;
    }
    for (auto &n : flat.nodes) {
        double children = 0;
        for (int c : n.children) children += flat.nodes[std::size_t(c)].total_s;
        n.self_s = std::max(0.0, n.total_s - children);
    }
    // Depth-first order (children by first appearance) reads as a tree.
    ScopeTree tree;
    std::vector<int> new_index(flat.nodes.size(), -1);
    std::vector<int> to_visit; // a stack: the next node on top
    for (int i = int(flat.nodes.size()) - 1; i >= 0; --i)
        if (flat.nodes[std::size_t(i)].parent < 0) to_visit.push_back(i);
    while (!to_visit.empty()) {
        const int i = to_visit.back();
        to_visit.pop_back();
        new_index[std::size_t(i)] = int(tree.nodes.size());
        tree.nodes.push_back(flat.nodes[std::size_t(i)]);
        const auto &kids = flat.nodes[std::size_t(i)].children;
        for (auto k = kids.rbegin(); k != kids.rend(); ++k) to_visit.push_back(*k);
    }
    for (auto &n : tree.nodes) {
        if (n.parent >= 0) n.parent = new_index[std::size_t(n.parent)];
        for (int &c : n.children) c = new_index[std::size_t(c)];
    }
    return tree;
}

// ---- tables ---------------------------------------------------------------------------

namespace {

std::string format_count(double v) {
    if (v == 0) return "0";
    if (std::abs(v) >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
    return fmt::format("{:.2g}", v);
}

std::string thread_label(int32_t tid) { return tid == kDeviceThread ? "device" : std::to_string(tid); }

} // namespace

namespace {

// The columns' widths as render_text_table lays them out, separators included.
std::size_t table_width(const Table &t) {
    std::vector<std::size_t> width(t.columns.size(), 0);
    for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = display_width(t.columns[c]);
    for (const auto &row : t.rows)
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
            width[c] = std::max(width[c], display_width(row[c]));
    std::size_t total = 0;
    for (std::size_t w : width) total += w + 2;
    return total > 2 ? total - 2 : 0;
}

void erase_column(Table &t, const std::string &name) {
    const auto at = std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin();
    if (std::size_t(at) == t.columns.size()) return;
    t.columns.erase(t.columns.begin() + at);
    for (auto &row : t.rows) row.erase(row.begin() + at);
}

} // namespace

Table hot_path_table(const ScopeTree &tree, const std::string &title) {
    Table t;
    // A long case name breaks after a '/', so no line passes 100 columns.
    t.title = wrap_name(title, 0);
    if (!t.title.empty()) t.title.pop_back();
    t.columns = {"scope", "thread", "calls", "total", "self", "mean", "min", "max", "% parent", "allocs", "bytes"};
    std::set<int32_t> threads;
    for (const auto &n : tree.nodes) {
        threads.insert(n.thread);
        const ScopeNode *parent = n.parent >= 0 ? &tree.nodes[std::size_t(n.parent)] : nullptr;
        std::string share = "-";
        if (parent && parent->total_s > 0) share = fmt::format("{:.1f}%", 100.0 * n.total_s / parent->total_s);
        const double calls = double(std::max<uint64_t>(1, n.calls));
        t.rows.push_back(
            {std::string(2 * std::size_t(n.depth), ' ') + n.name + (n.kind == SpanKind::plugin ? " *" : ""),
             thread_label(n.thread), std::to_string(n.calls), format_seconds(n.total_s), format_seconds(n.self_s),
             format_seconds(n.mean_s()), format_seconds(n.min_s), format_seconds(n.max_s), share,
             format_count(double(n.allocs) / calls), format_bytes(double(n.alloc_bytes) / calls)});
    }
    std::string fitted;
    // To fit 100 columns: one thread is said once, in the notes; then, for
    // deep trees (a workload's steps), min and max go (the set's `profile` has them).
    if (threads.size() == 1) {
        erase_column(t, "thread");
        fitted = fmt::format(" All on thread {}.", thread_label(*threads.begin()));
    }
    if (table_width(t) > kTerminalColumns) {
        erase_column(t, "min");
        erase_column(t, "max");
        fitted += " min and max are left out to fit 100 columns (the result set's `profile` has them).";
    }
    t.notes.push_back("* a scope the plugin marked (OPB_SCOPE); the others are the harness's (its phases; a "
                      "workload's steps and components). "
                      "self = total less the children; allocs and bytes are per call, the children's included." +
                      fitted);
    return t;
}

nlohmann::json profile_json(const ScopeTree &tree) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto &n : tree.nodes) {
        const ScopeNode *parent = n.parent >= 0 ? &tree.nodes[std::size_t(n.parent)] : nullptr;
        out.push_back({{"scope", n.name},
                       {"path", n.path},
                       {"parent", parent ? nlohmann::json(parent->path) : nlohmann::json(nullptr)},
                       {"thread", n.thread},
                       {"kind", span_kind_name(n.kind)},
                       {"calls", n.calls},
                       {"total_s", n.total_s},
                       {"self_s", n.self_s},
                       {"min_s", n.calls ? n.min_s : 0.0},
                       {"max_s", n.max_s},
                       {"allocs", n.allocs},
                       {"bytes", n.alloc_bytes}});
    }
    return out;
}

namespace {

// `path` has a component equal to `name`.
bool path_has(const std::string &path, std::string_view name) {
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        if (std::string_view(path).substr(start, end - start) == name) return true;
        start = end + 1;
    }
    return false;
}

} // namespace

Table top_scopes_table(const std::vector<BackendTree> &trees, std::size_t limit, std::string_view within) {
    struct Sum {
        uint64_t calls = 0;
        double self_s = 0, total_s = 0;
        SpanKind kind = SpanKind::host;
    };
    std::map<std::pair<std::string, std::string>, Sum> sums;
    double all_self = 0;
    for (const auto &bt : trees)
        for (const auto &n : bt.tree->nodes) {
            if (!within.empty() && !path_has(n.path, within)) continue;
            Sum &s = sums[{bt.backend, n.name}];
            s.calls += n.calls;
            s.self_s += n.self_s;
            s.total_s += n.total_s;
            s.kind = n.kind;
            all_self += n.self_s;
        }
    std::vector<std::pair<std::pair<std::string, std::string>, Sum>> rows(sums.begin(), sums.end());
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto &a, const auto &b) { return a.second.self_s > b.second.self_s; });
    Table t;
    t.title = within.empty() ? "Top scopes (self time across the run)"
                             : fmt::format("Top scopes (self time in the recorded {}s, across the run)", within);
    t.columns = {"backend", "scope", "kind", "calls", "self", "% of self", "total"};
    for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
        const auto &[key, s] = rows[i];
        t.rows.push_back(
            {key.first, key.second, span_kind_name(s.kind), std::to_string(s.calls), format_seconds(s.self_s),
             all_self > 0 ? fmt::format("{:.1f}%", 100.0 * s.self_s / all_self) : "-", format_seconds(s.total_s)});
    }
    if (rows.size() > limit) t.notes.push_back(fmt::format("{} more not shown", rows.size() - limit));
    return t;
}

} // namespace opbench
