// Output writers: plain data in, bytes out. Each format is one file in this
// directory and one row in the table in writers.cpp (as dav1d's muxers are):
// adding a format touches nothing else.
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Formatted cells, as compare, the run summary and reports hand them over.
// Every row has one cell per column.
struct Table {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> notes; // shown after the table
};

// What a writer formats: the machine-readable form (a result set, a
// comparison) and the human-readable one (tables). A format uses whichever
// it is made for: json writes `data`, the table formats write `tables`.
struct Document {
    nlohmann::json data;
    std::vector<Table> tables;
    // The tidy form for data tools, when the command has one: one row per
    // entry and set, raw numbers in SI units (readers/tidy_records.hpp). csv
    // writes only this, so a file is one table that pandas reads right.
    Table records;
    // Machine-read output (result sets): the json writer leaves out the
    // indentation, a fifth of a set's bytes.
    bool compact = false;
};

struct Writer {
    std::string_view name;        // the --format value: "json", "csv", ...
    std::string_view extension;   // of a file in this format: ".json"
    std::string_view description; // one line for help text
    std::string (*write)(const Document &doc);
};

// Every writer, in the order help text lists them.
[[nodiscard]] std::span<const Writer> writers();

// The writer called `name`, or nullptr.
[[nodiscard]] const Writer *find_writer(std::string_view name);

// Plain-text rendering of one Table, columns aligned, for the console (the
// hot-path, top-scopes and analyze tables).
[[nodiscard]] std::string render_text_table(const Table &table);

// "json, csv, ..." for help text and errors.
[[nodiscard]] std::string writer_names();

} // namespace opbench
