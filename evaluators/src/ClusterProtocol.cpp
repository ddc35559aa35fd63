#include "ClusterProtocol.h"

#include <type_traits>

#include "Wire.h"

namespace mlgo::evaluators::cluster {

using wire::Reader;
using wire::Writer;

namespace {

Writer start(Kind kind) {
  Writer w;
  w.value(kind);
  return w;
}

// A reader past the kind byte, which must be `kind`.
Expected<Reader> open(std::string_view message, Kind kind, std::string_view what) {
  if (kindOf(message) != kind)
    return makeError("expected a " + std::string(what) + " message");
  return Reader(message.substr(1));
}

void writeOptions(Writer& w, const EvaluatorOptions& o) {
  w.value(static_cast<uint8_t>(o.backend));
  w.text(o.clang);
  w.text(o.inprocessWorker);
  w.value<uint8_t>(o.decisionCache);
  w.value<uint64_t>(o.jobsPerWorker);
  w.value<uint64_t>(o.workers);
  w.value<double>(o.compileTimeout.count());
  w.text(o.scratchDirectory.string());
  w.texts(o.filters.deleteFlags);
  std::vector<std::string> replace;
  for (const auto& [flag, value] : o.filters.replaceFlags) {
    replace.push_back(flag);
    replace.push_back(value);
  }
  w.texts(replace);
  w.texts(o.filters.addFlags);
  w.value<uint8_t>(o.filters.allowUnsafeCommands);
  w.value<uint64_t>(o.stderrTailBytes);
}

EvaluatorOptions readOptions(Reader& r) {
  EvaluatorOptions o;
  o.backend = static_cast<BackendKind>(r.value<uint8_t>());
  o.clang = r.text();
  o.inprocessWorker = r.text();
  o.decisionCache = r.value<uint8_t>() != 0;
  o.jobsPerWorker = r.value<uint64_t>();
  o.workers = r.value<uint64_t>();
  o.compileTimeout = std::chrono::duration<double>(r.value<double>());
  o.scratchDirectory = r.text();
  o.filters.deleteFlags = r.texts();
  std::vector<std::string> replace = r.texts();
  for (size_t i = 0; i + 1 < replace.size(); i += 2)
    o.filters.replaceFlags.emplace_back(replace[i], replace[i + 1]);
  o.filters.addFlags = r.texts();
  o.filters.allowUnsafeCommands = r.value<uint8_t>() != 0;
  o.stderrTailBytes = r.value<uint64_t>();
  // A rank keeps no baselines (rank 0 has them) and replays nothing (replay
  // stays with the trainer).
  o.baselineCacheDirectory.reset();
  o.replay = false;
  return o;
}

// Every field of the task (CompilerTask::forEachField), so a new field
// travels to the ranks without a change here. The task's process-global LLVM
// options (an IR2Vec vocabulary) matter most: without them a rank would
// compile without the embedding features rank 0's policy reads.
void writeTask(Writer& w, const CompilerTask& t) {
  CompilerTask::forEachField(
      [&](const auto& field) {
        using Field = std::decay_t<decltype(field)>;
        if constexpr (std::is_same_v<Field, std::string>)
          w.text(field);
        else if constexpr (std::is_same_v<Field, std::vector<std::string>>)
          w.texts(field);
        else
          w.value(field);
      },
      t);
}

CompilerTask readTask(Reader& r) {
  CompilerTask t;
  CompilerTask::forEachField(
      [&](auto& field) {
        using Field = std::decay_t<decltype(field)>;
        if constexpr (std::is_same_v<Field, std::string>)
          field = r.text();
        else if constexpr (std::is_same_v<Field, std::vector<std::string>>)
          field = r.texts();
        else
          field = r.template value<Field>();
      },
      t);
  return t;
}

void writeStatistics(Writer& w, const BackendStatistics& s) {
  w.value<uint64_t>(s.jobs);
  w.value<uint64_t>(s.cacheLookups);
  w.value<uint64_t>(s.cacheHits);
  w.value<double>(s.cacheSecondsSaved);
  w.value<uint64_t>(s.workersStarted);
}

BackendStatistics readStatistics(Reader& r) {
  BackendStatistics s;
  s.jobs = r.value<uint64_t>();
  s.cacheLookups = r.value<uint64_t>();
  s.cacheHits = r.value<uint64_t>();
  s.cacheSecondsSaved = r.value<double>();
  s.workersStarted = r.value<uint64_t>();
  return s;
}

} // namespace

std::optional<Kind> kindOf(std::string_view message) {
  if (message.empty())
    return std::nullopt;
  return static_cast<Kind>(static_cast<uint8_t>(message[0]));
}

std::string encode(const Hello& m) {
  Writer w = start(Kind::Hello);
  writeOptions(w, m.options);
  writeTask(w, m.task);
  return w.take();
}

std::string encode(const Ready& m) {
  Writer w = start(Kind::Ready);
  w.value<uint8_t>(m.ok);
  w.text(m.error);
  w.value<uint64_t>(m.workers);
  w.text(m.host);
  return w.take();
}

std::string encode(const Family& m) {
  Writer w = start(Kind::Family);
  w.value(m.id);
  w.value(m.generation);
  w.text(m.kind);
  w.text(m.description);
  return w.take();
}

std::string encode(const PolicyFile& m) {
  Writer w = start(Kind::Policy);
  w.value(m.id);
  w.value(m.generation);
  w.text(m.json);
  return w.take();
}

std::string encode(const Job& m) {
  Writer w = start(Kind::Job);
  w.value(m.id);
  w.value(m.policy);
  w.value(m.policyId);
  w.value(m.member);
  w.value<uint8_t>(m.mode == policies::DecisionMode::Sampling);
  w.value(m.rngKey);
  w.value<uint8_t>(m.recordTrajectory);
  w.value<uint8_t>(m.recordDefaults);
  w.value<uint8_t>(m.allowDecisionCache);
  w.text(m.module.name);
  w.text(m.module.bitcode.string());
  w.text(m.module.thinLTOIndex ? m.module.thinLTOIndex->string() : std::string());
  w.value<uint64_t>(m.module.bitcodeBytes);
  w.texts(m.module.storedCommand);
  return w.take();
}

std::string encode(const Result& m) {
  Writer w = start(Kind::Result);
  w.value(m.jobId);
  const JobResult& j = m.result;
  w.value(static_cast<uint8_t>(j.status));
  w.text(j.message);
  w.text(j.stderrTail);
  w.value(j.sizeBytes);
  w.value(j.codeHash);
  w.value<uint8_t>(j.comdat.has_value());
  if (j.comdat)
    w.array(*j.comdat);
  w.value(j.decisions);
  wire::writeOptional(w, j.measured);
  w.value(j.seconds);
  w.value<uint8_t>(j.cacheHit);
  w.value<uint8_t>(j.trajectory.has_value());
  if (j.trajectory)
    wire::writeTrajectory(w, *j.trajectory);
  writeStatistics(w, m.counters);
  return w.take();
}

std::string encodeShutdown() {
  return start(Kind::Shutdown).take();
}

std::string encodeHeartbeat() {
  return start(Kind::Heartbeat).take();
}

Expected<Hello> decodeHello(std::string_view message) {
  Expected<Reader> r = open(message, Kind::Hello, "hello");
  if (!r)
    return r.error();
  Hello m;
  m.options = readOptions(*r);
  m.task = readTask(*r);
  return r->finish(std::move(m), "hello");
}

Expected<Ready> decodeReady(std::string_view message) {
  Expected<Reader> r = open(message, Kind::Ready, "ready");
  if (!r)
    return r.error();
  Ready m;
  m.ok = r->value<uint8_t>() != 0;
  m.error = r->text();
  m.workers = r->value<uint64_t>();
  m.host = r->text();
  return r->finish(std::move(m), "ready");
}

Expected<Family> decodeFamily(std::string_view message) {
  Expected<Reader> r = open(message, Kind::Family, "family");
  if (!r)
    return r.error();
  Family m;
  m.id = r->value<uint64_t>();
  m.generation = r->value<uint64_t>();
  m.kind = r->text();
  m.description = r->text();
  return r->finish(std::move(m), "family");
}

Expected<PolicyFile> decodePolicyFile(std::string_view message) {
  Expected<Reader> r = open(message, Kind::Policy, "policy");
  if (!r)
    return r.error();
  PolicyFile m;
  m.id = r->value<uint64_t>();
  m.generation = r->value<uint64_t>();
  m.json = r->text();
  return r->finish(std::move(m), "policy");
}

Expected<Job> decodeJob(std::string_view message) {
  Expected<Reader> r = open(message, Kind::Job, "job");
  if (!r)
    return r.error();
  Job m;
  m.id = r->value<uint64_t>();
  m.policy = r->value<PolicyRef>();
  m.policyId = r->value<uint64_t>();
  m.member = r->value<uint64_t>();
  m.mode = r->value<uint8_t>() ? policies::DecisionMode::Sampling
                               : policies::DecisionMode::Deterministic;
  m.rngKey = r->value<uint64_t>();
  m.recordTrajectory = r->value<uint8_t>() != 0;
  m.recordDefaults = r->value<uint8_t>() != 0;
  m.allowDecisionCache = r->value<uint8_t>() != 0;
  m.module.name = r->text();
  m.module.bitcode = r->text();
  if (std::string index = r->text(); !index.empty())
    m.module.thinLTOIndex = index;
  m.module.bitcodeBytes = r->value<uint64_t>();
  m.module.storedCommand = r->texts();
  return r->finish(std::move(m), "job");
}

Expected<Result> decodeResult(std::string_view message) {
  Expected<Reader> r = open(message, Kind::Result, "result");
  if (!r)
    return r.error();
  Result m;
  m.jobId = r->value<uint64_t>();
  JobResult& j = m.result;
  j.status = static_cast<JobStatus>(r->value<uint8_t>());
  j.message = r->text();
  j.stderrTail = r->text();
  j.sizeBytes = r->value<uint64_t>();
  j.codeHash = r->value<uint64_t>();
  if (r->value<uint8_t>())
    j.comdat = r->array<ComdatCode>();
  j.decisions = r->value<uint64_t>();
  j.measured = wire::readOptional<double>(*r);
  j.seconds = r->value<double>();
  j.cacheHit = r->value<uint8_t>() != 0;
  if (r->value<uint8_t>())
    j.trajectory = wire::readTrajectory(*r, message.size());
  m.counters = readStatistics(*r);
  return r->finish(std::move(m), "result");
}

} // namespace mlgo::evaluators::cluster
