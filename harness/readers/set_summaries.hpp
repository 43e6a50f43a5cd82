// A result set's entry summaries: the compact file the archive keeps beside
// each set (DIR/<machine>/<suite>/<time>-<commit>.summaries.cbor) so that
// `opbench history` reads ~34 KB per run instead of parsing a 2 MB set
// (issue 17: history over 1,000 archived runs in < 2 s). The file is CBOR
// (RFC 8949, nlohmann::json's to_cbor), in columns: parsing is most of
// history's time, and as JSON text, or an object per entry, it took 1.2-1.5x
// as long (docs/ci.md, "The archive"); doubles stay exact.
//
// Per entry it keeps what history shows and the figures its one summary
// (measure/entry_summary.hpp) is computed from: the case's identity, status
// and reason, each passed repetition's median, noise, target met, timed out,
// fastest sample and process, and the entry's conditions. Reading it back
// gives the set's CaseRecords without samples, so valid_times() and
// entry_summary() give history the same median and quality as from the set.
#pragma once

#include "readers/result_set_reader.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace opbench {

// 2: each repetition also holds starved, starved_share and remeasured
// (version 1's six fields still read, as never starved). 3: and throttled
// (issue 41; version 2's nine still read, as never throttled).
inline constexpr int kSetSummariesVersion = 3;

// "<stem>.summaries.cbor" for the set file "<stem>.json".
[[nodiscard]] std::string set_summaries_file_name(const std::string &set_file_name);

// The summaries of `set` (its identity context, then one object per entry).
[[nodiscard]] nlohmann::json set_summaries(const ResultSet &set);
// The same as the file's bytes (CBOR).
[[nodiscard]] std::string set_summaries_bytes(const ResultSet &set);

// The set again, from its summaries (the document or the file's bytes):
// context (the identity part only) and cases with repetitions but no
// samples. `set_path` becomes the set's path (its short name in tables);
// `summaries_path` names the file in errors. Throws ResultSetError for
// malformed input or another version. Takes the document by value: its
// texts and objects move into the set (pass an rvalue to spare a copy).
[[nodiscard]] ResultSet set_from_summaries(nlohmann::json summaries, const std::string &summaries_path,
                                           const std::string &set_path);
[[nodiscard]] ResultSet read_set_summaries(const std::string &summaries_path, const std::string &set_path);
// The same from the file's bytes (CBOR, nesting bounded).
[[nodiscard]] ResultSet set_from_summaries_bytes(const std::string &bytes, const std::string &summaries_path,
                                                 const std::string &set_path);

} // namespace opbench
