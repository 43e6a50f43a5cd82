/* plugin.h compiles alone as C (and is included first, before anything). */
#include "opbench/plugin.h"
int header_alone_c(void) { return (int)sizeof(opb_backend_api); }
