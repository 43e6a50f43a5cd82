#include "readers/level_table.hpp"

#include "machine/device_roofs.hpp"
#include "machine/machine.hpp"
#include "readers/compact_table.hpp"
#include "readers/tidy_records.hpp"
#include "readers/workload_levels.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"

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

struct Cell {
    const CaseRecord *rec = nullptr;
    ValidTimes t;
    // What the cell's figures are: rows of the metrics table (measure/entry_metrics.hpp).
    [[nodiscard]] EntryMetricInputs metrics() const { return metric_inputs(*rec, t); }
};

} // namespace

std::string percent_of_peak(const CaseRecord &c) { return peak_text(metric_inputs(c, ValidTimes{})); }

bool above_its_roof(const CaseRecord &c) {
    const EntryMetricInputs in = metric_inputs(c, ValidTimes{});
    const MetricInfo *peak = peak_metric(in);
    return peak && peak->get(in) > 100;
}

std::string above_roof_note() { return std::string(kAboveRoofNote); }

std::string above_roof_note(const CaseRecord &c) {
    const std::string cause = metric_inputs(c, ValidTimes{}).above_roof_cause;
    if (cause.empty()) return above_roof_note();
    return fmt::format("% peak above 100% for {} [{}]: {}", c.name, c.backend, cause);
}

