#include "ClangProcessBackend.h"

#include "JobRun.h"
#include "mlgo/corpus/CommandLine.h"
#include "mlgo/evaluators/FeatureLayout.h"
#include "mlgo/evaluators/InteractiveChannel.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/evaluators/Process.h"
#include "mlgo/support/Random.h"

#include <csignal>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

using policies::ChannelHeader;

// A running compiler and its job: what answering its decisions needs.
struct ClangExchange {
  JobRun& run;
  ChildProcess& child;
  const fs::path& log;
  size_t stderrTailBytes;

  // Ends the compiler for a failed exchange; a compiler that died on its own
  // is a crash, whatever the channel saw.
  JobResult abandon(JobStatus status, std::string message) {
    std::optional<ExitStatus> ended = child.poll();
    if (!ended)
      ended = child.kill();
    run.result.stderrTail = readTail(log, stderrTailBytes);
    if (ended->signal && *ended->signal != SIGKILL)
      return run.finish(JobStatus::CompilerCrashed, "compiler died: " + ended->describe());
    return run.finish(status, std::move(message));
  }
};

BackendStatistics ClangProcessBackend::statistics() const {
  BackendStatistics s;
  s.jobs = jobs_.load();
  return s;
}

std::optional<JobResult> ClangProcessBackend::compile(const JobSpec& spec,
                                                      const SerializedPolicy*) {
  ++jobs_;
  JobRun run(*spec.module, options_.compileTimeout);
  Expected<ScratchDirectory> scratch =
      ScratchDirectory::create(options_.scratchDirectory, "mlgo-job-");
  if (!scratch)
    return run.finish(JobStatus::SetupFailed, scratch.error().message);
  const fs::path object = scratch->path() / "module.o";
  const fs::path log = scratch->path() / "clang.log";

  Expected<std::vector<std::string>> command =
      corpus::buildCompileCommand(*spec.module, options_.filters, object);
  if (!command)
    return run.finish(JobStatus::SetupFailed, command.error().message);

  std::optional<InteractiveChannel> channel;
  if (spec.policy) {
    const fs::path base = scratch->path() / "channel";
    Expected<InteractiveChannel> created = InteractiveChannel::create(base);
    if (!created)
      return run.finish(JobStatus::SetupFailed, created.error().message);
    channel.emplace(std::move(*created));
    std::vector<std::string> extra = task_.argumentsFor(base);
    command->insert(command->end() - 2, extra.begin(), extra.end()); // before "-o <object>"
  }

  Expected<ChildProcess> child = ChildProcess::spawn(options_.clang, *command, log);
  if (!child)
    return run.finish(JobStatus::SetupFailed, child.error().message);
  ClangExchange exchange{run, *child, log, options_.stderrTailBytes};
  if (channel)
    if (std::optional<JobResult> failed = answerDecisions(spec, *channel, exchange))
      return failed;

  std::optional<ExitStatus> ended = child->waitUntil(run.deadline);
  if (!ended)
    return exchange.abandon(JobStatus::TimedOut, "timed out waiting for the compiler to exit");
  run.result.stderrTail = readTail(log, options_.stderrTailBytes);
  if (ended->signal)
    return run.finish(JobStatus::CompilerCrashed, "compiler died: " + ended->describe());
  if (!ended->succeeded())
    return run.finish(JobStatus::CompilerFailed, "compiler failed: " + ended->describe());
  Expected<CodeMeasure> code = measureCode(object, task_.sizeSections);
  if (!code)
    return run.finish(JobStatus::BadObject, code.error().message);
  run.result.sizeBytes = code->bytes;
  run.result.codeHash = code->hash;
  run.result.comdat = std::move(code->comdat);
  run.result.stderrTail.clear(); // nothing to report for a clean compile
  return run.finish(JobStatus::Ok, "");
}

std::optional<JobResult> ClangProcessBackend::answerDecisions(const JobSpec& spec,
                                                              InteractiveChannel& channel,
                                                              ClangExchange& exchange) const {
  JobRun& run = exchange.run;
  JobResult& result = run.result;
  Expected<InteractiveChannel::OpenResult> opened =
      channel.open(run.deadline, [&] { return !exchange.child.poll().has_value(); });
  if (!opened)
    return exchange.abandon(JobStatus::SetupFailed, opened.error().message);
  if (*opened == InteractiveChannel::OpenResult::TimedOut)
    return exchange.abandon(JobStatus::TimedOut,
                            "timed out before the compiler opened the channel");
  if (*opened != InteractiveChannel::OpenResult::Opened)
    return std::nullopt; // the compiler asked nothing (e.g. no call sites)
  ChannelOutcome answered = answerChannel(channel, run.deadline,
                                          {.policy = spec.policy,
                                           .mode = spec.mode,
                                           .rngKey = spec.rngKey,
                                           .taskName = task_.name,
                                           .adviceName = task_.adviceName,
                                           .defaultDecisionFeature = task_.defaultDecisionFeature,
                                           .recordTrajectory = spec.recordTrajectory,
                                           .appended = std::nullopt, // clang sends it all
                                           .adviceOnMismatch = std::nullopt});
  result.decisions = answered.decisions;
  result.trajectory = std::move(answered.trajectory);
  switch (answered.kind) {
  case ChannelOutcome::Kind::Finished:
    return std::nullopt;
  case ChannelOutcome::Kind::TimedOut:
    return exchange.abandon(JobStatus::TimedOut, answered.message);
  case ChannelOutcome::Kind::ProtocolError:
    return exchange.abandon(JobStatus::ProtocolError, answered.message);
  case ChannelOutcome::Kind::PolicyMismatch:
    // The eviction task's default decision is not on clang's channel.
    if (!task_.defaultDecisionFeature.empty() &&
        answered.message.find("\"" + task_.defaultDecisionFeature + "\"") != std::string::npos)
      answered.message += " (clang's channel does not send it for task " + task_.name +
                          "; the in-process backend adds it: --backend inprocess)";
    return exchange.abandon(JobStatus::PolicyMismatch, answered.message);
  }
  return std::nullopt;
}

} // namespace mlgo::evaluators
