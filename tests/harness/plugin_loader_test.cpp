// The plugin loader: the ABI handshake against fake plugins (one per defect),
// discovery over directories and OPBENCH_PLUGIN_PATH, and BackendInstance.
#include "plugin_loader.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <string>

using namespace opbench;

namespace {

std::string fake(const std::string &file) { return std::string(FAKE_PLUGIN_DIR) + "/" + file; }

// Loads a file expected to be refused and returns the one-line reason.
std::string refusal(const std::string &file) {
    LoadResult r = load_plugin(fake(file));
    EXPECT_FALSE(r.plugin.has_value()) << file << " should have been refused";
    if (!r.failure) return "";
    EXPECT_EQ(r.failure->reason.find('\n'), std::string::npos) << "one line: " << r.failure->reason;
    EXPECT_NE(r.failure->reason.find(fake(file)), std::string::npos) << "names the file: " << r.failure->reason;
    return r.failure->reason;
}

} // namespace

TEST(LoadPlugin, AcceptsAWellFormedPlugin) {
    LoadResult r = load_plugin(fake("fake-good.so"));
    ASSERT_TRUE(r.plugin.has_value()) << (r.failure ? r.failure->reason : "");
    EXPECT_EQ(r.plugin->name(), "fake");
    EXPECT_EQ(r.plugin->path, fake("fake-good.so"));
}

TEST(LoadPlugin, AcceptsALaterMinorVersionWithALongerTable) {
    LoadResult r = load_plugin(fake("fake-newer-minor.so"));
    ASSERT_TRUE(r.plugin.has_value()) << (r.failure ? r.failure->reason : "");
    EXPECT_GT(r.plugin->api->struct_size, sizeof(opb_backend_api));
}

TEST(LoadPlugin, RefusesAnotherMajorVersionNamingSymbolAndBothVersions) {
    std::string why = refusal("fake-wrong-major.so");
    EXPECT_NE(why.find("opb_plugin_entry"), std::string::npos) << why;
    const std::string minor = std::to_string(OPB_ABI_VERSION_MINOR);
    EXPECT_NE(why.find("plugin ABI version 2.0"), std::string::npos) << why;
    EXPECT_NE(why.find("host ABI version 1." + minor), std::string::npos) << why;
}

TEST(LoadPlugin, RefusesAShortStruct) {
    std::string why = refusal("fake-short-struct.so");
    EXPECT_NE(why.find("short struct"), std::string::npos) << why;
    EXPECT_NE(why.find("24 bytes"), std::string::npos) << why;
}

TEST(LoadPlugin, RefusesANullTable) {
    EXPECT_NE(refusal("fake-null-table.so").find("returned no table"), std::string::npos);
}

TEST(LoadPlugin, RefusesANullMandatoryEntry) {
    std::string why = refusal("fake-null-entry.so");
    EXPECT_NE(why.find("mandatory entry 'prepare' is NULL"), std::string::npos) << why;
}

TEST(LoadPlugin, RefusesALibraryWithoutTheEntrySymbol) {
    std::string why = refusal("fake-no-entry.so");
    EXPECT_NE(why.find("no symbol opb_plugin_entry"), std::string::npos) << why;
}

TEST(LoadPlugin, RefusesAFileThatIsNotASharedLibrary) {
    std::string why = refusal("fake-not-elf.so");
    EXPECT_NE(why.find("not a loadable shared library"), std::string::npos) << why;
}

TEST(DiscoverPlugins, LoadsTheGoodOnesAndRefusesEachBadOneOnce) {
    PluginSet set = discover_plugins({FAKE_PLUGIN_DIR});
    EXPECT_NE(set.find("fake"), nullptr);
    EXPECT_NE(set.find("fake_newer"), nullptr);
    // Other test plugins share the directory; count the fakes only.
    std::size_t fakes = 0;
    for (const auto &p : set.plugins) fakes += p.name().rfind("fake", 0) == 0;
    EXPECT_EQ(fakes, 2u);
    // wrong major, short, null table, null entry, no entry, not ELF
    EXPECT_EQ(set.failures.size(), 6u);
    for (const auto &f : set.failures) EXPECT_FALSE(f.reason.empty());
}

TEST(DiscoverPlugins, OpensAFileNamedTwiceOnce) {
    PluginSet set = discover_plugins({fake("fake-good.so"), fake("fake-good.so")});
    EXPECT_EQ(set.plugins.size(), 1u);
    EXPECT_TRUE(set.failures.empty());
}

TEST(DiscoverPlugins, RefusesASecondPluginOfTheSameNameNamingTheFirst) {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("opbench-dup-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::copy_file(fake("fake-good.so"), dir / "copy-of-fake.so", fs::copy_options::overwrite_existing);
    PluginSet set = discover_plugins({fake("fake-good.so"), (dir / "copy-of-fake.so").string()});
    fs::remove_all(dir);
    ASSERT_EQ(set.plugins.size(), 1u);
    ASSERT_EQ(set.failures.size(), 1u);
    EXPECT_NE(set.failures[0].reason.find("backend 'fake' is already loaded from " + fake("fake-good.so")),
              std::string::npos)
        << set.failures[0].reason;
}

TEST(DiscoverPlugins, ReportsAMissingPath) {
    PluginSet set = discover_plugins({"/nonexistent/opbench-plugins"});
    ASSERT_EQ(set.failures.size(), 1u);
    EXPECT_NE(set.failures[0].reason.find("no such file or directory"), std::string::npos);
}

TEST(DefaultSearchPaths, StartWithEveryEntryOfOpbenchPluginPath) {
    setenv("OPBENCH_PLUGIN_PATH", "/a/dir::/b/file.so", 1);
    auto paths = default_plugin_search_paths();
    unsetenv("OPBENCH_PLUGIN_PATH");
    ASSERT_GE(paths.size(), 2u);
    EXPECT_EQ(paths[0], "/a/dir");
    EXPECT_EQ(paths[1], "/b/file.so");
}

TEST(BackendInstance, CreatesProbesAndReportsErrorsThroughLastError) {
    PluginSet set = discover_plugins({fake("fake-good.so")});
    ASSERT_EQ(set.plugins.size(), 1u);
    BackendInstance be(set.plugins[0]);
    ASSERT_TRUE(be.usable()) << be.unusable_reason();
    opb_op_desc d{};
    d.struct_size = sizeof d;
    d.abi_version = OPB_ABI_VERSION;
    opb_status s = be.api().supports(be.handle(), &d);
    EXPECT_EQ(s, OPB_ERR_UNSUPPORTED);
    EXPECT_EQ(be.error_text(s), "the fake backend runs no op");
}
