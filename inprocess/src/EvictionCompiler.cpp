#include "EvictionCompiler.h"

#include "RegAllocMeasure.h"
#include "mlgo/evaluators/FeatureLayout.h"
#include "mlgo/evaluators/InteractiveChannel.h"

#include <llvm/Support/CommandLine.h>

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
    return path;
  }();
  return base;
}

// What the answering thread saw.
struct Answers {
  uint64_t decisions = 0;
  std::optional<std::string> mismatch; // the policy does not fit the header
  std::optional<std::string> failure;  // the channel broke
  std::optional<policies::Trajectory> trajectory;
};

// Answers every eviction question until LLVM closes the channel (or never
// opens it: `compiling` turns false). A policy that does not fit still gets
// answers (the neutral one, 32: evict nothing) so that LLVM finishes.
void answerChannel(InteractiveChannel& channel, const protocol::JobMessage& job,
                   const policies::Policy& policy, const std::atomic<bool>& compiling,
                   Answers& answers) {
  const auto deadline = evaluators::Clock::now() + std::chrono::hours(1);
  Expected<InteractiveChannel::OpenResult> opened =
      channel.open(deadline, [&] { return compiling.load(); });
  if (!opened || *opened != InteractiveChannel::OpenResult::Opened) {
    if (!opened)
      answers.failure = opened.error().message;
    return;
  }
  Expected<policies::ChannelHeader> header = channel.readHeader(deadline);
  if (!header) {
    answers.failure = header.error().message;
    return;
  }
  Expected<evaluators::FeatureLayout> layout =
      evaluators::FeatureLayout::bind(*header, policy, job.defaultDecisionFeature);
  if (!layout)
    answers.mismatch = layout.error().message;
  else if (job.recordTrajectory) {
    answers.trajectory.emplace();
    answers.trajectory->featureSpecs = header->features;
    answers.trajectory->width = layout->recordWidth;
  }
  RandomStream rng(job.rngKey);
  std::vector<std::byte> observation;
  std::vector<double> inputs(layout ? layout->policyWidth : 0);
  while (true) {
    Expected<InteractiveChannel::Event> event = channel.next(deadline, observation);
    if (!event || *event != InteractiveChannel::Event::Observation) {
      if (!event)
        answers.failure = event.error().message;
      return;
    }
    policies::Decision decision{32, 0.0};
    if (layout) {
      layout->gather(*header, observation.data(), layout->policyInputs, inputs.data());
      decision = policy.decide(inputs, job.mode, rng);
    }
    std::vector<std::byte> advice = evaluators::encodeAdvice(header->advice, decision.advice);
    if (Status sent = channel.sendAdvice(advice.data(), advice.size()); !sent) {
      answers.failure = sent.error().message;
      return;
    }
    ++answers.decisions;
    if (answers.trajectory)
      layout->record(*header, observation.data(), decision, *answers.trajectory);
  }
}

} // namespace

protocol::ResultMessage compileEviction(const protocol::JobMessage& job,
                                        const policies::Policy* policy) {
  protocol::ResultMessage result;
  std::optional<Expected<RegAllocMeasure>> measure;
  Answers answers;
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
    std::thread answerer([&] { answerChannel(*channel, job, *policy, compiling, answers); });
    measure.emplace(
        measureRegAlloc(job.arguments, job.sizeSections, result.diagnostics, /*mlAdvisor=*/true));
    compiling = false;
    answerer.join();
  }
  result.decisions = answers.decisions;
  result.trajectory = std::move(answers.trajectory);
  if (answers.mismatch) {
    result.status = protocol::WorkerStatus::PolicyMismatch;
    result.message = *answers.mismatch;
  } else if (!*measure) {
    result.status = protocol::WorkerStatus::CompilerFailed;
    result.message = measure->error().message;
  } else if (answers.failure) {
    result.status = protocol::WorkerStatus::SetupFailed;
    result.message = "eviction channel: " + *answers.failure;
  } else {
    result.status = protocol::WorkerStatus::Ok;
    result.sizeBytes = (*measure)->code.bytes;
    result.codeHash = (*measure)->code.hash;
  }
  return result;
}

} // namespace mlgo::inprocess
