#include "mlgo/evaluators/Evaluator.h"

#include "InProcessPool.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/FeatureLayout.h"
#include "mlgo/evaluators/InteractiveChannel.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/evaluators/Process.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Progress.h"
#include "mlgo/support/Random.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>
#include <unistd.h>
#include <unordered_map>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

// Bookkeeping of the in-process backend, shared by all jobs of an evaluator.
struct InProcessState {
  struct CachedObject {
    uint64_t sizeBytes = 0;
    uint64_t codeHash = 0;
  };
  // (128-bit sequence hash, decision count) -> the object it gave.
  using SequenceKey = std::array<uint64_t, 3>;
  struct ModuleEntries {
    std::map<SequenceKey, CachedObject> objects;
    double fullCompileSeconds = 0; // summed over compiles that ran to the end
    size_t fullCompiles = 0;
  };

  std::mutex mutex;
  std::unordered_map<std::string, ModuleEntries> modules; // by bitcode path
  std::set<std::string> unsupportedModules;               // compiled with clang instead
  // Modules whose pipeline asks the policy again after the first inliner run:
  // a prefix of their decisions does not determine the object; never cached.
  std::set<std::string> uncacheableModules;
  EvaluatorStatistics statistics;
};

namespace {

using policies::ChannelHeader;
using policies::DecisionMode;
using policies::Policy;

// Writes to a FIFO whose reader died must fail with EPIPE, not kill us.
void ignoreSigpipeOnce() {
  static const bool done = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

// One job's clock and result: started now, due at the compile timeout;
// finish() stamps the status, the message (prefixed with the module) and the
// seconds.
struct JobRun {
  JobRun(const corpus::ModuleSpec& module, std::chrono::duration<double> timeout)
      : module(module), start(Clock::now()),
        deadline(start + std::chrono::duration_cast<Clock::duration>(timeout)) {}

  JobResult finish(JobStatus status, std::string message) {
    result.status = status;
    if (!message.empty())
      result.message = "module \"" + module.name + "\": " + message;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::move(result);
  }

  const corpus::ModuleSpec& module;
  const Clock::time_point start;
  const Clock::time_point deadline;
  JobResult result;
};

std::string runForIdentity(const std::string& clang, const fs::path& scratch) {
  fs::path log = scratch / "version.txt";
  std::string identity = clang;
  if (Expected<ChildProcess> child = ChildProcess::spawn(clang, {"--version"}, log)) {
    std::optional<ExitStatus> status = child->waitUntil(Clock::now() + std::chrono::seconds(30));
    if (status && status->succeeded())
      identity += "\n" + readTail(log, 4096);
  }
  std::error_code ec;
  // A rebuilt compiler at the same path must not reuse old baselines.
  auto stamp = fs::last_write_time(clang, ec);
  if (!ec)
    identity += "\n" + std::to_string(stamp.time_since_epoch().count());
  identity += "\n" + std::to_string(fs::file_size(clang, ec));
  return identity;
}

} // namespace

std::string_view jobStatusName(JobStatus status) {
  switch (status) {
  case JobStatus::Ok:
    return "ok";
  case JobStatus::CompilerCrashed:
    return "compiler-crashed";
  case JobStatus::CompilerFailed:
    return "compiler-failed";
  case JobStatus::TimedOut:
    return "timed-out";
  case JobStatus::ProtocolError:
    return "protocol-error";
  case JobStatus::BadObject:
    return "bad-object";
  case JobStatus::PolicyMismatch:
    return "policy-mismatch";
  case JobStatus::BaselineUnavailable:
    return "baseline-unavailable";
  case JobStatus::SetupFailed:
    return "setup-failed";
  }
  return "unknown";
}

double sizeReward(uint64_t sizeBytes, uint64_t baselineBytes) {
  constexpr double delta = 0.01;
  return 1.0 -
         (static_cast<double>(sizeBytes) + delta) / (static_cast<double>(baselineBytes) + delta);
}

std::string_view backendName(Backend backend) {
  return backend == Backend::InProcess ? "inprocess" : "clang";
}

Expected<Backend> parseBackend(std::string_view name) {
  if (name == "inprocess")
    return Backend::InProcess;
  if (name == "clang")
    return Backend::Clang;
  return makeError("unknown backend \"" + std::string(name) + "\" (inprocess or clang)");
}

std::string EvaluatorOptions::defaultClang() {
  return MLGO_DEFAULT_CLANG;
}

fs::path EvaluatorOptions::defaultScratchDirectory() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec) && access("/dev/shm", W_OK) == 0)
    return "/dev/shm";
  return fs::temp_directory_path();
}

