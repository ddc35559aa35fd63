// The messages between rank 0 (the trainer's evaluator) and the ranks that
// serve compile jobs. Every rank runs the same build, so values travel in
// the wire layout of Wire.h; the first byte of a message is its kind.
//
//   0 -> r  Hello     the evaluator options that matter on a rank, the task
//   r -> 0  Ready     the rank's compile slots and host, or why it cannot serve
//   0 -> r  Family    a candidate family (ES step) under an id, once per rank
//   0 -> r  Policy    a policy file under an id, once per rank
//   0 -> r  Job       one module under a policy, a family member or none
//   r -> 0  Result    the job's outcome and the rank's backend counters
//   0 -> r  Shutdown  no more jobs: finish and exit
//   r -> 0  Heartbeat every second while a rank serves: rank 0 ends the job
//                     when a rank falls silent (stopped, hung, cut off)
#pragma once

#include "mlgo/evaluators/Backend.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/evaluators/Job.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace mlgo::evaluators::cluster {

enum class Kind : uint8_t { Hello = 1, Ready, Family, Policy, Job, Result, Shutdown, Heartbeat };

// The kind of a message, or nullopt for an empty one.
std::optional<Kind> kindOf(std::string_view message);

struct Hello {
  EvaluatorOptions options; // backend, paths, workers (0: the rank's own), timeouts, filters
  CompilerTask task;
};

struct Ready {
  bool ok = false;
  std::string error;
  size_t workers = 0;
  std::string host;
};

struct Family {
  uint64_t id = 0;
  uint64_t generation = 0;
  std::string kind;
  std::string description;
};

struct PolicyFile {
  uint64_t id = 0;
  uint64_t generation = 0;
  std::string json;
};

enum class PolicyRef : uint8_t { None, Policy, FamilyMember };

struct Job {
  uint64_t id = 0;
  PolicyRef policy = PolicyRef::None;
  uint64_t policyId = 0; // a PolicyFile's or a Family's id
  uint64_t member = 0;   // the family member
  policies::DecisionMode mode = policies::DecisionMode::Deterministic;
  uint64_t rngKey = 0;
  bool recordTrajectory = false;
  bool recordDefaults = true;
  bool allowDecisionCache = true;
  corpus::ModuleSpec module;
};

struct Result {
  uint64_t jobId = 0;
  JobResult result;
  BackendStatistics counters; // the rank's, cumulative
};

std::string encode(const Hello& m);
std::string encode(const Ready& m);
std::string encode(const Family& m);
std::string encode(const PolicyFile& m);
std::string encode(const Job& m);
std::string encode(const Result& m);
std::string encodeShutdown();
std::string encodeHeartbeat();

Expected<Hello> decodeHello(std::string_view message);
Expected<Ready> decodeReady(std::string_view message);
Expected<Family> decodeFamily(std::string_view message);
Expected<PolicyFile> decodePolicyFile(std::string_view message);
Expected<Job> decodeJob(std::string_view message);
Expected<Result> decodeResult(std::string_view message);

} // namespace mlgo::evaluators::cluster
