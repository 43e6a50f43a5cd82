// Where a plugin's profiling scopes (opb_host_services scope_begin/end) go.
// profile/'s Profiler is one; the loader forwards the scopes to whichever is
// attached and knows nothing of profiling.
#pragma once

namespace opbench {

class ScopeSink {
public:
    virtual void plugin_scope_begin(const char *name) = 0;
    virtual void plugin_scope_end() = 0;

protected:
    ~ScopeSink() = default;
};

} // namespace opbench
