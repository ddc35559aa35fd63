#include "ClusterImpl.h"
#include "ClusterProtocol.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Threads.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <thread>

namespace mlgo::evaluators {

size_t workersPerRank(size_t requested, int ranksOnNode) {
  if (requested > 0)
    return requested;
  return std::max<size_t>(1, hardwareThreads() / static_cast<size_t>(std::max(1, ranksOnNode)));
}

void Cluster::Impl::receive(int from, std::string message) {
  Transport::Deliver receiver;
  {
    std::lock_guard lock(mutex_);
    if (static_cast<size_t>(from) < lastHeard_.size())
      lastHeard_[static_cast<size_t>(from)] = std::chrono::steady_clock::now();
    receiver = receiver_;
  }
  if (cluster::kindOf(message) == cluster::Kind::Heartbeat)
    return;
  if (receiver)
    receiver(from, std::move(message));
  else
    std::fprintf(stderr, "mlgo: a message from MPI rank %d arrived with no evaluator to take it\n",
                 from);
}

void Cluster::Impl::watchRanks(std::chrono::duration<double> deadline) {
  std::lock_guard lock(mutex_);
  deadline_ = deadline;
  if (watching_ || !transport)
    return;
  watching_ = true;
  lastHeard_.assign(static_cast<size_t>(transport->size()), std::chrono::steady_clock::now());
  hosts_.resize(lastHeard_.size());
  watchdog_ = std::thread([this] { watch(); });
}

void Cluster::Impl::noteHost(int rank, const std::string& host) {
  std::lock_guard lock(mutex_);
  if (static_cast<size_t>(rank) < hosts_.size())
    hosts_[static_cast<size_t>(rank)] = host;
}

void Cluster::Impl::stopWatching() {
  {
    std::lock_guard lock(mutex_);
    watching_ = false;
  }
  watchChanged_.notify_all();
  if (watchdog_.joinable())
    watchdog_.join();
}

void Cluster::Impl::watch() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex_);
  while (watching_) {
    watchChanged_.wait_for(lock, std::chrono::milliseconds(250));
    const Clock::time_point now = Clock::now();
    for (size_t r = 1; watching_ && r < lastHeard_.size(); ++r) {
      const std::chrono::duration<double> silent = now - lastHeard_[r];
      if (silent < deadline_)
        continue;
      std::fprintf(stderr,
                   "mlgo: MPI rank %zu%s has sent nothing for %.0f s (--rank-deadline; ranks "
                   "send a heartbeat every second): it is stopped, hung or cut off. Ending the "
                   "MPI job; everything written after the last finished step is kept (a trainer's "
                   "run file: continue it with --resume)\n",
                   r, hosts_[r].empty() ? "" : (" on " + hosts_[r]).c_str(), silent.count());
      std::fflush(stderr);
      transport->abort(1);
      watching_ = false;
    }
  }
}