Status EvaluatorOptions::validate() const {
  if (clang.empty())
    return makeError("clang: empty path");
  if (access(clang.c_str(), X_OK) != 0)
    return makeError("clang: " + clang + " is not an executable file");
  if (backend == Backend::InProcess && access(inprocessWorker.c_str(), X_OK) != 0)
    return makeError("inprocessWorker: " + inprocessWorker +
                     " is not an executable file (build the mlgo-inprocess-worker target, set "
                     "MLGO_INPROCESS_WORKER, or use the clang backend)");
  if (workers == 0)
    return makeError("workers: must be at least 1");
  if (compileTimeout.count() <= 0)
    return makeError("compileTimeout: must be positive");
  std::error_code ec;
  if (!fs::is_directory(scratchDirectory, ec))
    return makeError("scratchDirectory: " + scratchDirectory.string() + " is not a directory");
  if (Status filtersOk = filters.validate(); !filtersOk)
    return makeError("filters: " + filtersOk.error().message);
  return Status::ok();
}

CandidateScore EvaluationResult::score(size_t candidate) const {
  CandidateScore score;
  double rewardSum = 0;
  for (size_t m = 0; m < moduleCount; ++m) {
    const JobResult& j = job(candidate, m);
    if (!j.ok()) {
      ++score.failedModules;
      continue;
    }
    ++score.okModules;
    rewardSum += j.reward;
    score.totalBytes += j.sizeBytes;
    score.totalBaselineBytes += baselineBytes[m].value_or(0);
  }
  if (score.okModules > 0) {
    score.meanReward = rewardSum / static_cast<double>(score.okModules);
    score.totalReward = sizeReward(score.totalBytes, score.totalBaselineBytes);
  }
  return score;
}

Evaluator::Evaluator(EvaluatorOptions options, CompilerTask task, std::string compilerIdentity)
    : options_(std::move(options)), task_(std::move(task)),
      compilerIdentity_(std::move(compilerIdentity)),
      inprocess_(std::make_unique<InProcessState>()) {
  if (options_.backend == Backend::InProcess)
    pool_ = std::make_unique<InProcessPool>(options_.inprocessWorker, options_.scratchDirectory,
                                            options_.stderrTailBytes, options_.jobsPerWorker);
}

Evaluator::~Evaluator() = default;

EvaluatorStatistics Evaluator::statistics() const {
  std::lock_guard lock(inprocess_->mutex);
  EvaluatorStatistics s = inprocess_->statistics;
  s.workersStarted = pool_ ? pool_->workersStarted() : 0;
  return s;
}

std::optional<SerializedPolicy> Evaluator::serialize(const Policy& policy,
                                                     uint64_t generation) const {
  Expected<std::string> json = policies::policyToJson(policy);
  if (!json)
    return std::nullopt;
  return SerializedPolicy{nextPolicyId_++, generation, json.take()};
}

JobResult Evaluator::compile(const corpus::ModuleSpec& module, const Policy* policy,
                             DecisionMode mode, uint64_t rngKey, bool recordTrajectory) const {
  std::optional<SerializedPolicy> serialized;
  if (policy && pool_)
    serialized = serialize(*policy, nextGeneration_++);
  return compileJob(module, policy, serialized ? &*serialized : nullptr, mode, rngKey,
                    recordTrajectory);
}

JobResult Evaluator::compileJob(const corpus::ModuleSpec& module, const Policy* policy,
                                const SerializedPolicy* serialized, DecisionMode mode,
                                uint64_t rngKey, bool recordTrajectory) const {
  if (pool_ && (!policy || serialized)) {
    if (std::optional<JobResult> done =
            compileInProcess(module, serialized, mode, rngKey, recordTrajectory))
      return std::move(*done);
  }
  {
    std::lock_guard lock(inprocess_->mutex);
    ++inprocess_->statistics.clangJobs;
    if (pool_)
      ++inprocess_->statistics.fallbackJobs;
  }
  return compileWithClang(module, policy, mode, rngKey, recordTrajectory);
}

