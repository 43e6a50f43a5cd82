#include "run/gb_capture.hpp"

#include <stdexcept>

namespace opbench {

JsonCapture::JsonCapture(ContextFn context, RunsFn runs) : on_context_(std::move(context)), on_runs_(std::move(runs)) {
    json_.SetOutputStream(&text_);
    json_.SetErrorStream(&text_);
}

// What the reporter wrote since the last call. The stream is emptied each
// time, so a run of N benchmarks copies O(N) text, not the O(N^2) of copying
// everything written so far on every report (a 100,000-case run spent most
// of its time there, and a SIGTERM waited for it).
std::string JsonCapture::take_new_text() {
    std::string fresh = text_.str();
    text_.str(std::string());
    text_.clear();
    return fresh;
}

bool JsonCapture::ReportContext(const Context &context) {
    const bool ok = json_.ReportContext(context);
    // The reporter has written `{"context": {...}, "benchmarks": [`; closing
    // the array and the object makes it a document of its own.
    nlohmann::json doc = nlohmann::json::parse(take_new_text() + "]}", nullptr, false);
    if (doc.is_discarded() || !doc.contains("context"))
        throw std::runtime_error("Google Benchmark's JSON context could not be read");
    if (on_context_) on_context_(std::move(doc["context"]));
    return ok;
}

void JsonCapture::ReportRuns(const std::vector<Run> &runs) {
    json_.ReportRuns(runs);
    // Entries are written as `{...}`, separated by ",\n" after the first.
    std::string piece = take_new_text();
    const std::size_t start = piece.find('{');
    if (start == std::string::npos) return;
    std::string array = "[";
    array.append(piece, start, std::string::npos);
    array += ']';
    nlohmann::json entries = nlohmann::json::parse(array, nullptr, false);
    if (entries.is_discarded()) throw std::runtime_error("Google Benchmark's JSON for a run could not be read");
    for (auto &e : entries) {
        const std::string name = e.value("run_name", e.value("name", std::string()));
        if (!pending_.empty() && name != pending_name_) flush();
        pending_name_ = name;
        pending_.push_back(std::move(e));
    }
}

void JsonCapture::flush() {
    if (pending_.empty()) return;
    std::vector<nlohmann::json> out;
    out.swap(pending_);
    pending_name_.clear();
    if (on_runs_) on_runs_(std::move(out));
}

void JsonCapture::Finalize() {
    flush();
    json_.Finalize();
    (void)take_new_text();
}

bool TeeReporter::ReportContext(const Context &context) {
    bool ok = true;
    for (auto *r : reporters_) ok = r->ReportContext(context) && ok;
    return ok;
}

void TeeReporter::ReportRuns(const std::vector<Run> &runs) {
    for (auto *r : reporters_) r->ReportRuns(runs);
}

void TeeReporter::Finalize() {
    for (auto *r : reporters_) r->Finalize();
}

void FilterReporter::ReportRuns(const std::vector<Run> &runs) {
    std::vector<Run> kept;
    for (const Run &r : runs)
        if (keep_(r)) kept.push_back(r);
    if (!kept.empty()) inner_.ReportRuns(kept);
}

} // namespace opbench
