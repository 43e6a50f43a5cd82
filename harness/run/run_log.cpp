#include "run/run_log.hpp"

#include "suite/suite.hpp"


#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace opbench {

namespace {

std::string utc_now() {
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                       fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

} // namespace

RunLog::RunLog(nlohmann::json header, std::optional<std::string> journal_path) : header_(std::move(header)) {
    if (journal_path) journal_ = std::make_unique<Journal>(Journal::create(*journal_path, header_));
}

std::unique_ptr<RunLog> RunLog::resume(const std::string &journal_path) {
    JournalContents contents = read_journal(journal_path);
    for (const auto &why : contents.dropped)
        std::cerr << "opbench: " << why << ": line dropped; its case is measured again\n";
    std::unique_ptr<RunLog> log(new RunLog());
    log->header_ = std::move(contents.header);
    for (const auto &line : contents.entries) log->apply(line);
    log->journal_ = std::make_unique<Journal>(Journal::reopen(journal_path));
    const nlohmann::json resumed = {{"resumed_at", utc_now()}};
    log->record(resumed);
    log->apply(resumed);
    return log;
}

std::optional<std::string> RunLog::journal_path() const {
    std::lock_guard lock(mutex_);
    if (!journal_) return std::nullopt;
    return journal_->path();
}

void RunLog::record(const nlohmann::json &line) {
    if (journal_) journal_->append(line);
}

void RunLog::apply(const nlohmann::json &line) {
    if (line.contains("gb_context")) gb_context_ = line["gb_context"];
    if (line.contains("opbench_context")) opbench_context_ = line["opbench_context"];
    if (line.contains("resumed_at")) resumed_at_.push_back(line["resumed_at"].get<std::string>());
    if (line.contains("case")) {
        FinishedCase c{line.value("index", std::size_t(0)),
                       line["case"].get<std::string>(),
                       line.value("status", std::string()),
                       {}};
        for (const auto &e : line.value("entries", nlohmann::json::array())) c.entries.push_back(e);
        auto it = by_name_.find(c.name);
        if (it != by_name_.end()) {
            cases_[it->second] = std::move(c); // measured again (a resumed run re-ran it): the later wins
        } else {
            by_name_[c.name] = cases_.size();
            cases_.push_back(std::move(c));
        }
    }
}

void RunLog::set_gb_context(nlohmann::json context) {
    const nlohmann::json line = {{"gb_context", std::move(context)}};
    std::lock_guard lock(mutex_);
    record(line);
    apply(line);
}

void RunLog::set_opbench_context(nlohmann::json context) {
    const nlohmann::json line = {{"opbench_context", std::move(context)}};
    std::lock_guard lock(mutex_);
    record(line);
    apply(line);
}

void RunLog::add_case(std::size_t index, const std::string &name, const std::string &status,
                      std::vector<nlohmann::json> entries) {
    const nlohmann::json line = {{"case", name}, {"index", index}, {"status", status}, {"entries", std::move(entries)}};
    std::lock_guard lock(mutex_);
    record(line); // on disk before the case counts as finished
    apply(line);
}

bool RunLog::has_case(const std::string &name) const {
    std::lock_guard lock(mutex_);
    return by_name_.count(name) != 0;
}

std::optional<RunLog::LoggedCase> RunLog::logged_case(const std::string &name) const {
    std::lock_guard lock(mutex_);
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) return std::nullopt;
    return LoggedCase{cases_[it->second].status, cases_[it->second].entries};
}

std::vector<std::string> RunLog::without_entries(const std::vector<std::string> &wanted) const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> missing;
    for (const auto &name : wanted) {
        const auto it = by_name_.find(name);
        if (it == by_name_.end() || cases_[it->second].entries.empty()) missing.push_back(name);
    }
    return missing;
}

namespace {

// "" when a journal's case line carries its own, plausible entries.
std::string case_entries_problem(const std::string &name, const std::vector<nlohmann::json> &entries) {
    std::size_t iterations = 0;
    long long repetitions = 0;
    for (const auto &e : entries) {
        const std::string entry = e.value("name", std::string());
        if (entry != name && !entry.starts_with(name + "/"))
            return fmt::format("carries the entry '{}', not one of its own", entry);
        const auto rt = e.find("real_time");
        if (rt != e.end() && (!rt->is_number() || rt->get<double>() < 0))
            return fmt::format("the entry '{}' has real_time {}", entry, rt->dump());
        if (e.value("run_type", std::string()) != "iteration") continue;
        ++iterations;
        if (const auto r = e.find("repetitions"); r != e.end() && r->is_number_integer())
            repetitions = std::max(repetitions, r->get<long long>());
    }
    if (repetitions > 0 && static_cast<long long>(iterations) < repetitions)
        return fmt::format("has {} of its {} repetitions", iterations, repetitions);
    return "";
}

} // namespace

