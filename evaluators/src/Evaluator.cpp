#include "mlgo/evaluators/Evaluator.h"

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/InteractiveChannel.h"
#include "mlgo/evaluators/Process.h"
#include "mlgo/support/Progress.h"
#include "mlgo/support/Random.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/xxhash.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

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

bool sectionCounts(llvm::StringRef name, const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    if (!pattern.empty() && pattern.back() == '.' ? name.starts_with(pattern) : name == pattern)
      return true;
  }
  return false;
}

struct CodeMeasure {
  uint64_t bytes = 0;
  uint64_t hash = 0;
};

// The object's code size: the sizes of the task's sections (.text and
// .text.* for size tasks, so -ffunction-sections builds count fully), and a
// hash of their contents. Unreadable objects are errors.
Expected<CodeMeasure> measureCode(const fs::path& object,
                                  const std::vector<std::string>& sections) {
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> binary =
      llvm::object::ObjectFile::createObjectFile(object.string());
  if (!binary)
    return makeError("not a readable object: " + llvm::toString(binary.takeError()));
  // A module without code (only data, or nothing) is a valid 0-byte result.
  CodeMeasure measure;
  for (const llvm::object::SectionRef& section : binary->getBinary()->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (!sectionCounts(*name, sections))
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return makeError("section " + name->str() +
                       " is unreadable: " + llvm::toString(contents.takeError()));
    measure.bytes += section.getSize();
    measure.hash = llvm::xxh3_64bits(*contents) ^ mix64(measure.hash);
  }
  return measure;
}

// Where each header feature's bytes start, and how a decision's values are
// gathered for a policy and for the record.
struct FeatureLayout {
  std::vector<size_t> offsets;      // per header feature, byte offset in an observation
  std::vector<size_t> policyInputs; // header indices of the policy's inputs, in its order
  size_t policyWidth = 0;
  size_t recordWidth = 0;
  // Position of the default-decision feature in a recorded row, if any.
  std::optional<size_t> defaultInRecord;

  static Expected<FeatureLayout> bind(const ChannelHeader& header, const Policy& policy,
                                      const std::string& defaultFeatureName) {
    FeatureLayout layout;
    size_t offset = 0;
    for (const policies::TensorSpec& spec : header.features) {
      layout.offsets.push_back(offset);
      offset += spec.byteSize();
      layout.recordWidth += spec.elementCount();
    }
    Expected<std::vector<size_t>> inputs = policies::bindPolicyInputs(policy, header);
    if (!inputs)
      return inputs.error();
    layout.policyInputs = inputs.take();
    for (size_t index : layout.policyInputs)
      layout.policyWidth += header.features[index].elementCount();
    if (int index = defaultFeatureName.empty() ? -1 : header.findFeature(defaultFeatureName);
        index >= 0) {
      size_t flat = 0;
      for (int i = 0; i < index; ++i)
        flat += header.features[static_cast<size_t>(i)].elementCount();
      layout.defaultInRecord = flat;
    }
    return layout;
  }

  void gather(const ChannelHeader& header, const std::byte* observation,
              const std::vector<size_t>& indices, double* out) const {
    for (size_t index : indices) {
      const policies::TensorSpec& spec = header.features[index];
      const std::byte* data = observation + offsets[index];
      for (size_t e = 0, n = spec.elementCount(); e < n; ++e)
        *out++ = policies::tensorElementAsDouble(spec.type, data, e);
    }
  }
};

// The advice as the header's advice tensor wants it.
std::vector<std::byte> encodeAdvice(const policies::TensorSpec& spec, int64_t advice) {
  std::vector<std::byte> bytes(spec.byteSize());
  auto put = [&](auto value) {
    for (size_t e = 0; e < spec.elementCount(); ++e)
      std::memcpy(bytes.data() + e * sizeof value, &value, sizeof value);
  };
  using policies::TensorType;
  switch (spec.type) {
  case TensorType::Float:
    put(static_cast<float>(advice));
    break;
  case TensorType::Double:
    put(static_cast<double>(advice));
    break;
  case TensorType::Int8:
    put(static_cast<int8_t>(advice));
    break;
  case TensorType::UInt8:
    put(static_cast<uint8_t>(advice));
    break;
  case TensorType::Int16:
    put(static_cast<int16_t>(advice));
    break;
  case TensorType::UInt16:
    put(static_cast<uint16_t>(advice));
    break;
  case TensorType::Int32:
    put(static_cast<int32_t>(advice));
    break;
  case TensorType::UInt32:
    put(static_cast<uint32_t>(advice));
    break;
  case TensorType::Int64:
    put(static_cast<int64_t>(advice));
    break;
  case TensorType::UInt64:
    put(static_cast<uint64_t>(advice));
    break;
  }
  return bytes;
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

double sizeReward(uint64_t sizeBytes, uint64_t baselineBytes) {
  constexpr double delta = 0.01;
  return 1.0 -
         (static_cast<double>(sizeBytes) + delta) / (static_cast<double>(baselineBytes) + delta);
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
      compilerIdentity_(std::move(compilerIdentity)) {}

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
  return std::unique_ptr<Evaluator>(new Evaluator(std::move(options), std::move(task), identity));
}

JobResult Evaluator::compile(const corpus::ModuleSpec& module, const Policy* policy,
                             DecisionMode mode, uint64_t rngKey, bool recordTrajectory) const {
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(options_.compileTimeout);
  JobResult result;
  auto finish = [&](JobStatus status, std::string message) -> JobResult {
    result.status = status;
    if (!message.empty())
      result.message = "module \"" + module.name + "\": " + message;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::move(result);
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
      std::vector<size_t> allFeatures(header->features.size());
      for (size_t i = 0; i < allFeatures.size(); ++i)
        allFeatures[i] = i;
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
        if (result.trajectory) {
          Trajectory& t = *result.trajectory;
          size_t row = t.observations.size();
          t.observations.resize(row + t.width);
          layout->gather(*header, observation.data(), allFeatures, t.observations.data() + row);
          t.defaultDecisions.push_back(
              layout->defaultInRecord
                  ? static_cast<int64_t>(t.observations[row + *layout->defaultInRecord])
                  : -1);
          t.actions.push_back(decision.advice);
          t.logProbabilities.push_back(decision.logProbability);
        }
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
                            slot = compile(module, request.candidates[c], request.mode, key,
                                           request.recordTrajectories);
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
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

} // namespace mlgo::evaluators
