// What the oneDNN backend can run on the ISA oneDNN dispatches to, for tests
// that must hold on every x86-64 CPU. The ISA comes from the backend itself
// (its `onednn_isa` fact, or dnnl::get_effective_cpu_isa()), so
// ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine sees what an AVX2 CPU sees.
#pragma once

#include <opbench/plugin.h>

#include <string>
#include <string_view>

namespace opbench::test {

// oneDNN 2.6 has bf16 kernels from AVX512_CORE up (emulated there, native
// from avx512_core_bf16) and none below it: on AVX2 every bf16 case is
// refused, with the dtype and the ISA in the reason.
inline bool onednn_isa_runs_bf16(std::string_view isa) { return isa.starts_with("avx512_core"); }

// The backend's `onednn_isa` fact ("" from a backend that reports none).
inline std::string onednn_isa_of(const opb_backend_api &api, opb_backend *be) {
    std::string isa;
    if (api.info)
        api.info(
            be,
            [](void *u, const char *k, const char *v) {
                if (std::string_view(k) == "onednn_isa") *static_cast<std::string *>(u) = v;
            },
            &isa);
    return isa;
}

} // namespace opbench::test