Cluster::Cluster(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Expected<std::shared_ptr<Cluster>> Cluster::joinIfLaunched() {
  LaunchEnvironment launch = launchEnvironment();
  if (!launch.launched || launch.size == 1)
    return std::shared_ptr<Cluster>();
  Expected<std::unique_ptr<Transport>> transport = Transport::initialise();
  if (!transport)
    return makeError("started as " + std::to_string(launch.size) +
                     " MPI ranks, but: " + transport.error().message);
  auto impl = std::make_unique<Impl>();
  impl->transport = transport.take();
  if (impl->transport->size() == 1)
    return std::shared_ptr<Cluster>(); // one rank: MPI is finalised here, nothing to share
  std::shared_ptr<Cluster> cluster(new Cluster(std::move(impl)));
  if (cluster->rank() == 0) {
    Impl* self = cluster->impl_.get();
    self->transport->start(
        [self](int from, std::string message) { self->receive(from, std::move(message)); });
  }
  return cluster;
}

int Cluster::rank() const {
  return impl_->transport->rank();
}
int Cluster::size() const {
  return impl_->transport->size();
}
int Cluster::localSize() const {
  return impl_->transport->localSize();
}
const std::string& Cluster::host() const {
  return impl_->transport->host();
}

ClusterStatistics Cluster::statistics() const {
  ClusterStatistics s;
  s.bytesSent = impl_->transport->bytesSent();
  s.bytesReceived = impl_->transport->bytesReceived();
  s.messagesSent = impl_->transport->messagesSent();
  s.jobsPerRank = impl_->jobsPerRank();
  return s;
}

Cluster::~Cluster() {
  impl_->stopWatching();
  if (rank() == 0)
    for (int r = 1; r < size(); ++r)
      impl_->transport->post(r, cluster::encodeShutdown());
  impl_->transport.reset(); // flushes the outbox, finalises MPI
}

namespace {

// A rank's side: the jobs rank 0 sends, compiled by the rank's own evaluator
// on `workers` threads (as many as rank 0 lets it have at once).
class RankServer {
public:
  RankServer(Cluster& cluster, const FamilyDecoders& decoders)
      : cluster_(cluster), transport_(*cluster.impl().transport), decoders_(decoders) {}
  ~RankServer() { finish(); }

  void handle(int from, std::string message);
  void finish();
  int exitCode() const { return exitCode_; }

private:
  // A job's policy, resolved when its message arrived (later messages may
  // replace the rank's policies before the job runs).
  struct Policy {
    std::unique_ptr<policies::Policy> decoded;
    SerializedPolicy serialized;
    std::string error;
  };
  struct Family {
    uint64_t id = 0, generation = 0;
    std::unique_ptr<DecodedFamily> decoded;
    std::string error;
    std::mutex mutex;
    std::map<uint64_t, std::shared_ptr<Policy>> members;
  };
  struct QueuedJob {
    cluster::Job job;
    std::shared_ptr<Policy> policy;
    std::shared_ptr<Family> family;
  };

  void hello(std::string_view message);
  void policyFile(std::string_view message);
  void family(std::string_view message);
  void job(std::string_view message);
  void work();
  cluster::Result run(QueuedJob& queued);
  std::shared_ptr<Policy> member(Family& family, uint64_t index);
  void fail(const std::string& message);

  Cluster& cluster_;
  Transport& transport_;
  const FamilyDecoders& decoders_;
  std::unique_ptr<Evaluator> evaluator_;
  std::atomic<uint64_t> nextLocalId_{1};
  uint64_t policyGeneration_ = 0;
  std::map<uint64_t, std::shared_ptr<Policy>> policies_;
  std::shared_ptr<Family> family_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<QueuedJob> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  int exitCode_ = 0;
};

void RankServer::fail(const std::string& message) {
  std::fprintf(stderr, "mlgo: MPI rank %d on %s: %s\n", cluster_.rank(), cluster_.host().c_str(),
               message.c_str());
  exitCode_ = 1;
}

void RankServer::handle(int from, std::string message) {
  switch (cluster::kindOf(message).value_or(cluster::Kind::Shutdown)) {
  case cluster::Kind::Hello:
    return hello(message);
  case cluster::Kind::Policy:
    return policyFile(message);
  case cluster::Kind::Family:
    return family(message);
  case cluster::Kind::Job:
    return job(message);
  case cluster::Kind::Shutdown:
    transport_.stop();
    return;
  default:
    fail("unexpected message from rank " + std::to_string(from));
  }
}

void RankServer::hello(std::string_view message) {
  cluster::Ready ready;
  ready.host = cluster_.host();
  Expected<cluster::Hello> hello = cluster::decodeHello(message);
  if (!hello) {
    ready.error = hello.error().message;
  } else {
    EvaluatorOptions& options = hello->options;
    options.workers = workersPerRank(options.workers, cluster_.localSize());
    std::error_code ec;
    if (!std::filesystem::is_directory(options.scratchDirectory, ec))
      options.scratchDirectory = EvaluatorOptions::defaultScratchDirectory();
    Expected<std::unique_ptr<Evaluator>> created = Evaluator::create(options, hello->task);
    if (!created) {
      ready.error = created.error().message;
    } else {
      evaluator_ = created.take();
      ready.ok = true;
      ready.workers = options.workers;
      for (size_t i = 0; i < options.workers; ++i)
        threads_.emplace_back([this] { work(); });
    }
  }
  if (!ready.ok)
    fail(ready.error);
  transport_.post(0, cluster::encode(ready));
}

void RankServer::policyFile(std::string_view message) {
  Expected<cluster::PolicyFile> file = cluster::decodePolicyFile(message);
  if (!file)
    return fail(file.error().message);
  if (file->generation != policyGeneration_) {
    policyGeneration_ = file->generation;
    policies_.clear();
  }
  auto policy = std::make_shared<Policy>();
  Expected<std::unique_ptr<policies::Policy>> decoded =
      policies::policyFromJson(file->json, "policy from rank 0");
  if (decoded)
    policy->decoded = decoded.take();
  else
    policy->error = decoded.error().message;
  policy->serialized = {nextLocalId_++, file->generation, std::move(file->json)};
  policies_[file->id] = std::move(policy);
}

void RankServer::family(std::string_view message) {
  Expected<cluster::Family> sent = cluster::decodeFamily(message);
  if (!sent)
    return fail(sent.error().message);
  auto family = std::make_shared<Family>();
  family->id = sent->id;
  family->generation = sent->generation;
  auto decoder = decoders_.find(sent->kind);
  if (decoder == decoders_.end()) {
    family->error = "no decoder for candidate family \"" + sent->kind + "\" on this rank";
  } else if (Expected<std::unique_ptr<DecodedFamily>> decoded =
                 decoder->second(sent->description)) {
    family->decoded = decoded.take();
  } else {
    family->error = decoded.error().message;
  }
  family_ = std::move(family);
}

void RankServer::job(std::string_view message) {
  Expected<cluster::Job> job = cluster::decodeJob(message);
  if (!job)
    return fail(job.error().message);
  QueuedJob queued{job.take(), nullptr, nullptr};
  if (queued.job.policy == cluster::PolicyRef::Policy) {
    auto known = policies_.find(queued.job.policyId);
    if (known != policies_.end())
      queued.policy = known->second;
  } else if (queued.job.policy == cluster::PolicyRef::FamilyMember && family_ &&
             family_->id == queued.job.policyId) {
    queued.family = family_;
  }
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(queued));
  }
  queued_.notify_one();
}

