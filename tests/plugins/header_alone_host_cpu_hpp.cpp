// opbench/host_cpu.hpp compiles alone as C++ (included first, before anything).
#include "opbench/host_cpu.hpp"
int header_alone_host_cpu_hpp() { return 0; }
