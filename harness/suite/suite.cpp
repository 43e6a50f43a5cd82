// Suite loading: TOML (read with TOML++) -> validated, fully expanded cases.
// The schema, key by key, is documented in suites/README.md; keep the two in step.
#include "suite/suite.hpp"

#include "suite/toml_guard.hpp"
#include "suite/toml_reader.hpp"

#include "plugin/plugin_spec.hpp"

#include "opbench/ops.hpp"
#include "suite/workload_schema.hpp"

#include <openssl/evp.h>
#include <toml++/toml.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <utility>

namespace opbench {

std::string SourceLocation::str() const {
    // Errors about the file as a whole (unreadable) have no position.
    if (line <= 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

SuiteError::SuiteError(SourceLocation where, const std::string &message)
    : std::runtime_error(where.str() + ": " + message), where_(std::move(where)), message_(message) {}

namespace {

// The dtypes a suite may give an op: every op dtype but u8 (an activation
// type only). f8e4m3: FP8, ABI 1.5. Their names are ops.hpp's.
constexpr std::int64_t kSuiteDtypeValues[] = {OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_F16, OPB_DTYPE_S8,
                                              OPB_DTYPE_F8_E4M3};
constexpr auto kSuiteDtypeNames = [] {
    std::array<std::string_view, std::size(kSuiteDtypeValues)> names{};
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = kDtypeNames[kSuiteDtypeValues[i]];
    return names;
}();

// A sweep may not expand past this, per [[case]] and for the whole suite:
// beyond it a typo (an extra list) is far likelier than intent.
constexpr std::int64_t kMaxCases = 100000;

// Suites are hand-written; a file beyond this is a mistake (a log, a device).
constexpr std::uintmax_t kMaxSuiteBytes = 16u << 20;

// What a key's values must be.
enum class Kind {
    Dim,      // integer > 0
    Flag,     // boolean
    Scale,    // finite number; 0 = the op's default
    PosReal,  // number > 0 (eps, min_time, max_time, noise)
    Count,    // integer >= 0 (warmup, threads)
    PosCount, // integer >= 1 (min_samples, repetitions)
    Dtype,    // "f32" | "bf16" | "f16"
    Variant,  // one of the op's variant names
    Setting,  // a measurement setting: type and range from its row in settings.hpp
    Choice,   // one of an op parameter's names (ParamInfo::choices)
};

struct AxisKey {
    std::string_view name;
    Kind kind;
    const SettingInfo *setting = nullptr; // Kind::Setting only
    const ParamInfo *param = nullptr;     // Kind::Choice only
};

// Keys besides the op's own parameters that can be a sweep axis, in sweep
// order: they vary faster than every op parameter (whose order is
// kParamSweepOrder in the SDK), and an earlier key varies more slowly than a
// later one (suites/README.md, "Expansion order"). The measurement settings
// come last, in the settings table's sweep order.
const std::vector<AxisKey> &axis_keys() {
    static const std::vector<AxisKey> keys = [] {
        std::vector<AxisKey> k = {{"variant", Kind::Variant}, {"dtype", Kind::Dtype}};
        for (const SettingInfo *s : settings_in_sweep_order()) k.push_back({s->key, Kind::Setting, s});
        return k;
    }();
    return keys;
}
// The measurement keys, in the table's order (for "valid: ..." lists).
std::vector<std::string_view> setting_keys() {
    std::vector<std::string_view> keys;
    for (const SettingInfo &s : measurement_settings()) keys.push_back(s.key);
    return keys;
}


// How the suite checks values of an op parameter of kind `k`.
Kind param_kind(ParamKind k) {
    switch (k) {
    case ParamKind::Dim: return Kind::Dim;
    case ParamKind::Flag: return Kind::Flag;
    case ParamKind::Scale: return Kind::Scale;
    case ParamKind::PosReal: return Kind::PosReal;
    case ParamKind::Choice: return Kind::Choice;
    }
    return Kind::Dim;
}

// Shape keys each op accepts: its row's parameters, in the order the README lists them.
std::vector<std::string_view> shape_keys(int op) {
    std::vector<std::string_view> keys;
    if (const OpInfo *row = op_info(op))
        for (const auto &p : row->params) keys.push_back(p.key);
    return keys;
}

// The op's parameters in sweep order (kParamSweepOrder, then any key it lacks).
std::vector<const ParamInfo *> params_in_sweep_order(const OpInfo &row) {
    std::vector<const ParamInfo *> out;
    for (auto key : kParamSweepOrder)
        if (auto p = param_info(row, key)) out.push_back(p);
    for (const auto &p : row.params)
        if (!contains(kParamSweepOrder, std::string_view(p.key))) out.push_back(&p);
    return out;
}

// Keys a [[case]] table (row = false) or a row of its `shapes` (row = true) accepts.
std::vector<std::string_view> case_keys(int op, bool row) {
    std::vector<std::string_view> keys;
    if (!row) keys.insert(keys.end(), {"op", "shapes"});
    keys.push_back("name");
    auto shape = shape_keys(op);
    keys.insert(keys.end(), shape.begin(), shape.end());
    keys.insert(keys.end(), {"dtype", "variant", "backends"});
    const auto settings = setting_keys();
    keys.insert(keys.end(), settings.begin(), settings.end());
    return keys;
}

std::vector<std::string_view> defaults_keys() {
    std::vector<std::string_view> keys = {"backends", "dtypes", "plugins"};
    const auto settings = setting_keys();
    keys.insert(keys.end(), settings.begin(), settings.end());
    return keys;
}



// One value of a (possibly swept) key, checked and converted.
struct Atom {
    std::int64_t i = 0; // integers; enum index for dtype/variant/cache
    double f = 0.0;     // numbers
    bool b = false;     // flags
    std::string shown;  // canonical text, for messages and duplicate detection
    SourceLocation where;
};

// A key's value as written, and where its key was written.
struct Binding {
    const toml::node *node = nullptr;
    SourceLocation key_where;
};
using Bindings = std::map<std::string, Binding, std::less<>>;

struct Axis {
    std::string_view key;
    std::vector<Atom> values;
};

class SuiteParser : TomlReader {
public:
    SuiteParser(std::string file, SuiteOptions options)
        : TomlReader(file), file_(std::move(file)), options_(std::move(options)) {}

    Suite parse(std::string_view text);

private:
    std::string file_;
    SuiteOptions options_; // its known backends grow by the suite's own plugin builds
    Bindings defaults_;
    std::int64_t total_ = 0;

    std::vector<PluginVariantSpec> plugin_builds(const toml::table &defaults);
    void setting_atom(const SettingInfo &info, const toml::node &n, const std::string &key, Atom &a) const;
    Atom atom(const AxisKey &key, const toml::node &n, int op) const;
    std::vector<Atom> atoms(const AxisKey &key, const toml::node &n, int op) const;
    std::vector<std::string> backends(const toml::node &n) const { return TomlReader::backends(n, options_.known_backends); }

    void parse_defaults(const toml::table &t);
    void parse_case(const toml::table &t, std::vector<Case> &out);
    void check_op_keys(int op, const Bindings &b, const SourceLocation &where) const;
    std::vector<Axis> sweep_axes(int op, const Bindings &b, std::int64_t &case_count, const SourceLocation &case_where);
    Case make_case(int op, const std::string &name, const SourceLocation &where, const std::vector<Axis> &axes,
                   const std::vector<std::size_t> &idx) const;
    void expand(int op, const std::string &name, const Bindings &b, const SourceLocation &where,
                std::int64_t &case_count, const SourceLocation &case_where, std::vector<Case> &out);
};

// A measurement setting's value (TomlReader::setting_value) as an atom.
void SuiteParser::setting_atom(const SettingInfo &info, const toml::node &n, const std::string &key, Atom &a) const {
    a.f = setting_value(info, n, key);
    a.i = static_cast<std::int64_t>(a.f);
    a.shown = value_text(info, a.f);
}

Atom SuiteParser::atom(const AxisKey &axis, const toml::node &n, int op) const {
    const std::string_view key = axis.name;
    const Kind kind = axis.kind;
    const std::string k(key);
    Atom a;
    a.where = at(n);
    switch (kind) {
    case Kind::Dim:
        a.i = integer_value(n, k);
        if (a.i <= 0) fail(a.where, "'" + k + "' must be > 0, got " + std::to_string(a.i));
        a.shown = std::to_string(a.i);
        break;
    case Kind::Count:
    case Kind::PosCount: {
        a.i = integer_in(n, k, kind == Kind::Count ? 0 : 1, INT_MAX);
        a.shown = std::to_string(a.i);
        break;
    }
    case Kind::Flag:
        a.b = boolean_value(n, k);
        a.shown = a.b ? "true" : "false";
        break;
    case Kind::Scale:
        a.f = number_value(n, k);
        a.shown = format_double(a.f);
        break;
    case Kind::PosReal:
        a.f = number_value(n, k);
        if (!(a.f > 0.0)) fail(a.where, "'" + k + "' must be > 0, got " + format_double(a.f));
        a.shown = format_double(a.f);
        break;
    case Kind::Dtype:
        // u8 is an activation type only (ops.hpp dtype_error): not offered here.
        a.i = kSuiteDtypeValues[std::size_t(index_of_name(n, key, std::span(kSuiteDtypeNames), "dtype"))];
        a.shown = dtype_name(static_cast<int>(a.i));
        break;
    case Kind::Variant:
        a.i = index_of_name(n, key, variant_names(op), "variant for op " + std::string(op_name(op)));
        a.shown = variant_name(op, static_cast<int>(a.i));
        break;
    case Kind::Setting: setting_atom(*axis.setting, n, k, a); break;
    case Kind::Choice:
        a.i = index_of_name(n, key, axis.param->choices, "value of '" + k + "'");
        a.shown = axis.param->choices[static_cast<std::size_t>(a.i)];
        break;
    }
    return a;
}

std::vector<Atom> SuiteParser::atoms(const AxisKey &axis, const toml::node &n, int op) const {
    const std::string_view key = axis.name;
    const auto arr = n.as_array();
    if (!arr) return {atom(axis, n, op)};
    if (arr->empty()) fail(at(n), "'" + std::string(key) + "' is an empty list; a sweep axis needs at least one value");
    if (static_cast<std::int64_t>(arr->size()) > kMaxCases)
        fail(at(n), "'" + std::string(key) + "' lists " + std::to_string(arr->size()) +
                        " values; a sweep axis holds at most " + std::to_string(kMaxCases));
    std::vector<Atom> out;
    out.reserve(arr->size());
    std::map<std::string_view, std::size_t> first_at; // shown text -> index in out: O(n log n)
    for (const toml::node &el : *arr) {
        if (el.is_array()) fail(at(el), "'" + std::string(key) + "' holds a nested list; a sweep axis is a flat list");
        out.push_back(atom(axis, el, op));
        const Atom &a = out.back();
        auto [it, inserted] = first_at.emplace(a.shown, out.size() - 1);
        if (!inserted)
            fail(a.where, "'" + std::string(key) + "' lists " + a.shown + " twice (first at " +
                              out[it->second].where.str() + ")");
    }
    return out;
}


// [defaults] plugins = ["onednn@base=old/opbench-backend-onednn.so", ...]:
// backend instances built from plugin files, as --plugin gives them; a
// relative path is from the suite file's directory. Their names join the
// known backends before any `backends` list is checked.
std::vector<PluginVariantSpec> SuiteParser::plugin_builds(const toml::table &defaults) {
    std::vector<PluginVariantSpec> specs;
    const toml::node *n = defaults.get("plugins");
    if (!n) return specs;
    const toml::array *list = n->as_array();
    if (!list)
        fail(at(*n), "'plugins' must be a list of \"NAME@VARIANT=PATH\" strings, got " + describe(*n));
    for (const toml::node &item : *list) {
        PluginVariantSpec spec;
        try {
            spec = parse_plugin_spec(string_value(item, "plugins"));
        } catch (const PluginSpecError &e) {
            std::string why = e.what();
            if (why.rfind("--plugin ", 0) == 0) why = "plugins: " + why.substr(9);
            fail(at(item), why);
        }
        for (const PluginVariantSpec &earlier : specs)
            if (earlier.instance() == spec.instance())
                fail(at(item), "plugins: '" + spec.instance() + "' is given twice; each variant names one file");
        spec.origin = at(item).str() + ": plugins";
        if (std::filesystem::path(spec.path).is_relative())
            spec.path = (std::filesystem::path(file_).parent_path() / spec.path).lexically_normal().string();
        if (!options_.known_backends.empty()) options_.known_backends.push_back(spec.instance());
        specs.push_back(std::move(spec));
    }
    return specs;
}

void SuiteParser::parse_defaults(const toml::table &t) {
    check_keys(t, defaults_keys(), "in [defaults]");
    for (auto &&[k, v] : t) {
        if (k.str() == "plugins") continue; // plugin_builds() read it first
        // [defaults] says `dtypes` (plural); a case says `dtype`. Both feed the dtype axis.
        std::string key = k.str() == "dtypes" ? "dtype" : std::string(k.str());
        // Check now, so a bad default is reported even where every case overrides it.
        if (key == "backends") {
            (void)backends(v);
        } else {
            for (const auto &ak : axis_keys())
                if (ak.name == key) (void)atoms(ak, v, -1);
        }
        defaults_[key] = Binding{&v, at(k.source())};
    }
}

void SuiteParser::parse_case(const toml::table &t, std::vector<Case> &out) {
    const SourceLocation case_where = at(t);
    auto op_node = t.get("op");
    if (!op_node) fail(case_where, "[[case]] has no 'op' (valid ops: " + join(kOpNames) + ")");
    const std::string op_text = string_value(*op_node, "op");
    const auto op_opt = op_from_name(op_text);
    if (!op_opt) fail(at(*op_node), "unknown op '" + op_text + "' (valid: " + join(kOpNames) + ")");
    const int op = *op_opt;
    check_keys(t, case_keys(op, false), "in [[case]] for op " + op_text);

    std::string name;
    if (auto n = t.get("name")) name = name_value(*n, "name");

    // Bindings shared by every row: [defaults], then the case's own keys.
    Bindings base = defaults_;
    for (auto &&[k, v] : t)
        if (k.str() != "op" && k.str() != "name" && k.str() != "shapes")
            base[std::string(k.str())] = Binding{&v, at(k.source())};

    std::int64_t case_count = 0;
    auto shapes = t.get("shapes");
    if (!shapes) {
        expand(op, name, base, case_where, case_count, case_where, out);
        return;
    }
    auto rows = shapes->as_array();
    if (!rows) fail(at(*shapes), "'shapes' must be a list of tables, got " + describe(*shapes));
    if (rows->empty()) fail(at(*shapes), "'shapes' is an empty list; a zipped axis needs at least one row");
    const auto row_keys = case_keys(op, true);
    for (const toml::node &row_node : *rows) {
        auto row = row_node.as_table();
        if (!row)
            fail(at(row_node),
                 "each row of 'shapes' must be a table such as {m = 64, n = 64}, got " + describe(row_node));
        check_keys(*row, row_keys, "in a row of 'shapes' for op " + op_text);
        std::string row_name = name;
        if (auto n = row->get("name")) {
            auto part = name_value(*n, "name");
            row_name = row_name.empty() ? part : row_name + "." + part;
        }
        Bindings b = base; // a row's keys override the case's and the defaults'
        for (auto &&[k, v] : *row)
            if (k.str() != "name") b[std::string(k.str())] = Binding{&v, at(k.source())};
        expand(op, row_name, b, at(row_node), case_count, case_where, out);
    }
}

// The op's required keys are bound, its row's key check passes, and no two
// conflicting keys are both given.
void SuiteParser::check_op_keys(int op, const Bindings &b, const SourceLocation &where) const {
    const std::string op_text(op_name(op));
    auto has = [&](std::string_view key) { return b.find(key) != b.end(); };
    const OpInfo &row = *op_info(op);
    for (const auto &p : row.params)
        if (p.required && !has(p.key))
            fail(where, "op " + op_text + " needs '" + std::string(p.key) +
                            "' (in the [[case]] table or in each row of 'shapes')");
    if (row.check_keys)
        if (auto e = row.check_keys([&](std::string_view key) { return has(key); }); !e.empty()) fail(where, e);
    for (const auto &p : row.params) {
        if (!p.conflicts_with || !has(p.key) || !has(p.conflicts_with)) continue;
        const std::string other(p.conflicts_with);
        fail(b.find(p.key)->second.key_where, "give '" + other + "' or '" + p.key + "', not both (" + other +
                                                  " is set at " + b.find(other)->second.key_where.str() + ")");
    }
}

// The bound keys as sweep axes, in sweep order (the op's parameters, then
// the common axes); counts their product into the case's and the suite's
// totals and refuses either past kMaxCases.
std::vector<Axis> SuiteParser::sweep_axes(int op, const Bindings &b, std::int64_t &case_count,
                                          const SourceLocation &case_where) {
    std::vector<Axis> axes;
    std::int64_t count = 1;
    std::vector<AxisKey> keys;
    for (const ParamInfo *p : params_in_sweep_order(*op_info(op)))
        keys.push_back({p->key, param_kind(p->kind), nullptr, p});
    keys.insert(keys.end(), opbench::axis_keys().begin(), opbench::axis_keys().end());
    for (const auto &ak : keys) {
        auto it = b.find(ak.name);
        if (it == b.end()) continue;
        axes.push_back({ak.name, atoms(ak, *it->second.node, op)});
        // Saturate: only "over the limit" matters, and the product can overflow.
        count = std::min<std::int64_t>(count * static_cast<std::int64_t>(axes.back().values.size()), kMaxCases + 1);
    }
    case_count = std::min(case_count + count, kMaxCases + 1);
    if (case_count > kMaxCases)
        fail(case_where, "this [[case]] expands to more than " + std::to_string(kMaxCases) +
                             " cases; split it or shorten its lists");
    if (total_ + count > kMaxCases)
        fail(case_where, "the suite expands to more than " + std::to_string(kMaxCases) +
                             " cases at this [[case]]; split it into several suites");
    total_ += count;
    return axes;
}

// One case: the axes' values at `idx`, written into its settings and its op
// descriptor, and checked as a whole.
Case SuiteParser::make_case(int op, const std::string &name, const SourceLocation &where, const std::vector<Axis> &axes,
                            const std::vector<std::size_t> &idx) const {
    const std::string op_text(op_name(op));
    const OpInfo &row = *op_info(op);
    auto get = [&](std::string_view key) -> const Atom * {
        for (std::size_t i = 0; i < axes.size(); ++i)
            if (axes[i].key == key) return &axes[i].values[idx[i]];
        return nullptr;
    };
    auto dim = [&](std::string_view key, std::int64_t fallback) {
        auto a = get(key);
        return a ? a->i : fallback;
    };
    Case c;
    c.name = name;
    c.where = where;
    MeasureSettings &s = c.settings;
    for (const SettingInfo &info : measurement_settings())
        if (auto a = get(info.key)) info.set(s, a->f);
    if (auto why = check_settings(s)) {
        const Atom *a = setting_in_conflict(s) == "launch" ? (get("launch") ? get("launch") : get("cache"))
                        : get("max_time")                  ? get("max_time")
                                                           : get("min_time");
        fail(a->where, *why);
    }
    c.desc = make_desc(op, static_cast<int>(dim("dtype", OPB_DTYPE_F32)), static_cast<int>(dim("variant", 0)));
    if (auto e = dtype_error(op, c.desc.dtype); !e.empty()) fail(get("dtype")->where, e);
    c.desc.threads = resolve_threads(s.threads);
    // The row's parameters, in row order: a write may read earlier ones.
    for (const auto &p : row.params) {
        const Atom *a = get(p.key);
        if (!a && !p.has_default) continue;
        ParamValue v;
        if (a)
            v = {a->i, a->f, a->b};
        else
            v = {static_cast<std::int64_t>(p.default_value), p.default_value, p.default_value != 0.0};
        if (auto e = p.write(c.desc, v); !e.empty()) fail(a ? a->where : where, e);
    }
    // float conversion can turn a huge finite scale/eps into inf; ops.hpp has the last word.
    if (auto e = validate_desc(c.desc); !e.empty()) fail(where, "invalid " + op_text + ": " + e);
    for (const auto &t : op_tensors(c.desc)) {
        double elems = 1.0;
        for (auto d : t.shape) elems *= static_cast<double>(d);
        if (elems > 9007199254740992.0) // 2^53: byte counts must stay exact
            fail(where,
                 op_text + " tensor " + t.name + " would hold " + format_double(elems) + " elements, more than 2^53");
    }
    return c;
}

void SuiteParser::expand(int op, const std::string &name, const Bindings &b, const SourceLocation &where,
                         std::int64_t &case_count, const SourceLocation &case_where, std::vector<Case> &out) {
    check_op_keys(op, b, where);
    // A suite that names no backends means the design's three; unbuilt ones are
    // reported as skipped at run time rather than dropped silently here.
    std::vector<std::string> backend_list = {"naive", "onednn", "cuda"};
    if (auto it = b.find("backends"); it != b.end()) backend_list = backends(*it->second.node);

    const std::vector<Axis> axes = sweep_axes(op, b, case_count, case_where);
    std::vector<std::size_t> idx(axes.size(), 0);
    for (;;) {
        Case c = make_case(op, name, where, axes, idx);
        c.backends = backend_list;
        out.push_back(std::move(c));

        // Odometer: the last axis varies fastest.
        std::size_t i = axes.size();
        while (i > 0) {
            --i;
            if (++idx[i] < axes[i].values.size()) break;
            idx[i] = 0;
            if (i == 0) return;
        }
        if (axes.empty()) return;
    }
}

Suite SuiteParser::parse(std::string_view text) {
    toml::table root;
    try {
        root = parse_toml_safely(text, file_); // not toml::parse: TOML++ 3.3.0's undefined behaviour (toml_guard.hpp)
    } catch (const TomlSyntaxError &e) {
        fail({file_, e.line(), e.column()}, std::string("TOML syntax error: ") + e.what());
    }
    const SourceLocation file_start{file_, 1, 1};
    check_keys(root, {"suite", "defaults", "case", "workload"}, "at the top level");

    Suite suite;
    auto meta_node = root.get("suite");
    if (!meta_node) fail(file_start, "missing [suite] table (it needs at least name = \"...\")");
    auto meta = meta_node->as_table();
    if (!meta) fail(at(*meta_node), "'suite' must be a table, got " + describe(*meta_node));
    check_keys(*meta, {"name", "description"}, "in [suite]");
    auto name = meta->get("name");
    if (!name) fail(at(*meta), "[suite] has no 'name'");
    suite.name = name_value(*name, "name");
    if (suite.name.empty()) fail(at(*name), "[suite] 'name' must not be empty");
    if (auto d = meta->get("description")) suite.description = string_value(*d, "description");

    if (auto d = root.get("defaults")) {
        auto t = d->as_table();
        if (!t) fail(at(*d), "'defaults' must be a table, got " + describe(*d));
        suite.plugins = plugin_builds(*t);
        parse_defaults(*t);
    }

    if (auto w = root.get("workload")) {
        std::vector<std::string> workload_warnings;
        workload::parse_workloads(*w, root.get("defaults") ? root.get("defaults")->as_table() : nullptr, file_,
                                  options_, suite.workloads, workload_warnings);
        add_warnings(workload_warnings);
    }
    auto cases = root.get("case");
    if (!cases && !suite.workloads.empty()) {
        suite.warnings = warnings();
        return suite; // a suite of workloads only
    }
    if (!cases) fail(file_start, "the suite has no [[case]] or [[workload]] tables, so nothing to measure");
    auto arr = cases->as_array();
    if (!arr)
        fail(at(*cases), "'case' must be an array of tables (write [[case]], not [case]), got " + describe(*cases));
    if (arr->empty()) fail(at(*cases), "the suite has no cases: 'case' is an empty list");
    for (const toml::node &n : *arr) {
        auto t = n.as_table();
        if (!t) fail(at(n), "each entry of 'case' must be a table, got " + describe(n));
        parse_case(*t, suite.cases);
    }
    suite.warnings = warnings();
    return suite;
}

std::string sha256_hex(std::string_view bytes, const std::string &file) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
        throw SuiteError({file, 0, 0}, "OpenSSL EVP_Digest(SHA-256) failed");
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
        out += hex[md[i] >> 4];
        out += hex[md[i] & 15];
    }
    return out;
}

} // namespace

void add_warning(std::vector<std::string> &warnings, const std::string &warning) {
    if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end()) warnings.push_back(warning);
}

