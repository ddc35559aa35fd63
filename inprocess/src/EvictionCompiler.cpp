#include "EvictionCompiler.h"

#include "RegAllocMeasure.h"
#include "mlgo/evaluators/InteractiveChannel.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Signals.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>
#include <unistd.h>

namespace mlgo::inprocess {

namespace {

namespace protocol = evaluators::protocol;
using evaluators::InteractiveChannel;

// The channel's base path for this worker, set as LLVM's option on first use:
// beside the jobs' scratch directories (tmpfs), named by the process.
const std::filesystem::path& channelBase(const protocol::JobMessage& job) {
  static const std::filesystem::path base = [&] {
    std::filesystem::path object;
    for (size_t i = 0; i + 1 < job.arguments.size(); ++i)
      if (job.arguments[i] == "-o")
        object = job.arguments[i + 1];
    std::filesystem::path path =
        object.parent_path().parent_path() / ("mlgo-evict-channel-" + std::to_string(::getpid()));
    const std::string option = "-regalloc-evict-interactive-channel-base=" + path.string();
    const char* argv[] = {"mlgo-inprocess-worker", option.c_str()};
    llvm::cl::ParseCommandLineOptions(2, argv);
    // The channel's FIFOs sit outside any job's directory: a worker ended by
    // LLVM's fatal errors ("ran out of registers") or a signal must not leave
    // them (SIGKILL's are reclaimed by the next run: removeAbandonedScratch).
    for (const char* end : {".in", ".out"})
      llvm::sys::RemoveFileOnSignal(path.string() + end);
    return path;
  }();
  return base;
}

// Answers LLVM's eviction questions on `channel` until it closes it, or
// until the compile ends without ever opening it (`compiling` turns false).
// A policy that does not fit still gets answered with the neutral advice,
// so that LLVM, in this very process, can finish. The task's default
// decision feature, which clang's channel lacks, is appended from
// `defaultChoice`.
evaluators::ChannelOutcome answerEvictions(InteractiveChannel& channel,
                                           const protocol::JobMessage& job,
                                           const policies::Policy& policy,
                                           const std::atomic<bool>& compiling,
                                           const std::atomic<int64_t>& defaultChoice) {
  const auto deadline = evaluators::Clock::now() + std::chrono::hours(1);
  Expected<InteractiveChannel::OpenResult> opened =
      channel.open(deadline, [&] { return compiling.load(); });
  if (!opened)
    return {.kind = evaluators::ChannelOutcome::Kind::ProtocolError,
            .message = opened.error().message,
            .trajectory = std::nullopt};
  if (*opened != InteractiveChannel::OpenResult::Opened)
    return {};
  return evaluators::answerChannel(
      channel, deadline,
      {.policy = &policy,
       .mode = job.mode,
       .rngKey = job.rngKey,
       .taskName = job.taskName,
       .adviceName = job.adviceName,
       .defaultDecisionFeature = job.defaultDecisionFeature,
       .recordTrajectory = job.recordTrajectory,
       .appended =
           evaluators::ChannelAnswering::AppendedFeature{job.defaultDecisionFeature,
                                                         [&] { return defaultChoice.load(); }},
       .adviceOnMismatch = job.neutralAdvice});
}

} // namespace

protocol::ResultMessage compileEviction(const protocol::JobMessage& job,
                                        const policies::Policy* policy) {
  protocol::ResultMessage result;
  std::optional<Expected<RegAllocMeasure>> measure;
  evaluators::ChannelOutcome answers;
  if (!policy) {
    measure.emplace(measureRegAlloc(job.arguments, job.sizeSections, result.diagnostics));
  } else {
    Expected<InteractiveChannel> channel = InteractiveChannel::create(channelBase(job));
    if (!channel) {
      result.status = protocol::WorkerStatus::SetupFailed;
      result.message = channel.error().message;
      return result;
    }
    std::atomic<bool> compiling{true};
    std::atomic<int64_t> defaultChoice{-1};
    std::thread answerer(
        [&] { answers = answerEvictions(*channel, job, *policy, compiling, defaultChoice); });
    measure.emplace(measureRegAlloc(job.arguments, job.sizeSections, result.diagnostics,
                                    /*mlAdvisor=*/true, &defaultChoice));
    compiling = false;
    answerer.join();
  }
  result.decisions = answers.decisions;
  result.trajectory = std::move(answers.trajectory);
  using Kind = evaluators::ChannelOutcome::Kind;
  if (answers.kind == Kind::PolicyMismatch) {
    result.status = protocol::WorkerStatus::PolicyMismatch;
    result.message = answers.message;
  } else if (!*measure) {
    result.status = protocol::WorkerStatus::CompilerFailed;
    result.message = measure->error().message;
  } else if (answers.kind != Kind::Finished) {
    result.status = protocol::WorkerStatus::SetupFailed;
    result.message = "eviction channel: " + answers.message;
  } else {
    result.status = protocol::WorkerStatus::Ok;
    result.sizeBytes = (*measure)->code.bytes;
    result.codeHash = (*measure)->code.hash;
    result.comdat = (*measure)->code.comdat;
    result.measured = (*measure)->score;
  }
  return result;
}

} // namespace mlgo::inprocess
