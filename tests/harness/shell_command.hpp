// The end-to-end tests' way to run a command line: its exit status and its
// stdout and stderr together.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace opbench::test {

struct Output {
    int exit_code = -1; // -1: it did not exit normally (a signal), or could not start
    std::string text;   // stdout and stderr together
};

inline Output run(const std::string &command) {
    Output out;
    std::FILE *p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p) return out;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) out.text += buf.data();
    const int status = ::pclose(p);
    out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

} // namespace opbench::test
