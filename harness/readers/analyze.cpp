// `opbench analyze`; see analyze.hpp.
#include "readers/analyze.hpp"
#include "writers/text_wrap.hpp"
#include "writers/result_schema.hpp"

#include "measure/json_member.hpp"
#include "measure/throttle.hpp"
#include "readers/compact_table.hpp"
#include "readers/result_set_reader.hpp"
#include "writers/units.hpp"
#include "opbench/ops.hpp"
#include "writers/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>

namespace opbench {

std::span<const char *const> variant_components(const std::string &op, const std::string &variant) {
    const auto o = op_from_name(op);
    if (!o) return {};
    const auto v = variant_from_name(*o, variant.empty() ? "default" : variant);
    return v ? op_info(*o)->variants[std::size_t(*v)].components : std::span<const char *const>{};
}

std::optional<ComponentBreakdown> component_breakdown(const nlohmann::json &profile,
                                                      std::span<const char *const> components) {
    if (!profile.is_array() || components.empty()) return std::nullopt;
    // Components grouped by the span that holds them; the busiest holder wins.
    std::map<std::string, std::map<std::string, double>> by_parent;
    for (const auto &n : profile) {
        const std::string scope = n.value("scope", "");
        if (std::find(components.begin(), components.end(), scope) == components.end()) continue;
        if (!n.contains("parent") || !n["parent"].is_string()) continue;
        by_parent[n["parent"].get<std::string>()][scope] += n.value("total_s", 0.0);
    }
    if (by_parent.empty()) return std::nullopt;
    const auto best = std::max_element(by_parent.begin(), by_parent.end(), [](const auto &a, const auto &b) {
        double sa = 0, sb = 0;
        for (const auto &[k, v] : a.second) sa += v;
        for (const auto &[k, v] : b.second) sb += v;
        return sa < sb;
    });
    ComponentBreakdown out;
    out.parent = best->first;
    double parent_self = 0;
    for (const auto &n : profile)
        if (n.value("path", "") == out.parent) {
            out.parent_total_s = n.value("total_s", 0.0);
            parent_self = n.value("self_s", 0.0);
        }
    if (!(out.parent_total_s > 0)) return std::nullopt;
    double top = -1;
    for (const char *c : components) {
        auto it = best->second.find(c);
        if (it == best->second.end()) continue;
        const double share = it->second / out.parent_total_s;
        out.shares.emplace_back(c, share);
        if (share > top) {
            top = share;
            out.dominant = c;
        }
    }
    out.other = parent_self / out.parent_total_s;
    return out;
}

std::optional<TimelineFinding> timeline_finding(const nlohmann::json &entry) {
    const nlohmann::json &t = json_member(entry, "kernel_timeline");
    if (!t.is_object() || t.value("status", "") != "recorded") return std::nullopt;
    TimelineFinding f;
    f.kernels_per_call = t.value("kernels_per_call", 0.0);
    f.device_seconds = t.value("device_seconds_per_call", 0.0);
    f.gap_seconds = t.value("gap_seconds_per_call", 0.0);
    f.gap_share = t.value("gap_share", 0.0);
    f.max_gap_seconds = t.value("max_gap_seconds", 0.0);
    f.gap_bound = is_gap_bound(f.kernels_per_call, f.gap_share);
    return f;
}

std::optional<ComponentBreakdown> device_component_breakdown(const nlohmann::json &entry,
                                                             std::span<const char *const> components) {
    const nlohmann::json &t = json_member(entry, "kernel_timeline");
    const nlohmann::json &scopes = json_member(t, "scopes");
    if (!scopes.is_array() || components.empty() || !(t.value("device_seconds_per_call", 0.0) > 0))
        return std::nullopt;
    ComponentBreakdown out;
    out.parent = "kernel timeline/device time";
    out.parent_total_s = t.value("device_seconds_per_call", 0.0);
    out.device_time = true;
    double top = -1, sum = 0;
    for (const char *c : components)
        for (const auto &s : scopes)
            if (s.is_object() && s.value("scope", "") == c) {
                const double share = s.value("share", 0.0);
                out.shares.emplace_back(c, share);
                sum += share;
                if (share > top) {
                    top = share;
                    out.dominant = c;
                }
            }
    if (out.shares.empty()) return std::nullopt;
    out.other = std::max(0.0, 1.0 - sum);
    return out;
}

namespace {

// "1500" or "1958-1980"; percentages likewise.
std::string range_text(double lo, double hi, const char *spec) {
    const std::string a = fmt::format(fmt::runtime(spec), lo), b = fmt::format(fmt::runtime(spec), hi);
    return a == b ? a : a + "-" + b;
}

} // namespace

std::string device_text(const std::vector<const nlohmann::json *> &repetitions) {
    double clock_lo = INFINITY, clock_hi = 0, share_lo = INFINITY, share_hi = 0, watts = NAN, celsius = NAN;
    std::uint64_t reasons = 0;
    for (const nlohmann::json *e : repetitions) {
        const nlohmann::json &st = json_member(*e, "stats");
        if (const nlohmann::json &c = json_member(st, "sm_clock_mhz"); c.is_number() && c.get<double>() > 0) {
            clock_lo = std::min(clock_lo, c.get<double>());
            clock_hi = std::max(clock_hi, c.get<double>());
        }
        if (const nlohmann::json &s = json_member(st, "clock_share"); s.is_number() && s.get<double>() > 0) {
            share_lo = std::min(share_lo, s.get<double>());
            share_hi = std::max(share_hi, s.get<double>());
        }
        const RepetitionFigures f = repetition_figures(*e);
        if (std::isfinite(f.power_watts)) watts = std::isfinite(watts) ? std::max(watts, f.power_watts) : f.power_watts;
        if (std::isfinite(f.temperature_c))
            celsius = std::isfinite(celsius) ? std::max(celsius, f.temperature_c) : f.temperature_c;
        reasons |= f.clock_event_reasons;
    }
    std::vector<std::string> parts;
    if (clock_hi > 0)
        parts.push_back("SM " + range_text(clock_lo, clock_hi, "{:.0f}") + " MHz" +
                        (share_hi > 0 ? " (" + range_text(100 * share_lo, 100 * share_hi, "{:.0f}") +
                                            "% of sustained)"
                                      : std::string()));
    if (std::isfinite(watts) || std::isfinite(celsius))
        parts.push_back(fmt::format("up to {}{}{}", std::isfinite(watts) ? fmt::format("{:.0f} W", watts) : "",
                                    std::isfinite(watts) && std::isfinite(celsius) ? ", " : "",
                                    std::isfinite(celsius) ? fmt::format("{:.0f} C", celsius) : ""));
    if (reasons) parts.push_back("NVML: " + clock_event_reasons_text(reasons));
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::optional<ComponentBreakdown> decoder_breakdown(const nlohmann::json &entry) {
    const nlohmann::json &d = json_member(entry, "decoder");
    const nlohmann::json &components = json_member(d, "components");
    if (!components.is_array() || components.empty()) return std::nullopt;
    ComponentBreakdown out;
    out.parent = "step";
    double top = -1;
    for (const auto &c : components) {
        if (!c.is_object()) continue;
        const std::string name = c.value("component", "");
        const double share = c.value("share", 0.0);
        out.shares.emplace_back(name, share);
        if (share > top) {
            top = share;
            out.dominant = name;
        }
    }
    out.other = d.value("components_unscoped_share", 0.0);
    return out;
}

EntryFacts entry_facts(const nlohmann::json &entry) {
    EntryFacts f;
    f.op = entry.value("op", "");
    f.variant = entry.value("variant", "");
    f.backend = entry.value("backend", "");
    f.dtype = entry.value("dtype", std::string("f32"));
    f.flops = entry.value("flops", 0.0);
    f.bytes = entry.value("bytes", 0.0);
    const nlohmann::json &mem = json_member(entry, "memory");
    f.allocs_per_call = mem.is_object() ? mem.value("allocs_per_call", 0.0) : 0.0;
    f.alloc_bytes_per_call = mem.is_object() ? mem.value("alloc_bytes_per_call", 0.0) : 0.0;
    if (const nlohmann::json &cause = json_member(json_member(entry, "roofline"), "above_roof_cause"); cause.is_string())
        f.above_roof_cause = cause.get<std::string>();
    const nlohmann::json &stats = json_member(entry, "stats");
    if (stats.is_object() && stats.contains("device_time_per_call") && stats["device_time_per_call"].is_number())
        f.device_seconds = stats["device_time_per_call"].get<double>();
    if (stats.is_object() && stats.contains("host_time_per_call") && stats["host_time_per_call"].is_number())
        f.host_seconds = stats["host_time_per_call"].get<double>();
    if (stats.is_object() && stats.contains("wall_time_per_call") && stats["wall_time_per_call"].is_number())
        f.wall_seconds = stats["wall_time_per_call"].get<double>();
    const nlohmann::json &settings = json_member(entry, "settings");
    f.case_threads = settings.is_object() ? settings.value("threads", 0) : 0;
    f.cold_cache = json_member(settings, "cache") == "cold";
    return f;
}

EntryFigures figures_from_entry(const nlohmann::json &entry, const nlohmann::json &ctx, double seconds) {
    return entry_figures(entry_facts(entry), run_facts(ctx), seconds);
}

namespace {

// Measured repetition entries grouped by case x backend, in the set's order
// (J: nlohmann::json or const nlohmann::json).
template <class J>
std::vector<std::pair<std::string, std::vector<J *>>> measured_groups(J &set) {
    std::vector<std::pair<std::string, std::vector<J *>>> groups;
    std::map<std::string, std::size_t> index;
    for (auto &e : set["benchmarks"]) {
        if (!e.is_object() || e.value("run_type", "iteration") == "aggregate") continue;
        if (e.value("error_occurred", false) || e.value("status", "passed") != "passed") continue;
        const std::string name = entry_name_of(e.value("run_name", e.value("name", "")));
        auto [it, inserted] = index.emplace(name, groups.size());
        if (inserted) groups.push_back({name, {}});
        groups[it->second].second.push_back(&e);
    }
    return groups;
}

} // namespace

void add_bottlenecks(nlohmann::json &set) {
    if (!set.is_object() || !set.contains("benchmarks") || !set["benchmarks"].is_array()) return;
    const RunFacts run = run_facts(json_member(json_member(set, "context"), "opbench"));
    for (auto &[name, entries] : measured_groups(set)) {
        std::vector<const nlohmann::json *> view(entries.begin(), entries.end());
        const EntrySummary summary = summarize_entry_json(view, json_member(set, "context"));
        const auto verdict = entry_bottleneck(summary, entry_facts(*entries.front()), run);
        if (!verdict) continue;
        for (auto *e : entries) (*e)["bottleneck"] = to_json(*verdict);
    }
}

std::vector<AnalyzedEntry> analyse_result_set(const nlohmann::json &set, const std::string &source) {
    if (!set.is_object() || !set.contains("benchmarks") || !set["benchmarks"].is_array())
        throw AnalyzeError(fmt::format("{}: not a result set: no \"benchmarks\" array (expected the JSON "
                                       "`opbench run` writes)",
                                       source));
    const RunFacts run = run_facts(json_member(json_member(set, "context"), "opbench"));
    std::vector<AnalyzedEntry> out;
    for (const auto &[name, entries] : measured_groups(set)) {
        const EntrySummary summary = summarize_entry_json(entries, json_member(set, "context"));
        if (!std::isfinite(summary.median_s)) continue;
        const nlohmann::json &first = *entries.front();
        AnalyzedEntry a;
        a.name = name;
        a.op = first.value("op", "");
        a.backend = first.value("backend", "");
        a.seconds = summary.median_s;
        a.summary = summary;
        const nlohmann::json &given = json_member(first, "bottleneck");
        if (says_nothing_of_kernel(summary.quality)) {
            a.bottleneck = disturbed_verdict(summary); // whatever the run wrote: no kernel diagnosis
        } else if (given.is_object() && given.contains("kind")) {
            a.from_run = true;
            a.bottleneck.kind = given.value("kind", "unknown");
            a.bottleneck.severity = given.value("severity", "none");
            a.bottleneck.utilisation = given.value("utilisation", 0.0);
            a.bottleneck.headroom = given.value("headroom", 1.0 - a.bottleneck.utilisation);
            a.bottleneck.description = given.value("description", "");
            a.bottleneck.suggestion = given.value("suggestion", "");
        } else {
            a.bottleneck = *entry_bottleneck(summary, entry_facts(first), run); // the run's rules, on what the set holds
        }
        a.layer = decoder_breakdown(first);
        a.device = device_text(entries);
        const auto components = variant_components(a.op, first.value("variant", ""));
        a.timeline = timeline_finding(first);
        // On a GPU the host's scopes time launches: the device's time wins where kernels are known.
        a.components = device_component_breakdown(first, components);
        for (const auto *e : entries)
            if (!a.components && e->contains("profile")) {
                a.components = component_breakdown((*e)["profile"], components);
                if (a.components) break;
            }
        out.push_back(std::move(a));
    }
    // Diagnoses by impact; disturbed entries after them all (their impact is
    // not the kernel's).
    std::stable_sort(out.begin(), out.end(), [](const AnalyzedEntry &x, const AnalyzedEntry &y) {
        const bool xd = says_nothing_of_kernel(x.summary.quality), yd = says_nothing_of_kernel(y.summary.quality);
        if (xd != yd) return yd;
        return x.bottleneck.impact(x.seconds) > y.bottleneck.impact(y.seconds);
    });
    return out;
}

namespace {

std::string timeline_text(const TimelineFinding &t) {
    const std::string figures =
        fmt::format("{:g} kernels per call over {} of device time, gaps {:.0f}% ({} per call, the longest {})",
                    t.kernels_per_call, format_seconds(t.device_seconds), 100.0 * t.gap_share,
                    format_seconds(t.gap_seconds), format_seconds(t.max_gap_seconds));
    return t.gap_bound ? figures + "; " + gap_bound_text(t.kernels_per_call, t.gap_share, t.gap_seconds) : figures;
}

// A breakdown's detail line: the device time's (kernel timeline) or the host scopes'.
std::string components_text(const ComponentBreakdown &c) {
    std::string parts;
    for (const auto &[name, share] : c.shares) parts += fmt::format("{} {:.1f}%, ", name, 100.0 * share);
    if (c.device_time)
        return fmt::format("{}gaps or unscoped {:.1f}% (of the device time per call, {}, from the kernel "
                           "timeline); dominant: {}",
                           parts, 100.0 * c.other, format_seconds(c.parent_total_s), c.dominant);
    return fmt::format("{}{} self {:.1f}% (of {} {}); dominant: {}", parts, c.parent.substr(c.parent.rfind('/') + 1),
                       100.0 * c.other, c.parent, format_seconds(c.parent_total_s), c.dominant);
}

// The ranking's note naming the gap-bound entries by rank.
std::string gap_bound_note(const std::vector<AnalyzedEntry> &entries, std::size_t limit) {
    std::vector<std::string> ranks;
    for (std::size_t i = 0; i < entries.size() && i < limit; ++i)
        if (entries[i].timeline && entries[i].timeline->gap_bound) ranks.push_back("#" + std::to_string(i + 1));
    if (ranks.empty()) return "";
    return fmt::format("gap-bound (kernel timeline: the device idles more than {:.0f}% of a call's device time "
                       "between its kernels): {}; fuse, or use CUDA graphs",
                       100.0 * kGapBoundShare, fmt::join(ranks, ", "));
}

} // namespace

std::vector<Table> analysis_tables(const std::vector<AnalyzedEntry> &entries, std::size_t limit, bool wide) {
    Table rank;
    rank.title = "Bottlenecks, largest (time per call x headroom) first";
    // The default table fits 100 columns: the backend in its own column,
    // short headers, no severity (the utilisation says it).
    rank.columns = wide ? std::vector<std::string>{"#", "case x backend", "kind", "severity", "utilisation",
                                                   "time/call", "could save", "quality"}
                        : std::vector<std::string>{"#", "case", "backend", "kind", "util.", "time", "to save",
                                                   "quality"};
    std::vector<std::string> names;
    for (std::size_t i = 0; i < entries.size() && i < limit; ++i) {
        std::string name = entries[i].name;
        if (const auto at = name.find("/be:" + entries[i].backend); at != std::string::npos)
            name.erase(at, 4 + entries[i].backend.size());
        names.push_back(name);
    }
    const SharedSegments shown = split_shared_segments(names);
    if (!wide && !shown.shared.empty())
        rank.title = title_with_header(rank.title, {fmt::format("every entry: {}", fmt::join(shown.shared, " "))});
    for (std::size_t i = 0; i < entries.size() && i < limit; ++i) {
        const auto &a = entries[i];
        const bool disturbed = says_nothing_of_kernel(a.summary.quality);
        const std::string util = disturbed ? "-" : fmt::format("{:.0f}%", 100.0 * a.bottleneck.utilisation);
        const std::string save = disturbed ? "-" : format_seconds(a.bottleneck.impact(a.seconds));
        if (wide)
            rank.rows.push_back({std::to_string(i + 1), a.name, a.bottleneck.kind, a.bottleneck.severity, util,
                                 format_seconds(a.seconds), save, std::string(a.summary.flag())});
        else
            rank.rows.push_back({std::to_string(i + 1), shown.rows[i], a.backend, a.bottleneck.kind, util,
                                 format_seconds(a.seconds), save, std::string(a.summary.flag())});
    }
    if (!wide) {
        add_legend(rank, shown);
        fit_column(rank, 1); // the case: a long one (rope's) may rank among the first
    }
    if (entries.size() > limit)
        rank.notes.push_back(fmt::format("{} more not shown (--top N shows more)", entries.size() - limit));
    rank.notes.push_back(std::string(wide ? "utilisation" : "util.") + ": of the roof the case is bound by (memory/compute), or the share of the "
                         "call doing the op's own work (overhead, allocation churn), or the device's busy "
                         "share (sync); docs/bottlenecks.md");
    if (const std::string gaps = gap_bound_note(entries, limit); !gaps.empty()) rank.notes.push_back(gaps);
    rank.notes.push_back("quality: clean, noisy (less precise than the noise target asked) or disturbed (the "
                         "times show interference: no kernel diagnosis, the remedy instead); docs/measurement.md");

    Table detail;
    detail.title = "Details";
    detail.columns = {"#", "field", "text"};
    for (std::size_t i = 0; i < entries.size() && i < limit; ++i) {
        const auto &a = entries[i];
        const std::string n = std::to_string(i + 1);
        detail.rows.push_back(
            {n, "verdict",
             fmt::format("{} ({}): {}", a.bottleneck.kind, a.bottleneck.severity, a.bottleneck.description)});
        detail.rows.push_back({n, "suggestion", a.bottleneck.suggestion});
        if (!a.device.empty()) detail.rows.push_back({n, "device", a.device});
        if (a.summary.quality == Quality::noisy)
            detail.rows.push_back({n, "quality", a.summary.verdict()});
        if (a.layer) {
            std::string parts;
            for (const auto &[name, share] : a.layer->shares) parts += fmt::format("{} {:.1f}%, ", name, 100.0 * share);
            detail.rows.push_back({n, "layer",
                                   fmt::format("{}unscoped {:.1f}% (of the steps' time); dominant: {}", parts,
                                               100.0 * a.layer->other, a.layer->dominant)});
        }
        if (a.timeline) detail.rows.push_back({n, "timeline", timeline_text(*a.timeline)});
        if (a.components) detail.rows.push_back({n, "components", components_text(*a.components)});
    }
    return {rank, detail};
}

namespace {

nlohmann::json breakdown_json(const ComponentBreakdown &c) {
    nlohmann::json shares = nlohmann::json::array();
    for (const auto &[name, share] : c.shares) shares.push_back({{"component", name}, {"share", share}});
    return {{"parent", c.parent},
            {"parent_total_seconds", c.parent_total_s},
            {"shares", shares},
            {"other", c.other},
            {"dominant", c.dominant},
            {"device_time", c.device_time}};
}

nlohmann::json entry_json(const AnalyzedEntry &a, std::size_t rank) {
    const Bottleneck &b = a.bottleneck;
    nlohmann::json j = {{"rank", rank},
                        {"name", a.name},
                        {"op", a.op},
                        {"backend", a.backend},
                        {"seconds_per_call", a.seconds},
                        {"could_save_seconds", b.impact(a.seconds)},
                        {"verdict_from", a.from_run ? "run" : "analyze"},
                        {"bottleneck",
                         {{"kind", b.kind},
                          {"severity", b.severity},
                          {"utilisation", b.utilisation},
                          {"headroom", b.headroom},
                          {"description", b.description},
                          {"suggestion", b.suggestion}}}};
    if (a.components) j["components"] = breakdown_json(*a.components);
    if (a.layer) j["layer"] = breakdown_json(*a.layer);
    if (a.timeline)
        j["kernel_timeline"] = {{"kernels_per_call", a.timeline->kernels_per_call},
                                {"device_seconds_per_call", a.timeline->device_seconds},
                                {"gap_seconds_per_call", a.timeline->gap_seconds},
                                {"gap_share", a.timeline->gap_share},
                                {"max_gap_seconds", a.timeline->max_gap_seconds},
                                {"gap_bound", a.timeline->gap_bound}};
    return j;
}

// `text` after a 16-column label, wrapped at spaces to `width` columns
// (unwrapped when width is 0).
std::string wrapped_field(const std::string &label, const std::string &text, std::size_t width) {
    // The label's 16 columns, then the text; its later lines under the text.
    const std::string head = fmt::format("    {:<11} ", label + ":");
    if (width == 0) return head + text + "\n";
    const std::string body = wrap_words(text, 16, 16, width);
    return body.empty() ? head + "\n" : head + body.substr(16);
}
} // namespace

Document analysis_document(const std::vector<AnalyzedEntry> &entries, std::size_t limit, const std::string &source,
                           bool wide) {
    Document doc;
    doc.data = {{"result_set", source}, {"measured", entries.size()}, {"entries", nlohmann::json::array()}};
    for (std::size_t i = 0; i < entries.size() && i < limit; ++i)
        doc.data["entries"].push_back(entry_json(entries[i], i + 1));
    if (entries.empty()) {
        Table none;
        none.title = "Bottlenecks";
        none.notes.push_back(fmt::format("{}: no measured case (every entry failed or was skipped)", source));
        doc.tables.push_back(std::move(none));
        return doc;
    }
    doc.tables = analysis_tables(entries, limit, wide);
    return doc;
}

Document analyze_file(const std::string &path, std::size_t limit, bool wide) {
    // The readers' one way in: size cap, directories refused, JSON and
    // schema checked (result_set_reader.hpp).
    // parse_result_set: what every other reader refuses (no context.opbench,
    // another schema version, an entry without op or backend), analyze
    // refuses with the same message (issue 44).
    nlohmann::json set;
    try {
        set = parse_result_set(read_reader_input(path), path).raw;
    } catch (const ResultSetError &e) {
        throw AnalyzeError(e.what());
    }
    return analysis_document(analyse_result_set(set, path), limit, path, wide);
}

// The console form: the ranked table, then each entry's details as text
// wrapped to the terminal (the cells are too long for columns).
std::string console_analysis(const Document &doc, const std::string &path, bool wide) {
    if (doc.data.value("measured", 0) == 0) return fmt::format("{}: no measured case (every entry failed or was skipped)\n", path);
    std::string out = render_text_table(doc.tables[0]) + "\n";
    // Each entry's details are headed by its name as its row shows it.
    const auto &rank_rows = doc.tables[0].rows;
    std::string current;
    for (const auto &row : doc.tables[1].rows) {
        if (row[0] != current) {
            current = row[0];
            const std::size_t i = std::stoul(current) - 1;
            const nlohmann::json &e = doc.data["entries"][i];
            out += fmt::format("#{} {}\n", current,
                               wide || i >= rank_rows.size()
                                   ? e.value("name", "")
                                   : rank_rows[i][1] + " [" + e.value("backend", "") + "]");
        }
        out += wrapped_field(row[1], row[2], wide ? 0 : kConsoleColumns);
    }
    return out;
}

int cmd_analyze(const std::string &path, std::size_t limit, std::ostream &out, std::ostream &err,
                std::string_view format, bool wide) {
    const Writer *writer = find_writer(format);
    if (!writer) {
        err << fmt::format("opbench analyze: --format {}: unknown (choose: {})\n", format, writer_names());
        return 2;
    }
    try {
        // Fitted tables are for a terminal; the file formats keep every column.
        const Document doc = analyze_file(path, limit, wide || format != "console");
        out << (format == "console" ? console_analysis(doc, path, wide) : writer->write(doc));
    } catch (const AnalyzeError &e) {
        err << "opbench analyze: " << e.what() << "\n";
        return 2;
    } catch (const std::invalid_argument &e) { // a format this document has nothing for (chrome-trace)
        err << "opbench analyze: " << e.what() << "\n";
        return 2;
    }
    return 0;
}

} // namespace opbench
