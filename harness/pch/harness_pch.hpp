// Precompiled once per harness library and read before each of its sources
// (Meson's cpp_pch): the standard and library headers most of them include.
// Parsing them again in every source was about 9% of quickstart's compile
// (issue 27). Sources still include what they use: function_length's
// libclang parse reads each one without this header and fails on an error.
// No include guard: a precompiled header is its own main file.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
