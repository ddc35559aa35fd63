#include "mlgo/evaluators/Evaluator.h"

#include "ClangProcessBackend.h"
#include "InProcessBackend.h"
#include "RemoteBackend.h"
#include "StandInBackend.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/LinkedCode.h"
#include "mlgo/evaluators/Process.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Progress.h"
#include "mlgo/support/Random.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <condition_variable>
#include <csignal>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

namespace {

using policies::Policy;

// Writes to a FIFO whose reader died must fail with EPIPE, not kill us.
void ignoreSigpipeOnce() {
  static const bool done = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

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

std::string_view backendKindName(BackendKind kind) {
  switch (kind) {
  case BackendKind::InProcess:
    return "inprocess";
  case BackendKind::Clang:
    return "clang";
  case BackendKind::Remote:
    return "remote";
  }
  return "unknown";
}

Expected<BackendKind> parseBackendKind(std::string_view name) {
  if (name == "inprocess")
    return BackendKind::InProcess;
  if (name == "clang")
    return BackendKind::Clang;
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
  if (backend == BackendKind::InProcess && access(inprocessWorker.c_str(), X_OK) != 0)
    return makeError("inprocessWorker: " + inprocessWorker +
                     " is not an executable file (build the mlgo-inprocess-worker target, set "
                     "MLGO_INPROCESS_WORKER, or use the clang backend)");
  if (workers == 0)
    return makeError("workers: must be at least 1");
  if (compileTimeout.count() <= 0)
    return makeError("compileTimeout: must be positive");
  if (rankDeadline.count() < 2)
    return makeError("rankDeadline: must be at least 2 s (ranks send a heartbeat every second)");
  std::error_code ec;
  if (!fs::is_directory(scratchDirectory, ec))
    return makeError("scratchDirectory: " + scratchDirectory.string() + " is not a directory");
  if (comdat && (replay || decisionCache || incremental))
    return makeError("comdat: replay, the decision cache and incremental evaluation keep only "
                     "sizes, not COMDAT groups; turn them off");
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
    score.totalMeasure += measured(j);
    score.totalBaselineMeasure += baselineMeasure(m).value_or(0);
  }
  if (score.okModules > 0) {
    score.meanReward = rewardSum / static_cast<double>(score.okModules);
    score.totalReward = reward(score.totalMeasure, score.totalBaselineMeasure);
  }
  return score;
}

Evaluator::Evaluator(EvaluatorOptions options, CompilerTask task, std::string compilerIdentity)
    : options_(std::move(options)), task_(std::move(task)),
      compilerIdentity_(std::move(compilerIdentity)),
      clang_(std::make_unique<ClangProcessBackend>(options_, task_)) {
  // A task the worker cannot run compiles in clang processes.
  if (options_.backend == BackendKind::InProcess && task_.inProcess != InProcessRoute::None)
    primary_ = std::make_unique<InProcessBackend>(options_, task_);
  concurrency_ = options_.workers;
  if (options_.replay)
    replay_ =
        std::make_unique<ReplayStore>(options_.replayMemoryBytes, task_.defaultDecisionFeature);
}

Evaluator::~Evaluator() = default;

EvaluatorStatistics Evaluator::statistics() const {
  EvaluatorStatistics s;
  BackendStatistics clang = clang_->statistics();
  s.clangJobs = clang.jobs;
  s.fallbackJobs = fallbackJobs_.load();
  if (primary_) {
    BackendStatistics primary = primary_->statistics();
    s.inprocessJobs = primary.jobs;
    s.cacheLookups = primary.cacheLookups;
    s.cacheHits = primary.cacheHits;
    s.cacheSecondsSaved = primary.cacheSecondsSaved;
    s.workersStarted = primary.workersStarted;
    s.reuse = primary.reuse;
    s.compileTimes = primary.compileTimes;
    s.trialTimes = primary.trialTimes;
    s.timedCompiles = primary.timedCompiles;
    s.timedTrials = primary.timedTrials;
  }
  std::lock_guard lock(countsMutex_);
  s.replays = replays_;
  s.replaySecondsSaved = replaySecondsSaved_;
  s.replaysVerified = replaysVerified_;
  s.incrementalVerified = incrementalVerified_;
  if (replay_)
    s.replayStore = replay_->statistics();
  return s;
}

std::optional<SerializedPolicy> Evaluator::serialize(const Policy& policy, uint64_t generation) {
  if (!primary_ || !primary_->needsSerializedPolicy())
    return std::nullopt;
  Expected<std::string> json = policies::policyToJson(policy);
  if (!json)
    return std::nullopt;
  return SerializedPolicy{nextPolicyId_++, generation, json.take()};
}

JobResult Evaluator::compile(const JobSpec& job) {
  std::optional<SerializedPolicy> serialized;
  if (job.policy)
    serialized = serialize(*job.policy, nextGeneration_++);
  return dispatch(job, serialized ? &*serialized : nullptr);
}

// Long-lived threads that run batches of jobs (the remote backend's).
class Evaluator::JobThreads {
public:
  explicit JobThreads(size_t count) {
    for (size_t t = 0; t < count; ++t)
      threads_.emplace_back([this] { work(); });
  }
  ~JobThreads() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& thread : threads_)
      thread.join();
  }
  void run(size_t count, const std::function<void(size_t)>& body) {
    std::unique_lock lock(mutex_);
    body_ = &body;
    count_ = count;
    next_ = 0;
    done_ = 0;
    changed_.notify_all();
    changed_.wait(lock, [&] { return done_ == count_; });
    body_ = nullptr;
  }

