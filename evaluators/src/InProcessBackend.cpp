#include "InProcessBackend.h"

#include "mlgo/corpus/CommandLine.h"

#include <algorithm>
#include <cstdio>

namespace mlgo::evaluators {

InProcessBackend::InProcessBackend(EvaluatorOptions options, CompilerTask task)
    : options_(std::move(options)), task_(std::move(task)),
      pool_(options_.inprocessWorker, options_.scratchDirectory, options_.stderrTailBytes,
            options_.jobsPerWorker, task_.llvmOptions) {}

BackendStatistics InProcessBackend::statistics() const {
  std::lock_guard lock(mutex_);
  BackendStatistics s = statistics_;
  s.workersStarted = pool_.workersStarted();
  return s;
}

std::optional<JobResult> InProcessBackend::compile(const JobSpec& spec,
                                                   const SerializedPolicy* policy) {
  const corpus::ModuleSpec& module = *spec.module;
  if (spec.policy && !policy)
    return std::nullopt; // no file form to send a worker
  const std::string moduleKey = module.bitcode.string();
  {
    std::lock_guard lock(mutex_);
    if (unsupportedModules_.count(moduleKey))
      return std::nullopt;
  }
  JobRun run(module, options_.compileTimeout);
  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options_.scratchDirectory, "mlgo-job-");
  if (!scratch)
    return run.finish(JobStatus::SetupFailed, scratch.error().message);
  Expected<protocol::JobMessage> message =
      jobMessage(spec, policy != nullptr, scratch->path() / "module.o");
  if (!message)
    return run.finish(JobStatus::SetupFailed, message.error().message);
  protocol::JobMessage& job = *message;
  job.consultCache = options_.decisionCache && spec.allowDecisionCache && policy;

  std::optional<SequenceKey> asked;
  std::optional<CachedObject> known;
  auto cacheKnown = [&](const protocol::CacheQueryMessage& query) {
    asked = SequenceKey{query.hashLow, query.hashHigh, query.decisions};
    std::lock_guard lock(mutex_);
    ++statistics_.cacheLookups;
    if (uncacheableModules_.count(moduleKey))
      return false;
    auto m = modules_.find(moduleKey);
    if (m != modules_.end()) {
      auto hit = m->second.objects.find(*asked);
      if (hit != m->second.objects.end())
        known = hit->second;
    }
    return known.has_value();
  };

  WorkerOutcome outcome = pool_.run(job, policy, run.deadline, cacheKnown);
  {
    std::lock_guard lock(mutex_);
    ++statistics_.jobs;
    statistics_.reuse += outcome.result.reuse;
    if (outcome.kind == WorkerOutcome::Kind::Answered &&
        outcome.result.status == protocol::WorkerStatus::Ok && !outcome.result.cacheHit) {
      statistics_.compileTimes += outcome.result.times;
      ++statistics_.timedCompiles;
    }
  }
  std::optional<JobResult> done = resultOf(run, outcome, moduleKey, known);
  if (done && done->ok())
    learn(moduleKey, *done, outcome.result.decisionsAfterQuery, asked);
  return done;
}

Expected<protocol::JobMessage>
InProcessBackend::jobMessage(const JobSpec& spec, bool withPolicy,
                             const std::filesystem::path& object) const {
  Expected<std::vector<std::string>> command =
      corpus::buildCompileCommand(*spec.module, options_.filters, object);
  if (!command)
    return command.error();
  protocol::JobMessage job;
  job.mode = spec.mode;
  job.rngKey = spec.rngKey;
  job.recordTrajectory = spec.recordTrajectory && withPolicy;
  job.recordDefaults = spec.recordDefaults;
  job.defaultDecisionFeature = task_.defaultDecisionFeature;
  job.sizeSections = task_.sizeSections;
  job.arguments = command.take();
  job.moduleName = spec.module->name;
  job.route = task_.inProcess;
  job.taskName = task_.name;
  job.adviceName = task_.adviceName;
  job.neutralAdvice = task_.neutralAdvice;
  job.reuseCode = options_.incremental && spec.allowCodeReuse &&
                  task_.inProcess == InProcessRoute::InlineAdvisor;
  job.reuseBytes = options_.incrementalMemoryBytes;
  return job;
}

