// opbench/two_halves.hpp compiles alone as C++ (included first, before anything).
#include "opbench/two_halves.hpp"
int header_alone_two_halves_hpp() { return 0; }
