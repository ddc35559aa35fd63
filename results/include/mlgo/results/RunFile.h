// One HDF5 file per training run (es-train, ppo-train, bc-train): the
// effective config, a row per step (scalars, every candidate's reward, the
// sizes of every module each candidate produced), failures with reasons,
// validation evaluations, policy snapshots, the best and final policy, and
// the checkpoint a killed run resumes from.
//
// The whole file is rewritten after every step, into a temporary file that
// is then renamed over the old one: a run killed at any instant leaves either
// the previous step's complete file or the new one, never a torn file, and
// the checkpoint in it always agrees with the step rows. (Runs write a few
// MB at most; a step compiles for seconds, the rewrite takes milliseconds.)
//
// The schema is documented in results/README.md ("Run files") and readable
// with h5py without mlgo-es.
#pragma once

#include "mlgo/support/Expected.h"
#include "mlgo/support/StateArchive.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::results {

inline constexpr std::string_view kRunFormat = "mlgo-run";
inline constexpr int64_t kRunVersion = 1;

struct FailureRecord {
  int64_t step = 0;
  int64_t candidate = 0; // -1: a validation or baseline compile
  std::string module;
  std::string status; // evaluators::jobStatusName
  std::string message;
  std::string stderrTail;
  bool operator==(const FailureRecord& other) const = default;
};

struct PolicySnapshot {
  int64_t step = 0;
  std::string policyJson; // policies::policyToJson, loadable as a policy file
  bool operator==(const PolicySnapshot& other) const = default;
};

// Every module of the validation corpus compiled under the current policy.
struct ValidationRecord {
  int64_t step = 0;
  std::vector<uint64_t> sizes; // per validation module (0 if failed)
  std::vector<uint8_t> ok;     // per validation module
  double meanReward = 0;       // over the ok modules
  double totalReward = 0;      // 1 − Σsize/Σbaseline over the ok modules
  bool operator==(const ValidationRecord& other) const = default;
};

struct Checkpoint {
  int64_t step = 0;      // steps completed: the next step to run
  std::string optimizer; // e.g. "gradient-es", for a clear error on mismatch
  StateArchive optimizerState;
  std::string policyJson; // the current policy
  // Anything else the trainer must restore (best-so-far, moving baselines…).
  StateArchive trainerState;
  double elapsedSeconds = 0; // wall time of the run so far, across resumes
  bool operator==(const Checkpoint& other) const = default;
};

struct RunRecord {
  // --- written once ---------------------------------------------------------
  std::string trainer;    // "es-train", "ppo-train", "bc-train"
  std::string configToml; // the effective config, as es-train --config reads it
  // The same config flattened to key → value text, for tables and sweeps.
  std::map<std::string, std::string, std::less<>> config;
  // Free-form facts: mlgo-es version, compiler identity, corpus paths, host.
  std::map<std::string, std::string, std::less<>> attributes;
  // The training corpus's modules (indices below refer to this table).
  std::vector<std::string> moduleNames;
  std::vector<uint64_t> baselineSizes; // -Oz size per module (0 if unknown)
  // Per module, a hash of its bitcode (mlgo::hashBytes), so that a resume can
  // tell that a module changed. Empty: not recorded (files before it, BC on
  // traces).
  std::vector<uint64_t> bitcodeHashes;
  std::vector<std::string> validationModuleNames;
  std::vector<uint64_t> validationBaselineSizes;

  // --- one row per step ------------------------------------------------------
  // Named per-step scalars, all of the same length (= steps). ES writes e.g.
  // "reward_mean", "reward_p50", "win_share", "seconds_evaluate"; PPO/BC
  // their losses. Missing values are NaN.
  std::map<std::string, std::vector<double>, std::less<>> stepScalars;
  // Per step: each candidate's reward (NaN: failed). Rows may differ in
  // length between trainers but not within a run.
  std::vector<std::vector<double>> candidateRewards;
  // Per step: the indices (into moduleNames) of the modules compiled.
  std::vector<std::vector<int64_t>> stepModules;
  // Per step: candidate-major sizes [candidate * modules + module] (0: failed).
  std::vector<std::vector<uint64_t>> stepSizes;

  std::vector<FailureRecord> failures;
  std::vector<ValidationRecord> validations;
  std::vector<PolicySnapshot> snapshots; // at the chosen interval
  std::optional<PolicySnapshot> bestPolicy;
  std::string bestPolicyMetric; // what "best" was chosen on, e.g. "validation total reward"
  double bestPolicyValue = 0;
  std::optional<PolicySnapshot> finalPolicy;
  std::optional<Checkpoint> checkpoint;

  size_t steps() const { return candidateRewards.size(); }
  bool operator==(const RunRecord& other) const = default;
};

// Writes the whole record to `path` through `path`.tmp and a rename.
// A record the reader would reject is refused before anything is written, with
// an error naming the file, the field and the step: rows of one table that
// differ in length, step scalars or step tables whose length is not steps()
// (stepModules and stepSizes may also have no rows at all), stepSizes rows
// that are not candidates × modules long, baseline sizes that do not match
// their module names, validation rows that do not have one entry per
// validation module. Strings stored as values (not keys) must not contain NUL
// characters, which HDF5 strings cannot hold. On any failure `path` is left
// as it was and `path`.tmp is removed.
Status writeRunFile(const std::filesystem::path& path, const RunRecord& record);
// Reads a run file; a file that is not a run file, or from a newer schema
// version, is an error naming the file.
Expected<RunRecord> readRunFile(const std::filesystem::path& path);

// Where `a` and `b` first differ, e.g. `stepScalars["reward_mean"][3]: 0.5 vs
// nan`, or nullopt if they are identical. Unlike operator==, doubles compare
// bit for bit except that every NaN equals every NaN (== says NaN != NaN and
// 0.0 == -0.0). readRunFile gives back a record identical to the one written.
std::optional<std::string> firstDifference(const RunRecord& a, const RunRecord& b);
inline bool identical(const RunRecord& a, const RunRecord& b) {
  return !firstDifference(a, b).has_value();
}

// Step scalars that measure wall time (seconds_*, elapsed_seconds,
// cache_seconds_saved, replay_seconds_saved): they differ between runs that
// compute the same.
bool isTimingScalar(std::string_view name);
// firstDifference of `a` and `b` with everything that measures wall time
// left out (those scalars and the checkpoint's elapsed seconds): where two
// runs of the same seed and config must agree. `ignored` names step scalars
// and config keys to leave out too (e.g. a flag that only changes how the
// run computed, and the counters it changes).
std::optional<std::string> firstDifferenceButTimings(RunRecord a, RunRecord b,
                                                     const std::set<std::string>& ignored = {});

} // namespace mlgo::results