namespace {

// One column group of the table: a backend in one set.
struct LevelColumn {
    std::string backend;
    std::size_t set = 0;
    std::string name; // the backend, with @set when it is in several sets
    bool is_baseline = false;
    // Not in the default table: no case has a time (a backend not usable on
    // this machine, every case skipped); its reasons are the notes'. In the
    // JSON rows and under --wide it stays.
    bool untimed_hidden = false;
};

// The requested baseline's backend. A baseline given as a backend's name
// also means its first build in the sets (`naive` -> `naive@base`: --plugin
// NAME@VARIANT=PATH, opbench ab).
std::string resolve_baseline(const std::vector<ResultSet> &sets,
                             const std::map<std::string, std::set<std::size_t>> &backend_sets,
                             const std::string &requested) {
    std::string baseline = requested;
    if (!backend_sets.count(baseline))
        for (const auto &s : sets)
            for (const auto &c : s.cases)
                if (!backend_sets.count(baseline) && c.backend.rfind(requested + "@", 0) == 0) baseline = c.backend;
    if (!backend_sets.count(baseline)) {
        std::vector<std::string> names;
        for (const auto &[b, _] : backend_sets) names.push_back(b);
        throw std::invalid_argument(fmt::format("--baseline {}: no such backend in the sets (they have: {})", requested,
                                                fmt::join(names, ", ")));
    }
    return baseline;
}

// Each backend once, baseline first, then the others in order of first
// appearance; a backend in several sets gets one column per set.
std::vector<LevelColumn> level_columns(const std::vector<ResultSet> &sets, const std::string &requested_baseline) {
    std::map<std::string, std::set<std::size_t>> backend_sets;
    for (std::size_t i = 0; i < sets.size(); ++i)
        for (const auto &c : sets[i].cases) backend_sets[c.backend].insert(i);
    const std::string baseline = resolve_baseline(sets, backend_sets, requested_baseline);
    std::vector<std::string> order{baseline};
    for (const auto &s : sets)
        for (const auto &c : s.cases)
            if (std::find(order.begin(), order.end(), c.backend) == order.end()) order.push_back(c.backend);
    std::vector<LevelColumn> columns;
    for (const auto &b : order)
        for (std::size_t i : backend_sets[b]) {
            const std::string name = backend_sets[b].size() > 1 ? fmt::format("{}@{}", b, sets[i].short_name()) : b;
            columns.push_back({b, i, name, b == baseline});
        }
    return columns;
}

// The cases by row (the case without its backend) and column.
struct LevelRows {
    std::vector<std::string> order;
    std::map<std::string, std::string> label;
    std::map<std::string, std::map<std::size_t, Cell>> cells; // row -> column -> cell
};

// A case's optimisation level within its shape (issue 42): f32, tf32 (f32
// with the tf32 variant), f16, bf16, f8e4m3, s8; other dtypes after.
int level_rank(const CaseRecord &c) {
    if (c.dtype == "f32" && c.variant == "tf32") return 1;
    static const std::vector<std::string> order = {"f32", "", "f16", "bf16", "f8e4m3", "s8"};
    const auto it = std::find(order.begin(), order.end(), c.dtype);
    return it == order.end() ? int(order.size()) : int(it - order.begin());
}
// The row key without the level: the rows of one shape at several levels share it.
std::string level_group(const CaseRecord &c, bool with_settings) {
    CaseRecord k = c;
    k.backend.clear();
    k.dtype.clear();
    if (k.variant == "tf32") k.variant = "default";
    if (k.params.is_object()) k.params.erase("out_dtype");
    return with_settings ? k.match_key_with_settings() : k.match_key();
}
// The levels of one shape in level order (f32 -> tf32 -> bf16 -> fp8), at
// the place of the shape's first row; shapes stay in order of appearance.
void order_levels(LevelRows &rows, bool with_settings) {
    std::map<std::string, std::size_t> group_at;
    std::map<std::string, std::pair<std::size_t, int>> sort_key;
    for (const auto &k : rows.order) {
        const CaseRecord &c = *rows.cells[k].begin()->second.rec;
        const auto g = group_at.emplace(level_group(c, with_settings), group_at.size()).first->second;
        sort_key[k] = {g, level_rank(c)};
    }
    std::stable_sort(rows.order.begin(), rows.order.end(),
                     [&](const std::string &a, const std::string &b) { return sort_key[a] < sort_key[b]; });
}

LevelRows level_rows(const std::vector<ResultSet> &sets, const std::vector<LevelColumn> &columns) {
    const bool with_settings = settings_needed(sets, true);
    LevelRows rows;
    for (std::size_t ci = 0; ci < columns.size(); ++ci)
        for (const auto &c : sets[columns[ci].set].cases) {
            if (c.backend != columns[ci].backend) continue;
            const std::string k = row_key(c, with_settings);
            if (!rows.label.count(k)) {
                rows.order.push_back(k);
                rows.label[k] = c.label();
            }
            rows.cells[k][ci] = {&c, valid_times(c)};
        }
    order_levels(rows, with_settings);
    return rows;
}

// Default layout: a non-baseline column with no time in any row is hidden
// (cuda on a machine without a GPU took 3 columns of "skipped - -").
void hide_untimed_columns(std::vector<LevelColumn> &columns, const LevelRows &rows) {
    for (std::size_t ci = 0; ci < columns.size(); ++ci) {
        bool timed = false;
        for (const auto &[k, row_cells] : rows.cells)
            if (auto it = row_cells.find(ci); it != row_cells.end() && it->second.t.status == "ok") timed = true;
        columns[ci].untimed_hidden = !timed && !columns[ci].is_baseline;
    }
}

// The header line the fitted table drops with its % peak columns.
constexpr const char *kPeakHeader =
    "% peak: of the roof the case is bound by (flop: compute, bw: DRAM, L2 bw: the cache holding it)";

// Default: each row shows what varies (shared name segments go to a header
// line), no bound column (the % peak's roof names it), one quality column
// with the backends' flags and a footnote; --wide keeps today's columns and
// adds a quality column per backend.
void lay_out_level_table(Table &t, const std::vector<LevelColumn> &columns, const std::string &baseline,
                         const SharedSegments &names, const std::set<std::string> &common, bool wide) {
    t.title = fmt::format("Optimisation levels: time, speed-up against {}, % of peak, bound", baseline);
    t.columns = {"case"};
    for (const auto &col : columns) {
        if (wide) {
            for (const char *f : {"time", "speed-up", "% peak", "bound", "quality"})
                t.columns.push_back(fmt::format("{} {}", col.name, f));
        } else if (!col.untimed_hidden) {
            t.columns.push_back(col.name);
            if (!col.is_baseline) t.columns.push_back("speed-up");
            t.columns.push_back("% peak");
        }
    }
    if (wide) return;
    t.columns.push_back("quality");
    t.title = fmt::format("Optimisation levels: time, speed-up against {}, % of peak, quality", baseline);
    std::vector<std::string> header;
    if (!names.shared.empty()) header.push_back(fmt::format("every case: {}", fmt::join(names.shared, " ")));
    header.push_back(kPeakHeader);
    if (!common.empty()) header.push_back(common_reasons_line(common));
    std::vector<std::string> hidden;
    for (const auto &col : columns)
        if (col.untimed_hidden) hidden.push_back(col.name);
    if (!hidden.empty())
        header.push_back(fmt::format("not shown, no case timed (reasons below; --wide shows them): {}",
                                     fmt::join(hidden, ", ")));
    t.title = title_with_header(t.title, header);
}

// What the rows gather for the notes under the table.
struct LevelNotes {
    std::map<std::string, std::set<std::string>> reasons; // "status: why" -> columns
    std::set<std::string> above_roof;                     // notes for the % peaks over 100 shown
    std::map<std::string, std::vector<double>> speedups;  // column -> speed-ups, for the geomean
    // column -> rows it or the baseline holds without a speed-up: the geomean
    // names how many it left out (issue 26: every view counts the same).
    std::map<std::string, std::size_t> left_out;
    bool flags_differ = false;                            // a row's backends have different qualities
    Footnotes footnotes;
};

// One row of the table, and its entry of the "rows" JSON.
struct LevelRow {
    std::vector<std::string> text;
    // For the compact quality column: each timed backend's summary, and what
    // it says beyond the header's reasons ("" when nothing).
    struct Side {
        std::string column;
        const EntrySummary *summary;
        std::string verdict;
    };
    std::vector<Side> sides;
    nlohmann::json json;
};

// The baseline's time in a row: the first baseline column with a time.
double baseline_time(const std::map<std::size_t, Cell> &row_cells, const std::vector<LevelColumn> &columns) {
    for (std::size_t ci = 0; ci < columns.size(); ++ci)
        if (auto it = row_cells.find(ci);
            columns[ci].is_baseline && it != row_cells.end() && it->second.t.status == "ok" &&
            !gives_no_rate(it->second.t.summary.quality)) // a throttled baseline: no speed-up (issue 41)
            return it->second.t.median;
    return NAN;
}

// One backend's cells of a row (time, speed-up, % peak, ...), or its status
// when it has no time.
void add_level_cell(LevelRow &row, const Cell &cell, const LevelColumn &col, double base,
                    const std::set<std::string> &common, bool wide, LevelNotes &notes) {
    const std::size_t width = wide ? 5 : col.is_baseline ? 2 : 3;
    nlohmann::json lj = {{"status", cell.t.status}};
    const EntrySummary &summary = cell.t.summary;
    if (summary.repetitions > 0) {
        lj["summary"] = summary.to_json();
        lj["quality"] = std::string(summary.flag());
        row.sides.push_back({col.name, &summary, verdict_beyond(summary, common)});
    }
    if (cell.t.status != "ok") {
        row.text.push_back(cell.t.status);
        row.text.insert(row.text.end(), width - (wide ? 2 : 1), "-"); // wide: the quality comes after
        notes.reasons[fmt::format("{}: {}", cell.t.status, cell.t.why)].insert(col.name);
        lj["reason"] = cell.t.why;
    } else {
        // A throttled entry: its time, but no speed-up and no % peak (issue 41).
        const bool no_rate = gives_no_rate(summary.quality);
        const double sp = std::isfinite(base) && !no_rate ? base / cell.t.median : NAN;
        const EntryMetricInputs in = cell.metrics();
        row.text.push_back(metric_text("median_s", in));
        if (wide || !col.is_baseline) row.text.push_back(std::isfinite(sp) ? fmt::format("{:.3g}x", sp) : "-");
        // % of peak from the roofline the run computed at the median of
        // every repetition's median: the summary's median.
        row.text.push_back(peak_text(in));
        if (!no_rate && above_its_roof(*cell.rec)) notes.above_roof.insert(above_roof_note(*cell.rec));
        if (wide) row.text.push_back(bound_of(*cell.rec));
        lj["median_seconds"] = cell.t.median;
        lj["speedup"] = std::isfinite(sp) ? nlohmann::json(sp) : nlohmann::json(nullptr);
        lj["roofline"] = cell.rec->roofline;
        if (std::isfinite(sp)) notes.speedups[col.name].push_back(sp);
    }
    if (!col.is_baseline && !(cell.t.status == "ok" && std::isfinite(base) && !gives_no_rate(summary.quality)))
        ++notes.left_out[col.name];
    if (wide) row.text.push_back(summary.repetitions > 0 ? summary.verdict() : "-");
    row.json["levels"][col.name] = std::move(lj);
}

// The compact quality column: one flag, the worst backend's (a disturbed
// side always shows), as compare shows the worse side's; a footnote with
// what the backends say beyond the header, and each one's flag when they
// differ.
std::string combined_quality(const LevelRow &row, Footnotes &footnotes, bool &flags_differ) {
    const LevelRow::Side *worst = nullptr;
    bool differ = false;
    for (const auto &side : row.sides) {
        if (!worst || side.summary->quality > worst->summary->quality) worst = &side;
        differ = differ || side.summary->flag() != row.sides.front().summary->flag();
    }
    flags_differ = flags_differ || differ;
    std::vector<std::string> notes;
    for (const auto &side : row.sides)
        if (!side.verdict.empty())
            notes.push_back(side.column + " " + side.verdict);
        else if (differ)
            notes.push_back(side.column + " " + std::string(side.summary->flag()));
    std::string quality = worst ? std::string(worst->summary->flag()) : "-";
    if (!notes.empty()) quality += " " + footnotes.mark(fmt::format("{}", fmt::join(notes, "; ")));
    return quality;
}

LevelRow level_row(const std::string &label, const std::string &compact_label,
                   const std::map<std::size_t, Cell> &row_cells, const std::vector<LevelColumn> &columns,
                   const std::set<std::string> &common, bool wide, LevelNotes &notes) {
    LevelRow row;
    row.text = {wide ? label : compact_label};
    row.json = {{"case", label}, {"levels", nlohmann::json::object()}};
    const double base = baseline_time(row_cells, columns);
    for (std::size_t ci = 0; ci < columns.size(); ++ci) {
        auto it = row_cells.find(ci);
        const std::size_t shown = row.text.size();
        if (it == row_cells.end()) {
            row.text.insert(row.text.end(), wide ? 5 : columns[ci].is_baseline ? 2 : 3, "-");
            if (!columns[ci].is_baseline) ++notes.left_out[columns[ci].name];
        } else
            add_level_cell(row, it->second, columns[ci], base, common, wide, notes);
        if (!wide && columns[ci].untimed_hidden) row.text.resize(shown); // its JSON and notes stay
    }
    if (!wide) row.text.push_back(combined_quality(row, notes.footnotes, notes.flags_differ));
    return row;
}

// The note with each column's geomean speed-up against the baseline;
// returns them as JSON.
nlohmann::json add_geomean_note(Table &t, const std::vector<LevelColumn> &columns, const std::string &baseline,
                                const LevelNotes &notes) {
    nlohmann::json geo = nlohmann::json::object();
    std::vector<std::string> geo_text;
    for (const auto &col : columns) {
        auto it = notes.speedups.find(col.name);
        if (it == notes.speedups.end() || it->second.empty() || col.is_baseline) continue;
        const auto &v = it->second;
        double ls = 0;
        for (double x : v) ls += std::log(x);
        const double g = std::exp(ls / double(v.size()));
        const std::size_t left = notes.left_out.count(col.name) ? notes.left_out.at(col.name) : 0;
        geo[col.name] = {{"cases", v.size()}, {"speedup", g}, {"left_out", left}};
        geo_text.push_back(fmt::format("{} {:.3g}x over {} cases{}", col.name, g, v.size(),
                                       left > 0 ? fmt::format(" ({} left out: no time on it or on {})", left, baseline)
                                                : std::string()));
    }
    if (!geo_text.empty())
        t.notes.push_back(fmt::format("Geomean speed-up against {}: {}.", baseline, fmt::join(geo_text, "; ")));
    return geo;
}

// The default table made to fit kConsoleColumns: first the case column is
// cut in the middle (down to kMinCaseColumn), then the % peak columns go
// (two sets side by side: 150 columns), then the case column is cut further.
constexpr std::size_t kMinCaseColumn = 24;

void fit_case_column(Table &t, const std::vector<std::string> &labels, std::size_t floor) {
    for (std::size_t r = 0; r < t.rows.size(); ++r) t.rows[r][0] = labels[r];
    const std::size_t full = console_table_width(t);
    std::size_t case_width = display_width(t.columns[0]);
    for (const auto &l : labels) case_width = std::max(case_width, display_width(l));
    const std::size_t others = full - case_width;
    if (full <= kConsoleColumns || others + floor > kConsoleColumns) {
        if (full > kConsoleColumns)
            for (auto &row : t.rows) row[0] = shorten_middle(row[0], floor);
        return;
    }
    for (auto &row : t.rows) row[0] = shorten_middle(row[0], kConsoleColumns - others);
}

void fit_level_table(Table &t) {
    std::vector<std::string> labels;
    for (const auto &row : t.rows) labels.push_back(row[0]);
    fit_case_column(t, labels, kMinCaseColumn);
    if (console_table_width(t) <= kConsoleColumns) return;
    for (std::size_t c = t.columns.size(); c-- > 1;)
        if (t.columns[c] == "% peak") {
            t.columns.erase(t.columns.begin() + long(c));
            for (auto &row : t.rows) row.erase(row.begin() + long(c));
        }
    if (auto at = t.title.find(kPeakHeader); at != std::string::npos)
        t.title.replace(at, std::string_view(kPeakHeader).size(),
                        "% peak: left out to fit 100 columns (--wide shows it)");
    fit_case_column(t, labels, 12);
}

} // namespace

