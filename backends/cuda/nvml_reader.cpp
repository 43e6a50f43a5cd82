#include "nvml_reader.hpp"

#include <dlfcn.h>

#include <type_traits>
#include <utility>

namespace opbench::cuda {

namespace {

// nvml.h's types, as the library's C ABI has them.
using nvml_return = int;     // nvmlReturn_t: 0 is NVML_SUCCESS
using nvml_device = void *;  // nvmlDevice_t
constexpr int kTemperatureGpu = 0; // NVML_TEMPERATURE_GPU

std::string directory_of(const std::string &path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// The directory libcuda.so.1 came from, when this process has loaded it
// (the CUDA runtime has, once the backend asked for the driver's version):
// the driver installs NVML beside it.
std::string libcuda_directory() {
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!cuda) return {};
    std::string dir;
    Dl_info info{};
    if (void *sym = dlsym(cuda, "cuInit"); sym && dladdr(sym, &info) && info.dli_fname)
        dir = directory_of(info.dli_fname);
    dlclose(cuda);
    return dir;
}

} // namespace

std::vector<std::string> default_nvml_candidates() {
    std::vector<std::string> out{"libnvidia-ml.so.1"};
    if (const std::string dir = libcuda_directory(); !dir.empty()) out.push_back(dir + "/libnvidia-ml.so.1");
    out.emplace_back("/usr/local/nvidia/lib64/libnvidia-ml.so.1");
    return out;
}

struct NvmlReader::Api {
    nvml_return (*init)() = nullptr;
    nvml_return (*shutdown)() = nullptr;
    const char *(*error_string)(nvml_return) = nullptr;
    nvml_return (*by_uuid)(const char *, nvml_device *) = nullptr;
    nvml_return (*power_mw)(nvml_device, unsigned *) = nullptr;
    nvml_return (*temperature)(nvml_device, int, unsigned *) = nullptr;
    nvml_return (*reasons)(nvml_device, unsigned long long *) = nullptr;

    [[nodiscard]] std::string error(const std::string &what, nvml_return rc) const {
        const char *text = error_string ? error_string(rc) : nullptr;
        return what + ": " + (text ? text : "unknown error") + " (NVML error " + std::to_string(rc) +
               ")";
    }
};

NvmlReader::NvmlReader() : unavailable_("NVML not loaded") {}

NvmlReader::NvmlReader(const std::vector<std::string> &candidates, const std::string &uuid) {
    load(candidates, uuid);
    if (!unavailable_.empty()) close();
}

NvmlReader::~NvmlReader() { close(); }

NvmlReader::NvmlReader(NvmlReader &&other) noexcept { *this = std::move(other); }

NvmlReader &NvmlReader::operator=(NvmlReader &&other) noexcept {
    if (this == &other) return *this;
    close();
    lib_ = std::exchange(other.lib_, nullptr);
    api_ = std::exchange(other.api_, nullptr);
    device_ = std::exchange(other.device_, nullptr);
    initialised_ = std::exchange(other.initialised_, false);
    path_ = std::move(other.path_);
    unavailable_ = std::exchange(other.unavailable_, "NVML not loaded");
    refused_ = std::move(other.refused_);
    return *this;
}

void NvmlReader::close() {
    if (initialised_ && api_ && api_->shutdown) api_->shutdown();
    initialised_ = false;
    device_ = nullptr;
    delete api_;
    api_ = nullptr;
    if (lib_) dlclose(lib_);
    lib_ = nullptr;
}

void NvmlReader::load(const std::vector<std::string> &candidates, const std::string &uuid) {
    std::string tried;
    for (const std::string &c : candidates) {
        if ((lib_ = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) {
            path_ = c;
            break;
        }
        tried += (tried.empty() ? "" : ", ") + c;
    }
    if (!lib_) {
        unavailable_ = "NVML not loaded: no libnvidia-ml.so.1 (tried " + tried + ")";
        return;
    }
    api_ = new Api;
    std::string missing;
    auto resolve = [&](auto &fn, const char *name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib_, name));
        if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    resolve(api_->init, "nvmlInit_v2");
    resolve(api_->shutdown, "nvmlShutdown");
    resolve(api_->error_string, "nvmlErrorString");
    resolve(api_->by_uuid, "nvmlDeviceGetHandleByUUID");
    resolve(api_->power_mw, "nvmlDeviceGetPowerUsage");
    resolve(api_->temperature, "nvmlDeviceGetTemperature");
    // Renamed in CUDA 12.2's NVML; drivers before it have only the old name.
    api_->reasons = reinterpret_cast<decltype(api_->reasons)>(dlsym(lib_, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!api_->reasons) resolve(api_->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!missing.empty()) {
        unavailable_ = "NVML at " + path_ + " lacks " + missing;
        return;
    }
    if (const nvml_return rc = api_->init(); rc != 0) {
        unavailable_ = api_->error("NVML at " + path_ + ": nvmlInit_v2", rc);
        return;
    }
    initialised_ = true;
    nvml_device device = nullptr;
    if (const nvml_return rc = api_->by_uuid(uuid.c_str(), &device); rc != 0 || !device) {
        unavailable_ = api_->error("NVML: nvmlDeviceGetHandleByUUID(" + uuid + ")", rc);
        return;
    }
    device_ = device;
    unavailable_.clear();
    // Which figures the device refuses, said once here rather than per reading.
    unsigned value = 0;
    unsigned long long mask = 0;
    if (const nvml_return rc = api_->power_mw(device_, &value); rc != 0) refused_ += api_->error("; power", rc);
    if (const nvml_return rc = api_->temperature(device_, kTemperatureGpu, &value); rc != 0)
        refused_ += api_->error("; temperature", rc);
    if (const nvml_return rc = api_->reasons(device_, &mask); rc != 0) refused_ += api_->error("; reasons", rc);
}

std::string NvmlReader::status() const {
    if (!available()) return unavailable_;
    return "loaded from " + path_ + refused_;
}

NvmlSample NvmlReader::read() const {
    NvmlSample s;
    if (!available()) return s;
    unsigned value = 0;
    if (api_->power_mw(device_, &value) == 0) s.power_watts = value / 1000.0;
    if (api_->temperature(device_, kTemperatureGpu, &value) == 0) s.temperature_c = value;
    s.clock_event_reasons = reasons();
    return s;
}

std::uint64_t NvmlReader::reasons() const {
    unsigned long long mask = 0;
    if (!available() || api_->reasons(device_, &mask) != 0) return 0;
    // Idle is the GPU between the host's calls, not a limit on the work.
    return mask & ~kNvmlReasonGpuIdle;
}

} // namespace opbench::cuda
