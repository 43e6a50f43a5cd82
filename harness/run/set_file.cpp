#include "run/set_file.hpp"

#include "files/atomic_file.hpp"
#include "run/result_set.hpp"
#include "writers/writer.hpp"

#include <stdexcept>

namespace opbench {

void write_set_file(const RunLog &log, const std::string &path, const std::string &format,
                    bool complete) {
    const Writer *writer = find_writer(format);
    if (!writer) throw std::runtime_error("no output writer '" + format + "' (known: " + writer_names() + ")");
    Document doc;
    doc.compact = true;
    doc.data = log.result_set(complete);
    add_run_analysis(doc.data);
    write_file_atomically(path, writer->write(doc));
}

} // namespace opbench
