// The value of an FP8 e4m3 code from the OCP FP8 definition, written out
// for the naive tests (naive_fp8_test, naive_fp8_attention_test): an
// independent check on ops.hpp's e4m3_to_f32 / f32_to_e4m3.
#pragma once

#include <cmath>

namespace opbench::naive::test {

inline double e4m3_by_definition(int code) {
    const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
    const double mag = e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
    return s ? -mag : mag;
}

} // namespace opbench::naive::test
