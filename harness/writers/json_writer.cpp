#include "writers/json_writer.hpp"

namespace opbench {

// Bytes that are not UTF-8 (a file name on Linux is any bytes; a plugin's
// message may be Latin-1) are written as U+FFFD: a set with one odd character
// is better than a run whose set cannot be written at all.
std::string write_json(const Document &doc) {
    constexpr auto replace = nlohmann::json::error_handler_t::replace;
    return (doc.compact ? doc.data.dump(-1, ' ', false, replace) : doc.data.dump(2, ' ', false, replace)) + "\n";
}

} // namespace opbench
