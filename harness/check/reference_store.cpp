#include "check/reference_store.hpp"

#include "files/atomic_file.hpp"
#include "machine/machine.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace fs = std::filesystem;

namespace opbench {

namespace {

constexpr const char *kMagic = "opbench-reference 1";

std::string hex(const unsigned char *p, std::size_t n) {
    std::string s;
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
    return s;
}

std::string sha256_text(const std::string &text) {
    std::vector<uint8_t> bytes(text.begin(), text.end());
    return sha256_of({&bytes});
}

} // namespace

std::string sha256_of(const std::vector<const std::vector<uint8_t> *> &buffers) {
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot start a SHA-256 digest");
    for (const auto *b : buffers) {
        const uint64_t n = b->size(); // the length first: [ab][c] and [a][bc] differ
        if (EVP_DigestUpdate(ctx.get(), &n, sizeof n) != 1 || EVP_DigestUpdate(ctx.get(), b->data(), b->size()) != 1)
            throw std::runtime_error("OpenSSL: SHA-256 update failed");
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) throw std::runtime_error("OpenSSL: SHA-256 final failed");
    return hex(md, len);
}

std::string file_sha256(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "unreadable";
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return sha256_of({&bytes});
}

std::string ReferenceKey::text() const {
    // The parameter union as bytes: the harness needs no op's field names,
    // and descriptions are zero-filled (make_desc) so padding is stable.
    const auto *params = reinterpret_cast<const unsigned char *>(&desc.p);
    return fmt::format("op {}\ndtype {}\nvariant {}\nparams {}\nseed {}\nbackend {}\nversion {}\n", desc.op, desc.dtype,
                       desc.variant, hex(params, sizeof desc.p), input_seed, backend, backend_version);
}

std::string ReferenceKey::file_name() const { return sha256_text(text()).substr(0, 40) + ".ref"; }

ReferenceStore::ReferenceStore(fs::path dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

fs::path ReferenceStore::default_dir() {
    const fs::path cache = machine_cache_dir();
    return cache.empty() ? fs::path() : cache / "references";
}

namespace {
std::vector<const std::vector<uint8_t> *> input_buffers(const HostTensors &t) {
    std::vector<const std::vector<uint8_t> *> v;
    for (std::size_t i = 0; i < t.buffers.size(); ++i)
        if (!t.is_output[i]) v.push_back(&t.buffers[i]);
    return v;
}
} // namespace

std::optional<std::vector<std::vector<uint8_t>>> ReferenceStore::load(const ReferenceKey &key,
                                                                      const HostTensors &inputs) {
    const fs::path path = dir_ / key.file_name();
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        ++counters_.misses;
        return std::nullopt;
    }
    auto reject = [&](const std::string &why) -> std::optional<std::vector<std::vector<uint8_t>>> {
        ++counters_.rejected;
        ++counters_.misses;
        last_problem_ = fmt::format("reference store: dropped {}: {}", path.string(), why);
        in.close();
        std::error_code ec;
        fs::remove(path, ec);
        return std::nullopt;
    };
    std::string magic, header_line;
    if (!std::getline(in, magic) || magic != kMagic) return reject("not a reference file of this version");
    if (!std::getline(in, header_line)) return reject("no header");
    nlohmann::json header;
    try {
        header = nlohmann::json::parse(header_line);
        if (header.at("key").get<std::string>() != key.text()) return reject("stored for another key");
        if (header.at("inputs_sha256").get<std::string>() != sha256_of(input_buffers(inputs)))
            return reject("the inputs it was computed from differ from this run's");
        std::vector<std::vector<uint8_t>> outputs;
        for (const auto &size : header.at("output_bytes")) {
            std::vector<uint8_t> b(size.get<uint64_t>());
            if (!in.read(reinterpret_cast<char *>(b.data()), std::streamsize(b.size()))) return reject("truncated");
            outputs.push_back(std::move(b));
        }
        if (in.peek() != std::char_traits<char>::eof()) return reject("longer than its header says");
        std::vector<const std::vector<uint8_t> *> ptrs;
        for (const auto &b : outputs) ptrs.push_back(&b);
        if (header.at("outputs_sha256").get<std::string>() != sha256_of(ptrs))
            return reject("its outputs do not match their stored hash");
        // A hit is a use: the least recently used files go first.
        std::error_code ec;
        fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
        ++counters_.hits;
        return outputs;
    } catch (const nlohmann::json::exception &e) {
        return reject(std::string("unreadable header: ") + e.what());
    }
}

void ReferenceStore::store(const ReferenceKey &key, const HostTensors &inputs,
                           const std::vector<std::vector<uint8_t>> &outputs) {
    try {
        uint64_t bytes = 0;
        std::vector<const std::vector<uint8_t> *> ptrs;
        nlohmann::json sizes = nlohmann::json::array();
        for (const auto &b : outputs) {
            bytes += b.size();
            ptrs.push_back(&b);
            sizes.push_back(b.size());
        }
        if (bytes > max_bytes_) return; // would evict everything else and still not fit
        nlohmann::json header = {{"key", key.text()},
                                 {"inputs_sha256", sha256_of(input_buffers(inputs))},
                                 {"outputs_sha256", sha256_of(ptrs)},
                                 {"output_bytes", sizes}};
        std::string text = std::string(kMagic) + "\n" + header.dump() + "\n";
        text.reserve(text.size() + bytes);
        for (const auto &b : outputs) text.append(reinterpret_cast<const char *>(b.data()), b.size());
        const fs::path path = dir_ / key.file_name();
        write_file_atomically(path.string(), text);
        ++counters_.stored;
        evict_to_fit(path);
    } catch (const std::exception &e) {
        ++counters_.errors;
        last_problem_ = fmt::format("reference store: cannot store in {}: {}", dir_.string(), e.what());
    }
}

Outputs ReferenceStore::load_or_compute(const ReferenceKey &key, const HostTensors &inputs,
                                        const std::function<Outputs()> &compute, std::string &source) {
    if (auto cached = load(key, inputs)) {
        source = "cache";
        return std::move(*cached);
    }
    Outputs computed = compute();
    store(key, inputs, computed);
    source = "computed";
    return computed;
}

void ReferenceStore::evict_to_fit(const fs::path &keep) {
    struct Entry {
        fs::path path;
        fs::file_time_type used;
        uint64_t bytes;
    };
    std::vector<Entry> entries;
    uint64_t total = 0;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir_, ec)) {
        if (e.path().extension() != ".ref" || !e.is_regular_file(ec)) continue;
        Entry entry{e.path(), e.last_write_time(ec), e.file_size(ec)};
        if (ec) continue; // removed by another run meanwhile
        total += entry.bytes;
        entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.used < b.used; });
    for (const auto &e : entries) {
        if (total <= max_bytes_) break;
        if (e.path == keep) continue;
        if (fs::remove(e.path, ec)) ++counters_.evicted;
        total -= e.bytes;
    }
}

} // namespace opbench
