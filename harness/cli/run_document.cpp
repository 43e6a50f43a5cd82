#include "cli/run_document.hpp"

#include "cli/exit_codes.hpp"
#include "cli/printable.hpp"
#include "readers/level_table.hpp"
#include "readers/result_set_reader.hpp"
#include "readers/tidy_records.hpp"
#include "writers/writer.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace opbench {

std::string run_format_problem(const std::string &format) {
    if (format == "chrome-trace") return "--format chrome-trace: a run writes its trace with --trace FILE";
    if (!find_writer(format)) return fmt::format("--format {}: unknown (choose: {})", format, writer_names());
    return "";
}

std::string run_document_formats() {
    std::string names;
    for (const Writer &w : writers())
        if (w.name != "console" && w.name != "chrome-trace") names += (names.empty() ? "" : ", ") + std::string(w.name);
    return names;
}

namespace {

// The reference when the set has it, else its first backend.
std::string baseline_of(const ResultSet &set, const std::string &reference) {
    for (const CaseRecord &c : set.cases)
        if (c.backend == reference) return reference;
    return set.cases.empty() ? reference : set.cases.front().backend;
}

} // namespace

int print_run_document(const std::string &set_path, const std::string &format, const std::string &reference) {
    try {
        const std::vector<ResultSet> sets{read_result_set(set_path)};
        // Fitted tables are for a terminal; the file formats keep every column.
        const LevelOptions options{baseline_of(sets.front(), reference), format != "console"};
        Document doc = by_backend(sets, options);
        doc.records = entry_records(sets);
        std::cout << find_writer(format)->write(doc) << std::flush;
        return 0;
    } catch (const std::exception &e) {
        std::cerr << fmt::format("opbench run: --format {}: {}: {}\n", format, set_path, printable(e.what()));
        return kExitEnvironment;
    }
}

StdoutToStderr::StdoutToStderr() {
    std::cout.flush();
    std::fflush(stdout);
    saved_stdout_ = ::dup(STDOUT_FILENO);
    if (saved_stdout_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

StdoutToStderr::~StdoutToStderr() {
    if (saved_stdout_ < 0) return;
    std::cout.flush();
    std::fflush(stdout);
    ::dup2(saved_stdout_, STDOUT_FILENO);
    ::close(saved_stdout_);
}

} // namespace opbench