private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || (body_ && next_ < count_); });
      if (stopping_)
        return;
      const size_t i = next_++;
      const std::function<void(size_t)>& body = *body_;
      lock.unlock();
      body(i);
      lock.lock();
      if (++done_ == count_)
        changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void(size_t)>* body_ = nullptr;
  size_t count_ = 0, next_ = 0, done_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

JobResult Evaluator::compile(const JobSpec& job, const SerializedPolicy* serialized) {
  return dispatch(job, serialized);
}

void Evaluator::forEachJob(size_t count, const std::function<void(size_t)>& body) {
  if (!remote_) {
    tbb::task_arena arena(static_cast<int>(concurrency_));
    // One job per task: compile times differ by orders of magnitude between
    // modules, so the finest grain lets idle workers take the next job.
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1),
                        [&](const tbb::blocked_range<size_t>& range) {
                          for (size_t i = range.begin(); i != range.end(); ++i)
                            body(i);
                        });
    });
    return;
  }
  // A thread per slot over all ranks: they wait for remote results, and
  // oneTBB would not start more threads than this machine has cores. The
  // threads live as long as the evaluator: a worker process dies with the
  // thread that started it (PR_SET_PDEATHSIG), so they must not end.
  std::lock_guard batch(batchMutex_);
  if (!jobThreads_)
    jobThreads_ = std::make_unique<JobThreads>(concurrency_);
  jobThreads_->run(count, body);
}

namespace {

// ": <clang's first error line>" from a compile's output, else its first
// line (LLVM's option parser says "Unknown command line argument '-x'." with
// no "error"), or "": the message a console shows says what the compiler
// said, not only that it failed.
std::string firstErrorLine(const std::string& output) {
  size_t start = 0;
  std::string_view first;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos)
      end = output.size();
    std::string_view line(output.data() + start, end - start);
    if (line.find("error") != std::string_view::npos)
      return ": " + std::string(line.substr(0, 300));
    if (first.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos)
      first = line;
    start = end + 1;
  }
  return first.empty() ? "" : ": " + std::string(first.substr(0, 300));
}

} // namespace

JobResult Evaluator::dispatch(const JobSpec& job, const SerializedPolicy* serialized) {
  JobResult result;
  if (std::optional<JobResult> done = primary_ ? primary_->compile(job, serialized) : std::nullopt)
    result = std::move(*done);
  else if (job.policy && task_.inProcessOnly) {
    // A clang process would compile the module without the policy.
    result.status = JobStatus::SetupFailed;
    result.message = "module \"" + job.module->name + "\": the " + task_.name +
                     " task's policies run in-process only, and this module's command cannot "
                     "(see the worker's note on it)";
  } else {
    if (primary_)
      ++fallbackJobs_;
    result = *clang_->compile(job, nullptr);
  }
  if (result.status == JobStatus::CompilerFailed || result.status == JobStatus::CompilerCrashed)
    result.message += firstErrorLine(result.stderrTail);
  requireMeasure(result, *job.module);
  return result;
}

