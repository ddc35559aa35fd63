// Host side of LLVM's interactive model-runner protocol
// (llvm/Analysis/InteractiveModelRunner.h, Utils/TrainingLogger.h), as
// spoken by clang-22 with e.g. `-mllvm -inliner-interactive-channel-base=B`:
//
//   the host creates FIFOs B.in (host → compiler: advice) and B.out
//   (compiler → host: observations), then opens B.in for writing FIRST and
//   B.out for reading second (the compiler opens them in that order; the
//   other order deadlocks);
//   compiler → host, one JSON line:  {"features":[spec…],"advice":spec}
//   then, per decision context:      {"context":"<name>"}\n
//   then, per decision:              {"observation":N}\n
//                                    <raw little-endian bytes of every feature
//                                     tensor, in header order>\n
//   host → compiler, per decision:   <raw bytes of the advice tensor>
//   the compiler closes B.out when it is done (or dies).
//
// Every read has a deadline (poll, never a blocking read) and a peer that
// dies shows up as end of stream, so no path can hang the trainer.
#pragma once

#include "mlgo/evaluators/Process.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/policies/TensorSpec.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::evaluators {

class InteractiveChannel {
public:
  // Creates the FIFOs <base>.in and <base>.out.
  static Expected<InteractiveChannel> create(const std::filesystem::path& base);
  InteractiveChannel(InteractiveChannel&& other) noexcept;
  InteractiveChannel& operator=(InteractiveChannel&&) = delete;
  InteractiveChannel(const InteractiveChannel&) = delete;
  // Closes both ends and removes the FIFOs.
  ~InteractiveChannel();

  const std::filesystem::path& base() const { return base_; }

  enum class OpenResult { Opened, PeerGone, TimedOut };
  // Opens B.in then B.out, waiting for the compiler to open its ends;
  // `peerAlive` is asked while waiting so a compiler that dies (or never
  // opens the channel) does not block us.
  Expected<OpenResult> open(Clock::time_point deadline, const std::function<bool()>& peerAlive);

  // The header line. `TimedOut`/end of stream are errors here.
  Expected<policies::ChannelHeader> readHeader(Clock::time_point deadline);

  enum class Event { Observation, EndOfStream, TimedOut };
  // Skips context lines; on Observation, `features` holds the raw bytes of
  // every feature tensor (header.observationBytes()).
  Expected<Event> next(Clock::time_point deadline, std::vector<std::byte>& features);

  Status sendAdvice(const void* bytes, size_t size);

private:
  explicit InteractiveChannel(std::filesystem::path base) : base_(std::move(base)) {}
  enum class ReadResult { Ok, EndOfStream, TimedOut };
  // Reads until the buffer holds `want` unused bytes.
  Expected<ReadResult> fill(size_t want, Clock::time_point deadline);
  Expected<ReadResult> readLine(std::string& line, Clock::time_point deadline);

  std::filesystem::path base_;
  int toCompiler_ = -1;
  int fromCompiler_ = -1;
  // Bytes [consumed_, filled_) of buffer_ are read but not yet used.
  std::vector<std::byte> buffer_;
  size_t consumed_ = 0;
  size_t filled_ = 0;
  size_t observationBytes_ = 0;
};

// How a compiler's questions on an opened channel are answered: by `policy`
// (its inputs bound to the header by name), in `mode`, from the job's random
// stream, optionally recording every decision.
struct ChannelAnswering {
  const policies::Policy* policy = nullptr;
  policies::DecisionMode mode = policies::DecisionMode::Deterministic;
  uint64_t rngKey = 0;
  std::string taskName;               // for messages
  std::string adviceName;             // the task's; another in the header is an error
  std::string defaultDecisionFeature; // recorded beside each decision, if any
  bool recordTrajectory = false;
  // A feature the compiler does not send, appended to the header and to
  // every observation by whoever answers (the in-process eviction task: the
  // default advisor's choice, computed beside the channel). `value` is read
  // when the observation has arrived.
  struct AppendedFeature {
    std::string name; // an int64 scalar
    std::function<int64_t()> value;
  };
  std::optional<AppendedFeature> appended;
  // A policy that does not fit the header: nullopt stops at once (the caller
  // ends the compiler); a value is answered to every question instead, so
  // that a compiler in this very process can finish.
  std::optional<int64_t> adviceOnMismatch;
};

struct ChannelOutcome {
  enum class Kind { Finished, TimedOut, ProtocolError, PolicyMismatch };
  Kind kind = Kind::Finished;
  std::string message;
  uint64_t decisions = 0;
  std::optional<policies::Trajectory> trajectory;
};

// Reads the header and answers every decision until the compiler closes the
// channel (Finished) or `deadline` passes. Used by the clang-process backend
// and by the in-process workers' eviction task alike.
ChannelOutcome answerChannel(InteractiveChannel& channel, Clock::time_point deadline,
                             const ChannelAnswering& answering);

} // namespace mlgo::evaluators
