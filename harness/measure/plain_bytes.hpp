// Plain data that crosses to a worker process as its bytes: an op case's
// description (isolate/case_host.cpp) and a decoder's shape
// (workload/workload_job.cpp). Both ends are the same program, so the bytes
// mean the same on both; they travel in JSON as lower-case hex.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace opbench {

[[nodiscard]] std::string bytes_to_hex(const void *data, std::size_t n);
// Throws std::invalid_argument naming `what` unless `hex` is 2n hex digits.
void bytes_from_hex(std::string_view hex, void *data, std::size_t n, std::string_view what);

template <class T>
[[nodiscard]] std::string plain_to_hex(const T &value) {
    static_assert(std::is_trivially_copyable_v<T>, "only plain data crosses as its bytes");
    return bytes_to_hex(&value, sizeof value);
}

template <class T>
void plain_from_hex(std::string_view hex, T &value, std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>, "only plain data crosses as its bytes");
    bytes_from_hex(hex, &value, sizeof value, what);
}

} // namespace opbench
