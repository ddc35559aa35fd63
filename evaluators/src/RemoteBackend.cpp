#include "RemoteBackend.h"

#include "ClusterImpl.h"
#include "ClusterProtocol.h"

#include <chrono>
#include <cstdio>

namespace mlgo::evaluators {

namespace {

// How long the ranks may take to start their worker pools.
constexpr std::chrono::seconds kSetupDeadline{300};

} // namespace

RemoteBackend::RemoteBackend(std::shared_ptr<Cluster> cluster, std::unique_ptr<Backend> local,
                             size_t localSlots)
    : cluster_(std::move(cluster)), local_(std::move(local)), ranks_(cluster_->size()) {
  ranks_[0].slots = localSlots;
  ranks_[0].host = cluster_->host();
}

RemoteBackend::~RemoteBackend() {
  cluster_->impl().setReceiver(nullptr);
}

Expected<std::unique_ptr<RemoteBackend>> RemoteBackend::create(std::shared_ptr<Cluster> cluster,
                                                               const EvaluatorOptions& options,
                                                               const CompilerTask& task,
                                                               std::unique_ptr<Backend> local) {
  Cluster::Impl& impl = cluster->impl();
  std::unique_ptr<RemoteBackend> backend(
      new RemoteBackend(cluster, std::move(local), options.workers));
  RemoteBackend* self = backend.get();
  impl.setReceiver([self](int from, std::string message) { self->receive(from, message); });
  cluster::Hello hello{options, task};
  hello.options.workers = options.rankWorkers;
  const std::string message = cluster::encode(hello);
  for (int r = 1; r < cluster->size(); ++r)
    impl.transport->post(r, message);
  std::unique_lock lock(backend->mutex_);
  const bool answered = backend->changed_.wait_for(lock, kSetupDeadline, [&] {
    return backend->ready_ + 1 == backend->ranks_.size() || !backend->setupError_.empty();
  });
  if (!backend->setupError_.empty())
    return makeError(backend->setupError_);
  if (!answered)
    return makeError("MPI ranks did not report ready within " +
                     std::to_string(kSetupDeadline.count()) + " s");
  impl.watchRanks(options.rankDeadline);
  for (size_t r = 1; r < backend->ranks_.size(); ++r)
    impl.noteHost(static_cast<int>(r), backend->ranks_[r].host);
  return backend;
}

size_t RemoteBackend::slots() const {
  std::lock_guard lock(mutex_);
  size_t total = 0;
  for (const Rank& rank : ranks_)
    total += rank.slots;
  return total;
}

BackendStatistics RemoteBackend::statistics() const {
  BackendStatistics total = local_ ? local_->statistics() : BackendStatistics{};
  std::lock_guard lock(mutex_);
  for (size_t r = 1; r < ranks_.size(); ++r) {
    const BackendStatistics& s = ranks_[r].counters;
    total.jobs += s.jobs;
    total.cacheLookups += s.cacheLookups;
    total.cacheHits += s.cacheHits;
    total.cacheSecondsSaved += s.cacheSecondsSaved;
    total.workersStarted += s.workersStarted;
  }
  return total;
}

void RemoteBackend::receive(int from, std::string message) {
  std::optional<cluster::Kind> kind = cluster::kindOf(message);
  if (kind == cluster::Kind::Result) {
    Expected<cluster::Result> result = cluster::decodeResult(message);
    if (result) {
      received(from, result.take());
      return;
    }
    std::fprintf(stderr, "mlgo: MPI rank %d: %s\n", from, result.error().message.c_str());
    std::abort(); // a job would wait for ever: end the MPI job
  }
  if (kind == cluster::Kind::Ready) {
    Expected<cluster::Ready> ready = cluster::decodeReady(message);
    std::lock_guard lock(mutex_);
    if (!ready || !ready->ok)
      setupError_ =
          "MPI rank " + std::to_string(from) +
          (ready ? " on " + ready->host + ": " + ready->error : ": " + ready.error().message);
    else {
      ranks_[from].slots = ready->workers;
      ranks_[from].host = ready->host;
      ++ready_;
    }
    changed_.notify_all();
    return;
  }
  std::fprintf(stderr, "mlgo: MPI rank %d sent an unexpected message (kind %d)\n", from,
               kind ? static_cast<int>(*kind) : -1);
}

void RemoteBackend::received(int from, cluster::Result result) {
  std::lock_guard lock(mutex_);
  Rank& rank = ranks_[from];
  // Counters are cumulative; results may arrive out of order between threads.
  BackendStatistics& c = rank.counters;
  c.jobs = std::max(c.jobs, result.counters.jobs);
  c.cacheLookups = std::max(c.cacheLookups, result.counters.cacheLookups);
  c.cacheHits = std::max(c.cacheHits, result.counters.cacheHits);
  c.cacheSecondsSaved = std::max(c.cacheSecondsSaved, result.counters.cacheSecondsSaved);
  c.workersStarted = std::max(c.workersStarted, result.counters.workersStarted);
  auto waiting = waiting_.find(result.jobId);
  if (waiting == waiting_.end())
    return;
  waiting->second.result = std::move(result.result);
  waiting->second.done = true;
  changed_.notify_all();
}

int RemoteBackend::acquire(const std::string& moduleKey) {
  std::unique_lock lock(mutex_);
  int chosen = -1;
  changed_.wait(lock, [&] {
    auto home = home_.find(moduleKey);
    if (home != home_.end() && ranks_[home->second].busy < ranks_[home->second].slots) {
      chosen = home->second;
      return true;
    }
    // The rank with the most free slots (the lowest on ties).
    size_t mostFree = 0;
    for (size_t r = 0; r < ranks_.size(); ++r)
      if (ranks_[r].slots - ranks_[r].busy > mostFree) {
        mostFree = ranks_[r].slots - ranks_[r].busy;
        chosen = static_cast<int>(r);
      }
    return chosen >= 0;
  });
  home_.try_emplace(moduleKey, chosen);
  ++ranks_[chosen].busy;
  ++ranks_[chosen].jobs;
  return chosen;
}

void RemoteBackend::release(int rank) {
  std::vector<size_t> jobs;
  {
    std::lock_guard lock(mutex_);
    --ranks_[rank].busy;
    changed_.notify_all();
    for (const Rank& r : ranks_)
      jobs.push_back(r.jobs);
  }
  cluster_->impl().countJobs(jobs);
}

uint64_t RemoteBackend::post(int rank, const JobSpec& spec, const SerializedPolicy* serialized) {
  Rank& target = ranks_[rank];
  Transport& transport = *cluster_->impl().transport;
  cluster::Job job;
  job.id = nextJob_++;
  job.mode = spec.mode;
  job.rngKey = spec.rngKey;
  job.recordTrajectory = spec.recordTrajectory;
  job.recordDefaults = spec.recordDefaults;
  job.allowDecisionCache = spec.allowDecisionCache;
  job.module = *spec.module;
  if (serialized && serialized->family) {
    if (target.familySent != serialized->familyId) {
      transport.post(rank, cluster::encode(cluster::Family{
                               serialized->familyId, serialized->generation,
                               serialized->family->kind, serialized->family->description}));
      target.familySent = serialized->familyId;
    }
    job.policy = cluster::PolicyRef::FamilyMember;
    job.policyId = serialized->familyId;
    job.member = serialized->familyMember;
  } else if (serialized) {
    if (target.policyGeneration != serialized->generation) {
      target.policyGeneration = serialized->generation;
      target.policiesSent.clear();
    }
    if (target.policiesSent.insert(serialized->id).second)
      transport.post(rank, cluster::encode(cluster::PolicyFile{
                               serialized->id, serialized->generation, serialized->json}));
    job.policy = cluster::PolicyRef::Policy;
    job.policyId = serialized->id;
  }
  transport.post(rank, cluster::encode(job));
  waiting_[job.id];
  return job.id;
}

std::optional<JobResult> RemoteBackend::compile(const JobSpec& job,
                                                const SerializedPolicy* serialized) {
  if (job.policy && !serialized)
    return std::nullopt; // no file form to send: clang on rank 0 takes it
  const int rank = acquire(job.module->bitcode.string());
  if (rank == 0) {
    std::optional<JobResult> result = local_ ? local_->compile(job, serialized) : std::nullopt;
    release(0);
    return result;
  }
  std::unique_lock lock(mutex_);
  const uint64_t id = post(rank, job, serialized);
  changed_.wait(lock, [&] { return waiting_[id].done; });
  JobResult result = std::move(waiting_[id].result);
  waiting_.erase(id);
  lock.unlock();
  release(rank);
  return result;
}

} // namespace mlgo::evaluators
