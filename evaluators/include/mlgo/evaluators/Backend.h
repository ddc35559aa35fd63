// How the evaluator compiles one job. A backend runs one JobSpec on the
// calling thread and returns its result; the evaluator owns the parallelism
// (a oneTBB arena), the baselines and the rewards. Two backends today:
//  - InProcessBackend: long-lived mlgo-inprocess-worker processes running
//    clang's cc1 through libclang-cpp, the policy shipped once per evaluation
//    as policy-file JSON, with the decision-sequence cache;
//  - ClangProcessBackend: a clang-22 process per job in interactive mode, the
//    policy answering over FIFOs (ml-compiler-opt's way), which takes any job.
// A third (remote: jobs sent to other machines) plugs in the same way.
#pragma once

#include "mlgo/evaluators/Job.h"
#include "mlgo/support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::evaluators {

// Remote is rank 0's backend in an MPI job (Cluster.h), never chosen by name.
enum class BackendKind { InProcess, Clang, Remote };
std::string_view backendKindName(BackendKind kind); // "inprocess", "clang", "remote"

Expected<BackendKind> parseBackendKind(std::string_view name);

// A policy as backends that run it in another process take it: policy-file
// JSON under an id. Ids are unique within an evaluator; a worker forgets the
// policies of older generations when a newer one arrives, so memory stays
// bounded over a long run.
struct CandidateFamily; // Cluster.h

struct SerializedPolicy {
  uint64_t id = 0;
  uint64_t generation = 0;
  std::string json;
  // The candidate as a member of its evaluation's family, when the request
  // has one: a remote rank gets the family once and rebuilds the member.
  const CandidateFamily* family = nullptr;
  uint64_t familyId = 0;
  size_t familyMember = 0;
};

// Counters over a backend's life.
struct BackendStatistics {
  size_t jobs = 0; // compile() calls it answered or tried (failures included)
  size_t cacheLookups = 0;
  size_t cacheHits = 0;
  double cacheSecondsSaved = 0;
  size_t workersStarted = 0;
  CodeReuseCounts reuse; // incremental evaluation's code reuse
  // Where the workers' compiles spent their time: full compiles (measured
  // ones; a decision-cache hit is not timed) and forked trials apart.
  CompileTimes compileTimes, trialTimes;
  size_t timedCompiles = 0, timedTrials = 0;
};

class Backend {
public:
  virtual ~Backend() = default;

  virtual BackendKind kind() const = 0;
  // Whether compile() needs the policy's file form (then the evaluator
  // serializes each candidate once per evaluation and passes it along).
  virtual bool needsSerializedPolicy() const = 0;
  // Compiles `job`; `serialized` is the job's policy in file form when
  // needsSerializedPolicy() (null for a plain compile, or a policy without
  // one). nullopt: this backend cannot take the job (a command it cannot
  // run, a policy it cannot ship); the evaluator gives it to the clang
  // backend. Safe to call from several threads at once.
  virtual std::optional<JobResult> compile(const JobSpec& job,
                                           const SerializedPolicy* serialized) = 0;
  virtual BackendStatistics statistics() const = 0;

  // Incremental trials: `base` compiled once with its flip set and every
  // trial answered from that compile (TrialForker.h), where this backend can
  // do so exactly. Per trial: its result, or why it must be compiled in full
  // (a short reason without numbers, counted by the evaluator).
  struct TrialOutcome {
    std::optional<JobResult> result;
    std::string fullCompileReason;
  };
  virtual std::vector<TrialOutcome> compileTrials(const JobSpec& base,
                                                  const SerializedPolicy* serialized,
                                                  std::span<const DecisionTrial> trials) {
    (void)base;
    (void)serialized;
    return std::vector<TrialOutcome>(trials.size(),
                                     TrialOutcome{std::nullopt, "no incremental route"});
  }
};

} // namespace mlgo::evaluators