std::optional<JobResult> Evaluator::compileInProcess(const corpus::ModuleSpec& module,
                                                     const SerializedPolicy* policy,
                                                     DecisionMode mode, uint64_t rngKey,
                                                     bool recordTrajectory) const {
  const std::string moduleKey = module.bitcode.string();
  {
    std::lock_guard lock(inprocess_->mutex);
    if (inprocess_->unsupportedModules.count(moduleKey))
      return std::nullopt;
  }
  JobRun run(module, options_.compileTimeout);
  JobResult& result = run.result;
  const Clock::time_point deadline = run.deadline;
  auto finish = [&](JobStatus status, std::string message) {
    return run.finish(status, std::move(message));
  };
  auto tail = [&](const std::string& text) {
    return text.size() <= options_.stderrTailBytes
               ? text
               : text.substr(text.size() - options_.stderrTailBytes);
  };

  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options_.scratchDirectory, "mlgo-job-");
  if (!scratch)
    return finish(JobStatus::SetupFailed, scratch.error().message);
  Expected<std::vector<std::string>> command =
      corpus::buildCompileCommand(module, options_.filters, scratch->path() / "module.o");
  if (!command)
    return finish(JobStatus::SetupFailed, command.error().message);

  protocol::JobMessage job;
  job.mode = mode;
  job.rngKey = rngKey;
  job.recordTrajectory = recordTrajectory && policy;
  job.consultCache = options_.decisionCache && policy;
  job.defaultDecisionFeature = task_.defaultDecisionFeature;
  job.sizeSections = task_.sizeSections;
  job.arguments = command.take();
  job.moduleName = module.name;

  std::optional<InProcessState::SequenceKey> asked;
  std::optional<InProcessState::CachedObject> known;
  auto cacheKnown = [&](const protocol::CacheQueryMessage& query) {
    asked = InProcessState::SequenceKey{query.hashLow, query.hashHigh, query.decisions};
    std::lock_guard lock(inprocess_->mutex);
    ++inprocess_->statistics.cacheLookups;
    if (inprocess_->uncacheableModules.count(moduleKey))
      return false;
    auto m = inprocess_->modules.find(moduleKey);
    if (m != inprocess_->modules.end()) {
      auto hit = m->second.objects.find(*asked);
      if (hit != m->second.objects.end())
        known = hit->second;
    }
    return known.has_value();
  };

  WorkerOutcome outcome = pool_->run(job, policy, deadline, cacheKnown);
  {
    std::lock_guard lock(inprocess_->mutex);
    ++inprocess_->statistics.inprocessJobs;
  }
  switch (outcome.kind) {
  case WorkerOutcome::Kind::Answered:
    break;
  case WorkerOutcome::Kind::WorkerDied:
    result.stderrTail = outcome.logTail;
    return finish(JobStatus::CompilerCrashed, outcome.message);
  case WorkerOutcome::Kind::WorkerExited:
    result.stderrTail = outcome.logTail;
    return finish(JobStatus::CompilerFailed, outcome.message);
  case WorkerOutcome::Kind::TimedOut:
    result.stderrTail = outcome.logTail;
    return finish(JobStatus::TimedOut, outcome.message);
  case WorkerOutcome::Kind::ProtocolError:
    result.stderrTail = outcome.logTail;
    return finish(JobStatus::ProtocolError, outcome.message);
  case WorkerOutcome::Kind::SetupFailed:
    return finish(JobStatus::SetupFailed, outcome.message);
  }

  protocol::ResultMessage& answer = outcome.result;
  result.decisions = answer.decisions;
  result.trajectory = std::move(answer.trajectory);
  switch (answer.status) {
  case protocol::WorkerStatus::Unsupported: {
    std::lock_guard lock(inprocess_->mutex);
    inprocess_->unsupportedModules.insert(moduleKey);
    std::fprintf(stderr, "note: module \"%s\" is compiled by clang processes: %s\n",
                 module.name.c_str(), answer.message.c_str());
    return std::nullopt;
  }
  case protocol::WorkerStatus::CompilerFailed:
    result.stderrTail = tail(answer.diagnostics);
    return finish(JobStatus::CompilerFailed, "compiler failed: " + answer.message);
  case protocol::WorkerStatus::PolicyMismatch:
    return finish(JobStatus::PolicyMismatch, answer.message);
  case protocol::WorkerStatus::BadObject:
    return finish(JobStatus::BadObject, answer.message);
  case protocol::WorkerStatus::SetupFailed:
    return finish(JobStatus::SetupFailed, answer.message);
  case protocol::WorkerStatus::Ok:
    break;
  }
  if (answer.cacheHit) {
    if (!known)
      return finish(JobStatus::ProtocolError, "the worker claimed a cache hit it was not given");
    result.sizeBytes = known->sizeBytes;
    result.codeHash = known->codeHash;
    result.cacheHit = true;
  } else {
    result.sizeBytes = answer.sizeBytes;
    result.codeHash = answer.codeHash;
  }
  JobResult done = finish(JobStatus::Ok, "");
  std::lock_guard lock(inprocess_->mutex);
  if (answer.decisionsAfterQuery) {
    inprocess_->uncacheableModules.insert(moduleKey);
    inprocess_->modules.erase(moduleKey);
  } else if (asked) {
    InProcessState::ModuleEntries& entries = inprocess_->modules[moduleKey];
    if (done.cacheHit) {
      ++inprocess_->statistics.cacheHits;
      if (entries.fullCompiles > 0)
        inprocess_->statistics.cacheSecondsSaved +=
            std::max(0.0, entries.fullCompileSeconds / static_cast<double>(entries.fullCompiles) -
                              done.seconds);
    } else {
      entries.objects[*asked] = {done.sizeBytes, done.codeHash};
      entries.fullCompileSeconds += done.seconds;
      ++entries.fullCompiles;
    }
  }
  return done;
}

