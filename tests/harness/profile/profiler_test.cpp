// harness/profile/profiler.{hpp,cpp}: spans nest per thread, the tree merges them by
// path with self = total - children, allocations inside a span are counted
// (the profiler's own bookkeeping is not), warmup steps can be dropped, and
// the tables and the `profile` array carry the documented fields.
// Built with the interposer (harness/measure/alloc_tracker.cpp), as opbench is.
#include "profile/profiler.hpp"

#include "measure/alloc_tracker.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <thread>

namespace opbench {
namespace {

void escape(const void *p) { asm volatile("" : : "g"(p) : "memory"); }

// A case with two samples, each an execute holding qk and softmax.
void record_case(Profiler &p) {
    p.begin("case", SpanKind::host, nlohmann::json{{"op", "attention"}});
    for (int sample = 0; sample < 2; ++sample) {
        p.begin("sample");
        p.begin("execute");
        p.begin("qk", SpanKind::plugin);
        p.end();
        p.begin("softmax", SpanKind::plugin);
        p.end();
        p.end();
        p.end();
    }
    p.end();
}

TEST(Profiler, SpansNestAndMergeByPath) {
    Profiler p;
    record_case(p);
    EXPECT_EQ(p.open_spans(), 0u);
    const ScopeTree tree = build_scope_tree(p, 0, p.mark());
    ASSERT_EQ(tree.nodes.size(), 5u);
    // Depth first: case, sample, execute, qk, softmax.
    EXPECT_EQ(tree.nodes[0].path, "case");
    EXPECT_EQ(tree.nodes[1].path, "case/sample");
    EXPECT_EQ(tree.nodes[2].path, "case/sample/execute");
    EXPECT_EQ(tree.nodes[3].path, "case/sample/execute/qk");
    EXPECT_EQ(tree.nodes[4].path, "case/sample/execute/softmax");
    EXPECT_EQ(tree.nodes[3].parent, 2);
    EXPECT_EQ(tree.nodes[3].depth, 3);
    EXPECT_EQ(tree.nodes[0].calls, 1u);
    EXPECT_EQ(tree.nodes[1].calls, 2u);
    EXPECT_EQ(tree.nodes[3].calls, 2u);
    EXPECT_EQ(tree.nodes[3].kind, SpanKind::plugin);
    EXPECT_EQ(tree.nodes[2].kind, SpanKind::host);
    for (const auto &n : tree.nodes) {
        double children = 0;
        for (int c : n.children) children += tree.nodes[std::size_t(c)].total_s;
        EXPECT_GE(n.total_s, children) << n.path; // a child lies inside its parent
        EXPECT_NEAR(n.self_s, n.total_s - children, 1e-12) << n.path;
        EXPECT_LE(n.min_s, n.max_s);
        EXPECT_NEAR(n.mean_s() * double(n.calls), n.total_s, 1e-12);
    }
    EXPECT_EQ(tree.find("case/sample/execute/softmax"), &tree.nodes[4]);
    EXPECT_EQ(tree.find("nope"), nullptr);
}

TEST(Profiler, ThreadsHaveTheirOwnStacks) {
    Profiler p;
    p.begin("main");
    std::thread worker([&] {
        p.begin("worker-scope", SpanKind::plugin);
        p.end();
    });
    worker.join();
    p.end();
    const ScopeTree tree = build_scope_tree(p, 0, p.mark());
    ASSERT_EQ(tree.nodes.size(), 2u);
    // The worker's scope does not nest under the main thread's span.
    const ScopeNode *w = tree.find("worker-scope");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->parent, -1);
    EXPECT_NE(w->thread, tree.find("main")->thread);
}

TEST(Profiler, UnmatchedEndIsCountedNotFatal) {
    Profiler p;
    p.end();
    EXPECT_EQ(p.unmatched_ends(), 1u);
    EXPECT_EQ(p.mark(), 0u);
}

TEST(Profiler, DiscardDropsAWarmupStep) {
    Profiler p;
    p.begin("repetition");
    const std::size_t m = p.mark();
    p.begin("sample");
    p.end();
    p.memory(100, std::nullopt);
    p.discard_since(m);
    EXPECT_EQ(p.mark(), m);
    EXPECT_TRUE(p.memory_samples().empty());
    p.begin("sample");
    p.end();
    p.end();
    const ScopeTree tree = build_scope_tree(p, 0, p.mark());
    EXPECT_EQ(tree.find("repetition/sample")->calls, 1u);
    // An open span cannot be discarded: its children would lose their parent.
    Profiler q;
    const std::size_t m0 = q.mark();
    q.begin("open");
    EXPECT_THROW(q.discard_since(m0), std::logic_error);
}

TEST(Profiler, RangeStartingInsideAParentPutsChildrenAtTheTop) {
    Profiler p;
    p.begin("run");
    const std::size_t from = p.mark();
    record_case(p);
    const std::size_t to = p.mark();
    p.end();
    const ScopeTree tree = build_scope_tree(p, from, to);
    EXPECT_EQ(tree.nodes.front().path, "case");
    EXPECT_EQ(tree.nodes.front().parent, -1);
    EXPECT_EQ(tree.find("run"), nullptr);
}

TEST(Profiler, CountsTheSpansAllocationsButNotItsOwn) {
    if (!OPBENCH_HEAP_TRACKED) GTEST_SKIP() << "built under a sanitizer: no allocation interposer to count with";
    ASSERT_TRUE(alloc_tracking_active());
    Profiler p;
    p.begin("outer");
    auto *a = new int[7];
    escape(a);
    // A first-seen name makes the profiler allocate (interning): not the span's.
    p.begin("a-new-name-that-is-longer-than-sso-buffers", SpanKind::plugin);
    auto *b = new double[100];
    escape(b);
    p.end();
    delete[] a;
    delete[] b;
    p.end();
    const auto &spans = p.spans();
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[1].allocs, 1u);
    EXPECT_EQ(spans[1].alloc_bytes, 100 * sizeof(double));
    EXPECT_EQ(spans[0].allocs, 2u);
    EXPECT_EQ(spans[0].alloc_bytes, 7 * sizeof(int) + 100 * sizeof(double));
}