namespace {

// Where a replayed job and its compile first differ, or nullopt.
std::optional<std::string> replayDifference(const JobResult& replayed, const JobResult& compiled) {
  if (!compiled.ok())
    return "the compile failed (" + std::string(jobStatusName(compiled.status)) +
           "): " + compiled.message;
  if (replayed.measured != compiled.measured) {
    auto text = [](const std::optional<double>& v) {
      return v ? std::to_string(*v) : std::string("none");
    };
    return "measured " + text(replayed.measured) + " vs " + text(compiled.measured);
  }
  if (replayed.sizeBytes != compiled.sizeBytes || replayed.codeHash != compiled.codeHash)
    return "size " + std::to_string(replayed.sizeBytes) + " vs " +
           std::to_string(compiled.sizeBytes) + " bytes, or another code hash";
  if (replayed.decisions != compiled.decisions)
    return std::to_string(replayed.decisions) + " vs " + std::to_string(compiled.decisions) +
           " decisions";
  const policies::Trajectory& r = *replayed.trajectory;
  const policies::Trajectory& c = *compiled.trajectory;
  if (r.actions != c.actions) {
    size_t d = 0;
    while (d < r.actions.size() && r.actions[d] == c.actions[d])
      ++d;
    std::string detail = "other decisions from decision " + std::to_string(d) + " of " +
                         std::to_string(r.actions.size()) + ":";
    for (size_t i = d; i < std::min(r.actions.size(), d + 12); ++i)
      detail += " " + std::to_string(r.actions[i]) + "/" + std::to_string(c.actions[i]);
    if (c.width && d < c.decisions()) {
      detail += "; compiled features:";
      for (size_t i = 0; i < c.width; ++i)
        detail += " " + std::to_string(static_cast<long long>(c.row(d)[i]));
    }
    return detail;
  }
  for (size_t d = 0; d < r.logProbabilities.size(); ++d)
    if (r.logProbabilities[d] != c.logProbabilities[d])
      return "log-probability of decision " + std::to_string(d);
  if (r.width && (r.observations != c.observations || r.defaultDecisions != c.defaultDecisions))
    return std::string("other features or default decisions");
  if (r.followsCommitment != c.followsCommitment)
    return std::string("other calls answered by a callee's commitment");
  return std::nullopt;
}

} // namespace

JobResult Evaluator::runJob(JobSpec job, const SerializedPolicy* serialized,
                            EvaluationResult& result) {
  const bool wantTrajectory = job.recordTrajectory;
  const std::string moduleKey = job.module->bitcode.string();
  std::optional<JobResult> replayed;
  // Replay asks the policy along a known trajectory's features; callee
  // consistency also needs the callees, which trajectories do not record.
  if (replay_ && job.policy && !job.policy->calleeConsistent()) {
    const auto start = Clock::now();
    replayed = replay_->replay(moduleKey, *job.policy, job.mode, job.rngKey, wantTrajectory);
    if (replayed) {
      replayed->replayed = true;
      replayed->seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (!options_.replayVerify) {
        if (!wantTrajectory)
          replayed->trajectory.reset();
        return std::move(*replayed);
      }
    }
    // Compiled: recorded for the store (the defaults only when the caller
    // wants them: they cost an inline-cost analysis per decision).
    if (!wantTrajectory) {
      job.recordTrajectory = true;
      job.recordDefaults = false;
    }
    job.allowDecisionCache = !replayed; // a verifying compile runs the whole pipeline
  }
  JobResult compiled = dispatch(job, serialized);
  if (options_.incremental && options_.incrementalVerify && job.policy)
    verifyIncremental(compiled, job, serialized, result);
  if (replay_ && compiled.ok() && compiled.trajectory) {
    Status learned =
        replay_->learn(moduleKey, *compiled.trajectory, compiled.sizeBytes, compiled.codeHash,
                       compiled.seconds, !compiled.cacheHit, compiled.measured);
    if (!learned) {
      std::lock_guard lock(countsMutex_);
      if (options_.replayVerify && !result.problem)
        result.problem = learned.error();
      std::fprintf(stderr, "warning: %s\n", learned.error().message.c_str());
    }
  }
  if (replayed)
    verifyReplay(*replayed, compiled, job, result);
  if (!wantTrajectory)
    compiled.trajectory.reset();
  return compiled;
}

