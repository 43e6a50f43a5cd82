// The built plugin is marked NODELETE (linked with -z nodelete).
//
// oneDNN runs on OpenMP; after a parallel region libgomp's workers keep
// spinning for a while. opbench dlcloses its plugins at exit, and without the
// flag that unmapped libdnnl and libgomp under a spinning worker: opbench
// segfaulted at exit (gdb: worker in libgomp, main thread in munmap). Whether
// a plain dlopen/dlclose reproduces it depends on how the host's exported
// symbols bind (opbench links with -export-dynamic), so this test checks the
// cause instead: DF_1_NODELETE in the plugin's dynamic section.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string g_plugin_path; // argv[1]: the built opbench-backend-onednn.so

// DT_FLAGS_1 of an ELF64 little-endian shared object, or -1 if absent.
long long dt_flags_1(const std::vector<char> &f) {
    if (f.size() < sizeof(Elf64_Ehdr) || std::memcmp(f.data(), ELFMAG, SELFMAG) != 0) return -2;
    Elf64_Ehdr eh;
    std::memcpy(&eh, f.data(), sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) return -2;
    for (int i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        const std::size_t off = eh.e_phoff + std::size_t(i) * eh.e_phentsize;
        if (off + sizeof ph > f.size()) return -2;
        std::memcpy(&ph, f.data() + off, sizeof ph);
        if (ph.p_type != PT_DYNAMIC) continue;
        for (std::size_t d = ph.p_offset; d + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz; d += sizeof(Elf64_Dyn)) {
            Elf64_Dyn dyn;
            std::memcpy(&dyn, f.data() + d, sizeof dyn);
            if (dyn.d_tag == DT_NULL) break;
            if (dyn.d_tag == DT_FLAGS_1) return static_cast<long long>(dyn.d_un.d_val);
        }
    }
    return -1;
}

TEST(OnednnUnload, PluginIsMarkedNodeleteSoDlcloseCannotUnmapOpenmp) {
    ASSERT_FALSE(g_plugin_path.empty()) << "pass the plugin's path as the first argument";
    std::ifstream in(g_plugin_path, std::ios::binary);
    ASSERT_TRUE(in) << "cannot open " << g_plugin_path;
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const long long flags = dt_flags_1(bytes);
    ASSERT_NE(flags, -2) << g_plugin_path << " is not an ELF64 shared object";
    ASSERT_NE(flags, -1) << g_plugin_path << " has no DT_FLAGS_1 (not linked with -z nodelete)";
    EXPECT_TRUE(flags & DF_1_NODELETE) << g_plugin_path << ": DT_FLAGS_1 = " << flags
                                       << " lacks DF_1_NODELETE (-z nodelete)";
}

} // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (argc > 1) g_plugin_path = argv[1];
    return RUN_ALL_TESTS();
}
