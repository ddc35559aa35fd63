// The byte layout of messages between mlgo-es processes built from the same
// source (trainer <-> in-process worker over pipes, trainer <-> MPI ranks):
// fixed-size values in native byte order, strings and vectors with a u64
// length first. Readers are bounds-checked: a truncated or foreign payload
// fails its decode, never crashes.
#pragma once

#include "mlgo/policies/TensorSpec.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace mlgo::evaluators::wire {

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

inline void writeSpec(Writer& w, const policies::TensorSpec& spec) {
  w.text(spec.name);
  w.value<int32_t>(static_cast<int32_t>(spec.type));
  w.array(spec.shape);
  w.value<int32_t>(spec.port);
}

inline policies::TensorSpec readSpec(Reader& r) {
  policies::TensorSpec spec;
  spec.name = r.text();
  spec.type = static_cast<policies::TensorType>(r.value<int32_t>());
  spec.shape = r.array<int64_t>();
  spec.port = r.value<int32_t>();
  return spec;
}

template <class T> void writeOptional(Writer& w, const std::optional<T>& value) {
  w.value<uint8_t>(value.has_value());
  if (value)
    w.value(*value);
}

template <class T> std::optional<T> readOptional(Reader& r) {
  if (r.value<uint8_t>() == 0)
    return std::nullopt;
  return r.value<T>();
}

void writeTrajectory(Writer& w, const policies::Trajectory& t);
policies::Trajectory readTrajectory(Reader& r, size_t payloadBytes);

} // namespace mlgo::evaluators::wire