void Evaluator::verifyIncremental(const JobResult& compiled, const JobSpec& job,
                                  const SerializedPolicy* serialized, EvaluationResult& result) {
  JobSpec whole = job;
  whole.allowCodeReuse = false;
  whole.allowDecisionCache = false;
  whole.recordTrajectory = compiled.trajectory.has_value();
  JobResult check = dispatch(whole, serialized);
  if (compiled.cacheHit || !compiled.ok() || !check.ok()) {
    if (compiled.ok() != check.ok()) {
      std::lock_guard lock(countsMutex_);
      if (!result.problem)
        result.problem =
            makeError("verify-incremental: module \"" + job.module->name +
                      "\": the incremental compile " + (compiled.ok() ? "succeeded" : "failed") +
                      ", the full compile " + (check.ok() ? "succeeded" : "failed"));
    }
    return;
  }
  std::optional<std::string> difference =
      compiled.trajectory ? replayDifference(compiled, check)
      : compiled.sizeBytes != check.sizeBytes || compiled.codeHash != check.codeHash
          ? std::optional<std::string>("size " + std::to_string(compiled.sizeBytes) + " vs " +
                                       std::to_string(check.sizeBytes) +
                                       " bytes, or another code hash")
          : std::nullopt;
  std::lock_guard lock(countsMutex_);
  if (!difference) {
    ++incrementalVerified_;
    return;
  }
  if (!result.problem)
    result.problem =
        makeError("verify-incremental: module \"" + job.module->name +
                  "\": the incremental compile differs from the full compile: " + *difference);
}

void Evaluator::verifyReplay(const JobResult& replayed, const JobResult& compiled,
                             const JobSpec& job, EvaluationResult& result) {
  std::optional<std::string> difference = replayDifference(replayed, compiled);
  std::lock_guard lock(countsMutex_);
  ++result.replays;
  if (!difference) {
    ++result.replaysVerified;
    return;
  }
  if (!result.problem)
    result.problem = makeError("replay-verify: module \"" + job.module->name +
                               "\": the replayed job differs from its compile: " + *difference);
}

void Evaluator::countReplays(const EvaluationRequest& request, EvaluationResult& result) {
  if (!replay_)
    return;
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    const JobResult& job = result.jobs[j];
    if (!job.replayed)
      continue;
    ++result.replays;
    const std::string module = request.modules[j % result.moduleCount]->bitcode.string();
    result.replaySecondsSaved += std::max(0.0, replay_->meanCompileSeconds(module) - job.seconds);
  }
  std::lock_guard lock(countsMutex_);
  replays_ += result.replays;
  replaySecondsSaved_ += result.replaySecondsSaved;
  replaysVerified_ += result.replaysVerified;
}