Expected<std::unique_ptr<Evaluator>> Evaluator::create(EvaluatorOptions options,
                                                       CompilerTask task) {
  if (Status valid = options.validate(); !valid)
    return makeError("evaluator options: " + valid.error().message);
  ignoreSigpipeOnce();
  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options.scratchDirectory, "mlgo-id-");
  if (!scratch)
    return scratch.error();
  std::string identity = runForIdentity(options.clang, scratch->path());
  // Baselines from the two backends are kept apart, should they ever differ.
  if (options.backend == Backend::InProcess)
    identity += "\nbackend=inprocess";
  return std::unique_ptr<Evaluator>(new Evaluator(std::move(options), std::move(task), identity));
}

JobResult Evaluator::compileWithClang(const corpus::ModuleSpec& module, const Policy* policy,
                                      DecisionMode mode, uint64_t rngKey,
                                      bool recordTrajectory) const {
  JobRun run(module, options_.compileTimeout);
  JobResult& result = run.result;
  const Clock::time_point deadline = run.deadline;
  auto finish = [&](JobStatus status, std::string message) {
    return run.finish(status, std::move(message));
  };

  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options_.scratchDirectory, "mlgo-job-");
  if (!scratch)
    return finish(JobStatus::SetupFailed, scratch.error().message);
  const fs::path object = scratch->path() / "module.o";
  const fs::path log = scratch->path() / "clang.log";

  Expected<std::vector<std::string>> command =
      corpus::buildCompileCommand(module, options_.filters, object);
  if (!command)
    return finish(JobStatus::SetupFailed, command.error().message);

  std::optional<InteractiveChannel> channel;
  if (policy) {
    const fs::path base = scratch->path() / "channel";
    Expected<InteractiveChannel> created = InteractiveChannel::create(base);
    if (!created)
      return finish(JobStatus::SetupFailed, created.error().message);
    channel.emplace(std::move(*created));
    std::vector<std::string> extra = task_.argumentsFor(base);
    command->insert(command->end() - 2, extra.begin(), extra.end()); // before "-o <object>"
  }

  Expected<ChildProcess> child = ChildProcess::spawn(options_.clang, *command, log);
  if (!child)
    return finish(JobStatus::SetupFailed, child.error().message);

  // Ends the compiler for a failed exchange; a compiler that died on its own
  // is a crash, whatever the channel saw.
  auto abandon = [&](JobStatus status, std::string message) -> JobResult {
    std::optional<ExitStatus> ended = child->poll();
    if (!ended)
      ended = child->kill();
    result.stderrTail = readTail(log, options_.stderrTailBytes);
    if (ended->signal && *ended->signal != SIGKILL)
      return finish(JobStatus::CompilerCrashed, "compiler died: " + ended->describe());
    return finish(status, std::move(message));
  };

  if (channel) {
    Expected<InteractiveChannel::OpenResult> opened =
        channel->open(deadline, [&] { return !child->poll().has_value(); });
    if (!opened)
      return abandon(JobStatus::SetupFailed, opened.error().message);
    if (*opened == InteractiveChannel::OpenResult::TimedOut)
      return abandon(JobStatus::TimedOut, "timed out before the compiler opened the channel");
    if (*opened == InteractiveChannel::OpenResult::Opened) {
      Expected<ChannelHeader> header = channel->readHeader(deadline);
      if (!header)
        return abandon(JobStatus::ProtocolError, header.error().message);
      Expected<FeatureLayout> layout =
          FeatureLayout::bind(*header, *policy, task_.defaultDecisionFeature);
      if (!layout)
        return abandon(JobStatus::PolicyMismatch, layout.error().message);
      if (recordTrajectory) {
        result.trajectory.emplace();
        result.trajectory->featureSpecs = header->features;
        result.trajectory->width = layout->recordWidth;
      }
      RandomStream rng(rngKey);
      std::vector<std::byte> observation;
      std::vector<double> inputs(layout->policyWidth);
      while (true) {
        Expected<InteractiveChannel::Event> event = channel->next(deadline, observation);
        if (!event)
          return abandon(JobStatus::ProtocolError, event.error().message);
        if (*event == InteractiveChannel::Event::TimedOut)
          return abandon(JobStatus::TimedOut,
                         "timed out after " + std::to_string(result.decisions) + " decisions");
        if (*event == InteractiveChannel::Event::EndOfStream)
          break;
        layout->gather(*header, observation.data(), layout->policyInputs, inputs.data());
        policies::Decision decision = policy->decide(inputs, mode, rng);
        std::vector<std::byte> advice = encodeAdvice(header->advice, decision.advice);
        if (Status sent = channel->sendAdvice(advice.data(), advice.size()); !sent)
          return abandon(JobStatus::ProtocolError, sent.error().message);
        ++result.decisions;
        if (result.trajectory)
          layout->record(*header, observation.data(), decision, *result.trajectory);
      }
    }
  }

  std::optional<ExitStatus> ended = child->waitUntil(deadline);
  if (!ended)
    return abandon(JobStatus::TimedOut, "timed out waiting for the compiler to exit");
  result.stderrTail = readTail(log, options_.stderrTailBytes);
  if (ended->signal)
    return finish(JobStatus::CompilerCrashed, "compiler died: " + ended->describe());
  if (!ended->succeeded())
    return finish(JobStatus::CompilerFailed, "compiler failed: " + ended->describe());
  Expected<CodeMeasure> code = measureCode(object, task_.sizeSections);
  if (!code)
    return finish(JobStatus::BadObject, code.error().message);
  result.sizeBytes = code->bytes;
  result.codeHash = code->hash;
  result.stderrTail.clear(); // nothing to report for a clean compile
  return finish(JobStatus::Ok, "");
}

