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
  Expected<ChannelHeader> header = channel.readHeader(run.deadline);
  if (!header)
    return exchange.abandon(JobStatus::ProtocolError, header.error().message);
  if (!task_.adviceName.empty() && header->advice.name != task_.adviceName)
    return exchange.abandon(JobStatus::ProtocolError, "the compiler asks for advice \"" +
                                                          header->advice.name + "\", the task " +
                                                          task_.name + " answers \"" +
                                                          task_.adviceName + "\"");
  Expected<FeatureLayout> layout =
      FeatureLayout::bind(*header, *spec.policy, task_.defaultDecisionFeature);
  if (!layout)
    return exchange.abandon(JobStatus::PolicyMismatch, layout.error().message);
  if (spec.recordTrajectory) {
    result.trajectory.emplace();
    result.trajectory->featureSpecs = header->features;
    result.trajectory->width = layout->recordWidth;
  }
  RandomStream rng(spec.rngKey);
  std::vector<std::byte> observation;
  std::vector<double> inputs(layout->policyWidth);
  while (true) {
    Expected<InteractiveChannel::Event> event = channel.next(run.deadline, observation);
    if (!event)
      return exchange.abandon(JobStatus::ProtocolError, event.error().message);
    if (*event == InteractiveChannel::Event::TimedOut)
      return exchange.abandon(JobStatus::TimedOut,
                              "timed out after " + std::to_string(result.decisions) + " decisions");
    if (*event == InteractiveChannel::Event::EndOfStream)
      return std::nullopt;
    layout->gather(*header, observation.data(), layout->policyInputs, inputs.data());
    policies::Decision decision = spec.policy->decide(inputs, spec.mode, rng);
    std::vector<std::byte> advice = encodeAdvice(header->advice, decision.advice);
    if (Status sent = channel.sendAdvice(advice.data(), advice.size()); !sent)
      return exchange.abandon(JobStatus::ProtocolError, sent.error().message);
    ++result.decisions;
    if (result.trajectory)
      layout->record(*header, observation.data(), decision, *result.trajectory);
  }
}

} // namespace mlgo::evaluators
