// The commit opbench was built from (`git describe --always --dirty
// --abbrev=12`), or "unknown" outside a checkout.
#pragma once

namespace opbench {

// Compiled on its own (run/git_commit.cpp, harness/meson.build): the
// generated git_version.hpp changes with every commit, and a library that
// listed it beside a precompiled header rebuilt the header, so every one of
// its sources, after each commit.
[[nodiscard]] const char *git_commit();

} // namespace opbench
