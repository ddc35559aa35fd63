// The messages between the trainer and an in-process compile worker
// (mlgo-inprocess-worker), over a pair of pipes. Both ends are built from
// this one definition, on the same machine, so values go in native byte
// order; every message is a frame: u32 kind, u64 payload length, payload.
//
//   trainer -> worker   Policy   a policy (JSON policy file text) under an id;
//                                the worker keeps it until a newer generation
//                       Job      compile one module (cc1 arguments), under a
//                                policy id (0: plain -Oz), the decision mode,
//                                the job's random key
//                       CacheAnswer  reply to a CacheQuery: known or not
//   worker -> trainer   CacheQuery   the inliner is done: this decision
//                                sequence — does the trainer know its size?
//                       Result   the job's outcome
//
// A worker answers each Job with exactly one Result (after at most one
// CacheQuery). A worker that dies mid-job leaves the pipe at end of file:
// the trainer records the job as crashed and starts a fresh worker.
#pragma once

#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Job.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::evaluators::protocol {

enum class MessageKind : uint32_t {
  Policy = 1,
  Job = 2,
  CacheAnswer = 3,
  CacheQuery = 101,
  Result = 102,
};

struct Frame {
  MessageKind kind{};
  std::string payload;
};

// Blocking frame I/O on a file descriptor; errors name what failed. A clean
// end of file before a frame starts is reported as nullopt.
Status writeFrame(int fd, MessageKind kind, std::string_view payload);
Expected<std::optional<Frame>> readFrame(int fd);

struct PolicyMessage {
  uint64_t id = 0;
  uint64_t generation = 0; // the worker forgets policies of older generations
  std::string json;
};

// One decision of a trial job: the decision at `position` (0-based, in the
// order the policy is asked) is taken the other way; `state` is its decision
// state as the trainer saw it (FlipSetPolicy::stateHash), checked by the worker.
struct TrialPoint {
  uint64_t position = 0;
  uint64_t state = 0;
};

struct JobMessage {
  uint64_t policyId = 0; // 0: no policy, a plain compile
  policies::DecisionMode mode = policies::DecisionMode::Deterministic;
  uint64_t rngKey = 0;
  bool recordTrajectory = false;
  // With recordTrajectory: compute the default decision for the record even
  // when the policy does not read it (an inline-cost analysis per decision).
  bool recordDefaults = true;
  bool consultCache = false; // send a CacheQuery when the inliner is done
  std::string defaultDecisionFeature;
  std::vector<std::string> sizeSections;
  // The full cc1 command line, "-cc1" first, ending in "-o <object>".
  std::vector<std::string> arguments;
  std::string moduleName; // for messages only
  // How the worker runs the job (the task's InProcessRoute), and what of the
  // task a channel route answers with: its name (for messages), advice and
  // the advice for a policy that does not fit.
  InProcessRoute route = InProcessRoute::InlineAdvisor;
  std::string taskName;
  std::string adviceName;
  int64_t neutralAdvice = 0;
  // Incremental trials (the decision search's): the policy is a flip set,
  // compiled as the base trajectory; at each trial's decision the worker
  // forks a child that takes the other action there (its state toggled for
  // the rest of the compile, exactly as a full compile with the toggled flip
  // set) and finishes the compile. The base's own result is not measured.
  // Positions ascending.
  std::vector<TrialPoint> trials;
  double trialSeconds = 0; // each child's deadline (0: none)
  // Code generation only for the functions the worker has not generated
  // before for this module and command (inprocess/src/CodeReuse.h).
  bool reuseCode = false;
  uint64_t reuseBytes = 0; // what the worker's code cache may hold
};

struct CacheQueryMessage {
  uint64_t hashLow = 0, hashHigh = 0; // 128-bit hash of the decision sequence
  uint64_t decisions = 0;
};

struct CacheAnswerMessage {
  bool known = false;
};

enum class WorkerStatus : uint8_t {
  Ok = 0,
  CompilerFailed = 1, // clang reported errors (diagnostics say which)
  PolicyMismatch = 2,
  BadObject = 3,
  SetupFailed = 4,
  Unsupported = 5, // the command needs what a worker cannot give it (e.g. -mllvm)
  // A trial's child died of a signal or passed its deadline.
  Crashed = 6,
  TimedOut = 7,
  // A trial this compile cannot answer exactly (its state occurs before its
  // position, the decision never came, ...): compile it in full.
  NotIncremental = 8,
};

struct ResultMessage {
  WorkerStatus status = WorkerStatus::SetupFailed;
  std::string message;
  std::string diagnostics;
  uint64_t sizeBytes = 0;
  uint64_t codeHash = 0;
  std::vector<ComdatCode> comdat; // JobResult::comdat (not of a cache hit)
  uint64_t decisions = 0;
  std::optional<double> measured; // a measure the worker takes (not the size): JobResult::measured
  bool cacheHit = false;          // the size is the trainer's cached one; not measured
  // The policy was asked after the cache question (a pipeline that runs the
  // inliner more than once): the sequence hashed was not the whole one, so
  // this module must not be cached.
  bool decisionsAfterQuery = false;
  std::optional<policies::Trajectory> trajectory;
  CodeReuseCounts reuse; // with JobMessage::reuseCode (Job.h)
  CompileTimes times;    // Job.h
  // A trial job's results, one per JobMessage::trials entry, in order.
  std::vector<ResultMessage> trials;
};

std::string encode(const PolicyMessage& message);
std::string encode(const JobMessage& message);
std::string encode(const CacheQueryMessage& message);
std::string encode(const CacheAnswerMessage& message);
std::string encode(const ResultMessage& message);

Expected<PolicyMessage> decodePolicy(std::string_view payload);
Expected<JobMessage> decodeJob(std::string_view payload);
Expected<CacheQueryMessage> decodeCacheQuery(std::string_view payload);
Expected<CacheAnswerMessage> decodeCacheAnswer(std::string_view payload);
Expected<ResultMessage> decodeResult(std::string_view payload);

} // namespace mlgo::evaluators::protocol
