#include "mlgo/evaluators/WorkerProtocol.h"

#include "Wire.h"

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <unistd.h>

namespace mlgo::evaluators::protocol {

using wire::Reader;
using wire::Writer;

namespace {

Status writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return makeError(std::string("pipe write failed: ") + std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::ok();
}

// Reads exactly `size` bytes; returns the count read before end of file.
Expected<size_t> readAll(int fd, char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return makeError(std::string("pipe read failed: ") + std::strerror(errno));
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  return done;
}

} // namespace

Status writeFrame(int fd, MessageKind kind, std::string_view payload) {
  char header[12];
  uint32_t k = static_cast<uint32_t>(kind);
  uint64_t n = payload.size();
  std::memcpy(header, &k, 4);
  std::memcpy(header + 4, &n, 8);
  if (Status s = writeAll(fd, header, sizeof header); !s)
    return s;
  return writeAll(fd, payload.data(), payload.size());
}

Expected<std::optional<Frame>> readFrame(int fd) {
  char header[12];
  Expected<size_t> got = readAll(fd, header, sizeof header);
  if (!got)
    return got.error();
  if (*got == 0)
    return std::optional<Frame>();
  if (*got != sizeof header)
    return makeError("pipe closed inside a frame header");
  uint32_t k = 0;
  uint64_t n = 0;
  std::memcpy(&k, header, 4);
  std::memcpy(&n, header + 4, 8);
  if (n > (uint64_t{1} << 34))
    return makeError("frame of " + std::to_string(n) + " bytes is not a protocol frame");
  Frame frame;
  frame.kind = static_cast<MessageKind>(k);
  frame.payload.resize(n);
  got = readAll(fd, frame.payload.data(), n);
  if (!got)
    return got.error();
  if (*got != n)
    return makeError("pipe closed inside a frame (" + std::to_string(*got) + " of " +
                     std::to_string(n) + " bytes)");
  return std::optional<Frame>(std::move(frame));
}

std::string encode(const PolicyMessage& m) {
  Writer w;
  w.value(m.id);
  w.value(m.generation);
  w.text(m.json);
  return w.take();
}

std::string encode(const JobMessage& m) {
  Writer w;
  w.value(m.policyId);
  w.value<uint8_t>(m.mode == policies::DecisionMode::Sampling);
  w.value(m.rngKey);
  w.value<uint8_t>(m.recordTrajectory);
  w.value<uint8_t>(m.recordDefaults);
  w.value<uint8_t>(m.consultCache);
  w.text(m.defaultDecisionFeature);
  w.texts(m.sizeSections);
  w.texts(m.arguments);
  w.text(m.moduleName);
  w.value(static_cast<uint8_t>(m.route));
  w.text(m.taskName);
  w.text(m.adviceName);
  w.value(m.neutralAdvice);
  w.value<uint64_t>(m.trials.size());
  for (const TrialPoint& t : m.trials) {
    w.value(t.position);
    w.value(t.state);
  }
  w.value(m.trialSeconds);
  w.value<uint8_t>(m.reuseCode);
  w.value(m.reuseBytes);
  return w.take();
}

std::string encode(const CacheQueryMessage& m) {
  Writer w;
  w.value(m.hashLow);
  w.value(m.hashHigh);
  w.value(m.decisions);
  return w.take();
}

std::string encode(const CacheAnswerMessage& m) {
  Writer w;
  w.value<uint8_t>(m.known);
  return w.take();
}

std::string encode(const ResultMessage& m) {
  Writer w;
  w.value(static_cast<uint8_t>(m.status));
  w.text(m.message);
  w.text(m.diagnostics);
  w.value(m.sizeBytes);
  w.value(m.codeHash);
  w.array(m.comdat);
  w.value(m.decisions);
  wire::writeOptional(w, m.measured);
  w.value<uint8_t>(m.cacheHit);
  w.value<uint8_t>(m.decisionsAfterQuery);
  w.value<uint8_t>(m.trajectory.has_value());
  if (m.trajectory) {
    wire::writeTrajectory(w, *m.trajectory);
  }
  for (uint64_t CodeReuseCounts::*field : kCodeReuseFields)
    w.value(m.reuse.*field);
  for (double CompileTimes::*field : kCompileTimeFields)
    w.value(m.times.*field);
  std::vector<std::string> trials;
  for (const ResultMessage& trial : m.trials)
    trials.push_back(encode(trial));
  w.texts(trials);
  return w.take();
}

Expected<PolicyMessage> decodePolicy(std::string_view payload) {
  Reader r(payload);
  PolicyMessage m;
  m.id = r.value<uint64_t>();
  m.generation = r.value<uint64_t>();
  m.json = r.text();
  return r.finish(std::move(m), "policy");
}

Expected<JobMessage> decodeJob(std::string_view payload) {
  Reader r(payload);
  JobMessage m;
  m.policyId = r.value<uint64_t>();
  m.mode =
      r.value<uint8_t>() ? policies::DecisionMode::Sampling : policies::DecisionMode::Deterministic;
  m.rngKey = r.value<uint64_t>();
  m.recordTrajectory = r.value<uint8_t>() != 0;
  m.recordDefaults = r.value<uint8_t>() != 0;
  m.consultCache = r.value<uint8_t>() != 0;
  m.defaultDecisionFeature = r.text();
  m.sizeSections = r.texts();
  m.arguments = r.texts();
  m.moduleName = r.text();
  m.route = static_cast<InProcessRoute>(r.value<uint8_t>());
  m.taskName = r.text();
  m.adviceName = r.text();
  m.neutralAdvice = r.value<int64_t>();
  uint64_t trials = r.value<uint64_t>();
  for (uint64_t i = 0; i < trials && i < payload.size(); ++i) {
    TrialPoint t;
    t.position = r.value<uint64_t>();
    t.state = r.value<uint64_t>();
    m.trials.push_back(t);
  }
  m.trialSeconds = r.value<double>();
  m.reuseCode = r.value<uint8_t>() != 0;
  m.reuseBytes = r.value<uint64_t>();
  return r.finish(std::move(m), "job");
}

Expected<CacheQueryMessage> decodeCacheQuery(std::string_view payload) {
  Reader r(payload);
  CacheQueryMessage m;
  m.hashLow = r.value<uint64_t>();
  m.hashHigh = r.value<uint64_t>();
  m.decisions = r.value<uint64_t>();
  return r.finish(m, "cache query");
}

Expected<CacheAnswerMessage> decodeCacheAnswer(std::string_view payload) {
  Reader r(payload);
  CacheAnswerMessage m;
  m.known = r.value<uint8_t>() != 0;
  return r.finish(m, "cache answer");
}

Expected<ResultMessage> decodeResult(std::string_view payload) {
  Reader r(payload);
  ResultMessage m;
  m.status = static_cast<WorkerStatus>(r.value<uint8_t>());
  m.message = r.text();
  m.diagnostics = r.text();
  m.sizeBytes = r.value<uint64_t>();
  m.codeHash = r.value<uint64_t>();
  m.comdat = r.array<ComdatCode>();
  m.decisions = r.value<uint64_t>();
  m.measured = wire::readOptional<double>(r);
  m.cacheHit = r.value<uint8_t>() != 0;
  m.decisionsAfterQuery = r.value<uint8_t>() != 0;
  if (r.value<uint8_t>()) {
    m.trajectory = wire::readTrajectory(r, payload.size());
  }
  for (uint64_t CodeReuseCounts::*field : kCodeReuseFields)
    m.reuse.*field = r.value<uint64_t>();
  for (double CompileTimes::*field : kCompileTimeFields)
    m.times.*field = r.value<double>();
  for (const std::string& trial : r.texts()) {
    Expected<ResultMessage> decoded = decodeResult(trial);
    if (!decoded)
      return makeError("a trial's result: " + decoded.error().message);
    m.trials.push_back(decoded.take());
  }
  return r.finish(std::move(m), "result");
}

} // namespace mlgo::evaluators::protocol

namespace mlgo::evaluators::wire {

void writeTrajectory(Writer& w, const policies::Trajectory& t) {
  w.value<uint64_t>(t.featureSpecs.size());
  for (const policies::TensorSpec& spec : t.featureSpecs)
    writeSpec(w, spec);
  w.value<uint64_t>(t.width);
  w.array(t.observations);
  w.array(t.defaultDecisions);
  w.array(t.actions);
  w.array(t.logProbabilities);
  w.array(t.followsCommitment);
}

policies::Trajectory readTrajectory(Reader& r, size_t payloadBytes) {
  policies::Trajectory t;
  uint64_t specs = r.value<uint64_t>();
  for (uint64_t i = 0; i < specs && i < payloadBytes; ++i)
    t.featureSpecs.push_back(readSpec(r));
  t.width = r.value<uint64_t>();
  t.observations = r.array<double>();
  t.defaultDecisions = r.array<int64_t>();
  t.actions = r.array<int64_t>();
  t.logProbabilities = r.array<double>();
  t.followsCommitment = r.array<uint8_t>();
  return t;
}

} // namespace mlgo::evaluators::wire
