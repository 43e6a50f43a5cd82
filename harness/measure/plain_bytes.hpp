// Plain data that crosses to a worker process as its bytes: an op case's
// description and measurement settings (isolate/case_host.hpp) and a
// decoder's shape (workload/workload_job.hpp). Both ends are the same
// program, so the bytes mean the same on both, and a field added to one of
// these structs crosses without a line of conversion code. A type opts in by
// naming itself (kPlainBytesName); its JSON is then a binary value, which
// the worker pipe's CBOR carries as it is (isolate/worker.hpp). JSON text
// has no binary type: these values are for the pipe, never for result sets.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace opbench {

// What a plain-bytes type is called in errors ("case description"); empty:
// the type does not cross as its bytes. Specialise it to opt a type in.
template <class T>
inline constexpr std::string_view kPlainBytesName{};

template <class T>
inline constexpr bool kCrossesAsBytes = !kPlainBytesName<T>.empty();

} // namespace opbench

namespace nlohmann {

template <class T>
struct adl_serializer<T, std::enable_if_t<opbench::kCrossesAsBytes<T>>> {
    static_assert(std::is_trivially_copyable_v<T>, "only plain data crosses as its bytes");

    static void to_json(json &j, const T &value) {
        const auto *bytes = reinterpret_cast<const std::uint8_t *>(&value);
        j = json::binary(std::vector<std::uint8_t>(bytes, bytes + sizeof value));
    }
    // Throws json::type_error unless `j` is binary, std::invalid_argument
    // naming the type unless it holds exactly sizeof(T) bytes.
    static void from_json(const json &j, T &value) {
        const json::binary_t &bytes = j.get_binary();
        if (bytes.size() != sizeof value)
            throw std::invalid_argument(std::string(opbench::kPlainBytesName<T>) + " of " +
                                        std::to_string(bytes.size()) + " bytes, expected " +
                                        std::to_string(sizeof value));
        std::memcpy(&value, bytes.data(), sizeof value);
    }
};

} // namespace nlohmann