TEST(Profiler, DeviceSpansGoOnTheDeviceTrack) {
    Profiler p;
    const int64_t t0 = p.now_ns();
    p.device_span("sample [device]", t0, 2e-6);
    const Span &s = p.spans().front();
    EXPECT_EQ(s.thread, kDeviceThread);
    EXPECT_EQ(s.kind, SpanKind::device);
    EXPECT_EQ(s.end_ns - s.begin_ns, 2000);
}

TEST(Profiler, ProfileJsonHasTheDocumentedFields) {
    Profiler p;
    record_case(p);
    const nlohmann::json j = profile_json(build_scope_tree(p, 0, p.mark()));
    ASSERT_EQ(j.size(), 5u);
    for (const char *key : {"scope", "path", "parent", "thread", "kind", "calls", "total_s", "self_s", "min_s", "max_s",
                            "allocs", "bytes"})
        EXPECT_TRUE(j[3].contains(key)) << key;
    EXPECT_EQ(j[3]["scope"], "qk");
    EXPECT_EQ(j[3]["parent"], "case/sample/execute");
    EXPECT_EQ(j[3]["kind"], "plugin");
    EXPECT_TRUE(j[0]["parent"].is_null());
    EXPECT_EQ(j[3]["calls"], 2);
}

TEST(Profiler, HotPathTableIndentsAndSharesOfParent) {
    Profiler p;
    record_case(p);
    const Table t = hot_path_table(build_scope_tree(p, 0, p.mark()), "attention on naive");
    ASSERT_EQ(t.rows.size(), 5u);
    // One thread: no thread column (the notes name it), so the table fits 100 columns.
    EXPECT_EQ(t.columns.size(), 10u);
    EXPECT_EQ(std::count(t.columns.begin(), t.columns.end(), "thread"), 0);
    EXPECT_EQ(t.rows[0][0], "case");
    EXPECT_EQ(t.rows[3][0], "      qk *");
    EXPECT_EQ(t.rows[0][7], "-"); // the top has no parent
    EXPECT_NE(t.rows[3][7].find('%'), std::string::npos);
    const std::string text = render_text_table(t);
    EXPECT_NE(text.find("attention on naive\n"), std::string::npos);
    EXPECT_NE(text.find("% parent"), std::string::npos);
}

TEST(Profiler, TopScopesRankSelfTimeAcrossTrees) {
    ScopeTree a, b;
    ScopeNode n;
    n.name = "softmax";
    n.calls = 3;
    n.self_s = n.total_s = 3.0;
    a.nodes.push_back(n);
    n.name = "qk";
    n.self_s = n.total_s = 1.0;
    a.nodes.push_back(n);
    n.name = "softmax";
    n.self_s = n.total_s = 2.0;
    b.nodes.push_back(n);
    const Table t = top_scopes_table({{"naive", &a}, {"naive", &b}, {"onednn", &a}}, 2);
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0][0], "naive");
    EXPECT_EQ(t.rows[0][1], "softmax");
    EXPECT_EQ(t.rows[0][3], "6");
    EXPECT_EQ(t.rows[0][4], "5 s");
    EXPECT_EQ(t.rows[0][5], "50.0%"); // 5 of 10 s of self time
    EXPECT_EQ(t.rows[1][1], "softmax");
    EXPECT_EQ(t.notes.size(), 1u); // one more row not shown
}

TEST(Profiler, FormatSeconds) {
    EXPECT_EQ(format_seconds(1.5e-9), "1.5 ns");
    EXPECT_EQ(format_seconds(12.34e-6), "12.3 us");
    EXPECT_EQ(format_seconds(4.567e-3), "4.57 ms");
    EXPECT_EQ(format_seconds(2.0), "2 s");
    EXPECT_EQ(format_seconds(0), "0");
}

} // namespace
} // namespace opbench

namespace opbench {
namespace {

TEST(Profiler, TopScopesWithinOnlyCountsNodesUnderThatName) {
    Profiler p;
    record_case(p); // case > sample > execute > qk, softmax
    const ScopeTree tree = build_scope_tree(p, 0, p.mark());
    const Table all = top_scopes_table({{"b", &tree}});
    const Table within = top_scopes_table({{"b", &tree}}, 15, "sample");
    EXPECT_EQ(all.rows.size(), 5u);
    ASSERT_EQ(within.rows.size(), 4u); // sample, execute, qk, softmax: not the case
    for (const auto &row : within.rows) EXPECT_NE(row[1], "case");
    EXPECT_NE(within.title.find("recorded samples"), std::string::npos);
}

} // namespace
} // namespace opbench