Expected<std::unique_ptr<Evaluator>> Evaluator::create(EvaluatorOptions options,
                                                       CompilerTask task) {
  if (traitsOf(task.measure).ofCodeBase) {
    // COMDAT groups are measured from each object; what keeps sizes only
    // cannot answer.
    options.comdat = true;
    options.replay = options.decisionCache = options.incremental = false;
  }
  if (Status valid = options.validate(); !valid)
    return makeError("evaluator options: " + valid.error().message);
  const MeasureTraits& measure = traitsOf(task.measure);
  if (measure.ofPrograms)
    return makeError("task " + task.name + ": the " + std::string(measure.name) +
                     " measure is of whole benchmark programs, built and run, not of a "
                     "module's compile (mlgo-eval run-cost, or es-train --programs)");
  if (!measure.ofObjectSize && task.inProcess != measure.measuredBy) {
    std::string takers;
    for (const CompilerTask& other : CompilerTask::all())
      if (other.inProcess == measure.measuredBy)
        takers += (takers.empty() ? "" : ", ") + other.name;
    return makeError("task " + task.name + ": the " + std::string(measure.name) +
                     " measure is taken by the in-process worker of another task (" + takers +
                     ") only");
  }
  if (!measure.ofObjectSize && options.backend != BackendKind::InProcess)
    return makeError("task " + task.name + ": the " + std::string(measure.name) +
                     " measure is computed in-process only (by our own code generation "
                     "pipeline); use --backend inprocess, or --measure text-size with clang "
                     "processes");
  if (task.inProcessOnly && options.backend != BackendKind::InProcess)
    return makeError("task " + task.name +
                     ": its policies are applied by the in-process worker only (no clang flag "
                     "carries them); use --backend inprocess");
  if (options.backend == BackendKind::InProcess && task.inProcess == InProcessRoute::None)
    std::fprintf(stderr,
                 "note: the task %s has no in-process route: its jobs run in clang processes\n",
                 task.name.c_str());
  ignoreSigpipeOnce();
  if (size_t removed = removeAbandonedScratch(options.scratchDirectory); removed > 0)
    std::fprintf(stderr,
                 "note: removed %zu scratch directories of processes that no longer run from %s\n",
                 removed, options.scratchDirectory.c_str());
  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options.scratchDirectory, "mlgo-id-");
  if (!scratch)
    return scratch.error();
  std::string identity = options.compilerIdentity.empty()
                             ? runForIdentity(options.clang, scratch->path())
                             : options.compilerIdentity;
  // Baselines from the two backends are kept apart, should they ever differ.
  if (options.backend == BackendKind::InProcess)
    identity += "\nbackend=inprocess";
  Expected<std::unique_ptr<StandInBackend>> standIn = StandInBackend::fromEnvironment();
  if (!standIn)
    return standIn.error();
  if (*standIn)
    identity += "\nstand-in compiler (MLGO_STANDIN_COMPILER)";
  std::unique_ptr<Evaluator> evaluator(new Evaluator(options, task, identity));
  if (*standIn)
    evaluator->primary_ = standIn.take();
  if (options.cluster && options.cluster->rank() == 0) {
    std::unique_ptr<Backend> local = std::move(evaluator->primary_);
    if (!local)
      local = std::make_unique<ClangProcessBackend>(options, task);
    Expected<std::unique_ptr<RemoteBackend>> remote =
        RemoteBackend::create(options.cluster, options, task, std::move(local));
    if (!remote)
      return remote.error();
    evaluator->concurrency_ = (*remote)->slots();
    evaluator->primary_ = remote.take();
    evaluator->remote_ = true;
  }
  return evaluator;
}

void Evaluator::requireMeasure(JobResult& job, const corpus::ModuleSpec& module) const {
  if (!job.ok())
    return;
  const MeasureTraits& traits = traitsOf(task_.measure);
  if (traits.ofObjectSize)
    job.measured = static_cast<double>(job.sizeBytes);
  else if (!job.measured) {
    job.status = JobStatus::SetupFailed;
    job.message = "module \"" + module.name + "\": no " + std::string(traits.name) +
                  " (it is measured in-process only; this module compiled in a clang process)";
  }
}

void Evaluator::measureOnCodeBase(JobResult& job, const corpus::ModuleSpec& module) {
  if (!job.ok() || !traitsOf(task_.measure).ofCodeBase)
    return;
  Expected<double> linked = linkedMeasure(module, job.sizeBytes, job.comdat);
  if (linked) {
    job.measured = *linked;
    return;
  }
  job.status = JobStatus::SetupFailed;
  job.message = linked.error().message;
}

BaselineResult Evaluator::computeBaseline(const corpus::ModuleSpec& module) {
  BaselineResult baseline;
  const MeasureTraits& traits = traitsOf(task_.measure);
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
      Expected<std::optional<uint64_t>> size = cache->lookup(key);
      Expected<std::optional<double>> measured = traits.ofObjectSize
                                                     ? Expected<std::optional<double>>(std::nullopt)
                                                     : cache->lookupMeasure(key, task_.measure);
      for (const Error* error :
           {size ? nullptr : &size.error(), measured ? nullptr : &measured.error()})
        if (error)
          std::fprintf(stderr, "warning: %s\n", error->message.c_str());
      Expected<std::optional<std::vector<ComdatCode>>> comdat =
          options_.comdat ? cache->lookupComdat(key) : std::optional<std::vector<ComdatCode>>();
      if (!comdat)
        std::fprintf(stderr, "warning: %s\n", comdat.error().message.c_str());
      if (size && *size && measured && (*measured || traits.ofObjectSize) &&
          (!options_.comdat || (comdat && *comdat))) {
        baseline.sizeBytes = *size;
        if (options_.comdat)
          baseline.comdat = **comdat;
        baseline.measured = traits.ofObjectSize ? static_cast<double>(**size) : **measured;
        baseline.fromCache = true;
        return baseline;
      }
    }
  }
  JobResult plain = compile(JobSpec{.module = &module});
  if (!plain.ok()) {
    baseline.message = "baseline (" + task_.baselineName +
                       ") compile failed: " + std::string(jobStatusName(plain.status)) + ": " +
                       plain.message;
    baseline.stderrTail = plain.stderrTail;
    return baseline;
  }
  baseline.sizeBytes = plain.sizeBytes;
  baseline.measured = plain.measured;
  baseline.comdat = plain.comdat;
  if (cache && !key.empty()) {
    cache->store(key, plain.sizeBytes);
    if (plain.comdat)
      cache->storeComdat(key, *plain.comdat);
    if (!traits.ofObjectSize)
      cache->storeMeasure(key, task_.measure, *plain.measured);
  }
  return baseline;
}

