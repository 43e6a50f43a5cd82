#include "readers/workload_levels.hpp"

#include "readers/compact_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace opbench {

namespace {

// Levels in the order a person reads them: the baseline backend first, then
// backends in order of appearance; within a backend the dtypes from the
// widest to the narrowest (f32, f16, bf16, f8e4m3, s8).
int dtype_rank(const std::string &dtype) {
    static const std::vector<std::string> order = {"f32", "f16", "bf16", "f8e4m3", "s8"};
    const auto it = std::find(order.begin(), order.end(), dtype);
    return it == order.end() ? int(order.size()) : int(it - order.begin());
}

struct Level {
    std::string backend, dtype, name; // name: "onednn bf16" (with @set when sets differ)
};

struct LevelCell {
    const CaseRecord *rec = nullptr;
    ValidTimes t;
};

// One workload (its name, variant and settings) across levels and phases.
struct WorkloadRow {
    std::string label;
    std::map<std::size_t, std::map<std::string, LevelCell>> cells; // level -> phase -> cell
};

double tokens_per_second(const LevelCell &c) {
    const double tokens = c.rec->params.is_object() && c.rec->params.contains("tokens_per_call") &&
                                  c.rec->params["tokens_per_call"].is_number()
                              ? c.rec->params["tokens_per_call"].get<double>()
                              : NAN;
    // A throttled phase (issue 41): a time, the fallen clock's: no rate.
    return c.t.status == "ok" && c.t.median > 0 && !gives_no_rate(c.t.summary.quality) ? tokens / c.t.median : NAN;
}

struct Collected {
    std::vector<Level> levels;
    std::vector<std::string> phases; // in order of appearance
    std::vector<WorkloadRow> rows;
    std::map<std::string, std::set<std::string>> forms; // per workload name: its variants and settings
};

// What else tells two entries of one workload name apart: the variant, and
// the threads and cache when the run set them ("composed thr:2 cache:cold").
std::string form_of(const CaseRecord &rec) {
    std::string form = rec.variant;
    if (!rec.settings.is_object()) return form;
    if (auto t = rec.settings.find("threads"); t != rec.settings.end() && t->is_number() && t->get<double>() > 0)
        form += fmt::format(" thr:{}", t->get<double>());
    if (auto c = rec.settings.find("cache"); c != rec.settings.end() && c->is_string() && *c != "warm")
        form += " cache:" + c->get<std::string>();
    return form;
}

Collected collect(const std::vector<ResultSet> &sets) {
    Collected c;
    std::map<std::string, std::size_t> level_index, row_index;
    for (std::size_t si = 0; si < sets.size(); ++si)
        for (const CaseRecord &rec : sets[si].cases) {
            if (rec.phase.empty()) continue; // an op case
            // "@" and the name as fmt arguments, not "@" + name: GCC 12 warns
            // falsely (-Wrestrict, PR 105329) on that concatenation inlined.
            const bool several = sets.size() > 1;
            const std::string level = fmt::format("{} {}{}{}", rec.backend, rec.dtype, several ? "@" : "",
                                                  several ? sets[si].short_name() : std::string());
            auto [li, new_level] = level_index.emplace(level, c.levels.size());
            if (new_level) c.levels.push_back({rec.backend, rec.dtype, level});
            const std::string form = form_of(rec);
            auto [ri, new_row] = row_index.emplace(rec.case_name + "|" + form, c.rows.size());
            if (new_row) c.rows.push_back({rec.case_name, {}});
            c.forms[rec.case_name].insert(form);
            if (std::find(c.phases.begin(), c.phases.end(), rec.phase) == c.phases.end()) c.phases.push_back(rec.phase);
            c.rows[ri->second].cells[li->second][rec.phase] = {&rec, valid_times(rec)};
        }
    // A name in several forms: each row says which.
    for (auto &[key, ri] : row_index) {
        const std::string name = key.substr(0, key.rfind('|')), form = key.substr(key.rfind('|') + 1);
        if (c.forms[name].size() > 1) c.rows[ri].label += " " + form;
    }
    return c;
}

// The baseline backend, or one of its builds (`naive@base`: opbench ab).
bool backend_is(const Level &l, const std::string &baseline) {
    return l.backend == baseline || l.backend.rfind(baseline + "@", 0) == 0;
}

// The level order (indices into levels), the baseline's levels first.
std::vector<std::size_t> level_order(const std::vector<Level> &levels, const std::string &baseline) {
    std::vector<std::string> backends;
    for (const Level &l : levels)
        if (std::find(backends.begin(), backends.end(), l.backend) == backends.end()) backends.push_back(l.backend);
    auto backend_rank = [&](const std::string &b) {
        if (backend_is({b, "", ""}, baseline)) return -1;
        return int(std::find(backends.begin(), backends.end(), b) - backends.begin());
    };
    std::vector<std::size_t> order(levels.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const int ra = backend_rank(levels[a].backend), rb = backend_rank(levels[b].backend);
        if (ra != rb) return ra < rb;
        return dtype_rank(levels[a].dtype) < dtype_rank(levels[b].dtype);
    });
    return order;
}

