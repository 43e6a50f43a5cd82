// opbench/backend_helpers.hpp compiles alone as C++ (included first, before anything).
#include "opbench/backend_helpers.hpp"
int header_alone_backend_helpers_hpp() { return 0; }
