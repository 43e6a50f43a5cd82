// exit() for the whole opbench process, plugins and their libraries
// included: linked into the executable only (as the allocation interposer
// is), whose exported definition every shared library's call binds to. It
// hands a call made during a run to the run's guard (run/exit_guard.hpp),
// and otherwise to the C library's exit. The C library's own call after
// main returns does not come through here.
#include "run/exit_guard.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

extern "C" void exit(int status) noexcept {
    opbench::run_exit_guard(status);
    using ExitFn = void (*)(int);
    static const auto real = reinterpret_cast<ExitFn>(::dlsym(RTLD_NEXT, "exit"));
    if (real) real(status);
    ::_exit(status); // no C library exit found: end without flushing, but end
}