std::vector<BaselineResult>
Evaluator::baselines(std::span<const corpus::ModuleSpec* const> modules) {
  std::vector<BaselineResult> results = plainBaselines(modules);
  if (!traitsOf(task_.measure).ofCodeBase)
    return results;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!results[i].sizeBytes)
      continue;
    Expected<double> linked = linkedMeasure(*modules[i], *results[i].sizeBytes, results[i].comdat);
    results[i].measured.reset();
    if (linked)
      results[i].measured = *linked;
    else
      results[i].message = linked.error().message;
  }
  return results;
}

struct Evaluator::CodeBaseCensus {
  ComdatCensus census;
  std::map<std::string, size_t, std::less<>> position; // module name -> corpus order
};

Expected<std::shared_ptr<const Evaluator::CodeBaseCensus>>
Evaluator::censusOf(const fs::path& corpusDirectory) {
  {
    std::lock_guard lock(censusMutex_);
    if (auto found = census_.find(corpusDirectory); found != census_.end())
      return found->second;
  }
  // Computed outside the lock (it compiles the code base's baselines in
  // parallel); a second thread computing it too gets the same census.
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(corpusDirectory);
  if (!corpus)
    return makeError("the code base of " + corpusDirectory.string() + ": " +
                     corpus.error().message);
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& module : corpus->modules())
    modules.push_back(&module);
  std::vector<BaselineResult> plain = plainBaselines(modules);
  std::vector<std::vector<ComdatCode>> groups(modules.size());
  std::map<std::string, size_t, std::less<>> position;
  for (size_t i = 0; i < modules.size(); ++i) {
    position[modules[i]->name] = i;
    if (plain[i].sizeBytes && !plain[i].comdat)
      return makeError("module \"" + modules[i]->name +
                       "\": its baseline's COMDAT groups are unknown");
    if (plain[i].comdat)
      groups[i] = *plain[i].comdat;
  }
  auto census = std::make_shared<const CodeBaseCensus>(
      CodeBaseCensus{ComdatCensus(groups), std::move(position)});
  std::lock_guard lock(censusMutex_);
  return census_.emplace(corpusDirectory, std::move(census)).first->second;
}

Expected<double> Evaluator::linkedMeasure(const corpus::ModuleSpec& module, uint64_t bytes,
                                          const std::optional<std::vector<ComdatCode>>& comdat) {
  if (!comdat)
    return makeError("module \"" + module.name + "\": its object's COMDAT groups are unknown");
  // A module's corpus is the directory its bitcode is named in (NAME.bc).
  const std::string bitcode = module.bitcode.string();
  const std::string suffix = "/" + module.name + ".bc";
  if (!bitcode.ends_with(suffix))
    return makeError("module \"" + module.name + "\": " + bitcode +
                     " is not in a corpus directory, so its code base is unknown");
  Expected<std::shared_ptr<const CodeBaseCensus>> census =
      censusOf(fs::path(bitcode.substr(0, bitcode.size() - suffix.size())));
  if (!census)
    return makeError("module \"" + module.name + "\": " + census.error().message);
  auto position = (*census)->position.find(module.name);
  if (position == (*census)->position.end())
    return makeError("module \"" + module.name + "\": not in its corpus's description");
  return (*census)->census.linkedValue(position->second, bytes, *comdat);
}

