// The precompiled header of harness_unit_tests (tests/harness/meson.build):
// what most of its sources include, parsed once for all of them (issue 27).
// Each source still includes what it uses: this only makes it faster.
// (No #pragma once: GCC compiles it as a main file and warns.)

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
