#include "readers/report_html.hpp"

#include "machine/device_roofs.hpp"
#include "readers/archive.hpp"
#include "readers/change_history.hpp"
#include "readers/compare.hpp"
#include "readers/level_table.hpp"
#include "readers/report_compare.hpp"
#include "readers/svg_chart.hpp"
#include "readers/tidy_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace opbench {

namespace {

// The time a report shows: the entry's one summary (measure/entry_summary.hpp),
// the same median as every other view, with its quality when not clean. Its
// figures are the metrics table's rows (measure/entry_metrics.hpp).
struct Shown {
    bool ok = false;
    double median = 0;
    EntryMetricInputs metrics;
    std::string note; // " (noisy: 3 of 9 repetitions missed the 1% noise target)"
    std::string mark; // the quality's word when not clean: "noisy", "disturbed"
};

Shown shown_time(const CaseRecord &c) {
    Shown s;
    const ValidTimes v = valid_times(c);
    if (v.status != "ok") return s;
    s.ok = true;
    s.metrics = metric_inputs(c, v);
    s.median = metric("median_s").get(s.metrics);
    if (v.summary.quality != Quality::clean) {
        s.note = fmt::format(" ({})", v.summary.verdict());
        s.mark = std::string(v.summary.flag());
    }
    return s;
}

std::string series_name(const std::vector<ResultSet> &sets, std::size_t set, const std::string &backend) {
    return sets.size() > 1 ? fmt::format("{}: {}", sets[set].short_name(), backend) : backend;
}

double peak_of(const nlohmann::json &peaks, const char *which, const char *key) {
    const nlohmann::json t = peaks.value(which, nlohmann::json::object());
    auto it = t.find(key);
    return it != t.end() && it->is_number() ? it->get<double>() : NAN;
}

bool is_integer_param(const nlohmann::json &v) { return v.is_number_integer() || v.is_number_unsigned(); }

std::string fixed_text(const nlohmann::json &params, const std::set<std::string> &leave_out) {
    std::vector<std::string> parts;
    for (const auto &[k, v] : params.items())
        if (!leave_out.count(k) && k != "scale" && k != "eps")
            parts.push_back(k + ":" + (v.is_string() ? v.get<std::string>() : v.dump()));
    return fmt::format("{}", fmt::join(parts, " "));
}

std::string section(const std::string &id, const std::string &title, const std::string &body) {
    return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", id, html_escape(title), body);
}

// A row per GPU backend with measured device roofs (issue 41): each roof of
// its device by unit and dtype, with its measured figure; its entries are
// judged by these, not by the CPU's peaks above them.
template <class Row> void device_roof_rows(const std::vector<ResultSet> &sets, Row &row) {
    std::vector<std::string> backends;
    for (const auto &s : sets)
        for (const DeviceRoofs &d : device_roofs_in_context(s.opbench()))
            if (std::find(backends.begin(), backends.end(), d.backend) == backends.end()) backends.push_back(d.backend);
    for (const std::string &b : backends) {
        std::vector<std::string> v;
        for (const auto &s : sets) {
            std::vector<std::string> roofs;
            for (const DeviceRoofs &d : device_roofs_in_context(s.opbench()))
                if (d.backend == b)
                    for (const DeviceRoof &r : d.roofs)
                        roofs.push_back(r.label() + " " + roof_figure_text(r, r.measured));
            v.push_back(roofs.empty() ? "-" : fmt::format("{}", fmt::join(roofs, ", ")));
        }
        row(fmt::format("device roofs of {} (measured)", b), v);
    }
}

std::string contexts_section(const std::vector<ResultSet> &sets) {
    std::string h = "<table class=\"contexts\">\n<tr><th>setting</th>";
    for (const auto &s : sets) h += "<th>" + html_escape(s.short_name()) + "</th>";
    h += "</tr>\n";
    auto row = [&](const std::string &name, const std::vector<std::string> &values) {
        const bool differs =
            std::any_of(values.begin(), values.end(), [&](const std::string &v) { return v != values[0]; });
        h +=
            fmt::format("<tr{}><td>{}</td>", differs && sets.size() > 1 ? " class=\"differs\"" : "", html_escape(name));
        for (const auto &v : values) h += "<td>" + html_escape(v) + "</td>";
        h += "</tr>\n";
    };
    std::vector<std::string> v;
    for (const auto &s : sets) v.push_back(s.path);
    row("file", v);
    v.clear();
    for (const auto &s : sets) v.push_back(s.timestamp());
    row("measured (UTC)", v);
    for (const auto &d : all_settings(sets)) row(d.setting, d.values);
    for (auto [label, which, key] : {std::tuple{"peak f32 GFLOP/s (all cores)", "all_threads", "f32_gflops"},
                                     std::tuple{"peak bf16 GFLOP/s (all cores)", "all_threads", "bf16_gflops"},
                                     std::tuple{"peak int8 GOP/s (all cores)", "all_threads", "int8_gops"},
                                     std::tuple{"triad GB/s (all cores)", "all_threads", "triad_gbps"},
                                     std::tuple{"peak f32 GFLOP/s (1 thread)", "one_thread", "f32_gflops"},
                                     std::tuple{"triad GB/s (1 thread)", "one_thread", "triad_gbps"}}) {
        v.clear();
        for (const auto &s : sets) {
            const double x = peak_of(s.opbench().value("machine_peaks", nlohmann::json::object()), which, key);
            v.push_back(std::isfinite(x) && x > 0 ? fmt::format("{:.4g}", x) : "-");
        }
        row(label, v);
    }
    device_roof_rows(sets, row);
    v.clear();
    for (const auto &s : sets) {
        std::vector<std::string> w;
        for (const auto &x : s.opbench().value("warnings", nlohmann::json::array()))
            if (x.is_string()) w.push_back(x.get<std::string>());
        v.push_back(w.empty() ? "none" : fmt::format("{}", fmt::join(w, "; ")));
    }
    row("warnings", v);
    h += "</table>\n";
    if (sets.size() > 1) h += "<p class=\"note\">Highlighted rows differ between the sets.</p>\n";
    return h;
}

std::string time_section(const std::vector<ResultSet> &sets) {
    BarChart chart;
    chart.kind = "time-by-case";
    chart.title = "Median time per call, by case and " + std::string(sets.size() > 1 ? "set and backend" : "backend");
    chart.value_label = "time per call (log scale; shorter is faster)";
    std::map<std::string, std::size_t> row_of;
    std::map<std::string, std::size_t> series_of;
    std::vector<std::string> unmeasured;
    // Rows are what a case computes, so runs that differ in threads share them.
    const bool with_settings = needs_settings_in_key(sets);
    auto row_key = [&](const CaseRecord &c) {
        CaseRecord k = c;
        k.backend.clear();
        return with_settings ? k.match_key_with_settings() : k.match_key();
    };
    for (std::size_t si = 0; si < sets.size(); ++si)
        for (const auto &c : sets[si].cases) {
            const std::string rk = row_key(c);
            if (!row_of.count(rk)) {
                row_of[rk] = chart.categories.size();
                chart.categories.push_back(c.label());
            }
            const std::string sn = series_name(sets, si, c.backend);
            if (!series_of.count(sn)) {
                series_of[sn] = chart.series.size();
                chart.series.push_back({sn, {}, {}, {}});
            }
        }
    for (auto &s : chart.series) {
        s.values.assign(chart.categories.size(), NAN);
        s.tooltips.assign(chart.categories.size(), "");
        s.marks.assign(chart.categories.size(), "");
    }
    for (std::size_t si = 0; si < sets.size(); ++si)
        for (const auto &c : sets[si].cases) {
            const std::size_t r = row_of[row_key(c)];
            BarSeries &s = chart.series[series_of[series_name(sets, si, c.backend)]];
            const Shown t = shown_time(c);
            if (t.ok) {
                s.values[r] = t.median;
                s.marks[r] = t.mark;
                s.tooltips[r] =
                    fmt::format("{} [{}]: {}{}", c.label(), s.name, metric_text("median_s", t.metrics), t.note);
            } else {
                unmeasured.push_back(fmt::format("{} [{}]: {}: {}", c.label(), s.name, c.status, c.reason));
            }
        }
    std::string h = render_bar_chart(chart);
    if (!unmeasured.empty()) {
        h += "<p>No time (no bar):</p>\n<ul class=\"unmeasured\">\n";
        for (const auto &u : unmeasured) h += "<li>" + html_escape(u) + "</li>\n";
        h += "</ul>\n";
    }
    return h;
}

// The cache-aware roofs (as Intel Advisor draws them): each cache level's
// all-cores triad bandwidth up to the f32 peak, dotted; a case whose bytes
// fit a level is judged against that level's roof (results/README.md).
void add_cache_roofs(XyChart &chart, const nlohmann::json &peaks, double ai_lo) {
    const double peak = peak_of(peaks, "all_threads", "f32_gflops");
    const auto roofs = peaks.find("cache_roofs");
    if (!(peak > 0) || roofs == peaks.end() || !roofs->is_array()) return;
    constexpr int kGrey = 9; // the palette's last grey; the labels at the ridges tell the levels apart
    for (const nlohmann::json &roof : *roofs) {
        if (!roof.is_object()) continue;
        const auto level = roof.find("level"), gbps = roof.find("all_threads_gbps");
        if (level == roof.end() || !level->is_string() || gbps == roof.end() || !gbps->is_number()) continue;
        const double bw = gbps->get<double>();
        if (!(bw > 0) || !std::isfinite(bw)) continue;
        const double ridge = peak / bw;
        const double lo = std::pow(10.0, std::floor(std::log10(std::min(ai_lo, ridge) / 2)));
        chart.series.push_back(XySeries{
            fmt::format("roof {} all cores ({:.0f} GB/s)", level->get<std::string>(), bw),
            {{lo, bw * lo, ""}, {ridge, peak, fmt::format("{} ridge {:.3g} FLOP/byte", level->get<std::string>(), ridge)}},
            true,
            false,
            true,
            kGrey});
    }
}

// The measured cases of a set as roofline points, a series per backend: those
// `take` accepts. A throttled entry has no rate (issue 41): no point.
struct RooflinePoints {
    std::map<std::string, XySeries> by_backend;
    std::vector<std::string> order;
    double ai_lo = INFINITY, ai_hi = 0;
};

template <class Take> RooflinePoints roofline_points(const ResultSet &set, Take take) {
    const MetricInfo &rate = metric("flop_per_s");
    RooflinePoints p;
    for (const auto &c : set.cases) {
        if (!take(c.backend)) continue;
        const Shown t = shown_time(c);
        const double flop_per_s = t.ok ? rate.get(t.metrics) : NAN;
        if (!std::isfinite(flop_per_s) || c.arithmetic_intensity <= 0) continue;
        if (!p.by_backend.count(c.backend)) {
            p.order.push_back(c.backend);
            p.by_backend[c.backend] = XySeries{c.backend, {}, false, true, false, -1};
        }
        p.by_backend[c.backend].points.push_back(
            {c.arithmetic_intensity, flop_per_s / 1e9,
             fmt::format("{} [{}]: {} at {:.3g} FLOP/byte, {}{}", c.label(), c.backend, rate.text(flop_per_s),
                         c.arithmetic_intensity, metric_text("median_s", t.metrics), t.note)});
        p.ai_lo = std::min(p.ai_lo, c.arithmetic_intensity);
        p.ai_hi = std::max(p.ai_hi, c.arithmetic_intensity);
    }
    return p;
}

// The chart's points after its roofs, each backend's colour after the roofs'.
std::string finish_roofline(XyChart &chart, RooflinePoints &p) {
    for (const auto &b : p.order) chart.series.push_back(p.by_backend[b]);
    for (std::size_t i = 0; i < chart.series.size(); ++i)
        if (chart.series[i].color < 0) chart.series[i].color = int(i - (chart.series.size() - p.order.size()));
    if (p.order.empty()) return "<p>No measured case to place on the roofline.</p>\n";
    return render_xy_chart(chart);
}

// A roof from bandwidth `gbps` up to `peak` GFLOP/s, over the points' range.
XySeries roof_series(std::string name, double peak, double gbps, const RooflinePoints &p, bool dashed, int color) {
    const double ridge = peak / gbps;
    const double lo = std::pow(10.0, std::floor(std::log10(std::min(p.ai_lo, ridge) / 2)));
    const double hi = std::pow(10.0, std::ceil(std::log10(std::max(p.ai_hi, ridge) * 2)));
    return XySeries{std::move(name),
                    {{lo, gbps * lo, ""}, {ridge, peak, fmt::format("ridge {:.3g} FLOP/byte", ridge)}, {hi, peak, ""}},
                    true,
                    false,
                    dashed,
                    color};
}

// A GPU backend's roofline (issue 41): its device's measured roofs, each
// compute roof (per unit and dtype: "tensor bf16", "simt f32") under the
// measured DRAM bandwidth, and the L2's where measured; never the CPU's.
std::string device_roofline_chart(const ResultSet &set, const DeviceRoofs &d) {
    XyChart chart;
    chart.kind = "roofline";
    chart.title = fmt::format("Roofline: {} ({}, its roofs measured by {})", set.short_name(), d.device, d.backend);
    chart.x_label = "arithmetic intensity (FLOP/byte)";
    chart.y_label = std::string(metric("flop_per_s").label);
    RooflinePoints p = roofline_points(set, [&](const std::string &b) { return b == d.backend; });
    const DeviceRoof *dram = d.find(RoofUnit::dram), *l2 = d.find(RoofUnit::l2);
    int color = 7;
    for (const DeviceRoof *bw : {dram, l2}) {
        if (!bw || !(bw->measured > 0)) continue;
        for (const DeviceRoof &r : d.roofs) {
            if (r.is_bandwidth() || !(r.measured > 0)) continue;
            const double peak = r.measured / 1e9, gbps = bw->measured / 1e9;
            chart.series.push_back(roof_series(fmt::format("roof {} ({} measured, {} {})", r.label(),
                                                           roof_figure_text(r, r.measured), bw->label(),
                                                           roof_figure_text(*bw, bw->measured)),
                                               peak, gbps, p, bw == l2, color++));
        }
    }
    return finish_roofline(chart, p);
}

std::string roofline_chart(const ResultSet &set) {
    const nlohmann::json peaks = set.opbench().value("machine_peaks", nlohmann::json::object());
    const std::vector<DeviceRoofs> devices = device_roofs_in_context(set.opbench());
    XyChart chart;
    chart.kind = "roofline";
    chart.title = fmt::format("Roofline: {} ({})", set.short_name(), set.cpu_model());
    chart.x_label = "arithmetic intensity (FLOP/byte)";
    chart.y_label = std::string(metric("flop_per_s").label); // the axis in the label's unit: FLOP/s / 1e9
    // The CPU's roofs for the CPU backends; a GPU backend's entries go on its device's chart.
    RooflinePoints p = roofline_points(set, [&](const std::string &b) {
        return std::none_of(devices.begin(), devices.end(), [&](const DeviceRoofs &d) { return d.backend == b; });
    });
    // The roofs: min(peak FLOP/s, bandwidth x intensity), all cores and one thread.
    int roof_color = 7;
    for (auto [which, label, dashed] :
         {std::tuple{"all_threads", "all cores", false}, std::tuple{"one_thread", "1 thread", true}}) {
        const double bw = peak_of(peaks, which, "triad_gbps");
        for (auto [key, dtype] :
             {std::pair{"f32_gflops", "f32"}, std::pair{"bf16_gflops", "bf16"}, std::pair{"int8_gops", "int8"},
              // AMX tile roofs (issue 28), where measured: oneDNN's bf16 / int8 run on them.
              std::pair{"amx_bf16_gflops", "AMX-BF16"}, std::pair{"amx_int8_gops", "AMX-INT8"}}) {
            const double peak = peak_of(peaks, which, key);
            if (!(peak > 0) || !(bw > 0)) continue;
            const std::string d(dtype);
            chart.series.push_back(roof_series(
                fmt::format("roof {} {} ({:.0f} GFLOP/s, {:.0f} GB/s)", dtype, label, peak, bw), peak, bw, p, dashed,
                d == "f32"        ? roof_color
                : d == "bf16"     ? roof_color + 1
                : d == "int8"     ? roof_color + 2
                : d == "AMX-BF16" ? roof_color + 3
                                  : roof_color + 4));
        }
    }
    add_cache_roofs(chart, peaks, p.ai_lo);
    std::string h = devices.empty() || !p.order.empty() ? finish_roofline(chart, p) : std::string();
    for (const DeviceRoofs &d : devices) h += device_roofline_chart(set, d);
    return h;
}

std::string sweeps_section(const std::vector<ResultSet> &sets) {
    const std::vector<Sweep> sweeps = find_sweeps(sets);
    if (sweeps.empty())
        return "<p class=\"no-sweep\">These sets sweep no shape dimension (no case differs from another in one "
               "parameter only).</p>\n";
    std::string h;
    constexpr std::size_t kMaxSweeps = 24;
    for (std::size_t i = 0; i < std::min(sweeps.size(), kMaxSweeps); ++i) {
        const Sweep &sw = sweeps[i];
        XyChart time, mem;
        time.kind = "sweep-time";
        mem.kind = "sweep-memory";
        const std::string what =
            fmt::format("{}{} {} [{}]", sw.op, sw.case_name.empty() ? "" : " " + sw.case_name, sw.dtype, sw.fixed);
        time.title = fmt::format("Time against {}: {}", sw.axis_label, what);
        mem.title = fmt::format("Peak memory against {}: {}", sw.axis_label, what);
        time.x_label = mem.x_label = sw.axis_label;
        time.y_label = "time per call";
        time.y_unit = AxisUnit::seconds;
        mem.y_label = "peak memory owned by the backend";
        mem.y_unit = AxisUnit::bytes;
        std::map<std::string, std::pair<XySeries, XySeries>> series;
        std::vector<std::string> order;
        for (std::size_t k = 0; k < sw.cases.size(); ++k) {
            const CaseRecord &c = *sw.cases[k];
            const std::string name = series_name(sets, sw.set_of[k], c.backend) +
                                     (c.variant.empty() || c.variant == "default" ? "" : " " + c.variant);
            if (!series.count(name)) {
                order.push_back(name);
                series[name] = {XySeries{name, {}, true, true, false, -1}, XySeries{name, {}, true, true, false, -1}};
            }
            const double x = c.params.value(sw.axis, 0.0);
            const Shown t = shown_time(c);
            if (t.ok)
                series[name].first.points.push_back(
                    {x, t.median,
                     fmt::format("{} {}={}: {}{}", name, sw.axis, x, metric_text("median_s", t.metrics), t.note)});
            if (c.status == "passed") {
                double bytes = c.memory.value("plugin_peak_bytes", 0.0);
                if (bytes <= 0) bytes = c.memory.value("heap_peak_bytes", 0.0);
                if (bytes > 0)
                    series[name].second.points.push_back(
                        {x, bytes, fmt::format("{} {}={}: {}", name, sw.axis, x, tick_label(bytes, AxisUnit::bytes))});
            }
        }
        for (const auto &n : order) {
            auto by_x = [](const XyPoint &a, const XyPoint &b) { return a.x < b.x; };
            std::sort(series[n].first.points.begin(), series[n].first.points.end(), by_x);
            std::sort(series[n].second.points.begin(), series[n].second.points.end(), by_x);
            time.series.push_back(series[n].first);
            mem.series.push_back(series[n].second);
        }
        h += "<div class=\"pair\">\n" + render_xy_chart(time) + render_xy_chart(mem) + "</div>\n";
    }
    if (sweeps.size() > kMaxSweeps) h += fmt::format("<p>{} more sweeps not drawn.</p>\n", sweeps.size() - kMaxSweeps);
    return h;
}

// The change points of the runs history_section() charts: each case's
// `changes` added to its JSON (the chart marks them) and their table, or a
// note where the runs are too few to hold one.
std::string add_history_changes(const std::string &dir, const HistoryOptions &ho, nlohmann::json &cases) {
    const ChangePointOptions co;
    HistorySeries series = archive_series(dir, ho);
    if (series.runs.size() < 2 * co.min_runs)
        return fmt::format("<p class=\"note\">Change points: {} runs, fewer than the {} they need.</p>\n",
                           series.runs.size(), 2 * co.min_runs);
    ChangeHistory ch = change_history(std::move(series), co);
    ch.confirmations = read_change_confirmations(dir);
    // Each row named as the chart it marks is titled.
    const std::vector<std::string> titles = history_chart_titles(cases);
    std::map<std::string, std::string> title_of;
    for (std::size_t i = 0; i < cases.size() && i < titles.size(); ++i)
        title_of[cases[i].value("case", "")] = titles[i];
    std::vector<std::string> shown;
    for (const CaseChanges &c : ch.cases)
        shown.push_back(title_of.count(c.label) ? title_of[c.label] : c.label.substr(0, c.label.rfind(" [")));
    const Document doc = change_history_document(ch, co, shown);
    for (std::size_t i = 0; i < cases.size() && i < doc.data["cases"].size(); ++i)
        if (cases[i].value("case", "") == doc.data["cases"][i].value("case", ""))
            cases[i]["changes"] = doc.data["cases"][i]["changes"];
    const Table &t = doc.tables.at(0);
    if (t.rows.empty()) return "<p class=\"note\">Change points: none in these runs.</p>\n";
    return "<div class=\"changes\">" + html_table(t) + "</div>\n";
}

std::string history_section(const std::vector<ResultSet> &sets, const std::string &dir) {
    HistoryOptions ho;
    ho.suite = sets[0].suite_name();
    ho.machine_id = sets[0].machine_id();
    ho.last = 20;
    // A suite the archive lacks is a note in the page; a broken archive (its
    // index or a run's file) is an ArchiveError the command exits with: it
    // was only inside the HTML, behind exit 0.
    const std::vector<ArchiveEntry> entries = archive_entries(dir);
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const ArchiveEntry &e) { return e.suite == ho.suite && e.machine_id == ho.machine_id; }))
        return "<p>" + html_escape(fmt::format("{}: no archived run of suite '{}' on {}", dir, ho.suite,
                                               ho.machine_id)) + "</p>\n";
    Document d = archive_history(dir, ho);
    const std::string changes = add_history_changes(dir, ho, d.data["cases"]);
    std::string h = fmt::format("<p class=\"note\">Suite '{}' on {}, the last {} archived runs, oldest first: each "
                                "case's median per run, dates under each chart, a point's date and commit on hover."
                                "</p>\n",
                                html_escape(ho.suite), html_escape(ho.machine_id), d.data["runs"].size());
    h += history_small_multiples_html(d.data["runs"], d.data["cases"]);
    h += changes;
    h += "<details><summary>The same as a table</summary>\n" + html_table(d.tables.at(0)) + "</details>\n";
    return h;
}

