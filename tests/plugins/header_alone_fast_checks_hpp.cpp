// opbench/fast_checks.hpp compiles alone as C++ (included first, before anything).
#include "opbench/fast_checks.hpp"
int header_alone_fast_checks_hpp() { return 0; }