Document by_backend(const std::vector<ResultSet> &sets, const LevelOptions &o) {
    std::vector<LevelColumn> columns = level_columns(sets, o.baseline);
    const std::string baseline = columns.front().backend;
    LevelRows rows = level_rows(sets, columns);
    if (!o.wide) hide_untimed_columns(columns, rows);
    std::vector<std::string> labels;
    for (const auto &k : rows.order) labels.push_back(rows.label[k]);
    const SharedSegments names = split_shared_segments(labels);
    std::vector<const EntrySummary *> summaries; // reasons all share go to the header once
    for (const auto &k : rows.order)
        for (const auto &[ci, cell] : rows.cells[k]) summaries.push_back(&cell.t.summary);
    const std::set<std::string> common = common_reasons(summaries);
    Table t;
    lay_out_level_table(t, columns, baseline, names, common, o.wide);
    LevelNotes notes;
    nlohmann::json rows_json = nlohmann::json::array();
    for (std::size_t ri = 0; ri < rows.order.size(); ++ri) {
        const std::string &k = rows.order[ri];
        LevelRow row = level_row(rows.label[k], names.rows[ri], rows.cells[k], columns, common, o.wide, notes);
        t.rows.push_back(std::move(row.text));
        rows_json.push_back(std::move(row.json));
    }
    const nlohmann::json geo = add_geomean_note(t, columns, baseline, notes);
    add_reason_notes(t, notes.reasons);
    t.notes.insert(t.notes.end(), notes.above_roof.begin(), notes.above_roof.end());
    if (notes.flags_differ)
        t.notes.push_back("quality: the worst backend's when they differ (clean < noisy < disturbed); the row's "
                          "footnote gives each.");
    if (!o.wide) {
        fit_level_table(t);
        add_legend(t, names);
    }
    notes.footnotes.add_to(t);
    Document doc;
    doc.tables.push_back(std::move(t));
    doc.data = {{"by", "backend"}, {"baseline", baseline}, {"rows", rows_json}, {"geomean_speedup", geo}};
    if (auto workloads = workload_levels(sets, baseline)) {
        doc.tables.push_back(std::move(workloads->table));
        doc.data["workload_levels"] = std::move(workloads->rows);
    }
    return doc;
}

