// opbench/plugin.h compiles alone as C++ (included first, before anything).
#include "opbench/plugin.h"
int header_alone_plugin_h() { return 0; }
