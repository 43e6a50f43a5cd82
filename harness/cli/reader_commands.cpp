#include "cli/reader_commands.hpp"

#include "cli/exit_codes.hpp"
#include "cli/output_path.hpp"
#include "cli/printable.hpp"

#include "readers/analyze.hpp"
#include "readers/archive.hpp"
#include "readers/change_history.hpp"
#include "files/atomic_file.hpp"
#include "readers/compare.hpp"
#include "readers/paired_compare.hpp"
#include "readers/level_table.hpp"
#include "readers/merge.hpp"
#include "readers/report_html.hpp"
#include "readers/result_set_reader.hpp"
#include "readers/tidy_records.hpp"
#include "writers/writer.hpp"

#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <regex>

namespace opbench {

namespace {

// compare's exit status for a regression (kExitFailedCases's number: both mean "something got worse").
constexpr int kExitRegression = 1;
// How many archived runs before a new set --baseline-from reads for the
// cases' run-to-run ranges (compare.hpp, RunToRunRange).
constexpr std::size_t kRunToRunHistory = 10;
// Every entry with a time is compared since starvation became a status of
// its own (docs/measurement.md, "One median per entry"): the flag that once
// let in entries whose repetitions all missed the noise target stays for the
// scripts that pass it.
constexpr const char *kAcceptUnmetNoiseHelp =
    "no effect (kept for scripts): an entry whose repetitions missed the noise target is compared and "
    "flagged noisy; a starved one never is";

// "5%" -> 0.05, "0.05" -> 0.05; anything else is refused.
double parse_fraction(const std::string &flag, const std::string &v) {
    try {
        std::size_t used = 0;
        const double x = std::stod(v, &used);
        const std::string rest = v.substr(used);
        if (rest == "%" && x >= 0 && x < 1000) return x / 100.0;
        if (rest.empty() && x >= 0 && x < 1) return x;
    } catch (const std::exception &) {}
    throw std::invalid_argument(fmt::format("{} {}: give a fraction below 1 (0.05) or a percentage (5%)", flag, v));
}

std::vector<ResultSet> read_sets(const std::vector<std::string> &paths) {
    std::vector<ResultSet> sets;
    for (const auto &p : paths) sets.push_back(read_result_set(p));
    return sets;
}

// Writes `doc` in `format` to `output` (atomically) or stdout.
int emit(const Document &doc, const std::string &format, const std::string &output, const char *cmd) {
    const Writer *w = find_writer(format);
    if (!w) {
        std::cerr << fmt::format("opbench {}: --format {}: unknown (choose: {})\n", cmd, format, writer_names());
        return kExitBadInput;
    }
    const std::string text = w->write(doc);
    if (output.empty() || output == "-") {
        std::cout << text;
        return 0;
    }
    try {
        write_file_atomically(output, text);
    } catch (const std::exception &e) {
        std::cerr << fmt::format("opbench {}: --output: {}\n", cmd, printable(e.what()));
        return kExitEnvironment;
    }
    return 0;
}

// A reader's -o, checked before anything is read (the rule of --out:
// cli/output_path.hpp); "" and "-" are stdout. Throws OutputPathError.
void check_reader_output(const std::string &output, bool force, std::vector<std::string> inputs,
                         std::vector<std::string> input_dirs = {}) {
    if (output == "-") return;
    check_output_file(OutputFile{"-o", output, force, std::move(inputs), std::move(input_dirs), {}});
}

} // namespace

struct ReaderCommands::Options {
    CLI::App *analyze = nullptr, *compare = nullptr, *report = nullptr, *history = nullptr, *merge = nullptr,
             *archive = nullptr;
    // analyze
    std::string analyze_path, analyze_format = "console", analyze_output;
    std::size_t analyze_top = 20;
    // compare
    std::vector<std::string> sets;
    std::string baseline_from, threshold = "5%", alpha = "0.05", by, baseline = "naive", format = "console", output;
    std::string normalize; // "canary": divide each set's times by its machine speed
    bool force = false; // -o may replace an existing file (every reader's -o)
    bool strict = false, fail_on_regression = false, allow_no_baseline = false;
    bool accept_unmet_ignored = false; // --accept-unmet-noise: kept for scripts, no effect
    bool wide = false; // --wide: full names and every column instead of tables fitted to 100 columns
    // report
    std::vector<std::string> report_sets;
    std::string report_out, report_title, report_history;
    // history
    std::string history_dir, history_suite, history_case, history_machine, history_format = "console", history_output;
    std::size_t history_last = 10;
    bool history_changes = false;      // --changes
    double history_penalty = kDefaultPenalty;
    std::size_t history_fail_newest = 0; // --fail-on-change-in N: exit 1 on a regression among the newest N runs
    // merge
    std::vector<std::string> merge_sets;
    std::string merge_out;
    bool allow_mixed = false;
    // archive
    std::string archive_dir;
    std::vector<std::string> archive_sets;
    CLI::App *prune_cmd = nullptr;
    std::string prune_dir;
    long long prune_keep = 0; // signed: "-1" is refused as itself, not wrapped to 2^64 - 1

