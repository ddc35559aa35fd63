// Saving and loading built-in policies (heuristic, constant, mlp) as one
// self-describing JSON file:
//
//   {"format": "mlgo-es-policy", "version": 2, "kind": "mlp",
//    "description": "mlp[64,64] relu",            // for people; not read back
//    "inputs": [{"name","port","shape","type"}…],  // what the policy reads
//    "architecture": {"hidden_layers": [64,64], "activation": "relu",
//                     "actions": 2, "expansions": ["x","x^2"],
//                     "excluded_features": ["inlining_default"]},
//    "vocabulary": {"<feature>": {"values": [distinct boundary…],
//                                 "counts": [how often each…]}, …},
//    "parameters": {"encoding": "float64-le-base64",  // MlpPolicy's flat
//                   "data": "…"}}                     // layout, exact
//
// Version 1 files (still read) have each feature's boundaries as a plain
// array and the parameters as an array of numbers; version 2 is a third of
// the size and loads about ten times faster, which a build pays for once
// per compile.
//
// Version 4 adds a blob form (PolicyEncoding::Blobs): the same JSON, each
// run of doubles ({"encoding": "float64-le-blob"}) an {"offset", "count"}
// into a blob area of raw little-endian doubles that follows the JSON
// after one NUL byte. A compile then parses only the small JSON head: a
// pipeline choice with every training module as an example (two megabytes
// of doubles) loads in a fraction of the time its base64 text takes, which
// every compile of a build pays. The head stays readable (`head -c`).
// "heuristic" files have the one input the heuristic echoes; "constant" files
// have no inputs and "advice": N. Numbers are written in their shortest exact
// form, always with a '.' or exponent (as Python's repr), so every finite
// double, -0.0 included, reads back bit-identical. A file from a newer
// version is refused, not guessed at. Whether the inputs match what clang
// sends is checked when binding (bindPolicyInputs), not here.
#pragma once

#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Policy.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace mlgo::policies {

inline constexpr std::string_view kPolicyFileFormat = "mlgo-es-policy";
// 3: a feature's vocabulary values in base64 (float64-le) as the
// parameters; 2: parameters in base64, vocabularies as values and counts.
// Every older version still reads.
inline constexpr int kPolicyFileVersion = 3;
// Files in the blob form say 4 (older builds refuse them by their version);
// text files are still written as version 3.
inline constexpr int kPolicyFileBlobVersion = 4;

// How a policy file holds its runs of doubles: base64 text in the JSON, or
// a blob area after it.
enum class PolicyEncoding { Text, Blobs };

// Errors for policies that are not built-in kinds, or with non-finite
// parameters.
Expected<std::string> policyToJson(const Policy& policy);
// The file's bytes in either form (Text: policyToJson's).
Expected<std::string> policyToBytes(const Policy& policy, PolicyEncoding encoding);
// A file's bytes, either form. `origin` (a file name) prefixes error messages.
Expected<std::unique_ptr<Policy>> policyFromJson(std::string_view json, std::string_view origin);
// Whether the bytes are a policy file in the blob form (a NUL after the JSON).
bool hasBlobArea(std::string_view bytes);

// Writes through a temporary file and a rename, so a reader never sees half a
// policy (checkpoints are overwritten while runs go on).
Status savePolicy(const Policy& policy, const std::filesystem::path& file,
                  PolicyEncoding encoding = PolicyEncoding::Text);
Expected<std::unique_ptr<Policy>> loadPolicy(const std::filesystem::path& file);
// As loadPolicy, for callers that need the weights (ES, PPO, BC resuming);
// another kind is an error.
Expected<MlpPolicy> loadMlpPolicy(const std::filesystem::path& file);

} // namespace mlgo::policies