std::vector<std::string> RunLog::forget_unplanned(const std::vector<std::string> &planned) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> why;
    std::vector<FinishedCase> kept;
    for (auto &c : cases_) {
        std::string problem = std::find(planned.begin(), planned.end(), c.name) == planned.end()
                                  ? std::string("is not a case of this run")
                                  : case_entries_problem(c.name, c.entries);
        if (problem.empty()) {
            kept.push_back(std::move(c));
            continue;
        }
        why.push_back(fmt::format("{}: {}", c.name, problem));
    }
    cases_ = std::move(kept);
    by_name_.clear();
    for (std::size_t i = 0; i < cases_.size(); ++i) by_name_[cases_[i].name] = i;
    return why;
}

std::map<std::string, int> RunLog::counts() const {
    std::lock_guard lock(mutex_);
    std::map<std::string, int> n;
    for (const auto &c : cases_) ++n[c.status];
    return n;
}

int RunLog::resumptions() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(resumed_at_.size());
}

nlohmann::json RunLog::context() const {
    std::lock_guard lock(mutex_);
    nlohmann::json ctx = gb_context_.is_object() ? gb_context_ : nlohmann::json::object();
    ctx["opbench"] = opbench_context_;
    return ctx;
}

nlohmann::json RunLog::result_set(bool complete) const {
    std::lock_guard lock(mutex_);
    nlohmann::json doc;
    doc["context"] = gb_context_.is_object() ? gb_context_ : nlohmann::json::object();
    nlohmann::json ob = opbench_context_;
    ob["complete"] = complete;
    if (!resumed_at_.empty()) ob["resumed_at"] = resumed_at_;
    if (!complete && journal_) ob["journal"] = journal_->path();
    doc["context"]["opbench"] = std::move(ob);
    std::vector<const FinishedCase *> order;
    for (const auto &c : cases_) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(),
                     [](const FinishedCase *a, const FinishedCase *b) { return a->index < b->index; });
    doc["benchmarks"] = nlohmann::json::array();
    for (const FinishedCase *c : order)
        for (const auto &e : c->entries) doc["benchmarks"].push_back(e);
    return doc;
}

std::string journal_to_resume(const std::string &file) {
    if (looks_like_journal(file)) return file;
    // A journal beside the file is an unfinished run's (a complete run
    // removes it), whatever the file holds: its empty reservation (killed
    // before writing anything), or the earlier set that --force will replace
    // (killed before replacing it).
    if (looks_like_journal(journal_path_for(file))) return journal_path_for(file);
    std::ifstream in(file);
    if (!in) throw JournalError(fmt::format("{}: cannot open: {}", file, std::strerror(errno)));
    const nlohmann::json rs = nlohmann::json::parse(in, nullptr, false);
    if (rs.is_discarded() || !rs.is_object() || !rs.contains("context") || !rs["context"].contains("opbench"))
        throw JournalError(fmt::format("{}: neither an opbench result set nor a journal", file));
    const nlohmann::json &ob = rs["context"]["opbench"];
    if (ob.value("complete", true))
        throw JournalError(fmt::format("{}: the run is complete; there is nothing to resume", file));
    const std::string journal = ob.value("journal", std::string());
    if (journal.empty() || !looks_like_journal(journal))
        throw JournalError(fmt::format("{}: its journal {} is gone; the finished cases cannot be continued", file,
                                       journal.empty() ? std::string("(none named)") : journal));
    return journal;
}

void RunLog::finish() {
    std::lock_guard lock(mutex_);
    if (journal_) journal_->remove();
    journal_.reset();
}

std::unique_ptr<RunLog> open_run_log(const Suite &suite, const LogOptions &options) {
    if (!options.resume_journal.empty()) {
        auto log = RunLog::resume(options.resume_journal);
        const std::string was = log->header().value("suite_sha256", std::string());
        if (was != suite.content_hash)
            throw JournalError(fmt::format("{}: the suite changed since the interrupted run (SHA-256 {} then, "
                                           "{} now); its finished cases would not match: run it afresh",
                                           suite.path, was, suite.content_hash));
        return log;
    }
    std::optional<std::string> journal;
    // Absolute: an incomplete result set names it, for --resume from anywhere.
    if (!options.out_path.empty()) {
        journal = std::filesystem::absolute(journal_path_for(options.out_path)).string();
        std::error_code ec; // the result set's directory, made as the writer would make it
        std::filesystem::create_directories(std::filesystem::path(*journal).parent_path(), ec);
    }
    std::error_code ec;
    const nlohmann::json header = {
        {"suite", suite.path},
        {"suite_sha256", suite.content_hash},
        {"cwd", std::filesystem::current_path(ec).string()},
        {"out", options.out_path},
        {"args", options.command_args},
        {"command", options.command},
    };
    return std::make_unique<RunLog>(header, journal);
}

} // namespace opbench
