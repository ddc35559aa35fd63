// One compilation job as the evaluator and its backends see it: what to
// compile (JobSpec) and what came of it (JobResult). Plain values; a failed
// compilation is a status, never an exception.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/policies/Trajectory.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlgo::evaluators {

enum class JobStatus {
  Ok,
  CompilerCrashed,     // killed by a signal
  CompilerFailed,      // exited with a non-zero code
  TimedOut,            // passed the per-compilation deadline; killed
  ProtocolError,       // the channel carried something the protocol does not allow
  BadObject,           // the object is missing or unreadable
  PolicyMismatch,      // the policy's inputs disagree with clang's header
  BaselineUnavailable, // the module's -Oz baseline failed, so it cannot be scored
  SetupFailed,         // scratch directory, FIFOs or spawn failed
};

std::string_view jobStatusName(JobStatus status);

// A single-decision trial (the decision search's): a module compiled under a
// base flip set with one decision state toggled (FlipSetPolicy::stateHash).
// `position` is the first decision of the base's trajectory on that module
// with that state: where the trial's compile first departs from the base's.
struct DecisionTrial {
  size_t position = 0;
  uint64_t state = 0;
};

// Where a worker's compile spent its time, in seconds (wall clock, the
// worker's own clock): what `mlgo-eval search --time-report` adds up. A
// forked trial pays only from its decision on; `shared` is what it did not
// pay (the base's compile before that decision, children it waited for left
// out) and `handover` what forking it cost its worker beyond the child's own
// compile (fork, copy-on-write, the answer's transfer).
struct CompileTimes {
  double shared = 0;
  double beforeInliner = 0; // reading the bitcode, the passes before the inliner
  double inliner = 0;       // a trial: from its decision to the inliner's end
  double afterInliner = 0;  // the rest of the optimisation pipeline
  double codeGeneration = 0;
  double codeReuse = 0; // keys, placeholders, reading the generated code
  double handover = 0;

  // What the compile itself cost (not `shared`).
  double paid() const;
  CompileTimes& operator+=(const CompileTimes& other);
};

// Every field of CompileTimes, for its sums and its wire format: a phase
// added to the struct is added here once.
inline constexpr double CompileTimes::*kCompileTimeFields[] = {
    &CompileTimes::shared,       &CompileTimes::beforeInliner,  &CompileTimes::inliner,
    &CompileTimes::afterInliner, &CompileTimes::codeGeneration, &CompileTimes::codeReuse,
    &CompileTimes::handover};

inline double CompileTimes::paid() const {
  double seconds = 0;
  for (double CompileTimes::*field : kCompileTimeFields)
    seconds += this->*field;
  return seconds - shared;
}

inline CompileTimes& CompileTimes::operator+=(const CompileTimes& other) {
  for (double CompileTimes::*field : kCompileTimeFields)
    this->*field += other.*field;
  return *this;
}

// Incremental evaluation's code reuse, over the compiles that could reuse.
struct CodeReuseCounts {
  uint64_t reused = 0;    // functions whose bytes came from an earlier compile
  uint64_t generated = 0; // functions that went through code generation
  // Compiles whose placeholders did not come out as their functions (size or
  // alignment), compiled again in full.
  uint64_t retried = 0;

  CodeReuseCounts& operator+=(const CodeReuseCounts& other);
};

// Every field of CodeReuseCounts, for its sums and its wire format.
inline constexpr uint64_t CodeReuseCounts::*kCodeReuseFields[] = {
    &CodeReuseCounts::reused, &CodeReuseCounts::generated, &CodeReuseCounts::retried};

inline CodeReuseCounts& CodeReuseCounts::operator+=(const CodeReuseCounts& other) {
  for (uint64_t CodeReuseCounts::*field : kCodeReuseFields)
    this->*field += other.*field;
  return *this;
}

// One (policy, module) compilation.
struct JobSpec {
  const corpus::ModuleSpec* module = nullptr;
  // Answers every decision; null: a plain compile (the task's baseline).
  const policies::Policy* policy = nullptr;
  policies::DecisionMode mode = policies::DecisionMode::Deterministic;
  // Seeds the job's random stream (sampling mode): the evaluator derives it
  // from (seed, step, candidate, module), so a job decides the same way on
  // any backend, worker or machine.
  uint64_t rngKey = 0;
  // Record every decision (features, default, action, log-probability).
  bool recordTrajectory = false;
  // With recordTrajectory: also the compiler's own decision at each point,
  // which costs the in-process backend an inline-cost analysis per decision
  // when the policy does not read it (recorded as -1 when not asked for).
  bool recordDefaults = true;
  // Whether the in-process backend may end the compile early on a known
  // decision sequence (the decision-sequence cache). Replay verification
  // turns it off: it wants the whole pipeline.
  bool allowDecisionCache = true;
  // Whether the in-process backend may take functions' code from its
  // earlier compiles of the module (incremental evaluation); verification
  // turns it off.
  bool allowCodeReuse = true;
};

struct JobResult {
  JobStatus status = JobStatus::SetupFailed;
  std::string message;    // what went wrong, naming the module
  std::string stderrTail; // the end of clang's output, for the record
  uint64_t sizeBytes = 0; // code size of the object (Ok only)
  // Hash (xxh3) of the code sections' bytes: equal hashes mean identical
  // code, e.g. a policy that reproduces -Oz exactly (Ok only).
  uint64_t codeHash = 0;
  // The part of sizeBytes in COMDAT groups (ObjectCode.h), for counting each
  // group once across a code base as a linker does (mlgo-eval report
  // --linked). Known when the object was measured; an answer from a cache
  // or a replay, which keep only the size, leaves it unknown.
  std::optional<std::vector<ComdatCode>> comdat;
  // The job in its task's measure (lower is better; Ok only). The evaluator
  // sets it from sizeBytes for a measure of the object's size; a backend that
  // measures something else sets it (the eviction worker: RegAllocScore).
  std::optional<double> measured;
  double reward = 0;      // against the baseline, in the task's measure (Ok only)
  uint64_t decisions = 0; // observations answered
  double seconds = 0;
  // The size came from the decision-sequence cache (in-process backend):
  // the inliner ran to its end, the rest of the pipeline was skipped.
  bool cacheHit = false;
  // No compiler ran: the policy replayed a known trajectory of the module to
  // its end (ReplayStore.h); the size and code hash are that trajectory's.
  bool replayed = false;
  std::optional<policies::Trajectory> trajectory;

  bool ok() const { return status == JobStatus::Ok; }
};

struct BaselineResult {
  std::optional<uint64_t> sizeBytes;
  std::optional<std::vector<ComdatCode>> comdat; // as JobResult::comdat
  std::optional<double> measured;                // in the task's measure; set when it is available
  bool fromCache = false;
  std::string message;    // why it failed (with clang's first error line)
  std::string stderrTail; // the end of the failed compile's output
};

} // namespace mlgo::evaluators