// Each set's level table (cases by backend: time, speed-up, % of peak, quality).
std::string level_tables(const std::vector<ResultSet> &sets) {
    std::string tables;
    for (const auto &s : sets) {
        LevelOptions lo;
        lo.baseline = s.opbench().value("measurement", nlohmann::json::object()).value("reference_backend", "naive");
        try {
            Document d = by_backend({s}, lo);
            d.tables[0].title = s.short_name() + ": " + d.tables[0].title;
            tables += html_table(d.tables[0]);
        } catch (const std::invalid_argument &e) {
            tables += "<p>" + html_escape(s.short_name() + ": " + e.what()) + "</p>\n";
        }
    }
    return tables;
}

} // namespace

std::vector<Sweep> find_sweeps(const std::vector<ResultSet> &sets) {
    // Groups of one op, case name and dtype across all sets.
    struct Item {
        const CaseRecord *c;
        std::size_t set;
    };
    std::map<std::string, std::vector<Item>> groups;
    std::vector<std::string> group_order;
    for (std::size_t si = 0; si < sets.size(); ++si)
        for (const auto &c : sets[si].cases) {
            const std::string g = c.op + "|" + c.case_name + "|" + c.dtype;
            if (!groups.count(g)) group_order.push_back(g);
            groups[g].push_back({&c, si});
        }
    std::vector<Sweep> out;
    for (const auto &g : group_order) {
        const auto &items = groups[g];
        const CaseRecord &first = *items[0].c;
        std::set<std::string> covered; // axes already drawn, and those equal to them
        for (const auto &[axis, v0] : first.params.items()) {
            if (!is_integer_param(v0) || covered.count(axis)) continue;
            // Parameters equal to the axis in every case move with it (seq_q = seq_kv).
            std::set<std::string> along{axis};
            for (const auto &[q, qv] : first.params.items()) {
                if (q == axis || !is_integer_param(qv)) continue;
                bool equal = true;
                for (const auto &it : items)
                    if (it.c->params.value(q, nlohmann::json()) != it.c->params.value(axis, nlohmann::json()))
                        equal = false;
                if (equal) along.insert(q);
            }
            // Sub-groups: every other parameter fixed.
            std::map<std::string, Sweep> subs;
            std::vector<std::string> sub_order;
            for (const auto &it : items) {
                const std::string fixed = fixed_text(it.c->params, along);
                if (!subs.count(fixed)) {
                    sub_order.push_back(fixed);
                    subs[fixed] = Sweep{first.op,
                                        first.case_name,
                                        first.dtype,
                                        axis,
                                        fmt::format("{}", fmt::join(along, "=")),
                                        fixed,
                                        {},
                                        {}};
                }
                subs[fixed].cases.push_back(it.c);
                subs[fixed].set_of.push_back(it.set);
            }
            bool any = false;
            for (const auto &k : sub_order) {
                std::set<std::string> values;
                for (const auto *c : subs[k].cases) values.insert(c->params.value(axis, nlohmann::json()).dump());
                if (values.size() >= 2) {
                    out.push_back(std::move(subs[k]));
                    any = true;
                }
            }
            if (any) covered.insert(along.begin(), along.end());
        }
    }
    return out;
}