std::vector<Backend::TrialOutcome>
InProcessBackend::compileTrials(const JobSpec& base, const SerializedPolicy* serialized,
                                std::span<const DecisionTrial> trials) {
  std::vector<TrialOutcome> outcomes(trials.size());
  auto allFull = [&](const std::string& why) {
    for (TrialOutcome& outcome : outcomes)
      outcome = {std::nullopt, why};
    return outcomes;
  };
  if (!serialized || task_.inProcess != InProcessRoute::InlineAdvisor)
    return allFull("no incremental route");
  {
    std::lock_guard lock(mutex_);
    if (unsupportedModules_.count(base.module->bitcode.string()))
      return allFull("module not compiled in-process");
  }
  // The base's compile and every child's, one after the other.
  JobRun run(*base.module, options_.compileTimeout * static_cast<double>(trials.size() + 1));
  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options_.scratchDirectory, "mlgo-job-");
  if (!scratch)
    return allFull("no scratch directory");
  Expected<protocol::JobMessage> message = jobMessage(base, true, scratch->path() / "module.o");
  if (!message)
    return allFull("no command");
  // The worker meets decisions in order: it takes the trials by position.
  std::vector<size_t> byPosition(trials.size());
  for (size_t i = 0; i < trials.size(); ++i)
    byPosition[i] = i;
  std::stable_sort(byPosition.begin(), byPosition.end(),
                   [&](size_t a, size_t b) { return trials[a].position < trials[b].position; });
  // Two trials of one state are one trial: sent once.
  std::vector<size_t> sentAs(trials.size());
  for (size_t i : byPosition) {
    if (message->trials.empty() || message->trials.back().position != trials[i].position ||
        message->trials.back().state != trials[i].state)
      message->trials.push_back({trials[i].position, trials[i].state});
    sentAs[i] = message->trials.size() - 1;
  }
  message->trialSeconds = options_.compileTimeout.count();
  WorkerOutcome outcome = pool_.run(*message, serialized, run.deadline,
                                    [](const protocol::CacheQueryMessage&) { return false; });
  {
    std::lock_guard lock(mutex_);
    ++statistics_.jobs;
    for (const protocol::ResultMessage& trial : outcome.result.trials) {
      statistics_.reuse += trial.reuse;
      if (trial.status == protocol::WorkerStatus::Ok) {
        statistics_.trialTimes += trial.times;
        ++statistics_.timedTrials;
      }
    }
  }
  if (outcome.kind != WorkerOutcome::Kind::Answered)
    return allFull("worker lost");
  if (outcome.result.trials.size() != message->trials.size())
    return allFull(outcome.result.status == protocol::WorkerStatus::Unsupported
                       ? "module not compiled in-process"
                       : "base compile failed");
  const double seconds = std::chrono::duration<double>(Clock::now() - run.start).count() /
                         static_cast<double>(message->trials.size());
  for (size_t i = 0; i < trials.size(); ++i) {
    const protocol::ResultMessage& answer = outcome.result.trials[sentAs[i]];
    if (answer.status != protocol::WorkerStatus::Ok) {
      // Anything but a measured trial is compiled in full: its result is
      // then exactly what a full compile says, failures included.
      outcomes[i].fullCompileReason = answer.message.empty() ? "trial failed" : answer.message;
      continue;
    }
    JobResult& result = outcomes[i].result.emplace();
    result.status = JobStatus::Ok;
    result.decisions = answer.decisions;
    result.trajectory = answer.trajectory;
    result.sizeBytes = answer.sizeBytes;
    result.codeHash = answer.codeHash;
    result.comdat = answer.comdat;
    result.measured = answer.measured;
    result.seconds = seconds;
  }
  return outcomes;
}

