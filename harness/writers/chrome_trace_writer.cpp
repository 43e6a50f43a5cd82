#include "writers/chrome_trace_writer.hpp"

#include <stdexcept>

namespace opbench {

std::string write_chrome_trace(const Document &doc) {
    // Only a trace has events: a result set in this format would be an empty trace.
    if (!doc.data.is_object() || !doc.data.contains("traceEvents") || !doc.data["traceEvents"].is_array())
        throw std::invalid_argument("the chrome-trace format writes traces (opbench run --trace FILE), and this "
                                    "document has no traceEvents array; use the json format");
    // Not UTF-8 (a span named by a plugin): U+FFFD, as write_json does.
    auto text = [](const nlohmann::json &j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    std::string out = "{\"traceEvents\":[\n";
    const nlohmann::json &events = doc.data["traceEvents"];
    for (std::size_t i = 0; i < events.size(); ++i) {
        out += text(events[i]);
        out += i + 1 < events.size() ? ",\n" : "\n";
    }
    out += "]";
    for (const auto &[key, value] : doc.data.items()) {
        if (key == "traceEvents") continue;
        out += ",\n" + text(nlohmann::json(key)) + ":" + text(value);
    }
    out += "}\n";
    return out;
}

} // namespace opbench
