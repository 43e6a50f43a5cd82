#include "chrome_trace_writer.hpp"

namespace opbench {

std::string write_chrome_trace(const Document &doc) {
    std::string out = "{\"traceEvents\":[\n";
    const nlohmann::json empty = nlohmann::json::array();
    const nlohmann::json &events = doc.data.contains("traceEvents") ? doc.data["traceEvents"] : empty;
    for (std::size_t i = 0; i < events.size(); ++i) {
        out += events[i].dump();
        out += i + 1 < events.size() ? ",\n" : "\n";
    }
    out += "]";
    for (const auto &[key, value] : doc.data.items()) {
        if (key == "traceEvents") continue;
        out += ",\n" + nlohmann::json(key).dump() + ":" + value.dump();
    }
    out += "}\n";
    return out;
}

} // namespace opbench
