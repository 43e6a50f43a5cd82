// --plugin NAME@VARIANT=PATH (harness/plugin/plugin_variant.hpp): the spec's
// parts, the errors for bad specs, and the variant's backend. Loading a
// variant through the trust and ABI checks is covered end to end by
// tests/harness/paired_e2e_test.sh.
#include "plugin/plugin_variant.hpp"

#include <gtest/gtest.h>

using namespace opbench;

TEST(PluginSpec, Parts) {
    const PluginVariantSpec s = parse_plugin_spec("onednn@base=old/dir/opbench-backend-onednn.so");
    EXPECT_EQ(s.backend, "onednn");
    EXPECT_EQ(s.variant, "base");
    EXPECT_EQ(s.path, "old/dir/opbench-backend-onednn.so");
    EXPECT_EQ(s.instance(), "onednn@base");
    // '=' and '@' later in the path belong to the path.
    EXPECT_EQ(parse_plugin_spec("naive@new=a=b@c.so").path, "a=b@c.so");
}

TEST(PluginSpec, BadSpecsSayWhatIsValid) {
    for (const char *bad : {"naive", "naive=x.so", "naive@=x.so", "@new=x.so", "naive@new=", "na ive@new=x.so",
                            "naive@n/w=x.so"}) {
        try {
            (void)parse_plugin_spec(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const PluginSpecError &e) {
            EXPECT_NE(std::string(e.what()).find("NAME@VARIANT=PATH"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        }
    }
}

TEST(PluginSpec, VariantNames) {
    EXPECT_EQ(variant_backend("onednn@base"), "onednn");
    EXPECT_EQ(variant_label("onednn@base"), "base");
    EXPECT_EQ(variant_backend("naive"), "naive");
    EXPECT_EQ(variant_label("naive"), "");
}

// A refused build names where it was written: the command line, or the
// suite entry's file:line:col (set by the suite parser as the spec's origin).
TEST(PluginSpec, MissingFileIsRefusedNamingWhereItWasWritten) {
    PluginSet set;
    try {
        add_plugin_variants(set, {parse_plugin_spec("naive@x=/nonexistent/plugin.so")}, false);
        ADD_FAILURE() << "a missing file was accepted";
    } catch (const PluginSpecError &e) {
        EXPECT_EQ(std::string(e.what()), "--plugin naive@x=/nonexistent/plugin.so: no such plugin file");
    }
    PluginVariantSpec from_suite = parse_plugin_spec("naive@x=/nonexistent/plugin.so");
    from_suite.origin = "suites/ab.toml:4:12: plugins";
    try {
        add_plugin_variants(set, {from_suite}, false);
        ADD_FAILURE() << "a missing file was accepted";
    } catch (const PluginSpecError &e) {
        EXPECT_EQ(std::string(e.what()), "suites/ab.toml:4:12: plugins naive@x=/nonexistent/plugin.so: no such plugin file");
    }
    EXPECT_TRUE(set.plugins.empty());
}
