// NVML, loaded at run time: board power, temperature and the clock-event
// ("throttle") reasons of one GPU, for the repetition's clock reading
// (opb_clock_reading; issue 41 item 2).
//
// No CUDA and no nvml.h here: the library is dlopen'ed, so the plugin loads
// where the driver's NVML is absent, and this unit is tested on any machine
// against a fake libnvidia-ml (tests/backends/cuda/fake_nvml.c).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opbench::cuda {

// NVML's clock-event reason bits (nvml.h, nvmlClocksEventReason*).
inline constexpr std::uint64_t kNvmlReasonGpuIdle = 0x1;

// One reading; each figure is unknown on its own when NVML refuses it.
struct NvmlSample {
    double power_watts = -1;              // < 0 unknown
    double temperature_c = -1000;         // < -273 unknown
    std::uint64_t clock_event_reasons = 0; // without GpuIdle; 0 none or unknown
};

// Where to look for libnvidia-ml.so.1, in order: the loader's path, the
// directory libcuda.so.1 was loaded from (when it is), and
// /usr/local/nvidia/lib64 (where containers mount the driver's libraries).
[[nodiscard]] std::vector<std::string> default_nvml_candidates();

class NvmlReader {
public:
    // Not loaded: unavailable() says so.
    NvmlReader();
    // Loads the first candidate that opens, resolves its symbols, initialises
    // NVML and finds the GPU whose UUID is `uuid` ("GPU-8c3f..."). Never
    // throws: on failure unavailable() holds one line saying why.
    NvmlReader(const std::vector<std::string> &candidates, const std::string &uuid);
    ~NvmlReader();
    NvmlReader(const NvmlReader &) = delete;
    NvmlReader &operator=(const NvmlReader &) = delete;
    NvmlReader(NvmlReader &&other) noexcept;
    NvmlReader &operator=(NvmlReader &&other) noexcept;

    [[nodiscard]] bool available() const { return device_ != nullptr; }
    // Why there is no reading ("" when available).
    [[nodiscard]] const std::string &unavailable() const { return unavailable_; }
    // One line for the backend's info: where NVML came from and which
    // figures it refuses, or why it is unavailable.
    [[nodiscard]] std::string status() const;
    // Power, temperature and reasons now; all unknown when unavailable.
    [[nodiscard]] NvmlSample read() const;
    // The reasons mask alone (cheaper than read()); 0 when unknown.
    [[nodiscard]] std::uint64_t reasons() const;

private:
    struct Api;
    void load(const std::vector<std::string> &candidates, const std::string &uuid);
    void close();

    void *lib_ = nullptr;
    Api *api_ = nullptr;
    void *device_ = nullptr; // nvmlDevice_t
    bool initialised_ = false;
    std::string path_, unavailable_, refused_;
};

} // namespace opbench::cuda