std::string html_table(const Table &t) {
    // A console title's first line is the heading; its header lines (run
    // facts, wrapped for a terminal) become a paragraph, so they do not run
    // into the heading's sentence.
    const std::size_t nl = t.title.find('\n');
    std::string h = t.title.empty() ? "" : "<h3>" + html_escape(t.title.substr(0, nl)) + "</h3>\n";
    if (nl != std::string::npos) {
        std::vector<std::string> lines;
        for (std::size_t at = nl + 1; at < t.title.size();) {
            std::size_t end = std::min(t.title.find('\n', at), t.title.size());
            const std::string line = t.title.substr(at, end - at);
            const std::size_t first = line.find_first_not_of(' ');
            // Indent 4: the wrapped rest of the line before.
            if (first != std::string::npos && first >= 4 && !lines.empty())
                lines.back() += " " + line.substr(first);
            else if (first != std::string::npos)
                lines.push_back(line.substr(first));
            at = end + 1;
        }
        for (const auto &l : lines) h += "<p class=\"note\">" + html_escape(l) + "</p>\n";
    }
    h += "<div class=\"scroll\"><table class=\"data\">\n<tr>";
    for (const auto &c : t.columns) h += "<th>" + html_escape(c) + "</th>";
    h += "</tr>\n";
    for (const auto &r : t.rows) {
        h += "<tr>";
        for (const auto &c : r) h += "<td>" + html_escape(c) + "</td>";
        h += "</tr>\n";
    }
    h += "</table></div>\n";
    // Many notes (a loaded machine's footnotes) fold away: the table stays in view.
    std::string notes;
    for (const auto &n : t.notes) notes += "<p class=\"note\">" + html_escape(n) + "</p>\n";
    if (t.notes.size() > 3)
        notes = fmt::format("<details class=\"notes\"><summary>{} notes (reasons, footnotes)</summary>\n{}</details>\n",
                            t.notes.size(), notes);
    h += notes;
    return h;
}

