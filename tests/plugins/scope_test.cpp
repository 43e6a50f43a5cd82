// plugins/opbench/scope.hpp: scopes call the host only while its switch is on,
// always pair begin with end, fall back to calling an ABI 1.0 host (which has
// no switch), and disappear when compiled out.
#include "opbench/scope.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

int scope_compiled_out_run(const opbench::sdk::ScopeHost &host);

namespace {

struct Recorder {
    std::vector<std::string> events;
};

void rec_begin(void *host, const char *name) {
    static_cast<Recorder *>(host)->events.push_back(std::string("+") + name);
}
void rec_end(void *host) { static_cast<Recorder *>(host)->events.push_back("-"); }
void ignore_log(void *, int32_t, const char *) {}
void ignore_alloc(void *, uint64_t, int32_t) {}

struct FakeHost {
    Recorder rec;
    uint32_t profiling = 0;
    opb_host_services services{};
    FakeHost() {
        services.struct_size = sizeof services;
        services.abi_version = OPB_ABI_VERSION;
        services.host = &rec;
        services.log = ignore_log;
        services.on_alloc = ignore_alloc;
        services.on_free = ignore_alloc;
        services.scope_begin = rec_begin;
        services.scope_end = rec_end;
        services.profiling = &profiling;
    }
};

TEST(Scope, OffCallsNothing) {
    FakeHost h;
    opbench::sdk::ScopeHost scopes(&h.services);
    EXPECT_FALSE(scopes.recording());
    { OPB_SCOPE(scopes, "qk"); }
    EXPECT_TRUE(h.rec.events.empty());
}

TEST(Scope, OnNestsAndPairs) {
    FakeHost h;
    opbench::sdk::ScopeHost scopes(&h.services);
    h.profiling = 1; // the host switches after the ScopeHost was made: it is read per scope
    {
        OPB_SCOPE(scopes, "attention");
        { OPB_SCOPE(scopes, "qk"); }
        { OPB_SCOPE(scopes, "softmax"); }
    }
    EXPECT_EQ(h.rec.events, (std::vector<std::string>{"+attention", "+qk", "-", "+softmax", "-", "-"}));
}

TEST(Scope, SwitchTurnedOffInsideAScopeStillEndsIt) {
    FakeHost h;
    h.profiling = 1;
    opbench::sdk::ScopeHost scopes(&h.services);
    {
        OPB_SCOPE(scopes, "pv");
        h.profiling = 0;
    }
    EXPECT_EQ(h.rec.events, (std::vector<std::string>{"+pv", "-"}));
}

TEST(Scope, Abi10HostWithoutSwitchIsAlwaysCalled) {
    FakeHost h;
    // An ABI 1.0 host's struct ends before `profiling`; whatever lies there is not read.
    h.services.struct_size = static_cast<uint32_t>(offsetof(opb_host_services, profiling));
    h.services.abi_version = (1u << 16) | 0u;
    h.services.profiling = nullptr;
    opbench::sdk::ScopeHost scopes(&h.services);
    EXPECT_TRUE(scopes.recording());
    { OPB_SCOPE(scopes, "mask"); }
    EXPECT_EQ(h.rec.events, (std::vector<std::string>{"+mask", "-"}));
}

TEST(Scope, NullServicesOrNullSwitchAreSafe) {
    opbench::sdk::ScopeHost none(nullptr);
    EXPECT_FALSE(none.recording());
    { OPB_SCOPE(none, "x"); }
    opbench::sdk::ScopeHost defaulted;
    EXPECT_FALSE(defaulted.recording());
    FakeHost h;
    h.services.profiling = nullptr; // a 1.1 host that offers no switch: behave as 1.0
    opbench::sdk::ScopeHost scopes(&h.services);
    EXPECT_TRUE(scopes.recording());
}

TEST(Scope, CompiledOutCallsNothingEvenWhileRecording) {
    FakeHost h;
    h.profiling = 1;
    opbench::sdk::ScopeHost scopes(&h.services);
    EXPECT_EQ(scope_compiled_out_run(scopes), 1);
    EXPECT_TRUE(h.rec.events.empty());
}

} // namespace
