// opbench/ops.hpp compiles alone as C++ (included first, before anything).
#include "opbench/ops.hpp"
int header_alone_ops_hpp() { return 0; }
