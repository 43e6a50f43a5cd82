// The version of the fields opbench adds to a result set (results/README.md):
// what writers stamp and readers check.
#pragma once

namespace opbench {

// Bump on any incompatible change of opbench's fields.
inline constexpr int kResultSchemaVersion = 1;

} // namespace opbench
