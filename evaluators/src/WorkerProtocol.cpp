#include "mlgo/evaluators/WorkerProtocol.h"

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <unistd.h>

namespace mlgo::evaluators::protocol {

namespace {

// Payload writer: fixed-size values in native order, strings and vectors with
// a u64 length first.
class Writer {
public:
  template <class T> void value(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void text(std::string_view s) {
    value<uint64_t>(s.size());
    out_.append(s);
  }
  void texts(const std::vector<std::string>& list) {
    value<uint64_t>(list.size());
    for (const std::string& s : list)
      text(s);
  }
  template <class T> void array(const std::vector<T>& values) {
    value<uint64_t>(values.size());
    out_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

// Payload reader: every read is bounds-checked; the first overrun makes the
// whole decode fail (a truncated or foreign message, never a crash).
class Reader {
public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class T> T value() {
    T v{};
    if (!take(sizeof v))
      return v;
    std::memcpy(&v, in_.data() + position_ - sizeof v, sizeof v);
    return v;
  }
  std::string text() {
    uint64_t n = value<uint64_t>();
    if (!take(n))
      return {};
    return std::string(in_.substr(position_ - n, n));
  }
  std::vector<std::string> texts() {
    uint64_t n = value<uint64_t>();
    std::vector<std::string> list;
    for (uint64_t i = 0; i < n && ok_; ++i)
      list.push_back(text());
    return list;
  }
  template <class T> std::vector<T> array() {
    uint64_t n = value<uint64_t>();
    if (n > in_.size() / sizeof(T) || !take(n * sizeof(T)))
      return {};
    std::vector<T> values(n);
    std::memcpy(values.data(), in_.data() + position_ - n * sizeof(T), n * sizeof(T));
    return values;
  }
  template <class T> Expected<T> finish(T message, std::string_view what) {
    if (!ok_ || position_ != in_.size())
      return makeError("malformed " + std::string(what) + " message (" +
                       std::to_string(in_.size()) + " bytes)");
    return message;
  }

private:
  bool take(uint64_t n) {
    if (!ok_ || n > in_.size() - position_) {
      ok_ = false;
      return false;
    }
    position_ += n;
    return true;
  }
  std::string_view in_;
  size_t position_ = 0;
  bool ok_ = true;
};

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

void writeSpec(Writer& w, const policies::TensorSpec& spec) {
  w.text(spec.name);
  w.value<int32_t>(static_cast<int32_t>(spec.type));
  w.array(spec.shape);
  w.value<int32_t>(spec.port);
}

policies::TensorSpec readSpec(Reader& r) {
  policies::TensorSpec spec;
  spec.name = r.text();
  spec.type = static_cast<policies::TensorType>(r.value<int32_t>());
  spec.shape = r.array<int64_t>();
  spec.port = r.value<int32_t>();
  return spec;
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
  w.value(m.decisions);
  w.value<uint8_t>(m.cacheHit);
  w.value<uint8_t>(m.decisionsAfterQuery);
  w.value<uint8_t>(m.trajectory.has_value());
  if (m.trajectory) {
    const policies::Trajectory& t = *m.trajectory;
    w.value<uint64_t>(t.featureSpecs.size());
    for (const policies::TensorSpec& spec : t.featureSpecs)
      writeSpec(w, spec);
    w.value<uint64_t>(t.width);
    w.array(t.observations);
    w.array(t.defaultDecisions);
    w.array(t.actions);
    w.array(t.logProbabilities);
  }
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
  m.decisions = r.value<uint64_t>();
  m.cacheHit = r.value<uint8_t>() != 0;
  m.decisionsAfterQuery = r.value<uint8_t>() != 0;
  if (r.value<uint8_t>()) {
    policies::Trajectory t;
    uint64_t specs = r.value<uint64_t>();
    for (uint64_t i = 0; i < specs && i < payload.size(); ++i)
      t.featureSpecs.push_back(readSpec(r));
    t.width = r.value<uint64_t>();
    t.observations = r.array<double>();
    t.defaultDecisions = r.array<int64_t>();
    t.actions = r.array<int64_t>();
    t.logProbabilities = r.array<double>();
    m.trajectory = std::move(t);
  }
  return r.finish(std::move(m), "result");
}

} // namespace mlgo::evaluators::protocol