std::vector<BaselineResult>
Evaluator::plainBaselines(std::span<const corpus::ModuleSpec* const> modules) {
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
  forEachJob(missing.size(),
             [&](size_t i) { results[missing[i]] = computeBaseline(*modules[missing[i]]); });
  std::lock_guard lock(baselineMutex_);
  for (size_t i : missing)
    baselineMemo_[modules[i]->bitcode.string()] = results[i];
  return results;
}

void Evaluator::knowBaseline(const corpus::ModuleSpec& module, uint64_t sizeBytes) {
  BaselineResult known;
  known.sizeBytes = sizeBytes;
  if (task_.measure == Measure::TextSize)
    known.measured = static_cast<double>(sizeBytes);
  std::lock_guard lock(baselineMutex_);
  baselineMemo_[module.bitcode.string()] = known;
}

EvaluationResult Evaluator::evaluate(const EvaluationRequest& request) {
  const auto start = Clock::now();
  EvaluationResult result;
  result.candidateCount = request.candidates.size();
  result.moduleCount = request.modules.size();
  result.jobs.resize(result.candidateCount * result.moduleCount);

  std::vector<BaselineResult> baselineResults = baselines(request.modules);
  for (const BaselineResult& b : baselineResults) {
    result.baselineBytes.push_back(b.sizeBytes);
    result.baselineComdat.push_back(b.comdat);
    result.baselineMeasures.push_back(b.measured);
  }
  result.measure = task_.measure;
  result.reward = task_.reward;

  // Every candidate goes to the workers once per evaluation, not per job.
  std::vector<std::optional<SerializedPolicy>> serialized(request.candidates.size());
  const uint64_t generation = nextGeneration_++;
  for (size_t c = 0; c < request.candidates.size(); ++c)
    if (request.candidates[c]) {
      serialized[c] = serialize(*request.candidates[c], generation);
      if (serialized[c] && request.family) {
        serialized[c]->family = request.family;
        serialized[c]->familyId = generation;
        serialized[c]->familyMember = c;
      }
    }
  const EvaluatorStatistics before = statistics();

  std::optional<ProgressLine> progress;
  if (request.showProgress)
    progress.emplace("compile", result.jobs.size());
  forEachJob(result.jobs.size(), [&](size_t j) {
    size_t c = j / result.moduleCount, m = j % result.moduleCount;
    JobResult& slot = result.jobs[j];
    const corpus::ModuleSpec& module = *request.modules[m];
    if (!baselineResults[m].measured) {
      slot.status = JobStatus::BaselineUnavailable;
      slot.message = "module \"" + module.name + "\": " + baselineResults[m].message;
      slot.stderrTail = baselineResults[m].stderrTail;
    } else {
      JobSpec job{.module = &module,
                  .policy = request.candidates[c],
                  .mode = request.mode,
                  .rngKey = deriveKey({request.seed, request.step, c, m}),
                  .recordTrajectory = request.recordTrajectories};
      slot = runJob(job, serialized[c] ? &*serialized[c] : nullptr, result);
      measureOnCodeBase(slot, module);
      if (slot.ok())
        slot.reward = task_.reward(result.measured(slot), *result.baselineMeasure(m));
    }
    if (progress)
      progress->advance();
  });
  if (progress)
    progress->finish();
  // Concurrent evaluations on one evaluator would share these counts.
  const EvaluatorStatistics after = statistics();
  result.cacheLookups = after.cacheLookups - before.cacheLookups;
  result.cacheHits = after.cacheHits - before.cacheHits;
  result.cacheSecondsSaved = after.cacheSecondsSaved - before.cacheSecondsSaved;
  countReplays(request, result);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

} // namespace mlgo::evaluators

