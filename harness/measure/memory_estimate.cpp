#include "measure/memory_estimate.hpp"
#include "writers/units.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace opbench {

namespace {

// a * b, saturating: a shape read from a suite can be absurd, and an estimate
// that wrapped around would let the case through.
uint64_t mul_sat(uint64_t a, uint64_t b) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
    return a * b;
}
uint64_t add_sat(uint64_t a, uint64_t b) {
    return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b;
}

struct TensorBytes {
    uint64_t all = 0, outputs = 0;
};

TensorBytes tensor_bytes(const opb_op_desc &desc) {
    TensorBytes b;
    for (const TensorSpec &t : op_tensors(desc)) {
        uint64_t n = dtype_size(t.dtype);
        for (int64_t d : t.shape) n = mul_sat(n, d > 0 ? uint64_t(d) : 0);
        b.all = add_sat(b.all, n);
        if (t.is_output) b.outputs = add_sat(b.outputs, n);
    }
    return b;
}

// The first unsigned number in the line after `key` in a /proc-style file.
std::optional<uint64_t> read_field(const std::string &path, const std::string &key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        std::istringstream s(line.substr(key.size()));
        uint64_t v = 0;
        if (s >> v) return v;
    }
    return std::nullopt;
}

std::optional<uint64_t> read_number_file(const std::string &path) {
    std::ifstream in(path);
    std::string word;
    if (!(in >> word) || word == "max") return std::nullopt;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc()) return std::nullopt;
    return v;
}

// This process's cgroup (v2) directory, if any.
std::optional<std::string> cgroup_dir() {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
    return std::nullopt;
}

std::string size_text(uint64_t bytes) { return format_bytes(double(bytes)); }

} // namespace

uint64_t MemoryEstimate::total() const { return add_sat(add_sat(tensors, reference), workspace); }

uint64_t workspace_bound(const opb_op_desc &desc) {
    const OpInfo *row = op_info(desc.op);
    if (!row || !row->workspace_bound) return 0;
    const double bytes = row->workspace_bound(desc);
    // Saturates, as the other figures do: an absurd shape is refused, not wrapped.
    if (!(bytes > 0)) return 0;
    return bytes >= 0x1p64 ? std::numeric_limits<uint64_t>::max() : uint64_t(bytes);
}

MemoryEstimate estimate_case_memory(const opb_op_desc &desc, bool reference_runs) {
    const TensorBytes t = tensor_bytes(desc);
    const uint64_t ws = workspace_bound(desc);
    MemoryEstimate e;
    e.tensors = add_sat(add_sat(t.all, t.all), t.outputs);
    e.reference = reference_runs ? add_sat(add_sat(t.all, t.outputs), ws) : 0;
    e.workspace = ws;
    return e;
}

MemoryBudget smallest_memory_limit(const MemoryLimits &limits) {
    MemoryBudget b{std::numeric_limits<uint64_t>::max(), "unknown"};
    if (limits.mem_available) b = {*limits.mem_available, "MemAvailable"};
    if (limits.cgroup_left && *limits.cgroup_left < b.bytes) b = {*limits.cgroup_left, "cgroup memory.max"};
    if (limits.mem_limit && *limits.mem_limit < b.bytes) b = {*limits.mem_limit, "--mem-limit"};
    return b;
}

MemoryBudget available_memory(std::optional<uint64_t> mem_limit) {
    MemoryLimits limits;
    limits.mem_limit = mem_limit;
    if (auto kib = read_field("/proc/meminfo", "MemAvailable:")) limits.mem_available = mul_sat(*kib, 1024);
    if (auto dir = cgroup_dir()) {
        auto max = read_number_file(*dir + "/memory.max");
        auto cur = read_number_file(*dir + "/memory.current");
        if (max && cur) limits.cgroup_left = *max > *cur ? *max - *cur : 0;
    }
    return smallest_memory_limit(limits);
}

std::optional<std::string> memory_skip_reason(const MemoryEstimate &need, const MemoryBudget &have) {
    if (need.total() <= have.bytes) return std::nullopt;
    return fmt::format("needs {}, {} available ({}); estimate: tensors {}, reference {}, workspace {}",
                       size_text(need.total()), size_text(have.bytes), have.source, size_text(need.tensors),
                       size_text(need.reference), size_text(need.workspace));
}

uint64_t DeviceMemoryNeed::total() const {
    return add_sat(add_sat(weights, kv_cache), add_sat(activations, workspace));
}

std::optional<DeviceMemory> gpu_device_memory(const nlohmann::json &backend_context) {
    if (!backend_context.is_object()) return std::nullopt;
    const auto device = backend_context.find("device");
    if (device == backend_context.end() || !device->is_object() || device->value("kind", "") != "gpu")
        return std::nullopt;
    const auto free = device->find("free_memory");
    if (free == device->end() || !free->is_number_unsigned() || free->get<uint64_t>() == 0) return std::nullopt;
    return DeviceMemory{device->value("name", "the device"), free->get<uint64_t>()};
}

std::optional<std::string> device_memory_skip_reason(const DeviceMemoryNeed &need, const DeviceMemory &device) {
    if (need.total() <= device.free) return std::nullopt;
    return fmt::format("needs {} on the device (weights {}, KV cache {}, activations {}, workspace {}), {} free on {}",
                       size_text(need.total()), size_text(need.weights), size_text(need.kv_cache),
                       size_text(need.activations), size_text(need.workspace), size_text(device.free),
                       device.name);
}

std::optional<uint64_t> parse_memory_size(std::string_view text) {
    std::string s(text);
    std::size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double value = 0;
    try {
        std::size_t used = 0;
        value = std::stod(s.substr(0, i), &used);
        if (used != i) return std::nullopt;
    } catch (const std::exception &) {
        return std::nullopt;
    }
    std::string unit = s.substr(i);
    for (auto &c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double mult = 0;
    if (unit.empty() || unit == "B")
        mult = 1;
    else if (unit == "K" || unit == "KB" || unit == "KIB")
        mult = 1024.0;
    else if (unit == "M" || unit == "MB" || unit == "MIB")
        mult = 1024.0 * 1024;
    else if (unit == "G" || unit == "GB" || unit == "GIB")
        mult = 1024.0 * 1024 * 1024;
    else if (unit == "T" || unit == "TB" || unit == "TIB")
        mult = 1024.0 * 1024 * 1024 * 1024;
    else
        return std::nullopt;
    const double bytes = value * mult;
    if (!(bytes > 0) || bytes >= 1.8e19) return std::nullopt;
    return static_cast<uint64_t>(std::round(bytes));
}

} // namespace opbench