std::vector<PluginVariantSpec> suite_plugin_builds(const std::string &path) {
    if (path.empty()) return {};
    try {
        return load_suite_file(path).plugins; // no known backends: nothing is checked against them
    } catch (const SuiteError &) {
        return {};
    }
}

Suite parse_suite(std::string_view text, const std::string &source_name, const SuiteOptions &options) {
    Suite suite = SuiteParser(source_name, options).parse(text);
    suite.path = source_name;
    suite.content_hash = sha256_hex(text, source_name);
    return suite;
}

Suite load_suite_file(const std::string &path, const SuiteOptions &options) {
    // Only a regular file: a FIFO would block, /dev/zero never ends.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw SuiteError({path, 0, 0}, std::string("cannot open suite file: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        throw SuiteError({path, 0, 0}, S_ISDIR(st.st_mode)
                                           ? "is a directory; give a suite file such as suites/quick.toml"
                                           : "is not a regular file (a device, FIFO or socket); give a suite file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SuiteError({path, 0, 0}, std::string("cannot open suite file: ") + std::strerror(errno));
    // In chunks, stopping past the cap, so a file that grows is caught too.
    std::string text;
    char chunk[1 << 16];
    while (text.size() <= kMaxSuiteBytes && in.read(chunk, sizeof chunk).gcount() > 0)
        text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (in.bad()) throw SuiteError({path, 0, 0}, "error while reading the suite file");
    if (text.size() > kMaxSuiteBytes)
        throw SuiteError({path, 0, 0}, "the suite file is larger than " + std::to_string(kMaxSuiteBytes >> 20) +
                                           " MiB; suites are hand-written TOML (split it into several suites)");
    return parse_suite(text, path, options);
}

} // namespace opbench
