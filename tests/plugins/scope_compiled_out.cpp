// Built with OPB_PROFILING_SCOPES=0 (tests/plugins/meson.build): OPB_SCOPE
// must expand to nothing here, whatever the host's switch says.
#include "opbench/scope.hpp"

int scope_compiled_out_run(const opbench::sdk::ScopeHost &host) {
    int work = 0;
    {
        OPB_SCOPE(host, "compiled-out");
        work += 1;
    }
    return work;
}