namespace mlgo::evaluators {

bool Evaluator::incrementalTrials() const {
  return options_.incremental && primary_ && primary_->kind() == BackendKind::InProcess &&
         task_.inProcess == InProcessRoute::InlineAdvisor;
}

void Evaluator::answerIncrementally(
    const TrialRequest& request, TrialResults& results,
    std::vector<std::vector<std::optional<std::string>>>& fullCompile) {
  const uint64_t generation = nextGeneration_++;
  std::mutex reasons;
  // A module's batch at a time: a search round over thousands of modules
  // runs for many minutes.
  std::optional<ProgressLine> progress;
  if (request.showProgress)
    progress.emplace("modules", request.batches.size());
  forEachJob(request.batches.size(), [&](size_t b) {
    const TrialBatch& batch = request.batches[b];
    std::optional<SerializedPolicy> serialized = serialize(*batch.base, generation);
    JobSpec base{.module = batch.module, .policy = batch.base, .recordTrajectory = true};
    std::vector<Backend::TrialOutcome> outcomes =
        primary_->compileTrials(base, serialized ? &*serialized : nullptr, batch.trials);
    for (size_t t = 0; t < batch.trials.size(); ++t) {
      if (outcomes[t].result) {
        results.jobs[b][t] = std::move(*outcomes[t].result);
        requireMeasure(results.jobs[b][t], *batch.module);
        fullCompile[b][t].reset();
      } else {
        fullCompile[b][t] = outcomes[t].fullCompileReason;
      }
    }
    if (progress)
      progress->advance();
  });
  if (progress)
    progress->finish();
}

TrialResults Evaluator::evaluateTrials(const TrialRequest& request) {
  const auto start = Clock::now();
  TrialResults results;
  // Which trials are compiled in full, and why (nullopt: answered).
  std::vector<std::vector<std::optional<std::string>>> fullCompile;
  for (const TrialBatch& batch : request.batches) {
    results.jobs.emplace_back(batch.trials.size());
    fullCompile.emplace_back(batch.trials.size(), std::string("incremental evaluation off"));
    results.trials += batch.trials.size();
  }
  const bool incremental = incrementalTrials();
  if (incremental)
    answerIncrementally(request, results, fullCompile);

  // The rest, each its own job with its base's flip set toggled at the
  // trial's state: replay and the decision cache apply as to any job. With
  // verification the answered ones too, to compare.
  struct FullJob {
    size_t batch, trial;
    bool verify; // answered incrementally: compiled only to compare
    policies::FlipSetPolicy policy;
    std::optional<SerializedPolicy> serialized;
  };
  std::vector<FullJob> full;
  const uint64_t generation = nextGeneration_++;
  for (size_t b = 0; b < request.batches.size(); ++b)
    for (size_t t = 0; t < request.batches[b].trials.size(); ++t) {
      const bool verify = !fullCompile[b][t];
      results.incremental += verify;
      if (fullCompile[b][t] || options_.incrementalVerify)
        full.push_back({b, t, verify, trialPolicy(request.batches[b], request.batches[b].trials[t]),
                        std::nullopt});
    }
  for (FullJob& job : full)
    job.serialized = serialize(job.policy, generation);
  EvaluationResult counts; // replay problems of the full compiles
  std::vector<JobResult> compiled(full.size());
  std::optional<ProgressLine> progress;
  if (request.showProgress && !full.empty())
    progress.emplace("trials compiled in full", full.size());
  forEachJob(full.size(), [&](size_t j) {
    const FullJob& f = full[j];
    JobSpec job{.module = request.batches[f.batch].module,
                .policy = &f.policy,
                .recordTrajectory = true,
                .allowDecisionCache = !f.verify,
                .allowCodeReuse = !f.verify};
    // A verifying compile is a whole compile: no replay, no decision cache.
    compiled[j] = f.verify ? dispatch(job, f.serialized ? &*f.serialized : nullptr)
                           : runJob(job, f.serialized ? &*f.serialized : nullptr, counts);
    if (progress)
      progress->advance();
  });
  if (progress)
    progress->finish();
  for (size_t j = 0; j < full.size(); ++j) {
    const FullJob& f = full[j];
    JobResult& slot = results.jobs[f.batch][f.trial];
    if (!f.verify) {
      ++results.fullCompiles[*fullCompile[f.batch][f.trial]];
      slot = std::move(compiled[j]);
    } else if (std::optional<std::string> difference = replayDifference(slot, compiled[j])) {
      if (!results.problem)
        results.problem =
            makeError("verify-incremental: module \"" + request.batches[f.batch].module->name +
                      "\", the trial at decision " +
                      std::to_string(request.batches[f.batch].trials[f.trial].position) +
                      ": the incremental answer differs from the full compile: " + *difference);
    } else {
      ++results.verified;
    }
  }
  if (counts.problem && !results.problem)
    results.problem = counts.problem;
  for (size_t b = 0; b < request.batches.size(); ++b)
    for (JobResult& trial : results.jobs[b])
      measureOnCodeBase(trial, *request.batches[b].module);
  results.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return results;
}

} // namespace mlgo::evaluators