std::string render_report_html(const std::vector<ResultSet> &sets, const ReportOptions &o) {
    std::set<std::string> suites;
    for (const auto &s : sets) suites.insert(s.suite_name());
    const std::string title = o.title.empty() ? fmt::format("opbench report: {}", fmt::join(suites, ", ")) : o.title;
    std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                    html_escape(title) + "</title>\n";
    h += "<style>\n"
         "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}\n"
         "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\n"
         "table{border-collapse:collapse;font-size:12px;margin:8px 0}\n"
         "th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}\n"
         "th{background:#f0f0f0}tr.differs td{background:#fff3cd}\n"
         ".note{color:#555;font-size:12px}.pair{display:flex;flex-wrap:wrap;gap:8px}\n"
         // Charts and tables keep their text size: wider than the window,
         // they scroll inside their section rather than shrink.
         "section{overflow-x:auto}svg.chart{background:#fff;border:1px solid #eee;margin:6px 0;flex:none}\n"
         // x-y charts (roofline, sweeps) shrink to a narrow window, legend included.
         "svg.chart[viewBox]{max-width:100%;height:auto;box-sizing:border-box}\n"
         ".multiples{display:flex;flex-wrap:wrap;gap:8px}.scroll{overflow-x:auto}\n"
         "table.sortable th{cursor:pointer}table.sortable td{white-space:nowrap}input.filter{font-size:13px;padding:3px}\n"
         // At 800 px the case column wraps and sticks to the left; reasons
         // fold into a details element, so every row stays a line or two tall.
         "table.verdicts{width:max-content}table.sortable td.case{white-space:normal;overflow-wrap:anywhere;min-width:9em;max-width:26em;position:sticky;left:0;"
         "background:#fff}td.why{white-space:normal;min-width:8em}td.why details{max-width:30em}\n"
         // Bar and ratio charts: a label column, then the plot as wide as the page leaves.
         ".barchart{margin:8px 0}.chart-title{font-weight:bold;font-size:14px;margin:4px 0}\n"
         ".bars{display:grid;grid-template-columns:auto minmax(200px,1fr);align-items:start}"
         ".bars.three{grid-template-columns:auto minmax(200px,1fr) auto}\n"
         ".bars svg.chart{border:none;margin:0;overflow:visible}.legend{font-size:12px}"
         ".legend span{margin-right:14px;white-space:nowrap}.legend i{display:inline-block;width:12px;height:12px;"
         "margin-right:4px;vertical-align:-1px}\n"
         ".verdict-slower{color:#b34700;font-weight:bold}.verdict-faster{color:#007a5a;font-weight:bold}\n"
         ".verdict-noisy{color:#9a6700}.counts span{margin-right:12px}\n"
         // A set's path is one long word: it breaks, so the contexts of two
         // sets fit 800 px side by side.
         "table.contexts td{overflow-wrap:anywhere}\n"
         "</style>\n</head>\n<body>\n";
    h += "<h1>" + html_escape(title) + "</h1>\n<p>";
    h += fmt::format("{} result set{}; every figure is read from the sets (medians of the repetitions' median "
                     "times per call). Hover a bar or point for its case.</p>\n",
                     sets.size(), sets.size() > 1 ? "s" : "");
    if (sets.size() >= 2)
        h += section("comparison", fmt::format("Comparison: {} -> {}", sets[0].short_name(),
                                               sets.size() == 2 ? sets[1].short_name() : "each later set"),
                     comparison_html(sets));
    // One set: the page opens with its entries (the level table); with more,
    // the comparison leads and the level tables close the page.
    if (sets.size() == 1) h += section("levels", "Entries: time per case and backend", level_tables(sets));
    h += section("contexts", "Contexts", contexts_section(sets));
    h += section("time", "Time per case", time_section(sets));
    h += section("distributions", "Sample distributions", distributions_html(sets));
    std::string roof;
    for (const auto &s : sets) roof += roofline_chart(s);
    h += section("roofline", "Roofline (each machine's measured roofs)", roof);
    h += section("sweeps", "Against the swept dimension", sweeps_section(sets));
    if (!o.history_dir.empty()) h += section("history", "History", history_section(sets, o.history_dir));
    if (sets.size() > 1) h += section("levels", "Levels", level_tables(sets));
    h += report_script();
    h += "</body>\n</html>\n";
    return h;
}

} // namespace opbench