namespace {

// The machine id (column 1) and the CPU model (column 2) cut in the middle
// to share what the other columns leave of kConsoleColumns: a long model name
// made the table 111-166 columns wide (issue 44). Each keeps 12 at least.
void fit_machine_columns(Table &t) {
    std::vector<std::size_t> width(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        width[c] = t.columns[c].size();
        for (const auto &row : t.rows) width[c] = std::max(width[c], row[c].size());
    }
    std::size_t others = 2 + (t.columns.size() - 1); // the indent and the gaps
    for (std::size_t c = 0; c < width.size(); ++c)
        if (c != 1 && c != 2) others += width[c];
    const std::size_t room = kConsoleColumns > others + 24 ? kConsoleColumns - others : 24;
    if (width[1] + width[2] <= room) return;
    std::size_t machine = std::min(width[1], std::max<std::size_t>(12, room / 2));
    const std::size_t cpu = std::max<std::size_t>(12, room - machine);
    if (width[2] < cpu) machine = room - width[2];
    for (auto &row : t.rows) {
        row[1] = shorten_middle(row[1], machine);
        row[2] = shorten_middle(row[2], cpu);
    }
}

// The table of each set's machine and its all-cores peaks; `machines` gets
// each set's machine and peaks as JSON (in full). Fitted to the console
// unless `wide`.
Table machine_peaks_table(const std::vector<ResultSet> &sets, const std::vector<std::string> &names, bool wide,
                          nlohmann::json &machines) {
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
    if (!wide) fit_machine_columns(peaks);
    return peaks;
}

// The devices' measured roofs (issue 41): a GPU backend's entries are judged
// by these, not by the CPU's peaks above. One row per roof of each set's
// devices; `machines` (one entry per set, machine_peaks_table's) gets each
// set's roofs by backend. No rows for sets of CPU backends only.
Table device_roofs_table(const std::vector<ResultSet> &sets, const std::vector<std::string> &names,
                         nlohmann::json &machines) {
    Table t;
    t.title = "Devices and their measured roofs (a GPU backend's % peak is of these, named)";
    t.columns = {"set", "backend", "device", "roof", "measured", "datasheet"};
    for (std::size_t i = 0; i < sets.size(); ++i)
        for (const DeviceRoofs &d : device_roofs_in_context(sets[i].opbench())) {
            for (const DeviceRoof &r : d.roofs)
                t.rows.push_back({names[i], d.backend, d.device, r.label(), roof_figure_text(r, r.measured),
                                  roof_figure_text(r, r.datasheet)});
            if (i < machines.size()) machines[i]["device_roofs"][d.backend] = d;
        }
    return t;
}

} // namespace

