// Where a build finds its policy: the rule the pass plugin (libmlgo-inliner.so)
// and the launcher (mlgo-cc) share. A pass plugin cannot take -mllvm options
// (clang parses them before loading it), so the policy comes from the
// environment or from a file beside the build, the way .clang-format is found.
#pragma once

#include "mlgo/support/Expected.h"

#include <filesystem>
#include <string_view>

namespace mlgo::policies {

// The policy file, when set; it must exist.
inline constexpr const char* kPolicyEnvironment = "MLGO_POLICY";
// A pass-pipeline policy (PassPipeline.h) applied beside the inliner's (a
// pipeline policy may also come as MLGO_POLICY itself: then the inliner is
// LLVM's heuristic).
inline constexpr const char* kPipelinePolicyEnvironment = "MLGO_PIPELINE_POLICY";
// A register-allocation eviction policy, answered on clang's interactive
// channel by mlgo-channel-cc (no plugin hook exists for the allocator).
inline constexpr const char* kEvictionPolicyEnvironment = "MLGO_EVICTION_POLICY";
// A register-allocation priority policy (the priority task), answered the
// same way on the priority advisor's channel.
inline constexpr const char* kPriorityPolicyEnvironment = "MLGO_PRIORITY_POLICY";
// Otherwise the nearest file of this name in the working directory or a parent.
inline constexpr std::string_view kPolicyFileName = "mlgo-policy.json";
// "heuristic": an opt-in to compile with LLVM's own inlining heuristic (and a
// warning) when the policy cannot be used, instead of failing the compile.
inline constexpr const char* kFallbackEnvironment = "MLGO_POLICY_FALLBACK";
// Its value read strictly: unset or empty (no fallback), "heuristic", else an
// error naming the variable (a typo must not silently mean "no fallback").
Expected<bool> policyFallbackRequested(const char* environmentValue);

// `environmentValue`: the value of MLGO_POLICY (null or empty: unset): a
// file, else a shipped policy's name. The error says what was looked for
// and where.
Expected<std::filesystem::path> locatePolicyFile(const char* environmentValue,
                                                 const std::filesystem::path& workingDirectory);

// The policies shipped with mlgo-es (configs/policies/NAME.json, or NAME.policy in the blob form,
// in the source tree it was built from), so that users name one instead of finding its file:
// `mlgo-eval run inlining-oz …`, `mlgo-cc --mlgo-policy=inlining-oz`.
std::filesystem::path shippedPolicyDirectory();
// Whether `spec` is a name rather than a path: no '/', no ".json" and no ".policy".
bool isPolicyName(std::string_view spec);
// The file of shipped policy `name`; the error lists the shipped names.
Expected<std::filesystem::path> shippedPolicy(std::string_view name);
// What a policy argument names: an existing file as it is, else a shipped
// policy's file when `spec` is a name; the error says why (callers name the
// argument it came from).
Expected<std::filesystem::path> policyFileFor(const std::string& spec);

} // namespace mlgo::policies
