/* A shared library that is not an opbench plugin: it lacks opb_plugin_entry. */
__attribute__((visibility("default"))) int some_other_library_function(void) { return 42; }
