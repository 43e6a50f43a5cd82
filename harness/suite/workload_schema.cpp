#include "suite/workload_schema.hpp"

#include "opbench/ops.hpp"
#include "suite/toml_reader.hpp"

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

// A [[workload]] table's keys, through the suite file's one set of value
// readers (suite/toml_reader.hpp); what is a workload's own is here: one
// value per key (workloads are not swept) and the decoder's shape.
class Parser : public TomlReader {
public:
    Parser(const std::string &file, const SuiteOptions &options) : TomlReader(file), options_(options) {}

    // A single value: workloads are not swept.
    const toml::node &one(std::string_view key, const toml::node &n) const {
        if (n.is_array())
            fail(at(n), fmt::format("'{}' takes one value in a [[workload]] (workloads are not swept: "
                                    "write one [[workload]] table per configuration)",
                                    key));
        return n;
    }
    int64_t integer(std::string_view key, const toml::node &n, int64_t lo) const {
        return integer_in(one(key, n), key, lo, key == "seed" ? INT64_MAX : int64_t(INT_MAX));
    }
    double positive(std::string_view key, const toml::node &n) const {
        const double x = number_value(one(key, n), key);
        if (!(x > 0.0)) fail(at(n), fmt::format("'{}' must be > 0, got {}", key, format_double(x)));
        return x;
    }
    bool flag(std::string_view key, const toml::node &n) const { return boolean_value(one(key, n), key); }
    template <class Range>
    int choice(std::string_view key, const toml::node &n, const Range &valid) const {
        return int(index_of_name(one(key, n), key, valid, std::string(key)));
    }
    std::vector<std::string> backends(const toml::node &n) const {
        return TomlReader::backends(n, options_.known_backends);
    }
    // A measurement key (the settings table, settings.hpp) into `s`; false
    // when `key` is not one.
    bool setting(std::string_view key, const toml::node &n, MeasureSettings &s) const {
        const SettingInfo *info = find_setting(key);
        if (!info) return false;
        info->set(s, setting_value(*info, one(key, n), key));
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
    void refuse_unknown_keys(const toml::table &t) const { check_keys(t, valid_keys(), "in [[workload]]"); }

    std::string name_of(const toml::table &t, const SourceLocation &where) const {
        auto name = t.get("name");
        if (!name) fail(where, "[[workload]] has no 'name' (it names the result entries, e.g. \"gpt2-small.layer\")");
        std::string text = name_value(*name, "name");
        if (text.empty()) fail(at(*name), "'name' must be a non-empty string");
        return text;
    }

    // The 'model' preset, applied to `c`; nullptr when the table names none.
    const ModelPreset *model_preset(const toml::table &t, DecoderConfig &c) const {
        auto m = t.get("model");
        if (!m) return nullptr;
        const std::string s = string_value(one("model", *m), "model");
        const ModelPreset *preset = find_model_preset(s);
        if (!preset) fail(at(*m), fmt::format("unknown model '{}' (valid: {})", s, model_preset_names()));
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
            c.dtype = kDecoderDtypes[choice(key, v, kDecoderDtypeNames)]; // s8, f8e4m3: int8, FP8 layers
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

    const SuiteOptions &options_;
};

} // namespace

void parse_workloads(const toml::node &workload_array, const toml::table *defaults, const std::string &file,
                     const SuiteOptions &options, std::vector<WorkloadCase> &out, std::vector<std::string> &warnings) {
    Parser p(file, options);
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
    for (const auto &w : p.warnings()) add_warning(warnings, w);
}

} // namespace opbench::workload