    // Each subcommand with its options and flags.
    void add_analyze(CLI::App &app);
    void add_compare(CLI::App &app);
    void add_report(CLI::App &app);
    void add_history(CLI::App &app);
    void add_merge(CLI::App &app);
    void add_archive(CLI::App &app);
    int run_analyze();
    int run_compare();
    std::optional<int> add_archived_baseline(std::vector<std::string> &paths, CompareOptions &co);
    int run_paired_compare(const ResultSet &set);
    void flag_canary_drift(const std::vector<ResultSet> &sets, double threshold) const;
    int run_report();
    int run_history();
    int run_history_changes(const HistoryOptions &ho);
    int run_merge();
    int run_archive();
};

void ReaderCommands::Options::add_analyze(CLI::App &app) {
    analyze = app.add_subcommand("analyze", "rank a result set's bottlenecks (kind, severity, suggestion; "
                                            "a composed op's components when profiled); loads no plugin");
    analyze->add_option("result_set", analyze_path, "result set JSON written by `opbench run`")->required();
    analyze->add_flag("--wide", wide, "full entry names and unwrapped details (default: fitted to 100 columns)");
    analyze->add_option("--top", analyze_top, "show this many cases")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    analyze->add_option("--format", analyze_format, "output format: " + writer_names())->capture_default_str();
    analyze->add_option("--output,-o", analyze_output,
                        "write to this file instead of stdout (never the input; an existing file only with --force)");
    analyze->add_flag("--force", force, "let -o replace an existing file (never the input)");
}

void ReaderCommands::Options::add_compare(CLI::App &app) {
    compare = app.add_subcommand("compare", "compare result sets case by case (ratio of medians, U test, verdict), "
                                            "or side by side --by backend / --by machine. Reads result sets only.");
    compare->add_option("sets", sets, "BASE.json NEW.json [MORE.json...]: each later set against the first")
        ->check(CLI::ExistingFile);
    compare->add_option("--baseline-from", baseline_from,
                        "archive directory: the base is its newest set of NEW's machine, suite and build type; with 4 "
                        "or more such sets, a change within a case's run-to-run range there (the second-largest change "
                        "between consecutive runs of its last 10) is noisy, not faster/slower");
    compare->add_flag("--allow-no-baseline", allow_no_baseline,
                      "with --baseline-from: exit 0 with a note when the archive has no baseline yet");
    compare->add_flag("--strict", strict, "refuse (exit 2) when measurement settings differ (commit and host may)");
    compare->add_option("--threshold", threshold, "smallest change of the median that counts (5% or 0.05)")
        ->capture_default_str();
    compare->add_option("--alpha", alpha, "significance level of the Mann-Whitney U test")->capture_default_str();
    compare->add_flag("--accept-unmet-noise", accept_unmet_ignored, kAcceptUnmetNoiseHelp);
    compare->add_flag("--wide", wide,
                      "full case names, every column and note in its row (default for --format console: tables "
                      "fitted to 100 columns, shared names in a header line, long notes as footnotes; the other "
                      "formats are always wide)");
    compare->add_option("--by", by, "side by side instead: backend (optimisation levels) or machine")
        ->check(CLI::IsMember({"backend", "machine"}));
    compare->add_option("--baseline", baseline, "with --by backend: the level speed-ups are against")
        ->capture_default_str();
    compare->add_option("--format", format, "output format: " + writer_names())->capture_default_str();
    compare->add_option("--output,-o", output,
                        "write to this file instead of stdout (never an input; an existing "
                        "file only with --force)");
    compare->add_flag("--force", force, "let -o replace an existing file (never an input)");
    compare->add_flag("--fail-on-regression", fail_on_regression,
                      "exit 1 when any case is slower beyond the threshold");
    compare
        ->add_option("--normalize", normalize,
                     "canary: divide each set's times by its drift canary's median (the machine's speed during "
                     "that run; sets from `opbench ab` record one) before comparing")
        ->check(CLI::IsMember({"canary"}));
}

namespace {

// A required -o FILE that never replaces an input, and --force to let it
// replace another existing file.
void add_required_output(CLI::App *sub, std::string &path, bool &force, const std::string &what) {
    sub->add_option("-o,--output", path, what + " (never an input; an existing file only with --force)")->required();
    sub->add_flag("--force", force, "let -o replace an existing file (never an input)");
}

} // namespace

void ReaderCommands::Options::add_report(CLI::App &app) {
    report = app.add_subcommand("report", "one self-contained HTML page with SVG charts of result sets");
    report->add_option("sets", report_sets, "result sets")->required()->check(CLI::ExistingFile);
    add_required_output(report, report_out, force, "the HTML file to write");
    report->add_option("--title", report_title, "page title");
    report->add_option("--history", report_history, "archive directory: chart the trend of the first set's suite");
}

void ReaderCommands::Options::add_history(CLI::App &app) {
    history = app.add_subcommand("history", "each case's median across the archived runs of a suite on one machine");
    history->add_option("dir", history_dir, "archive directory")->required()->check(CLI::ExistingDirectory);
    history->add_option("--suite", history_suite, "suite name")->required();
    history->add_option("--case", history_case, "regular expression on 'case [backend]'");
    history->add_option("--machine", history_machine, "machine id (default: the newest run's)");
    history->add_option("--last", history_last, "at most this many runs, the newest")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    history->add_option("--format", history_format, "output format: " + writer_names())->capture_default_str();
    history->add_option("--output,-o", history_output,
                        "write to this file instead of stdout (never inside the "
                        "archive; an existing file only with --force)");
    history->add_flag("--changes", history_changes,
                      "each case's change points (commit range, size, interval, undone) over the runs in commit "
                      "order; --last defaults to every run");
    history->add_option("--penalty", history_penalty, "--changes: the fit's penalty per change (chi-square units)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    history->add_option("--fail-on-change-in", history_fail_newest,
                        "--changes: exit 1 when a change to slower begins among the newest N runs (CI)")
        ->check(CLI::PositiveNumber);
    history->add_flag("--force", force, "let -o replace an existing file (never one of the archive's)");
    history->add_flag("--accept-unmet-noise", accept_unmet_ignored, kAcceptUnmetNoiseHelp);
    history->add_flag(
        "--wide", wide,
        "one column per run with its date and commit (default: first, last, trend, fitted to 100 columns)");
}

void ReaderCommands::Options::add_merge(CLI::App &app) {
    merge = app.add_subcommand("merge", "merge shards of one suite into one result set");
    // Not CLI11's ExistingFile: a shard not written yet is named by the merge (read_merge_inputs).
    merge->add_option("sets", merge_sets, "result sets of one suite")->required();
    add_required_output(merge, merge_out, force, "the merged result set");
    merge->add_flag("--allow-mixed-machines", allow_mixed, "merge sets from different machines");
}

void ReaderCommands::Options::add_archive(CLI::App &app) {
    archive =
        app.add_subcommand("archive", "store result sets in an archive: DIR/<machine>/<suite>/<time>-<commit>.json");
    // Not required here: `archive prune DIR` has its own (run_archive checks).
    archive->add_option("dir", archive_dir, "archive directory (created if missing)");
    archive->add_option("sets", archive_sets, "result sets")->check(CLI::ExistingFile);
    auto *ap =
        archive->add_subcommand("prune", "keep the newest N sets of each machine, suite and build type; delete the "
                                         "older sets and their index rows");
    prune_cmd = ap;
    ap->add_option("dir", prune_dir, "archive directory")->required()->check(CLI::ExistingDirectory);
    // 0 is refused by archive_prune, with a message that says what would do.
    ap->add_option("--keep", prune_keep, "sets to keep per machine, suite and build type (1 to 1000000)")
        ->required()
        ->check(CLI::Range(0LL, 1'000'000LL));
}

ReaderCommands::ReaderCommands(CLI::App &app) : o_(std::make_unique<Options>()) {
    o_->add_analyze(app);
    o_->add_compare(app);
    o_->add_report(app);
    o_->add_history(app);
    o_->add_merge(app);
    o_->add_archive(app);
}

ReaderCommands::~ReaderCommands() = default;

std::optional<int> ReaderCommands::run() {
    Options &o = *o_;
    try {
        if (*o.analyze) return o.run_analyze();
        if (*o.compare) return o.run_compare();
        if (*o.report) return o.run_report();
        if (*o.history) return o.run_history();
        if (*o.merge) return o.run_merge();
        if (*o.archive) return o.run_archive();
    } catch (const ResultSetError &e) {
        std::cerr << "opbench: " << printable(e.what()) << "\n";
        return kExitBadInput;
    } catch (const ArchiveError &e) {
        std::cerr << "opbench: " << printable(e.what()) << "\n";
        return kExitBadInput;
    } catch (const MergeError &e) {
        std::cerr << "opbench merge: " << printable(e.what()) << "\n";
        return kExitBadInput;
    } catch (const std::regex_error &e) {
        std::cerr << "opbench history: --case: not a valid regular expression (" << printable(e.what()) << ")\n";
        return kExitBadInput;
    } catch (const std::invalid_argument &e) {
        std::cerr << "opbench: " << printable(e.what()) << "\n";
        return kExitBadInput;
    } catch (const OutputPathError &e) {
        std::cerr << "opbench: " << printable(e.what()) << "\n";
        return kExitBadInput;
    }
    return std::nullopt;
}

int ReaderCommands::Options::run_analyze() {
    if (analyze->count("--output") > 0) check_reader_output(analyze_output, force, {analyze_path});
    if (!find_writer(analyze_format))
        throw std::invalid_argument(fmt::format("--format {}: unknown (choose: {})", analyze_format, writer_names()));
    Document doc;
    try {
        // Fitted tables are for a terminal; the file formats keep every column.
        doc = analyze_file(analyze_path, analyze_top, wide || analyze_format != "console");
    } catch (const AnalyzeError &e) {
        std::cerr << "opbench analyze: " << printable(e.what()) << "\n";
        return kExitBadInput;
    }
    // On the terminal: the ranked table, then each entry's details wrapped.
    if (analyze_format == "console" && (analyze_output.empty() || analyze_output == "-")) {
        std::cout << console_analysis(doc, analyze_path, wide);
        return 0;
    }
    return emit(doc, analyze_format, analyze_output, "analyze");
}

// --baseline-from: the archive's newest set of NEW's machine, suite and build
// type goes first in `paths`, and the runs before it give the cases'
// run-to-run ranges. An exit status when there is nothing to compare.
std::optional<int> ReaderCommands::Options::add_archived_baseline(std::vector<std::string> &paths, CompareOptions &co) {
    if (sets.size() != 1)
        throw std::invalid_argument(fmt::format("--baseline-from takes exactly one NEW.json (got {})", sets.size()));
    const ResultSet next = read_result_set(sets[0]);
    const std::vector<ArchiveEntry> earlier = archive_matching(baseline_from, next.machine_id(), next.suite_name(),
                                                               next.build_type(), next.timestamp(), sets[0]);
    const std::optional<ArchiveEntry> base =
        earlier.empty() ? std::nullopt : std::optional<ArchiveEntry>(earlier.back());
    if (!base) {
        const std::string what =
            fmt::format("{}: no archived set of suite '{}' on machine {} ({} build) other than {} and not newer",
                        baseline_from, next.suite_name(), next.machine_id(), next.build_type(), sets[0]);
        if (allow_no_baseline) {
            std::cerr << "opbench compare: " << what << "; nothing to compare (--allow-no-baseline)\n";
            return 0;
        }
        std::cerr << "opbench compare: " << what << "\n";
        return kExitBadInput;
    }
    const std::string base_path = confined_file(baseline_from, base->path);
    std::cerr << fmt::format("opbench compare: baseline {} ({}, commit {})\n", printable(base_path),
                             printable(base->timestamp), printable(base->commit));
    paths.insert(paths.begin(), base_path);
    // The last runs before it tell how far each case moves between runs.
    std::vector<ResultSet> history;
    const std::size_t first = earlier.size() > kRunToRunHistory ? earlier.size() - kRunToRunHistory : 0;
    for (std::size_t i = first; i < earlier.size(); ++i)
        history.push_back(read_result_set(confined_file(baseline_from, earlier[i].path)));
    co.run_to_run = run_to_run_ranges(history);
    if (history.size() >= kMinRunsForRange)
        std::cerr << fmt::format("opbench compare: run-to-run ranges from the last {} archived runs\n", history.size());
    return std::nullopt;
}

int ReaderCommands::Options::run_compare() {
    if (compare->count("--output") > 0)
        check_reader_output(output, force, sets,
                            baseline_from.empty() ? std::vector<std::string>{}
                                                  : std::vector<std::string>{baseline_from});
    CompareOptions co;
    co.threshold = parse_fraction("--threshold", threshold);
    co.alpha = parse_fraction("--alpha", alpha);
    // Fitted tables are for a terminal; Markdown, CSV and JSON keep every
    // column (the CI summary and scripts read them).
    co.wide = wide || format != "console";
    // A CI summary's Markdown keeps every column but not whole paragraphs in a
    // cell (ci-bench's quality cells ran to 876 characters): those are footnotes.
    co.footnoted = format == "markdown" && !wide;
    if (!find_writer(format))
        throw std::invalid_argument(fmt::format("--format {}: unknown (choose: {})", format, writer_names()));
    std::vector<std::string> paths = sets;
    if (!baseline_from.empty())
        if (std::optional<int> rc = add_archived_baseline(paths, co)) return *rc;
    // One set from `opbench ab`: its pairs give the verdict (paired_compare.hpp).
    if (by.empty() && paths.size() == 1) {
        const ResultSet only = read_result_set(paths[0]);
        if (is_paired_set(only)) return run_paired_compare(only);
    }
    if (by.empty() && paths.size() < 2)
        throw std::invalid_argument("compare needs BASE.json and NEW.json (or --baseline-from DIR NEW.json), or "
                                    "one paired set from `opbench ab`");
    if (paths.empty()) throw std::invalid_argument("compare --by needs at least one result set");
    std::vector<ResultSet> loaded = read_sets(paths);
    flag_canary_drift(loaded, co.threshold);
    if (normalize == "canary") {
        // Every set at the first set's machine speed.
        const auto first = canary_of(loaded.front());
        const double reference = first ? canary_median_seconds(*first) : 0;
        for (ResultSet &set : loaded) normalize_by_canary(set, reference > 0 ? reference : 1);
        std::cerr << "opbench compare: times normalised by each set's drift canary (--normalize canary)\n";
    }

    if (!by.empty()) {
        LevelOptions lo{baseline, co.wide};
        Document doc = by == "backend" ? by_backend(loaded, lo) : by_machine(loaded, lo);
        doc.records = entry_records(loaded); // what --format csv writes
        return emit(doc, format, output, "compare");
    }
    const Comparison cmp = compare_sets(loaded, co);
    for (const auto &d : cmp.differing)
        if (d.setting == "profiling") {
            std::cerr << fmt::format("opbench compare: a profiling run (--profile / --trace) cannot be compared with "
                                     "a plain one (profiling: {}): compare runs made the same way\n",
                                     fmt::join(d.values, " vs "));
            return kExitBadInput;
        }
    if (strict) {
        std::vector<std::string> refused;
        for (const auto &d : cmp.differing)
            if (d.strict) refused.push_back(fmt::format("{} ({})", d.setting, fmt::join(d.values, " vs ")));
        if (!refused.empty()) {
            std::cerr << fmt::format("opbench compare: --strict: the sets differ in {}\n", fmt::join(refused, "; "));
            return kExitBadInput;
        }
    }
    Document doc = comparison_document(cmp);
    doc.records = comparison_records(loaded, cmp); // what --format csv writes
    if (const int rc = emit(doc, format, output, "compare"); rc != 0) return rc;
    if (fail_on_regression && cmp.has_regression()) {
        std::size_t slower = 0;
        for (const auto &p : cmp.pairs) slower += p.count("slower");
        std::cerr << fmt::format("opbench compare: {} case(s) slower beyond {:g}% (--fail-on-regression)\n", slower,
                                 co.threshold * 100);
        return kExitRegression;
    }
    return 0;
}

// A set whose machine speed moved more than the threshold during its run:
// its unpaired times moved with it.
void ReaderCommands::Options::flag_canary_drift(const std::vector<ResultSet> &sets, double threshold) const {
    for (const ResultSet &set : sets)
        if (auto canary = canary_of(set); canary && canary_drift(*canary) > threshold)
            std::cerr << fmt::format("opbench compare: {}: the machine's speed drifted {:.0f}% during its run "
                                     "(drift canary), more than the threshold {:g}%: its unpaired times moved with "
                                     "it (--normalize canary, or a paired run: `opbench ab`)\n",
                                     printable(set.path), canary_drift(*canary) * 100, threshold * 100);
}

// compare on one paired set: the threshold is the run's own unless given.
int ReaderCommands::Options::run_paired_compare(const ResultSet &set) {
    if (normalize == "canary")
        throw std::invalid_argument("--normalize canary is for unpaired sets: a paired set's drift cancels in its pairs");
    PairedOptions po;
    const nlohmann::json &recorded = set.opbench()["paired"];
    po.threshold = compare->count("--threshold") > 0 ? parse_fraction("--threshold", threshold)
                                                     : recorded.value("threshold", po.threshold);
    po.alpha = compare->count("--alpha") > 0 ? parse_fraction("--alpha", alpha) : recorded.value("alpha", po.alpha);
    const PairedComparison c = compare_paired(set, po);
    if (const int rc = emit(paired_document(c), format, output, "compare"); rc != 0) return rc;
    if (fail_on_regression && c.count("slower") > 0) {
        std::cerr << fmt::format("opbench compare: {} case(s) slower beyond {:g}% in the paired run "
                                 "(--fail-on-regression)\n",
                                 c.count("slower"), po.threshold * 100);
        return kExitRegression;
    }
    return 0;
}

int ReaderCommands::Options::run_report() {
    check_reader_output(report_out, force, report_sets,
                        report_history.empty() ? std::vector<std::string>{} : std::vector<std::string>{report_history});
    ReportOptions ro;
    ro.title = report_title;
    ro.history_dir = report_history;
    const std::string html = render_report_html(read_sets(report_sets), ro);
    try {
        write_file_atomically(report_out, html);
    } catch (const std::exception &e) {
        std::cerr << "opbench report: " << printable(e.what()) << "\n";
        return kExitEnvironment;
    }
    std::cerr << fmt::format("opbench report: {} ({} KiB)\n", printable(report_out), html.size() / 1024);
    return 0;
}

int ReaderCommands::Options::run_history() {
    if (history->count("--output") > 0) check_reader_output(history_output, force, {}, {history_dir});
    HistoryOptions ho;
    ho.suite = history_suite;
    ho.case_regex = history_case;
    ho.machine_id = history_machine;
    ho.last = history_changes && history->count("--last") == 0 ? std::numeric_limits<std::size_t>::max()
                                                                 : history_last;
    ho.wide = wide || history_format != "console";
    ho.records = history_format == "csv"; // only csv writes them
    if (!find_writer(history_format))
        throw std::invalid_argument(fmt::format("--format {}: unknown (choose: {})", history_format, writer_names()));
    if (!history_changes) {
        if (history_fail_newest > 0) throw std::invalid_argument("history: --fail-on-change-in needs --changes");
        return emit(archive_history(history_dir, ho), history_format, history_output, "history");
    }
    return run_history_changes(ho);
}

// history --changes: the change points, and with --fail-on-change-in N
// exit 1 when a regression begins among the newest N runs.
int ReaderCommands::Options::run_history_changes(const HistoryOptions &ho) {
    ChangePointOptions co;
    co.penalty = history_penalty;
    ChangeHistory h = change_history(archive_series(history_dir, ho), co);
    h.confirmations = read_change_confirmations(history_dir);
    const int rc = emit(change_history_document(h, co), history_format, history_output, "history");
    if (rc != 0 || history_fail_newest == 0) return rc;
    const std::vector<std::string> found = newest_regressions(h, history_fail_newest);
    for (const auto &line : found) std::cerr << "opbench history: regression: " << printable(line) << "\n";
    if (found.empty()) return 0;
    std::cerr << fmt::format("opbench history: {} change{} to slower among the newest {} runs\n", found.size(),
                             found.size() == 1 ? "" : "s", history_fail_newest);
    return kExitRegression;
}

int ReaderCommands::Options::run_merge() {
    check_reader_output(merge_out, force, merge_sets);
    MergeOptions mo;
    mo.allow_mixed_machines = allow_mixed;
    Document merged;
    merged.compact = true;
    merged.data = merge_result_sets(read_merge_inputs(merge_sets), mo);
    try {
        // A result set, written as `opbench run` writes one: the json writer.
        write_file_atomically(merge_out, find_writer("json")->write(merged));
    } catch (const std::exception &e) {
        std::cerr << "opbench merge: " << printable(e.what()) << "\n";
        return kExitEnvironment;
    }
    std::cerr << fmt::format("opbench merge: {} sets, {} entries -> {}\n", merge_sets.size(),
                             merged.data["benchmarks"].size(), printable(merge_out));
    return 0;
}

int ReaderCommands::Options::run_archive() {
    if (*prune_cmd) {
        const PruneResult r = archive_prune(prune_dir, static_cast<std::size_t>(prune_keep));
        // Each file actually deleted, and each left with why: a row is not its file.
        for (const auto &f : r.removed_files) std::cout << fmt::format("removed {}\n", printable(f));
        for (const auto &why : r.refused) std::cerr << fmt::format("opbench archive prune: {}\n", printable(why));
        std::cout << fmt::format("opbench archive prune: removed {} set(s) ({} file(s)), {:.1f} MiB; kept {}; "
                                 "refused {}\n",
                                 r.removed.size(), r.removed_files.size(), double(r.bytes_freed) / (1 << 20), r.kept,
                                 r.refused.size());
        return 0;
    }
    if (archive_dir.empty() || archive_sets.empty()) {
        std::cerr << "opbench archive: give DIR and one or more result sets (opbench archive DIR SET.json...), or "
                     "opbench archive prune DIR --keep N\n";
        return kExitBadInput;
    }
    for (const auto &p : archive_sets) {
        const ArchiveEntry e = archive_store(archive_dir, read_result_set(p));
        std::cout << fmt::format("{} -> {}\n", printable(p),
                                 printable((std::filesystem::path(archive_dir) / e.path).string()));
    }
    return 0;
}

} // namespace opbench
