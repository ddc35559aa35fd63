#include "mlgo/evaluators/InteractiveChannel.h"

#include "mlgo/evaluators/FeatureLayout.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

namespace {

fs::path withSuffix(const fs::path& base, const char* suffix) {
  return fs::path(base.string() + suffix);
}

int millisecondsUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1000));
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

} // namespace

Expected<InteractiveChannel> InteractiveChannel::create(const fs::path& base) {
  for (const char* suffix : {".in", ".out"}) {
    fs::path fifo = withSuffix(base, suffix);
    if (mkfifo(fifo.c_str(), 0600) != 0)
      return makeError("cannot create FIFO " + fifo.string() + ": " + std::strerror(errno));
  }
  return InteractiveChannel(base);
}

InteractiveChannel::InteractiveChannel(InteractiveChannel&& other) noexcept
    : base_(std::exchange(other.base_, fs::path())),
      toCompiler_(std::exchange(other.toCompiler_, -1)),
      fromCompiler_(std::exchange(other.fromCompiler_, -1)), buffer_(std::move(other.buffer_)),
      consumed_(other.consumed_), filled_(other.filled_),
      observationBytes_(other.observationBytes_) {}

InteractiveChannel::~InteractiveChannel() {
  if (toCompiler_ >= 0)
    close(toCompiler_);
  if (fromCompiler_ >= 0)
    close(fromCompiler_);
  if (!base_.empty()) {
    unlink(withSuffix(base_, ".in").c_str());
    unlink(withSuffix(base_, ".out").c_str());
  }
}

Expected<InteractiveChannel::OpenResult>
InteractiveChannel::open(Clock::time_point deadline, const std::function<bool()>& peerAlive) {
  // A non-blocking open for writing fails with ENXIO until the compiler has
  // opened its reading end; retry until then instead of blocking forever.
  fs::path in = withSuffix(base_, ".in");
  auto sleep = std::chrono::microseconds(200);
  while (true) {
    toCompiler_ = ::open(in.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (toCompiler_ >= 0)
      break;
    if (errno != ENXIO && errno != EINTR)
      return makeError("cannot open FIFO " + in.string() + ": " + std::strerror(errno));
    if (!peerAlive())
      return OpenResult::PeerGone;
    if (Clock::now() >= deadline)
      return OpenResult::TimedOut;
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(10000));
  }
  // Advice is 8 bytes a decision into an empty 64 KiB pipe: blocking writes
  // never wait, and a dead reader gives EPIPE (SIGPIPE is ignored).
  int flags = fcntl(toCompiler_, F_GETFL);
  fcntl(toCompiler_, F_SETFL, flags & ~O_NONBLOCK);

  // Opening the reading end non-blocking succeeds at once; poll() reports
  // no hang-up until a writer has connected and left.
  fs::path out = withSuffix(base_, ".out");
  fromCompiler_ = ::open(out.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fromCompiler_ < 0)
    return makeError("cannot open FIFO " + out.string() + ": " + std::strerror(errno));
  return OpenResult::Opened;
}

Expected<InteractiveChannel::ReadResult> InteractiveChannel::fill(size_t want,
                                                                  Clock::time_point deadline) {
  while (filled_ - consumed_ < want) {
    // Keep the unused bytes at the front and room for a large read behind.
    if (consumed_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + consumed_, filled_ - consumed_);
      filled_ -= consumed_;
      consumed_ = 0;
    }
    if (buffer_.size() < std::max<size_t>(want, 65536))
      buffer_.resize(std::max<size_t>(want, 65536) * 2);
    pollfd fd{fromCompiler_, POLLIN, 0};
    int ready = ::poll(&fd, 1, millisecondsUntil(deadline));
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      return makeError(std::string("poll on the compiler's channel failed: ") +
                       std::strerror(errno));
    }
    if (ready == 0) {
      if (Clock::now() >= deadline)
        return ReadResult::TimedOut;
      continue;
    }
    ssize_t got = ::read(fromCompiler_, buffer_.data() + filled_, buffer_.size() - filled_);
    if (got == 0)
      return ReadResult::EndOfStream;
    if (got < 0) {
      if (errno == EAGAIN || errno == EINTR)
        continue;
      return makeError(std::string("read from the compiler's channel failed: ") +
                       std::strerror(errno));
    }
    filled_ += static_cast<size_t>(got);
  }
  return ReadResult::Ok;
}

Expected<InteractiveChannel::ReadResult> InteractiveChannel::readLine(std::string& line,
                                                                      Clock::time_point deadline) {
  while (true) {
    auto begin = buffer_.begin() + static_cast<ptrdiff_t>(consumed_);
    auto end = buffer_.begin() + static_cast<ptrdiff_t>(filled_);
    auto newline = std::find(begin, end, std::byte{'\n'});
    if (newline != end) {
      line.assign(reinterpret_cast<const char*>(&*begin), static_cast<size_t>(newline - begin));
      consumed_ += line.size() + 1;
      return ReadResult::Ok;
    }
    Expected<ReadResult> r = fill(filled_ - consumed_ + 1, deadline);
    if (!r || *r != ReadResult::Ok)
      return r;
  }
}

Expected<policies::ChannelHeader> InteractiveChannel::readHeader(Clock::time_point deadline) {
  std::string line;
  Expected<ReadResult> r = readLine(line, deadline);
  if (!r)
    return r.error();
  if (*r == ReadResult::TimedOut)
    return makeError("timed out waiting for the channel header");
  if (*r == ReadResult::EndOfStream)
    return makeError("channel closed before the header line");
  Expected<policies::ChannelHeader> header = policies::parseChannelHeader(line);
  if (!header)
    return makeError("bad channel header: " + header.error().message);
  observationBytes_ = header->observationBytes();
  return header;
}

