// The reference store: full-mode reference outputs kept on disk, so a re-run
// of a suite does not recompute them (the naive f64 reference takes minutes
// on large GEMMs).
//
// One file per reference, named by a hash of its key, under
// <cache dir>/references (the cache dir as for the machine's peaks:
// $OPBENCH_CACHE_DIR, $XDG_CACHE_HOME/opbench or ~/.cache/opbench).
// A file holds the key in full, SHA-256 hashes of the inputs it was computed
// from and of its own output bytes, then the outputs. It is never trusted
// blindly: a load checks the key, hashes the caller's inputs and the bytes it
// read, and drops the file on any mismatch. Files are written atomically; the
// directory is kept under a size bound by deleting the least recently used
// files (a hit refreshes a file's time).
//
// The cache never fails a run: an unreadable or unwritable cache is a miss,
// and the reason is kept for one warning.
#pragma once

#include "check/verify.hpp"

#include "opbench/plugin.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

struct ReferenceKey {
    opb_op_desc desc{};          // threads are ignored: they do not change a reference's bits
    uint64_t input_seed = 0;     // make_inputs' seed
    std::string backend;         // the reference backend's name
    std::string backend_version; // its version, library versions, and whatever else identifies its build

    // One line per field, the description as its op, dtype, variant and the
    // hex of its parameter bytes: the same text for the same reference.
    [[nodiscard]] std::string text() const;
    // The file name: hex of the key text's SHA-256, ".ref".
    [[nodiscard]] std::string file_name() const;
};

// SHA-256 of a file's bytes (hex); "unreadable" when it cannot be read.
[[nodiscard]] std::string file_sha256(const std::string &path);

// SHA-256 of the buffers in order, each preceded by its length (hex).
[[nodiscard]] std::string sha256_of(const std::vector<const std::vector<uint8_t> *> &buffers);

class ReferenceStore {
public:
    static constexpr uint64_t kDefaultMaxBytes = 4ull << 30; // 4 GiB

    ReferenceStore(std::filesystem::path dir, uint64_t max_bytes);

    // <machine cache dir>/references.
    [[nodiscard]] static std::filesystem::path default_dir();

    // The outputs stored for `key`, when the file exists, its key matches,
    // `inputs` (their input tensors) hash as stored and the outputs read back
    // hash as stored. A file that fails a check is removed.
    [[nodiscard]] std::optional<std::vector<std::vector<uint8_t>>> load(const ReferenceKey &key,
                                                                        const HostTensors &inputs);

    // Stores `outputs` for `key` (atomically), then deletes least recently
    // used files until the directory fits max_bytes. An entry larger than
    // max_bytes by itself is not stored.
    void store(const ReferenceKey &key, const HostTensors &inputs, const std::vector<std::vector<uint8_t>> &outputs);

    // The outputs for `key`: loaded when a stored file passes every check,
    // else computed by `compute` and stored. `source` is set to "cache" or
    // "computed". Exceptions from `compute` pass through; nothing is stored then.
    [[nodiscard]] Outputs load_or_compute(const ReferenceKey &key, const HostTensors &inputs,
                                          const std::function<Outputs()> &compute, std::string &source);

    struct Counters {
        int hits = 0, misses = 0, rejected = 0, stored = 0, evicted = 0, errors = 0;
    };
    [[nodiscard]] const Counters &counters() const { return counters_; }
    // Why the last load was rejected or the last store failed ("" if none).
    [[nodiscard]] const std::string &last_problem() const { return last_problem_; }
    [[nodiscard]] const std::filesystem::path &dir() const { return dir_; }

private:
    void evict_to_fit(const std::filesystem::path &keep);

    std::filesystem::path dir_;
    uint64_t max_bytes_;
    Counters counters_;
    std::string last_problem_;
};

} // namespace opbench
