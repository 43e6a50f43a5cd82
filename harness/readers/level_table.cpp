#include "readers/level_table.hpp"

#include "readers/compact_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace opbench {

namespace {

double json_num(const nlohmann::json &j, const char *key) {
    if (!j.is_object()) return NAN;
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

std::string bound_of(const CaseRecord &c) {
    if (!c.roofline.is_object()) return "-";
    std::string b = c.roofline.value("bound", std::string("-"));
    if (auto pos = b.find("-bound"); pos != std::string::npos) b.resize(pos);
    return b;
}

// Key of a row: the case without its backend (levels are columns).
std::string row_key(const CaseRecord &c, bool with_settings) {
    CaseRecord k = c;
    k.backend.clear();
    return with_settings ? k.match_key_with_settings() : k.match_key();
}

// The key of a case in a set, with settings when some set needs them.
bool settings_needed(const std::vector<ResultSet> &sets, bool per_backend) {
    for (const auto &s : sets) {
        std::set<std::string> keys;
        for (const auto &c : s.cases) {
            std::string k = per_backend ? row_key(c, false) + "|" + c.backend : c.match_key();
            if (!keys.insert(k).second) return true;
        }
    }
    return false;
}

// "12.1 GFLOP/s" or "3.4 GB/s" at a time: FLOP/s unless memory-bound.
std::string throughput(const CaseRecord &c, double seconds) {
    if (bound_of(c) == "memory" || c.flops <= 0) return fmt::format("{:.3g} GB/s", c.bytes / seconds / 1e9);
    return fmt::format("{:.3g} GFLOP/s", c.flops / seconds / 1e9);
}

struct Cell {
    const CaseRecord *rec = nullptr;
    ValidTimes t;
};

// Notes for cells without a time: one line per distinct (status, reason).
void add_reason_notes(Table &t, const std::map<std::string, std::set<std::string>> &reasons) {
    for (const auto &[why, where] : reasons) t.notes.push_back(fmt::format("{} ({})", why, fmt::join(where, ", ")));
}

} // namespace

std::string percent_of_peak(const CaseRecord &c) {
    if (!c.roofline.is_object()) return "-";
    const double flop = json_num(c.roofline, "pct_peak_compute");
    const double bw = json_num(c.roofline, "pct_peak_bandwidth");
    const std::string b = bound_of(c);
    auto fmt_pct = [](double v, const char *what) {
        return v < 10 ? fmt::format("{:.2g}% {}", v, what) : fmt::format("{:.0f}% {}", v, what);
    };
    if (b == "compute" && std::isfinite(flop)) return fmt_pct(flop, "flop");
    if (b == "memory" && std::isfinite(bw)) return fmt_pct(bw, "bw");
    if (std::isfinite(flop) && (!std::isfinite(bw) || flop >= bw)) return fmt_pct(flop, "flop");
    if (std::isfinite(bw)) return fmt_pct(bw, "bw");
    return "-";
}

Document by_backend(const std::vector<ResultSet> &sets, const LevelOptions &o) {
    const bool with_settings = settings_needed(sets, true);
    // Columns: each backend once; a backend in several sets gets one column per set.
    std::vector<std::pair<std::string, std::size_t>> columns; // (backend, set index)
    std::map<std::string, std::set<std::size_t>> backend_sets;
    for (std::size_t i = 0; i < sets.size(); ++i)
        for (const auto &c : sets[i].cases) backend_sets[c.backend].insert(i);
    // A baseline given as a backend's name also means its first build in the
    // sets (`naive` -> `naive@base`: --plugin NAME@VARIANT=PATH, opbench ab).
    std::string baseline = o.baseline;
    if (!backend_sets.count(baseline))
        for (const auto &s : sets)
            for (const auto &c : s.cases)
                if (!backend_sets.count(baseline) && c.backend.rfind(o.baseline + "@", 0) == 0) baseline = c.backend;
    if (!backend_sets.count(baseline)) {
        std::vector<std::string> names;
        for (const auto &[b, _] : backend_sets) names.push_back(b);
        throw std::invalid_argument(fmt::format("--baseline {}: no such backend in the sets (they have: {})",
                                                o.baseline, fmt::join(names, ", ")));
    }
    // Baseline first, then the others in order of first appearance.
    std::vector<std::string> order{baseline};
    for (const auto &s : sets)
        for (const auto &c : s.cases)
            if (std::find(order.begin(), order.end(), c.backend) == order.end()) order.push_back(c.backend);
    for (const auto &b : order)
        for (std::size_t i : backend_sets[b]) columns.push_back({b, i});
    auto column_name = [&](const std::pair<std::string, std::size_t> &col) {
        return backend_sets[col.first].size() > 1 ? fmt::format("{}@{}", col.first, sets[col.second].short_name())
                                                  : col.first;
    };

    std::vector<std::string> row_order;
    std::map<std::string, std::string> row_label;
    std::map<std::string, std::map<std::size_t, Cell>> cells; // row -> column -> cell
    for (std::size_t ci = 0; ci < columns.size(); ++ci) {
        const auto &[backend, si] = columns[ci];
        for (const auto &c : sets[si].cases) {
            if (c.backend != backend) continue;
            const std::string k = row_key(c, with_settings);
            if (!row_label.count(k)) {
                row_order.push_back(k);
                row_label[k] = c.label();
            }
            cells[k][ci] = {&c, valid_times(c, o.accept_unmet_noise)};
        }
    }

    Table t;
    t.title = fmt::format("Optimisation levels: time, speed-up against {}, % of peak, bound", baseline);
    // Default: each row shows what varies (shared name segments go to a
    // header line), no bound column (the % peak's roof names it), one
    // quality column with the backends' flags and a footnote; --wide keeps
    // today's columns and adds a quality column per backend.
    std::vector<std::string> labels;
    for (const auto &k : row_order) labels.push_back(row_label[k]);
    const SharedSegments names = split_shared_segments(labels);
    Footnotes footnotes;
    std::vector<const EntrySummary *> summaries; // reasons all share go to the header once
    for (const auto &k : row_order)
        for (const auto &[ci, cell] : cells[k]) summaries.push_back(&cell.t.summary);
    const std::set<std::string> common = common_reasons(summaries);
    t.columns = {"case"};
    for (const auto &col : columns) {
        const std::string n = column_name(col);
        if (o.wide) {
            for (const char *f : {"time", "speed-up", "% peak", "bound", "quality"})
                t.columns.push_back(fmt::format("{} {}", n, f));
        } else {
            t.columns.push_back(n);
            if (col.first != baseline) t.columns.push_back("speed-up");
            t.columns.push_back("% peak");
        }
    }
    if (!o.wide) {
        t.columns.push_back("quality");
        t.title = fmt::format("Optimisation levels: time, speed-up against {}, % of peak, quality", baseline);
        std::vector<std::string> header;
        if (!names.shared.empty()) header.push_back(fmt::format("every case: {}", fmt::join(names.shared, " ")));
        header.push_back("% peak: of the roof the case is bound by (flop: compute, bw: memory bandwidth)");
        if (!common.empty()) header.push_back(common_reasons_line(common));
        t.title = title_with_header(t.title, header);
    }
    nlohmann::json rows = nlohmann::json::array();
    std::map<std::string, std::set<std::string>> reasons;
    std::map<std::string, std::vector<double>> speedups; // column -> speed-ups, for the geomean
    for (std::size_t ri = 0; ri < row_order.size(); ++ri) {
        const std::string &k = row_order[ri];
        std::vector<std::string> row{o.wide ? row_label[k] : names.rows[ri]};
        nlohmann::json rj = {{"case", row_label[k]}, {"levels", nlohmann::json::object()}};
        // The baseline's time: the first baseline column with a time.
        double base = NAN;
        for (std::size_t ci = 0; ci < columns.size(); ++ci)
            if (columns[ci].first == baseline && cells[k].count(ci) && cells[k][ci].t.status == "ok") {
                base = cells[k][ci].t.median;
                break;
            }
        std::vector<std::string> flags, verdicts;
        for (std::size_t ci = 0; ci < columns.size(); ++ci) {
            const std::string cname = column_name(columns[ci]);
            const bool is_baseline = columns[ci].first == baseline;
            const std::size_t width = o.wide ? 5 : is_baseline ? 2 : 3;
            auto it = cells[k].find(ci);
            if (it == cells[k].end()) {
                row.insert(row.end(), width, "-");
                continue;
            }
            const Cell &cell = it->second;
            nlohmann::json lj = {{"status", cell.t.status}};
            const EntrySummary &summary = cell.t.summary;
            if (summary.repetitions > 0) {
                lj["summary"] = summary.to_json();
                lj["quality"] = std::string(summary.flag());
                flags.push_back(std::string(summary.flag()));
                if (auto v = verdict_beyond(summary, common); !v.empty()) verdicts.push_back(cname + " " + v);
            }
            if (cell.t.status != "ok") {
                row.push_back(cell.t.status);
                row.insert(row.end(), width - (o.wide ? 2 : 1), "-"); // wide: the quality comes after
                reasons[fmt::format("{}: {}", cell.t.status, cell.t.why)].insert(cname);
                lj["reason"] = cell.t.why;
            } else {
                const double sp = std::isfinite(base) ? base / cell.t.median : NAN;
                row.push_back(format_seconds(cell.t.median));
                if (o.wide || !is_baseline) row.push_back(std::isfinite(sp) ? fmt::format("{:.3g}x", sp) : "-");
                // % of peak from the roofline the run computed at the median
                // of every repetition's median: the summary's median.
                row.push_back(percent_of_peak(*cell.rec));
                if (o.wide) row.push_back(bound_of(*cell.rec));
                lj["median_seconds"] = cell.t.median;
                lj["speedup"] = std::isfinite(sp) ? nlohmann::json(sp) : nlohmann::json(nullptr);
                lj["roofline"] = cell.rec->roofline;
                if (std::isfinite(sp)) speedups[cname].push_back(sp);
            }
            if (o.wide) row.push_back(summary.repetitions > 0 ? summary.verdict() : "-");
            rj["levels"][cname] = std::move(lj);
        }
        if (!o.wide) {
            std::string quality = "-";
            if (!flags.empty())
                quality = std::all_of(flags.begin(), flags.end(), [&](const std::string &f) { return f == flags[0]; })
                              ? flags[0]
                              : fmt::format("{}", fmt::join(flags, "/"));
            if (!verdicts.empty()) quality += " " + footnotes.mark(fmt::format("{}", fmt::join(verdicts, "; ")));
            row.push_back(quality);
        }
        t.rows.push_back(std::move(row));
        rows.push_back(std::move(rj));
    }
    nlohmann::json geo = nlohmann::json::object();
    std::vector<std::string> geo_text;
    for (const auto &col : columns) {
        const std::string cname = column_name(col);
        const auto &v = speedups[cname];
        if (v.empty() || col.first == baseline) continue;
        double ls = 0;
        for (double x : v) ls += std::log(x);
        const double g = std::exp(ls / double(v.size()));
        geo[cname] = {{"cases", v.size()}, {"speedup", g}};
        geo_text.push_back(fmt::format("{} {:.3g}x over {} cases", cname, g, v.size()));
    }
    if (!geo_text.empty())
        t.notes.push_back(fmt::format("Geomean speed-up against {}: {}.", baseline, fmt::join(geo_text, "; ")));
    add_reason_notes(t, reasons);
    if (!o.wide) add_legend(t, names);
    footnotes.add_to(t);
    Document doc;
    doc.tables.push_back(std::move(t));
    doc.data = {{"by", "backend"}, {"baseline", baseline}, {"rows", rows}, {"geomean_speedup", geo}};
    return doc;
}

Document by_machine(const std::vector<ResultSet> &sets, const LevelOptions &o) {
    const bool with_settings = settings_needed(sets, false);
    std::vector<std::string> names;
    for (const auto &s : sets) names.push_back(s.short_name());

    Document doc;
    nlohmann::json machines = nlohmann::json::array();
    Table peaks;
    peaks.title = "Machines and their measured peaks (all cores)";
    peaks.columns = {"set", "machine", "CPU", "cores", "f32 GFLOP/s", "bf16 GFLOP/s", "triad GB/s"};
    for (std::size_t i = 0; i < sets.size(); ++i) {
        const auto &p = sets[i].opbench().value("machine_peaks", nlohmann::json::object());
        const auto all = p.value("all_threads", nlohmann::json::object());
        auto g = [&](const char *k) {
            const double v = json_num(all, k);
            return std::isfinite(v) && v > 0 ? fmt::format("{:.4g}", v) : std::string("-");
        };
        peaks.rows.push_back({names[i], sets[i].machine_id(), sets[i].cpu_model(),
                              p.contains("cores") ? p["cores"].dump() : "-", g("f32_gflops"), g("bf16_gflops"),
                              g("triad_gbps")});
        machines.push_back({{"set", sets[i].path}, {"machine_id", sets[i].machine_id()}, {"peaks", p}});
    }
    doc.tables.push_back(std::move(peaks));

    std::vector<std::string> row_order;
    std::map<std::string, std::string> row_label;
    std::map<std::string, std::map<std::size_t, Cell>> cells;
    for (std::size_t i = 0; i < sets.size(); ++i)
        for (const auto &c : sets[i].cases) {
            const std::string k = with_settings ? c.match_key_with_settings() : c.match_key();
            if (!row_label.count(k)) {
                row_order.push_back(k);
                row_label[k] = c.label() + " [" + c.backend + "]";
            }
            cells[k][i] = {&c, valid_times(c, o.accept_unmet_noise)};
        }
    Table t;
    t.title = fmt::format("By machine: absolute figures, % of each machine's own peaks, speed-up against {}", names[0]);
    t.columns = {"case [backend]"};
    for (const auto &n : names)
        for (const char *f : {"time", "throughput", "% peak", "bound", "vs first"})
            t.columns.push_back(fmt::format("{} {}", n, f));
    std::map<std::string, std::set<std::string>> reasons;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto &k : row_order) {
        std::vector<std::string> row{row_label[k]};
        nlohmann::json rj = {{"case", row_label[k]}, {"sets", nlohmann::json::object()}};
        const double first = cells[k].count(0) && cells[k][0].t.status == "ok" ? cells[k][0].t.median : NAN;
        for (std::size_t i = 0; i < sets.size(); ++i) {
            auto it = cells[k].find(i);
            if (it == cells[k].end()) {
                row.insert(row.end(), {"-", "-", "-", "-", "-"});
                continue;
            }
            const Cell &cell = it->second;
            if (cell.t.status != "ok") {
                row.insert(row.end(), {cell.t.status, "-", "-", "-", "-"});
                reasons[fmt::format("{}: {}", cell.t.status, cell.t.why)].insert(names[i]);
                rj["sets"][names[i]] = {{"status", cell.t.status}, {"reason", cell.t.why}};
                continue;
            }
            const double vs = std::isfinite(first) ? first / cell.t.median : NAN;
            row.push_back(format_seconds(cell.t.median));
            row.push_back(throughput(*cell.rec, cell.t.median));
            row.push_back(percent_of_peak(*cell.rec));
            row.push_back(bound_of(*cell.rec));
            row.push_back(std::isfinite(vs) ? fmt::format("{:.3g}x", vs) : "-");
            rj["sets"][names[i]] = {{"status", "ok"},
                                    {"median_seconds", cell.t.median},
                                    {"speedup_vs_first", std::isfinite(vs) ? nlohmann::json(vs) : nlohmann::json()},
                                    {"roofline", cell.rec->roofline}};
        }
        t.rows.push_back(std::move(row));
        rows.push_back(std::move(rj));
    }
    add_reason_notes(t, reasons);
    doc.tables.push_back(std::move(t));
    doc.data = {{"by", "machine"}, {"machines", machines}, {"rows", rows}};
    return doc;
}

} // namespace opbench
