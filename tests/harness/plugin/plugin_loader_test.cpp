// The plugin loader: the ABI handshake against fake plugins (one per defect),
// discovery over directories and OPBENCH_PLUGIN_PATH, and BackendInstance.
#include "plugin/plugin_loader.hpp"
#include "plugin/backend_facts.hpp"
#include "plugin/backend_sessions.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
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

TEST(LoadPlugin, AnAbi15PluginOffersTheDeviceEntriesAndA14OneLoadsWithout) {
    LoadResult now = load_plugin(fake("fake-good.so"));
    ASSERT_TRUE(now.plugin.has_value());
    EXPECT_TRUE(OPB_API_HAS(now.plugin->api, device_clocks));
    EXPECT_TRUE(OPB_API_HAS(now.plugin->api, measure_roofs));
    EXPECT_TRUE(OPB_API_HAS(now.plugin->api, clock_end));
    EXPECT_TRUE(OPB_API_HAS(now.plugin->api, timer_host_seconds));
    // Built against 1.4: its table ends before the 1.5 entries (set in its
    // static storage past struct_size, which the host must not read).
    LoadResult old = load_plugin(fake("fake-abi-1-4.so"));
    ASSERT_TRUE(old.plugin.has_value()) << (old.failure ? old.failure->reason : "");
    EXPECT_EQ(OPB_ABI_MINOR(old.plugin->api->abi_version), 4u);
    EXPECT_FALSE(OPB_API_HAS(old.plugin->api, device_clocks));
    EXPECT_FALSE(OPB_API_HAS(old.plugin->api, measure_roofs));
    EXPECT_FALSE(OPB_API_HAS(old.plugin->api, clock_begin));
    EXPECT_FALSE(OPB_API_HAS(old.plugin->api, timer_host_seconds));
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

// A scratch directory (mode 0755) removed at the end of a test.
struct ScratchDir {
    std::filesystem::path path;
    explicit ScratchDir(const std::string &tag) {
        namespace fs = std::filesystem;
        path = fs::temp_directory_path() / ("opbench-" + tag + "-" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
        fs::permissions(path, fs::perms::others_write | fs::perms::group_write, fs::perm_options::remove);
    }
    ~ScratchDir() { std::filesystem::remove_all(path); }
    std::string add(const std::string &fake_file, const std::string &as) const {
        std::filesystem::copy_file(fake(fake_file), path / as);
        return (path / as).string();
    }
};

TEST(DiscoverPlugins, LoadsTheGoodOnesAndRefusesEachBadOneOnce) {
    // A directory contributes its opbench-backend-*.so files only.
    ScratchDir dir("discover");
    for (const char *f :
         {"good", "newer-minor", "wrong-major", "short-struct", "null-table", "null-entry", "no-entry", "not-elf"})
        dir.add(std::string("fake-") + f + ".so", std::string("opbench-backend-") + f + ".so");
    PluginSet set = discover_plugins({dir.path.string()});
    EXPECT_NE(set.find("fake"), nullptr);
    EXPECT_NE(set.find("fake_newer"), nullptr);
    EXPECT_EQ(set.plugins.size(), 2u);
    // wrong major, short, null table, null entry, no entry, not ELF
    EXPECT_EQ(set.failures.size(), 6u);
    for (const auto &f : set.failures) EXPECT_FALSE(f.reason.empty());
    EXPECT_TRUE(set.ignored.empty());
}

// A FIFO named in OPBENCH_PLUGIN_PATH hung `list` and `run` (issue 44): it
// is refused by its kind, never opened; so are a device and a socket.
TEST(DiscoverPlugins, AFifoDeviceOrSocketOnThePathIsRefusedUnopened) {
    ScratchDir dir("fifo");
    const std::string fifo = (dir.path / "opbench-backend-fifo.so").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    PluginSet set = discover_plugins({fifo, "/dev/null"}); // would block in dlopen if opened
    EXPECT_TRUE(set.plugins.empty());
    ASSERT_EQ(set.failures.size(), 2u);
    EXPECT_EQ(set.failures[0].reason, fifo + ": is a FIFO, not a shared library file; not opened");
    EXPECT_EQ(set.failures[0].backend, "fifo") << "the name it would have provided";
    EXPECT_EQ(set.failures[1].reason, "/dev/null: is a character device, not a shared library file; not opened");
}

TEST(DiscoverPlugins, ADirectoryOpensOnlyBackendFilesAndListsTheOthers) {
    ScratchDir dir("rule");
    const std::string helper = dir.add("fake-good.so", "libhelper.so");
    PluginSet set = discover_plugins({dir.path.string()});
    EXPECT_TRUE(set.plugins.empty());
    EXPECT_TRUE(set.failures.empty());
    ASSERT_EQ(set.ignored.size(), 1u);
    EXPECT_EQ(set.ignored[0], helper);
    // Named directly, the same file is opened whatever its name.
    EXPECT_EQ(discover_plugins({helper}).plugins.size(), 1u);
}

TEST(DiscoverPlugins, ARefusedFileKeepsTheBackendNameItWouldHaveProvided) {
    ScratchDir dir("refused-name");
    // Another major version: the name comes from the file name.
    dir.add("fake-wrong-major.so", "opbench-backend-wrongabi.so");
    // Same major, a NULL entry: the table's own name is readable.
    PluginSet set = discover_plugins({dir.path.string(), fake("fake-null-entry.so")});
    ASSERT_EQ(set.failures.size(), 2u);
    EXPECT_EQ(set.failures[0].backend, "wrongabi");
    EXPECT_EQ(set.failures[1].backend, "fake_null_entry");
    const auto names = set.names_with_refused();
    EXPECT_EQ(names, (std::vector<std::string>{"wrongabi", "fake_null_entry"}));
    const std::string why = set.why_unavailable("wrongabi");
    EXPECT_NE(why.find("backend 'wrongabi' was refused by the loader: "), std::string::npos) << why;
    EXPECT_NE(why.find("plugin ABI version 2.0"), std::string::npos) << why;
    EXPECT_NE(set.why_unavailable("cuda").find("not built or not found (loaded: none)"), std::string::npos);
}

TEST(PluginTrust, RefusesFilesAndDirectoriesOthersMayWriteBeforeOpeningThem) {
    namespace fs = std::filesystem;
    ScratchDir dir("trust");
    const std::string good = dir.add("fake-good.so", "opbench-backend-fake.so");
    EXPECT_EQ(plugin_trust_problem(good), "");

    fs::permissions(good, fs::perms::others_write, fs::perm_options::add);
    std::string why = plugin_trust_problem(good);
    EXPECT_NE(why.find("the file is writable by others (mode 0"), std::string::npos) << why;
    PluginSet refused = discover_plugins({dir.path.string()});
    EXPECT_TRUE(refused.plugins.empty());
    ASSERT_EQ(refused.failures.size(), 1u);
    EXPECT_EQ(refused.failures[0].reason, why);
    EXPECT_EQ(refused.failures[0].backend, "fake");
    EXPECT_EQ(refused.failures[0].reason.find('\n'), std::string::npos) << "one line";
    EXPECT_EQ(discover_plugins({dir.path.string()}, DiscoverOptions{true}).plugins.size(), 1u);

    fs::permissions(good, fs::perms::others_write, fs::perm_options::remove);
    fs::permissions(dir.path, fs::perms::others_write, fs::perm_options::add);
    why = plugin_trust_problem(good);
    EXPECT_NE(why.find("its directory " + dir.path.string() + " is writable by others"), std::string::npos) << why;
    // Through a symlink in a safe place, the real directory is what counts.
    ScratchDir safe("trust-link");
    std::filesystem::create_symlink(good, safe.path / "opbench-backend-fake.so");
    EXPECT_NE(plugin_trust_problem((safe.path / "opbench-backend-fake.so").string()).find("writable by others"),
              std::string::npos);
    fs::permissions(dir.path, fs::perms::others_write, fs::perm_options::remove);
}

// The trust rule's other cases (issue 19's probe loaded each of these).
TEST(PluginTrust, RefusesASymlinkInADirectoryOthersMayWriteThoughItsTargetIsSafe) {
    namespace fs = std::filesystem;
    ScratchDir safe("trust-target");
    const std::string good = safe.add("fake-good.so", "opbench-backend-fake.so");
    ScratchDir open_dir("trust-open");
    fs::permissions(open_dir.path, fs::perms::all, fs::perm_options::replace); // 0777, not sticky
    const fs::path link = open_dir.path / "opbench-backend-fake.so";
    fs::create_symlink(good, link);
    const std::string why = plugin_trust_problem(link.string());
    EXPECT_NE(why.find("reached through the symlink " + link.string()), std::string::npos) << why;
    EXPECT_NE(why.find("that others may write (mode 0777"), std::string::npos) << why;
    EXPECT_TRUE(discover_plugins({open_dir.path.string()}).plugins.empty());
    // A sticky 1777 directory (like /tmp) keeps others from replacing the link.
    fs::permissions(open_dir.path, fs::perms::all | fs::perms::sticky_bit, fs::perm_options::replace);
    EXPECT_NE(plugin_trust_problem(link.string()).find("the symlink"), std::string::npos)
        << "others may still write the directory: a link there is refused";
    fs::permissions(open_dir.path, fs::perms::others_write | fs::perms::group_write, fs::perm_options::remove);
    EXPECT_EQ(plugin_trust_problem(link.string()), "");
}

TEST(PluginTrust, RefusesAGroupWritableFileOrDirectory) {
    namespace fs = std::filesystem;
    ScratchDir dir("trust-group");
    const std::string good = dir.add("fake-good.so", "opbench-backend-fake.so");
    fs::permissions(good, fs::perms::group_write, fs::perm_options::add); // 0664
    std::string why = plugin_trust_problem(good);
    EXPECT_NE(why.find("the file is writable by its group"), std::string::npos) << why;
    fs::permissions(good, fs::perms::group_write, fs::perm_options::remove);
    fs::permissions(dir.path, fs::perms::group_write, fs::perm_options::add); // 0775
    why = plugin_trust_problem(good);
    EXPECT_NE(why.find("its directory " + dir.path.string() + " is writable by its group"), std::string::npos) << why;
    EXPECT_TRUE(discover_plugins({dir.path.string()}).plugins.empty());
    EXPECT_EQ(discover_plugins({dir.path.string()}, DiscoverOptions{true}).plugins.size(), 1u)
        << "--allow-insecure-plugins still overrides";
}

TEST(PluginTrust, RefusesAFileOrDirectoryOwnedByAnotherUser) {
    namespace fs = std::filesystem;
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
    ScratchDir dir("trust-owner");
    const std::string good = dir.add("fake-good.so", "opbench-backend-fake.so");
    ASSERT_EQ(::chown(good.c_str(), 65534, 65534), 0); // nobody; mode stays 0644
    std::string why = plugin_trust_problem(good);
    EXPECT_NE(why.find("the file is owned by"), std::string::npos) << why;
    EXPECT_NE(why.find("not by root or you"), std::string::npos) << why;
    ASSERT_EQ(::chown(good.c_str(), 0, 0), 0);
    ASSERT_EQ(::chown(dir.path.c_str(), 65534, 65534), 0); // a 0755 directory of another user
    why = plugin_trust_problem(good);
    EXPECT_NE(why.find("its directory " + dir.path.string() + " is owned by"), std::string::npos) << why;
    EXPECT_TRUE(discover_plugins({dir.path.string()}).plugins.empty());
    ASSERT_EQ(::chown(dir.path.c_str(), 0, 0), 0);
    EXPECT_EQ(plugin_trust_problem(good), "");
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

// A plugin built against ABI 1.2 keeps loading, and is asked about an f32
// matmul but never given an int8 one (dtype s8, ABI 1.3): that case is
// skipped with a reason naming the ABI.
TEST(BackendFacts, AnAbi12PluginLoadsAndIsNeverGivenAnInt8Case) {
    PluginSet set = discover_plugins({fake("fake-abi-1-2.so")});
    ASSERT_EQ(set.plugins.size(), 1u) << (set.failures.empty() ? "" : set.failures[0].reason);
    BackendSessions sessions;
    sessions.backends["fake_abi12"] = std::make_unique<BackendInstance>(set.plugins[0]);
    ASSERT_TRUE(sessions.backends["fake_abi12"]->usable());
    EXPECT_EQ(OPB_ABI_MINOR(sessions.backends["fake_abi12"]->api().abi_version), 2u);
    opb_op_desc s8 = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8), f32 = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    for (opb_op_desc *d : {&s8, &f32}) d->p.matmul.batch = d->p.matmul.m = d->p.matmul.n = d->p.matmul.k = 4;
    const BackendFacts f = probe_backend(sessions, "fake_abi12", {s8, f32}, {});
    ASSERT_EQ(f.supports.size(), 2u);
    EXPECT_EQ(f.supports[0].status, CaseStatus::skipped);
    EXPECT_NE(f.supports[0].reason.find("built against opbench ABI 1.2, which predates int8 matmul (dtype s8)"),
              std::string::npos)
        << f.supports[0].reason;
    EXPECT_EQ(f.supports[1].reason, "the fake backend runs no op"); // asked: its own answer
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
