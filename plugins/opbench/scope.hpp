// opbench SDK — profiling scopes for plugin authors. Standard library only.
//
// Mark the steps of an op so that `opbench run --profile` and `--trace` show
// where its time goes:
//
//     opbench::sdk::ScopeHost scopes(services);   // once, e.g. in the backend instance
//     ...
//     {
//         OPB_SCOPE(scopes, "softmax");          // RAII: ends at the closing brace
//         softmax_rows(...);
//     }
//
// Cost. ScopeHost reads the host's profiling switch (opb_host_services.profiling,
// ABI 1.1) once when it is made and keeps a pointer to the word; a scope then
// costs one load and one branch while the host is not profiling (measured in
// docs/measurement.md, "Profiling scopes"). With an ABI 1.0 host, which has no
// switch, the scope calls scope_begin / scope_end always (that host's
// functions do nothing).
//
// Compiled out: build with OPB_PROFILING_SCOPES defined to 0 (opbench's Meson
// option -Dprofiling_scopes=false does this) and OPB_SCOPE expands to nothing.
//
// Rules: a scope begins and ends on the same thread; scopes nest (the host
// keeps one stack per thread); `name` must stay valid until the scope ends
// (a string literal is the usual choice; the host copies it).
#ifndef OPBENCH_SCOPE_HPP
#define OPBENCH_SCOPE_HPP

#include "plugin.h"

#include <cstddef>
#include <cstdint>

#ifndef OPB_PROFILING_SCOPES
#define OPB_PROFILING_SCOPES 1
#endif

namespace opbench::sdk {

// Where scopes go: the services' scope functions and the word that says
// whether the host is recording. Cheap to copy; valid while the services are.
class ScopeHost {
public:
    ScopeHost() = default;
    explicit ScopeHost(const opb_host_services *services) noexcept : services_(services) {
        if (services_ == nullptr) {
            enabled_ = &kOff;
        } else if (services_->struct_size >= offsetof(opb_host_services, profiling) + sizeof(services_->profiling) &&
                   services_->profiling != nullptr) {
            enabled_ = services_->profiling;
        } else {
            enabled_ = &kOn; // ABI 1.0 host: no switch; its scope functions are cheap no-ops
        }
    }

    // True while the host records scopes (the one branch a scope costs).
    [[nodiscard]] bool recording() const noexcept { return *enabled_ != 0; }
    void begin(const char *name) const noexcept { services_->scope_begin(services_->host, name); }
    void end() const noexcept { services_->scope_end(services_->host); }

private:
    static constexpr uint32_t kOff = 0, kOn = 1;
    const opb_host_services *services_ = nullptr;
    const uint32_t *enabled_ = &kOff;
};

#if OPB_PROFILING_SCOPES

// One named region: begins when made, ends when destroyed, if the host was
// recording when it began (so begin and end always pair).
class Scope {
public:
    Scope(const ScopeHost &host, const char *name) noexcept : host_(host.recording() ? &host : nullptr) {
        if (host_) host_->begin(name);
    }
    ~Scope() {
        if (host_) host_->end();
    }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

private:
    const ScopeHost *host_;
};

#define OPB_SCOPE_CONCAT_(a, b) a##b
#define OPB_SCOPE_CONCAT(a, b) OPB_SCOPE_CONCAT_(a, b)
// OPB_SCOPE(scope_host, "name"): a scope until the end of the enclosing block.
#define OPB_SCOPE(scope_host, name)                                                                                    \
    const ::opbench::sdk::Scope OPB_SCOPE_CONCAT(opb_scope_, __LINE__)((scope_host), (name))

#else

// Unevaluated: the arguments count as used, and nothing runs.
#define OPB_SCOPE(scope_host, name) static_cast<void>(sizeof(scope_host) + sizeof(name))

#endif

} // namespace opbench::sdk

#endif // OPBENCH_SCOPE_HPP