BaselineResult Evaluator::computeBaseline(const corpus::ModuleSpec& module) const {
  BaselineResult baseline;
  std::optional<BaselineCache> cache;
  std::string key;
  if (options_.baselineCacheDirectory) {
    cache.emplace(*options_.baselineCacheDirectory);
    Expected<std::string> bitcode = corpus::readFileBytes(module.bitcode);
    corpus::ModuleSpec anonymous = module;
    anonymous.bitcode = "module.bc";
    Expected<std::vector<std::string>> command =
        corpus::buildCompileCommand(anonymous, options_.filters, "module.o");
    if (bitcode && command) {
      key = BaselineCache::key(*bitcode, *command, compilerIdentity_);
      if (std::optional<uint64_t> cached = cache->lookup(key)) {
        baseline.sizeBytes = cached;
        baseline.fromCache = true;
        return baseline;
      }
    }
  }
  JobResult plain = compile(module, nullptr, DecisionMode::Deterministic, 0, false);
  if (!plain.ok()) {
    baseline.message =
        "baseline (-Oz) compile failed: " + std::string(jobStatusName(plain.status)) + ": " +
        plain.message;
    return baseline;
  }
  baseline.sizeBytes = plain.sizeBytes;
  if (cache && !key.empty())
    cache->store(key, plain.sizeBytes);
  return baseline;
}

