#include "writers/json_writer.hpp"

namespace opbench {

std::string write_json(const Document &doc) { return (doc.compact ? doc.data.dump() : doc.data.dump(2)) + "\n"; }

} // namespace opbench
