// opbench/scope.hpp compiles alone as C++ (included first, before anything).
#include "opbench/scope.hpp"
int header_alone_scope_hpp() { return 0; }
