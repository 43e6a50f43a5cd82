#include "workload/workload_suite.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <string_view>

namespace opbench::workload {
namespace {

constexpr std::string_view kDecoderKeys[] = {
    "kind",       "name",      "model",    "hidden", "heads", "kv_heads", "head_dim", "ffn",      "layers",
    "batch",      "prompt",    "generate", "norm",   "mlp",   "gelu",     "bias",     "qkv_bias", "rope",
    "rope_theta", "attention", "dtype",    "eps",    "seed",  "phases",   "backends"};

// The decoder's keys, then every measurement key (settings table).
std::vector<std::string_view> valid_keys() {
    std::vector<std::string_view> keys(std::begin(kDecoderKeys), std::end(kDecoderKeys));
    for (const SettingInfo &s : measurement_settings()) keys.push_back(s.key);
    return keys;
}
constexpr std::string_view kKinds[] = {"decoder"};
constexpr std::string_view kPhaseNames[] = {"prefill", "decode"};
constexpr std::string_view kGeluNames[] = {"erf", "tanh"}; // index = OPB_GELU_* constant
constexpr std::string_view kAttentionNames[] = {"composed", "fused"};

template <class Range>
std::string join(const Range &names) {
    std::string out;
    for (const auto &n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

class Parser {
public:
    Parser(const std::string &file, const SuiteOptions &options, std::vector<std::string> &warnings)
        : file_(file), options_(options), warnings_(warnings) {}

    SourceLocation at(const toml::node &n) const { return at(n.source()); }
    SourceLocation at(const toml::source_region &r) const { return {file_, int(r.begin.line), int(r.begin.column)}; }
    [[noreturn]] void fail(const SourceLocation &where, const std::string &message) const {
        throw SuiteError(where, message);
    }

    // A single value: workloads are not swept.
    const toml::node &one(std::string_view key, const toml::node &n) const {
        if (n.is_array())
            fail(at(n), fmt::format("'{}' takes one value in a [[workload]] (workloads are not swept: "
                                    "write one [[workload]] table per configuration)",
                                    key));
        return n;
    }
    int64_t integer(std::string_view key, const toml::node &n, int64_t lo) const {
        auto i = one(key, n).as_integer();
        if (!i) fail(at(n), fmt::format("'{}' must be an integer", key));
        if (i->get() < lo || i->get() > (key == "seed" ? INT64_MAX : int64_t(INT_MAX)))
            fail(at(n), fmt::format("'{}' must be >= {}, got {}", key, lo, i->get()));
        return i->get();
    }
    double positive(std::string_view key, const toml::node &n) const {
        const toml::node &v = one(key, n);
        double x;
        if (auto i = v.as_integer())
            x = double(i->get());
        else if (auto f = v.as_floating_point())
            x = f->get();
        else
            fail(at(n), fmt::format("'{}' must be a number", key));
        if (!(x > 0.0) || !std::isfinite(x)) fail(at(n), fmt::format("'{}' must be a finite number > 0", key));
        return x;
    }
    bool flag(std::string_view key, const toml::node &n) const {
        auto b = one(key, n).as_boolean();
        if (!b) fail(at(n), fmt::format("'{}' must be true or false", key));
        return b->get();
    }
    template <class Range>
    int choice(std::string_view key, const toml::node &n, const Range &valid) const {
        auto s = one(key, n).as_string();
        if (!s) fail(at(n), fmt::format("'{}' must be a string (valid: {})", key, join(valid)));
        int idx = 0;
        for (const auto &v : valid) {
            if (v == s->get()) return idx;
            ++idx;
        }
        fail(at(n), fmt::format("unknown {} '{}' (valid: {})", key, s->get(), join(valid)));
    }
    std::vector<std::string> backends(const toml::node &n) const {
        std::vector<const toml::node *> items;
        if (auto arr = n.as_array()) {
            if (arr->empty()) fail(at(n), "'backends' is an empty list; name at least one backend");
            for (const toml::node &el : *arr) items.push_back(&el);
        } else {
            items.push_back(&n);
        }
        std::vector<std::string> out;
        for (auto item : items) {
            auto s = item->as_string();
            if (!s) fail(at(*item), "'backends' must be a string or a list of strings");
            const std::string name = s->get();
            const auto &known = options_.known_backends;
            if (!known.empty() && std::find(known.begin(), known.end(), name) == known.end())
                fail(at(*item), fmt::format("unknown backend '{}' (valid: {})", name, join(known)));
            if (std::find(out.begin(), out.end(), name) != out.end())
                fail(at(*item), fmt::format("backend '{}' is listed twice", name));
            out.push_back(name);
        }
        return out;
    }
    // A measurement key (the settings table, settings.hpp) into `s`; false
    // when `key` is not one.
    bool setting(std::string_view key, const toml::node &n, MeasureSettings &s) const {
        const SettingInfo *info = find_setting(key);
        if (!info) return false;
        const toml::node &v = one(key, n);
        double x = 0;
        if (info->type == SettingType::cache) {
            auto str = v.as_string();
            auto state = str ? cache_state_from_name(str->get()) : std::nullopt;
            if (!state) fail(at(n), fmt::format("'{}' must be {}", key, range_text(*info)));
            x = double(*state);
        } else if (auto i = v.as_integer()) {
            x = double(i->get());
        } else if (auto f = v.as_floating_point(); f && info->type != SettingType::integer) {
            x = f->get();
        } else {
            fail(at(n), fmt::format("'{}' must be {}", key, range_text(*info)));
        }
        const FlooredValue used = raise_to_floor(*info, x);
        if (!used.warning.empty()) add_warning(warnings_, at(n).str() + ": warning: " + used.warning);
        x = used.value;
        if (auto why = check_setting(*info, x)) fail(at(n), *why);
        info->set(s, x);
        return true;
    }

    WorkloadCase parse(const toml::table &t, const toml::table *defaults) const {
        WorkloadCase w;
        w.where = at(t);
        w.backends = {"naive", "onednn", "cuda"};
        refuse_unknown_keys(t);
        if (auto kind = t.get("kind")) w.kind = std::string(kKinds[choice("kind", *kind, kKinds)]);
        w.name = name_of(t, w.where);
        // [defaults] first (backends and measurement keys), then the table's own.
        if (defaults)
            for (auto &&[k, v] : *defaults) {
                if (k.str() == "backends")
                    w.backends = backends(v);
                else
                    (void)setting(k.str(), v, w.settings);
            }
        // A model preset first: the table's own keys then override it.
        const ModelPreset *preset = model_preset(t, w.decoder);
        bool eps_given = preset != nullptr;
        for (auto &&[k, v] : t) {
            const std::string_view key = k.str();
            if (key == "kind" || key == "name" || key == "phases" || key == "model") continue;
            if (key == "backends")
                w.backends = backends(v);
            else if (!setting(key, v, w.settings))
                eps_given |= decoder_key(key, v, w.decoder);
        }
        check_shape(t, w, preset != nullptr);
        if (!eps_given) w.decoder.eps = w.decoder.norm == NormKind::layernorm ? 1e-5f : 1e-6f; // PyTorch / Llama
        w.decoder.threads = w.settings.threads;
        if (auto why = check_settings(w.settings)) fail(w.where, *why);
        w.phases = phases(t, w.decoder);
        if (auto e = w.decoder.validate(); !e.empty()) fail(w.where, e);
        return w;
    }

private:
    void refuse_unknown_keys(const toml::table &t) const {
        const auto keys = valid_keys();
        for (auto &&[k, v] : t)
            if (std::find(keys.begin(), keys.end(), k.str()) == keys.end())
                fail(at(k.source()), fmt::format("unknown key '{}' in [[workload]] (valid: {})", k.str(), join(keys)));
    }

    std::string name_of(const toml::table &t, const SourceLocation &where) const {
        auto name = t.get("name");
        if (!name) fail(where, "[[workload]] has no 'name' (it names the result entries, e.g. \"gpt2-small.layer\")");
        if (!name->as_string() || name->as_string()->get().empty())
            fail(at(*name), "'name' must be a non-empty string");
        return name->as_string()->get();
    }

    // The 'model' preset, applied to `c`; nullptr when the table names none.
    const ModelPreset *model_preset(const toml::table &t, DecoderConfig &c) const {
        auto m = t.get("model");
        if (!m) return nullptr;
        auto s = one("model", *m).as_string();
        if (!s) fail(at(*m), fmt::format("'model' must be a string (valid: {})", model_preset_names()));
        const ModelPreset *preset = find_model_preset(s->get());
        if (!preset) fail(at(*m), fmt::format("unknown model '{}' (valid: {})", s->get(), model_preset_names()));
        apply_model_preset(*preset, c);
        return preset;
    }

    // One key of the decoder's shape into `c`; returns whether it was 'eps'.
    bool decoder_key(std::string_view key, const toml::node &v, DecoderConfig &c) const {
        if (key == "hidden")
            c.hidden = integer(key, v, 1);
        else if (key == "heads")
            c.heads = integer(key, v, 1);
        else if (key == "kv_heads")
            c.kv_heads = integer(key, v, 1);
        else if (key == "head_dim")
            c.head_size = integer(key, v, 1);
        else if (key == "qkv_bias")
            c.qkv_bias = flag(key, v);
        else if (key == "rope")
            c.rope = flag(key, v);
        else if (key == "rope_theta")
            c.rope_theta = float(positive(key, v));
        else if (key == "ffn")
            c.ffn = integer(key, v, 1);
        else if (key == "layers")
            c.layers = integer(key, v, 1);
        else if (key == "batch")
            c.batch = integer(key, v, 1);
        else if (key == "prompt")
            c.prompt = integer(key, v, 1);
        else if (key == "generate")
            c.generate = integer(key, v, 0);
        else if (key == "norm")
            c.norm = NormKind(choice(key, v, kNormNames));
        else if (key == "mlp")
            c.mlp = MlpKind(choice(key, v, kMlpNames));
        else if (key == "gelu")
            c.gelu_variant = choice(key, v, kGeluNames);
        else if (key == "bias")
            c.bias = flag(key, v);
        else if (key == "attention")
            c.attention_variant = choice(key, v, kAttentionNames);
        else if (key == "dtype")
            c.dtype = choice(key, v, std::span(kDtypeNames, OPB_DTYPE_S8 + 1)); // f32, bf16, f16, s8 (int8 layers)
        else if (key == "eps") {
            c.eps = float(positive(key, v));
            return true;
        } else if (key == "seed")
            c.seed = uint64_t(integer(key, v, 0));
        return false;
    }

    // The keys the shape needs, and the head counts that divide.
    void check_shape(const toml::table &t, const WorkloadCase &w, bool has_preset) const {
        const DecoderConfig &c = w.decoder;
        for (auto key : {"hidden", "heads", "prompt"})
            if (!t.get(key) && !(has_preset && std::string_view(key) != "prompt"))
                fail(w.where, fmt::format("[[workload]] '{}' needs '{}'{}", w.name, key,
                                          std::string_view(key) == "prompt" ? "" : " (or a 'model')"));
        if (c.head_size == 0 && c.hidden % c.heads != 0) {
            const toml::node *n = t.get("hidden") ? t.get("hidden") : t.get("heads");
            fail(n ? at(*n) : w.where, fmt::format("'hidden' {} is not divisible by 'heads' {} "
                                                   "(head_dim = hidden / heads; or give 'head_dim')",
                                                   c.hidden, c.heads));
        }
        if (c.heads % c.kv_head_count() != 0) {
            const toml::node *n = t.get("kv_heads") ? t.get("kv_heads") : t.get("heads");
            fail(n ? at(*n) : w.where,
                 fmt::format("'heads' {} is not a multiple of 'kv_heads' {} (each K/V head serves heads / kv_heads "
                             "query heads; valid kv_heads divide heads)",
                             c.heads, c.kv_head_count()));
        }
    }

    // 'phases', or by default prefill, and decode when tokens are generated.
    std::vector<WorkloadCase::Phase> phases(const toml::table &t, const DecoderConfig &c) const {
        std::vector<WorkloadCase::Phase> out;
        auto p = t.get("phases");
        if (!p) {
            out.push_back(WorkloadCase::Phase::prefill);
            if (c.generate > 0) out.push_back(WorkloadCase::Phase::decode);
            return out;
        }
        auto arr = p->as_array();
        if (!arr || arr->empty()) fail(at(*p), "'phases' must be a non-empty list of \"prefill\" and/or \"decode\"");
        for (const toml::node &el : *arr) {
            auto phase = WorkloadCase::Phase(choice("phase", el, kPhaseNames));
            if (std::find(out.begin(), out.end(), phase) != out.end()) fail(at(el), "a phase is listed twice");
            if (phase == WorkloadCase::Phase::decode && c.generate == 0)
                fail(at(el), "phase \"decode\" needs 'generate' >= 1 (tokens decoded after the prompt)");
            out.push_back(phase);
        }
        return out;
    }

    const std::string &file_;
    const SuiteOptions &options_;
    std::vector<std::string> &warnings_;
};

} // namespace

void parse_workloads(const toml::node &workload_array, const toml::table *defaults, const std::string &file,
                     const SuiteOptions &options, std::vector<WorkloadCase> &out, std::vector<std::string> &warnings) {
    Parser p(file, options, warnings);
    auto arr = workload_array.as_array();
    if (!arr)
        p.fail(p.at(workload_array), "'workload' must be an array of tables (write [[workload]], not [workload])");
    for (const toml::node &n : *arr) {
        auto t = n.as_table();
        if (!t) p.fail(p.at(n), "each entry of 'workload' must be a table");
        WorkloadCase w = p.parse(*t, defaults);
        // One name may come at several dtypes (its levels: f32, bf16, s8), each
        // its own entries (".../dt:<dtype>/..."), never twice at one dtype.
        for (const auto &prev : out)
            if (prev.name == w.name && prev.decoder.dtype == w.decoder.dtype)
                p.fail(w.where, fmt::format("workload name '{}' is used twice at dtype {} (first at {}); a name may "
                                            "repeat at another dtype only",
                                            w.name, dtype_name(w.decoder.dtype), prev.where.str()));
        out.push_back(std::move(w));
    }
}

} // namespace opbench::workload