Expected<InteractiveChannel::Event> InteractiveChannel::next(Clock::time_point deadline,
                                                             std::vector<std::byte>& features) {
  std::string line;
  while (true) {
    Expected<ReadResult> r = readLine(line, deadline);
    if (!r)
      return r.error();
    if (*r == ReadResult::TimedOut)
      return Event::TimedOut;
    if (*r == ReadResult::EndOfStream) {
      if (filled_ > consumed_)
        return makeError("channel closed in the middle of a line (" +
                         std::to_string(filled_ - consumed_) + " stray bytes)");
      return Event::EndOfStream;
    }
    if (startsWith(line, "{\"context\":"))
      continue;
    if (!startsWith(line, "{\"observation\":"))
      return makeError("unexpected line on the channel: \"" + line.substr(0, 80) + "\"");
    break;
  }
  // Feature bytes, then the newline that closes the observation.
  Expected<ReadResult> r = fill(observationBytes_ + 1, deadline);
  if (!r)
    return r.error();
  if (*r == ReadResult::TimedOut)
    return Event::TimedOut;
  if (*r == ReadResult::EndOfStream)
    return makeError("channel closed inside an observation");
  const std::byte* data = buffer_.data() + consumed_;
  if (data[observationBytes_] != std::byte{'\n'})
    return makeError("observation not terminated by a newline (feature bytes do not match the "
                     "header's specs)");
  features.assign(data, data + observationBytes_);
  consumed_ += observationBytes_ + 1;
  return Event::Observation;
}

Status InteractiveChannel::sendAdvice(const void* bytes, size_t size) {
  const char* p = static_cast<const char*>(bytes);
  while (size > 0) {
    ssize_t wrote = ::write(toCompiler_, p, size);
    if (wrote < 0) {
      if (errno == EINTR)
        continue;
      return makeError(std::string("writing advice failed: ") + std::strerror(errno));
    }
    p += wrote;
    size -= static_cast<size_t>(wrote);
  }
  return Status::ok();
}

ChannelOutcome answerChannel(InteractiveChannel& channel, Clock::time_point deadline,
                             const ChannelAnswering& answering) {
  ChannelOutcome outcome;
  auto stop = [&](ChannelOutcome::Kind kind, std::string message) {
    outcome.kind = kind;
    outcome.message = std::move(message);
    return std::move(outcome);
  };
  Expected<policies::ChannelHeader> header = channel.readHeader(deadline);
  if (!header)
    return stop(ChannelOutcome::Kind::ProtocolError, header.error().message);
  if (answering.appended)
    header->features.push_back(
        policies::TensorSpec{answering.appended->name, policies::TensorType::Int64, {1}, 0});
  if (!answering.adviceName.empty() && header->advice.name != answering.adviceName)
    return stop(ChannelOutcome::Kind::ProtocolError,
                "the compiler asks for advice \"" + header->advice.name + "\", the task " +
                    answering.taskName + " answers \"" + answering.adviceName + "\"");
  // Callee consistency needs the callee's identity, which clang's channel
  // does not send: only the in-process worker and the plugin apply it.
  if (answering.policy->calleeConsistent())
    return stop(ChannelOutcome::Kind::PolicyMismatch,
                "policy \"" + answering.policy->describe() +
                    "\" is callee-consistent, which only the in-process backend and the "
                    "plugin (mlgo-cc) apply; not clang's interactive channel");
  Expected<FeatureLayout> layout =
      FeatureLayout::bind(*header, *answering.policy, answering.defaultDecisionFeature);
  std::optional<std::string> mismatch;
  if (!layout) {
    if (!answering.adviceOnMismatch)
      return stop(ChannelOutcome::Kind::PolicyMismatch, layout.error().message);
    mismatch = layout.error().message;
  } else if (answering.recordTrajectory) {
    outcome.trajectory.emplace();
    outcome.trajectory->featureSpecs = header->features;
    outcome.trajectory->width = layout->recordWidth;
  }
  RandomStream rng(answering.rngKey);
  std::vector<std::byte> observation;
  std::vector<double> inputs(layout ? layout->policyWidth : 0);
  while (true) {
    Expected<InteractiveChannel::Event> event = channel.next(deadline, observation);
    if (!event)
      return stop(ChannelOutcome::Kind::ProtocolError, event.error().message);
    if (*event == InteractiveChannel::Event::TimedOut)
      return stop(ChannelOutcome::Kind::TimedOut,
                  "timed out after " + std::to_string(outcome.decisions) + " decisions");
    if (*event == InteractiveChannel::Event::EndOfStream)
      break;
    if (answering.appended) {
      const int64_t value = answering.appended->value();
      const auto* bytes = reinterpret_cast<const std::byte*>(&value);
      observation.insert(observation.end(), bytes, bytes + sizeof value);
    }
    policies::Decision decision{answering.adviceOnMismatch.value_or(0), 0.0};
    if (layout) {
      layout->gather(*header, observation.data(), layout->policyInputs, inputs.data());
      decision = answering.policy->decide(inputs, answering.mode, rng);
    }
    std::vector<std::byte> advice = encodeAdvice(header->advice, decision.advice);
    if (Status sent = channel.sendAdvice(advice.data(), advice.size()); !sent)
      return stop(ChannelOutcome::Kind::ProtocolError, sent.error().message);
    ++outcome.decisions;
    if (outcome.trajectory)
      layout->record(*header, observation.data(), decision, *outcome.trajectory);
  }
  if (mismatch)
    return stop(ChannelOutcome::Kind::PolicyMismatch, *mismatch);
  return outcome;
}

} // namespace mlgo::evaluators