std::vector<BaselineResult>
Evaluator::baselines(std::span<const corpus::ModuleSpec* const> modules) {
  std::vector<BaselineResult> results(modules.size());
  std::vector<size_t> missing;
  {
    std::lock_guard lock(baselineMutex_);
    for (size_t i = 0; i < modules.size(); ++i) {
      auto it = baselineMemo_.find(modules[i]->bitcode.string());
      if (it != baselineMemo_.end())
        results[i] = it->second;
      else
        missing.push_back(i);
    }
  }
  if (missing.empty())
    return results;
  tbb::task_arena arena(static_cast<int>(options_.workers));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, missing.size(), 1),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t i = range.begin(); i != range.end(); ++i)
                          results[missing[i]] = computeBaseline(*modules[missing[i]]);
                      });
  });
  std::lock_guard lock(baselineMutex_);
  for (size_t i : missing)
    baselineMemo_[modules[i]->bitcode.string()] = results[i];
  return results;
}

EvaluationResult Evaluator::evaluate(const EvaluationRequest& request) {
  const auto start = Clock::now();
  EvaluationResult result;
  result.candidateCount = request.candidates.size();
  result.moduleCount = request.modules.size();
  result.jobs.resize(result.candidateCount * result.moduleCount);

  std::vector<BaselineResult> baselineResults = baselines(request.modules);
  for (const BaselineResult& b : baselineResults)
    result.baselineBytes.push_back(b.sizeBytes);

  // Every candidate goes to the workers once per evaluation, not per job.
  std::vector<std::optional<SerializedPolicy>> serialized(request.candidates.size());
  if (pool_) {
    const uint64_t generation = nextGeneration_++;
    for (size_t c = 0; c < request.candidates.size(); ++c)
      if (request.candidates[c])
        serialized[c] = serialize(*request.candidates[c], generation);
  }
  const EvaluatorStatistics before = statistics();

  std::optional<ProgressLine> progress;
  if (request.showProgress)
    progress.emplace("compile", result.jobs.size());
  tbb::task_arena arena(static_cast<int>(options_.workers));
  arena.execute([&] {
    // One job per task: compile times differ by orders of magnitude between
    // modules, so the finest grain lets idle workers take the next job.
    tbb::parallel_for(tbb::blocked_range<size_t>(0, result.jobs.size(), 1),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t j = range.begin(); j != range.end(); ++j) {
                          size_t c = j / result.moduleCount, m = j % result.moduleCount;
                          JobResult& slot = result.jobs[j];
                          const corpus::ModuleSpec& module = *request.modules[m];
                          if (!baselineResults[m].sizeBytes) {
                            slot.status = JobStatus::BaselineUnavailable;
                            slot.message =
                                "module \"" + module.name + "\": " + baselineResults[m].message;
                          } else {
                            uint64_t key = deriveKey({request.seed, request.step, c, m});
                            slot = compileJob(module, request.candidates[c],
                                              serialized[c] ? &*serialized[c] : nullptr,
                                              request.mode, key, request.recordTrajectories);
                            if (slot.ok())
                              slot.reward =
                                  sizeReward(slot.sizeBytes, *baselineResults[m].sizeBytes);
                          }
                          if (progress)
                            progress->advance();
                        }
                      });
  });
  if (progress)
    progress->finish();
  // Concurrent evaluations on one evaluator would share these counts.
  const EvaluatorStatistics after = statistics();
  result.cacheLookups = after.cacheLookups - before.cacheLookups;
  result.cacheHits = after.cacheHits - before.cacheHits;
  result.cacheSecondsSaved = after.cacheSecondsSaved - before.cacheSecondsSaved;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

} // namespace mlgo::evaluators