namespace {

// The by-machine rows: each case x backend once, its cell per set.
struct MachineRows {
    std::vector<std::string> order;
    std::map<std::string, std::string> label, backend;
    std::map<std::string, std::map<std::size_t, Cell>> cells; // row -> set -> cell
};

MachineRows machine_rows(const std::vector<ResultSet> &sets) {
    const bool with_settings = settings_needed(sets, false);
    MachineRows rows;
    for (std::size_t i = 0; i < sets.size(); ++i)
        for (const auto &c : sets[i].cases) {
            const std::string k = with_settings ? c.match_key_with_settings() : c.match_key();
            if (!rows.label.count(k)) {
                rows.order.push_back(k);
                rows.label[k] = c.label();
                rows.backend[k] = c.backend;
            }
            rows.cells[k][i] = {&c, valid_times(c)};
        }
    return rows;
}

bool timed_in_some_set(const std::map<std::size_t, Cell> &cells) {
    return std::any_of(cells.begin(), cells.end(), [](const auto &kv) { return kv.second.t.status == "ok"; });
}

// Default: the case (what varies; shared segments in the header), its
// backend, then per set its time and % of its own peak, and against the
// first set a speed-up; rows no set timed are left out and counted in the
// header. --wide: the full name and, per set, time, throughput, % peak,
// bound and speed-up.
void lay_out_machine_table(Table &t, const std::vector<std::string> &names, const SharedSegments &shared,
                           const std::vector<std::string> &untimed, bool wide, bool device_roofs) {
    t.title = fmt::format("By machine: absolute figures, % of each machine's own peaks, speed-up against {}", names[0]);
    if (wide) {
        t.columns = {"case [backend]"};
        for (const auto &n : names)
            for (const char *f : {"time", "throughput", "% peak", "bound", "vs first"})
                t.columns.push_back(fmt::format("{} {}", n, f));
        return;
    }
    t.columns = {"case", "backend"};
    for (std::size_t i = 0; i < names.size(); ++i) {
        t.columns.insert(t.columns.end(), {names[i], "% peak"});
        if (i > 0) t.columns.push_back("vs first");
    }
    t.title = fmt::format("By machine: time, % of each machine's own peak, speed-up against {}", names[0]);
    std::vector<std::string> header;
    if (!shared.shared.empty()) header.push_back(fmt::format("every case: {}", fmt::join(shared.shared, " ")));
    header.push_back(kPeakHeader);
    // A GPU backend's share is of its device's measured roof, never the CPU's peaks (issue 41).
    if (device_roofs)
        header.push_back("a GPU backend's % peak: of the device roof it names (the devices' table above)");
    if (!untimed.empty()) {
        std::set<std::string> backends(untimed.begin(), untimed.end());
        header.push_back(fmt::format("not shown, timed in no set (reasons below; --wide shows them): {} {} of {}",
                                     untimed.size(), untimed.size() == 1 ? "entry" : "entries",
                                     fmt::join(backends, ", ")));
    }
    t.title = title_with_header(t.title, header);
}

// One set's cells of a row; `row_json` gets its entry.
void add_machine_cell(std::vector<std::string> &row, nlohmann::json &row_json, const Cell *cell,
                      const std::string &set_name, double first, bool first_set, bool wide,
                      std::set<std::string> &above_roof,
                      std::map<std::string, std::set<std::string>> &reasons) {
    const std::size_t width = wide ? 5 : first_set ? 2 : 3;
    if (!cell || cell->t.status != "ok") {
        row.push_back(cell ? cell->t.status : "-");
        row.insert(row.end(), width - 1, "-");
        if (!cell) return;
        reasons[fmt::format("{}: {}", cell->t.status, cell->t.why)].insert(set_name);
        row_json["sets"][set_name] = {{"status", cell->t.status}, {"reason", cell->t.why}};
        return;
    }
    // A throttled entry (issue 41): its time, no rate, no % peak, no speed-up.
    const bool no_rate = gives_no_rate(cell->t.summary.quality);
    const double vs = std::isfinite(first) && !no_rate ? first / cell->t.median : NAN;
    const EntryMetricInputs in = cell->metrics();
    const MetricInfo &rate = throughput_metric(in);
    row.push_back(metric_text("median_s", in));
    if (wide) row.push_back(rate.text(rate.get(in)));
    row.push_back(peak_text(in));
    if (!no_rate && above_its_roof(*cell->rec)) above_roof.insert(above_roof_note(*cell->rec));
    if (wide) row.push_back(bound_of(*cell->rec));
    if (wide || !first_set) row.push_back(std::isfinite(vs) ? fmt::format("{:.3g}x", vs) : "-");
    row_json["sets"][set_name] = {{"status", "ok"},
                                  {"median_seconds", cell->t.median},
                                  {"speedup_vs_first", std::isfinite(vs) ? nlohmann::json(vs) : nlohmann::json()},
                                  {"roofline", cell->rec->roofline}};
}

} // namespace