std::shared_ptr<RankServer::Policy> RankServer::member(Family& family, uint64_t index) {
  std::lock_guard lock(family.mutex);
  std::shared_ptr<Policy>& known = family.members[index];
  if (known)
    return known;
  known = std::make_shared<Policy>();
  if (!family.decoded) {
    known->error = family.error;
  } else if (index >= family.decoded->size()) {
    known->error = "candidate " + std::to_string(index) + " is not in the family";
  } else {
    known->decoded = family.decoded->candidate(index);
    Expected<std::string> json = policies::policyToJson(*known->decoded);
    if (json)
      known->serialized = {nextLocalId_++, family.generation, json.take()};
    else
      known->error = json.error().message;
  }
  return known;
}

cluster::Result RankServer::run(QueuedJob& queued) {
  cluster::Result result;
  const cluster::Job& job = queued.job;
  result.jobId = job.id;
  std::shared_ptr<Policy> policy = queued.policy;
  if (queued.family)
    policy = member(*queued.family, job.member);
  if (job.policy != cluster::PolicyRef::None && (!policy || !policy->decoded)) {
    result.result.status = JobStatus::SetupFailed;
    result.result.message = "MPI rank " + std::to_string(cluster_.rank()) + ": module \"" +
                            job.module.name + "\": the job's policy is unknown here" +
                            (policy ? ": " + policy->error : std::string());
    return result;
  }
  JobSpec spec{.module = &job.module,
               .policy = policy ? policy->decoded.get() : nullptr,
               .mode = job.mode,
               .rngKey = job.rngKey,
               .recordTrajectory = job.recordTrajectory,
               .recordDefaults = job.recordDefaults,
               .allowDecisionCache = job.allowDecisionCache};
  result.result = evaluator_->compile(spec, policy ? &policy->serialized : nullptr);
  EvaluatorStatistics s = evaluator_->statistics();
  result.counters.jobs = s.inprocessJobs + s.clangJobs;
  result.counters.cacheLookups = s.cacheLookups;
  result.counters.cacheHits = s.cacheHits;
  result.counters.cacheSecondsSaved = s.cacheSecondsSaved;
  result.counters.workersStarted = s.workersStarted;
  return result;
}

void RankServer::work() {
  for (;;) {
    QueuedJob queued;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      queued = std::move(queue_.front());
      queue_.pop_front();
    }
    transport_.post(0, cluster::encode(run(queued)));
  }
}

void RankServer::finish() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& thread : threads_)
    thread.join();
  threads_.clear();
}

} // namespace

int Cluster::serve(const FamilyDecoders& decoders) {
  RankServer server(*this, decoders);
  // Heartbeats for rank 0's watch (Impl::watchRanks), from a thread of
  // their own: busy compile threads must not delay them.
  std::mutex mutex;
  std::condition_variable stopped;
  bool serving = true;
  std::thread heartbeat([&] {
    std::unique_lock lock(mutex);
    while (!stopped.wait_for(lock, std::chrono::seconds(1), [&] { return !serving; }))
      impl_->transport->post(0, cluster::encodeHeartbeat());
  });
  auto stopHeartbeats = [&] {
    {
      std::lock_guard lock(mutex);
      serving = false;
    }
    stopped.notify_all();
  };
  impl_->transport->run([&](int from, std::string message) {
    if (cluster::kindOf(message) == cluster::Kind::Shutdown)
      stopHeartbeats(); // nothing more for rank 0, which is finalising
    server.handle(from, std::move(message));
  });
  stopHeartbeats();
  heartbeat.join();
  server.finish();
  return server.exitCode();
}

} // namespace mlgo::evaluators