std::optional<JobResult> InProcessBackend::resultOf(JobRun& run, WorkerOutcome& outcome,
                                                    const std::string& moduleKey,
                                                    const std::optional<CachedObject>& known) {
  JobResult& result = run.result;
  switch (outcome.kind) {
  case WorkerOutcome::Kind::Answered:
    break;
  case WorkerOutcome::Kind::WorkerDied:
    result.stderrTail = outcome.logTail;
    return run.finish(JobStatus::CompilerCrashed, outcome.message);
  case WorkerOutcome::Kind::WorkerExited:
    result.stderrTail = outcome.logTail;
    return run.finish(JobStatus::CompilerFailed, outcome.message);
  case WorkerOutcome::Kind::TimedOut:
    result.stderrTail = outcome.logTail;
    return run.finish(JobStatus::TimedOut, outcome.message);
  case WorkerOutcome::Kind::ProtocolError:
    result.stderrTail = outcome.logTail;
    return run.finish(JobStatus::ProtocolError, outcome.message);
  case WorkerOutcome::Kind::SetupFailed:
    return run.finish(JobStatus::SetupFailed, outcome.message);
  }

  protocol::ResultMessage& answer = outcome.result;
  result.decisions = answer.decisions;
  result.trajectory = std::move(answer.trajectory);
  switch (answer.status) {
  case protocol::WorkerStatus::Unsupported: {
    std::lock_guard lock(mutex_);
    unsupportedModules_.insert(moduleKey);
    std::fprintf(stderr, "note: module \"%s\" is compiled by clang processes: %s\n",
                 run.module.name.c_str(), answer.message.c_str());
    return std::nullopt;
  }
  case protocol::WorkerStatus::CompilerFailed: {
    const std::string& text = answer.diagnostics;
    result.stderrTail = text.size() <= options_.stderrTailBytes
                            ? text
                            : text.substr(text.size() - options_.stderrTailBytes);
    return run.finish(JobStatus::CompilerFailed, "compiler failed: " + answer.message);
  }
  case protocol::WorkerStatus::PolicyMismatch:
    return run.finish(JobStatus::PolicyMismatch, answer.message);
  case protocol::WorkerStatus::Crashed:
  case protocol::WorkerStatus::TimedOut:
  case protocol::WorkerStatus::NotIncremental: // a trial's statuses only
    return run.finish(JobStatus::ProtocolError, "a trial's status for a plain job");
  case protocol::WorkerStatus::BadObject:
    return run.finish(JobStatus::BadObject, answer.message);
  case protocol::WorkerStatus::SetupFailed:
    return run.finish(JobStatus::SetupFailed, answer.message);
  case protocol::WorkerStatus::Ok:
    break;
  }
  if (answer.cacheHit) {
    if (!known)
      return run.finish(JobStatus::ProtocolError,
                        "the worker claimed a cache hit it was not given");
    result.sizeBytes = known->sizeBytes;
    result.codeHash = known->codeHash;
    result.cacheHit = true;
  } else {
    result.sizeBytes = answer.sizeBytes;
    result.codeHash = answer.codeHash;
    result.comdat = std::move(answer.comdat);
    result.measured = answer.measured;
  }
  return run.finish(JobStatus::Ok, "");
}

void InProcessBackend::learn(const std::string& moduleKey, const JobResult& done,
                             bool decisionsAfterQuery, const std::optional<SequenceKey>& asked) {
  std::lock_guard lock(mutex_);
  if (decisionsAfterQuery) {
    uncacheableModules_.insert(moduleKey);
    modules_.erase(moduleKey);
    return;
  }
  if (!asked)
    return;
  ModuleEntries& entries = modules_[moduleKey];
  if (done.cacheHit) {
    ++statistics_.cacheHits;
    if (entries.fullCompiles > 0)
      statistics_.cacheSecondsSaved +=
          std::max(0.0, entries.fullCompileSeconds / static_cast<double>(entries.fullCompiles) -
                            done.seconds);
  } else {
    entries.objects[*asked] = {done.sizeBytes, done.codeHash};
    entries.fullCompileSeconds += done.seconds;
    ++entries.fullCompiles;
  }
}

} // namespace mlgo::evaluators