std::string tokens_text(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

// Per phase, the first level in order (the baseline's) that has it timed: its tokens/s.
std::map<std::string, double> baseline_tokens(const WorkloadRow &row, const Collected &c,
                                              const std::vector<std::size_t> &order, const std::string &baseline) {
    std::map<std::string, double> base;
    for (std::size_t li : order)
        if (auto it = row.cells.find(li); it != row.cells.end() && backend_is(c.levels[li], baseline))
            for (const auto &[phase, cell] : it->second)
                if (!base.count(phase) && std::isfinite(tokens_per_second(cell))) base[phase] = tokens_per_second(cell);
    return base;
}

// One level's line of a workload: per phase tokens/s and speed-up, or the
// status; `reasons` collects why a phase has no time.
std::vector<std::string> level_line(const std::map<std::string, LevelCell> &phases, const Collected &c,
                                    const Level &level, const std::map<std::string, double> &base, nlohmann::json &j,
                                    std::map<std::string, std::set<std::string>> &reasons) {
    std::vector<std::string> line;
    for (const std::string &p : c.phases) {
        auto pc = phases.find(p);
        if (pc == phases.end()) {
            line.insert(line.end(), {"-", "-"});
            continue;
        }
        const LevelCell &cell = pc->second;
        const double tps = tokens_per_second(cell);
        if (!std::isfinite(tps)) { // no time, or throttled: no tokens/s, no speed-up
            const bool throttled = cell.t.status == "ok";
            const std::string status = throttled ? "throttled" : cell.t.status;
            std::string why = throttled ? cell.t.summary.verdict() : cell.t.why;
            if (throttled && why.rfind("throttled: ", 0) == 0) why.erase(0, 11); // the note names it once
            line.insert(line.end(), {status, "-"});
            reasons[fmt::format("{}: {}", status, why)].insert(level.name);
            j["phases"][p] = {{"status", status}, {"reason", why}};
            if (throttled) j["phases"][p]["median_seconds"] = cell.t.median;
            continue;
        }
        const auto b = base.find(p);
        const double sp = b != base.end() ? tps / b->second : NAN;
        line.push_back(tokens_text(tps));
        line.push_back(std::isfinite(sp) ? fmt::format("{:.3g}x", sp) : "-");
        j["phases"][p] = {{"tokens_per_second", tps},
                          {"median_seconds", cell.t.median},
                          {"speedup", std::isfinite(sp) ? nlohmann::json(sp) : nlohmann::json(nullptr)},
                          {"quality", std::string(cell.t.summary.flag())}};
    }
    return line;
}

} // namespace

std::optional<WorkloadLevels> workload_levels(const std::vector<ResultSet> &sets, const std::string &baseline) {
    const Collected c = collect(sets);
    if (c.rows.empty()) return std::nullopt;
    const std::vector<std::size_t> order = level_order(c.levels, baseline);
    WorkloadLevels out;
    Table &t = out.table;
    std::string base_level = baseline;
    for (std::size_t li : order)
        if (backend_is(c.levels[li], baseline)) {
            base_level = c.levels[li].name;
            break;
        }
    t.title = fmt::format("Workload levels: tokens/s per phase, speed-up against {}", base_level);
    t.columns = {"workload", "level"};
    for (const std::string &p : c.phases) {
        t.columns.push_back(p + " tok/s");
        t.columns.push_back("speed-up");
    }
    std::map<std::string, std::set<std::string>> reasons; // "status: why" -> levels
    for (const WorkloadRow &row : c.rows) {
        const std::map<std::string, double> base = baseline_tokens(row, c, order, baseline);
        bool first = true;
        for (std::size_t li : order) {
            auto it = row.cells.find(li);
            if (it == row.cells.end()) continue;
            nlohmann::json j = {
                {"workload", row.label}, {"level", c.levels[li].name}, {"phases", nlohmann::json::object()}};
            std::vector<std::string> line = {first ? row.label : "", c.levels[li].name};
            for (std::string &cell : level_line(it->second, c, c.levels[li], base, j, reasons))
                line.push_back(std::move(cell));
            t.rows.push_back(std::move(line));
            out.rows.push_back(std::move(j));
            first = false;
        }
    }
    t.notes.push_back("tok/s: tokens per call over the entry's median call time (the median of the table above); "
                      "a level is a backend and the workload's dtype (s8, f8e4m3: int8, FP8 linear layers).");
    add_reason_notes(t, reasons);
    return out;
}

} // namespace opbench