Document by_machine(const std::vector<ResultSet> &sets, const LevelOptions &o) {
    std::vector<std::string> names;
    for (const auto &s : sets) names.push_back(s.short_name());
    Document doc;
    nlohmann::json machines = nlohmann::json::array();
    doc.tables.push_back(machine_peaks_table(sets, names, o.wide, machines));
    Table roofs = device_roofs_table(sets, names, machines);
    const bool has_device_roofs = !roofs.rows.empty();
    if (has_device_roofs) doc.tables.push_back(std::move(roofs));

    const MachineRows rows = machine_rows(sets);
    std::vector<std::string> shown, labels, untimed; // row keys in the text table
    for (const auto &k : rows.order) {
        if (!o.wide && !timed_in_some_set(rows.cells.at(k))) {
            untimed.push_back(rows.backend.at(k));
            continue;
        }
        shown.push_back(k);
        labels.push_back(rows.label.at(k));
    }
    const SharedSegments compact = split_shared_segments(labels);
    Table t;
    lay_out_machine_table(t, names, compact, untimed, o.wide, has_device_roofs);
    std::map<std::string, std::set<std::string>> reasons;
    std::set<std::string> above_roof; // notes for the % peaks over 100 shown
    nlohmann::json rows_json = nlohmann::json::array();
    for (const auto &k : rows.order) {
        const auto &cells = rows.cells.at(k);
        const std::string full = rows.label.at(k) + " [" + rows.backend.at(k) + "]";
        const auto at = std::find(shown.begin(), shown.end(), k);
        std::vector<std::string> row{full};
        if (!o.wide && at != shown.end()) row = {compact.rows[std::size_t(at - shown.begin())], rows.backend.at(k)};
        nlohmann::json rj = {{"case", full}, {"sets", nlohmann::json::object()}};
        const double first = cells.count(0) && cells.at(0).t.status == "ok" &&
                                     !gives_no_rate(cells.at(0).t.summary.quality) // throttled: no speed-up
                                 ? cells.at(0).t.median
                                 : NAN;
        for (std::size_t i = 0; i < sets.size(); ++i) {
            auto it = cells.find(i);
            add_machine_cell(row, rj, it == cells.end() ? nullptr : &it->second, names[i], first, i == 0, o.wide,
                             above_roof, reasons);
        }
        if (at != shown.end()) t.rows.push_back(std::move(row));
        rows_json.push_back(std::move(rj));
    }
    // A compute roof's name widens both % peak columns ("27% AVX2 FMA flop":
    // 108 columns with ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 CPU), so long
    // case names are cut in the middle, as compare's tables cut them.
    if (!o.wide && fit_column(t, 0, 16))
        t.notes.push_back("case names cut in the middle (…) to fit 100 columns; --wide shows them whole");
    add_reason_notes(t, reasons);
    t.notes.insert(t.notes.end(), above_roof.begin(), above_roof.end());
    if (!o.wide) add_legend(t, compact);
    doc.tables.push_back(std::move(t));
    doc.data = {{"by", "machine"}, {"machines", machines}, {"rows", rows_json}};
    return doc;
}

} // namespace opbench
