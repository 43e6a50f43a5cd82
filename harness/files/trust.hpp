// Whether opbench may trust a path to hold code it runs (a plugin) or data it
// reads back as its own (the cache): nobody but root and the running user can
// change what it names.
#pragma once

#include <filesystem>
#include <string>

namespace opbench {

// "" when `path` is trusted; else one line saying what is wrong, where, and
// the mode or owner that makes it so. Refused:
//  - a symlink on the path as given that sits in a directory others may write
//    (anyone could point it elsewhere);
//  - the resolved file, or any directory on its resolved path, owned by a user
//    other than root or the running user;
//  - the resolved file, or any directory on its resolved path, writable by its
//    group or by others. A sticky directory (like /tmp) is the exception:
//    there others cannot replace what they do not own, and what lies below
//    it is checked in turn.
// A path that does not exist is judged by its nearest existing ancestor (what
// opbench would create under it).
[[nodiscard]] std::string trust_problem(const std::filesystem::path &path);

} // namespace opbench
