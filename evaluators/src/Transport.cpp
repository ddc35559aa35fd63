#include "Transport.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>

#if MLGO_WITH_MPI
#include <mpi.h>
#endif

namespace mlgo::evaluators {

namespace {

int environmentInt(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : -1;
}

} // namespace

LaunchEnvironment launchEnvironment() {
  // OpenMPI's mpirun, PMIx and PMI (MPICH, Slurm's srun --mpi=...).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    int size = environmentInt(name);
    if (size > 0)
      return {true, size};
  }
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK"))
    return {true, 0}; // launched; the size comes from MPI itself
  return {};
}

#if MLGO_WITH_MPI

struct Transport::Mpi {
  static constexpr int kTag = 7;
  struct Send {
    MPI_Request request;
    std::string bytes;
  };
  std::deque<Send> sends; // deque: requests and buffers never move
};

Expected<std::unique_ptr<Transport>> Transport::initialise() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return makeError("MPI_Init_thread failed");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    return makeError("this MPI cannot be called from more than one thread "
                     "(MPI_THREAD_SERIALIZED); mlgo-es needs it");
  }
  std::unique_ptr<Transport> transport(new Transport());
  transport->mpi_ = std::make_unique<Mpi>();
  MPI_Comm_rank(MPI_COMM_WORLD, &transport->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &transport->size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &transport->localSize_);
  MPI_Comm_free(&node);
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  transport->host_.assign(name, static_cast<size_t>(length));
  return transport;
}

bool Transport::pump(const Deliver& deliver) {
  if (int code = abortCode_.load(); code >= 0)
    MPI_Abort(MPI_COMM_WORLD, code);
  bool active = false;
  std::vector<std::pair<int, std::string>> posted;
  {
    std::lock_guard lock(mutex_);
    posted.swap(outbox_);
  }
  for (auto& [to, bytes] : posted) {
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      std::fprintf(stderr, "mlgo: a message of %zu bytes for rank %d is larger than MPI sends\n",
                   bytes.size(), to);
      std::abort();
    }
    Mpi::Send& send = mpi_->sends.emplace_back();
    send.bytes = std::move(bytes);
    MPI_Isend(send.bytes.data(), static_cast<int>(send.bytes.size()), MPI_BYTE, to, Mpi::kTag,
              MPI_COMM_WORLD, &send.request);
    bytesSent_ += send.bytes.size();
    ++messagesSent_;
    active = true;
  }
  int arrived = 0;
  MPI_Message message;
  MPI_Status status;
  MPI_Improbe(MPI_ANY_SOURCE, Mpi::kTag, MPI_COMM_WORLD, &arrived, &message, &status);
  if (arrived) {
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::string bytes(static_cast<size_t>(count), '\0');
    MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    bytesReceived_ += bytes.size();
    deliver(status.MPI_SOURCE, std::move(bytes));
    active = true;
  }
  // Sends finish in order often enough: retire the finished head.
  while (!mpi_->sends.empty()) {
    int done = 0;
    MPI_Test(&mpi_->sends.front().request, &done, MPI_STATUS_IGNORE);
    if (!done)
      break;
    mpi_->sends.pop_front();
  }
  return active;
}

void Transport::loop(const Deliver& deliver) {
  using namespace std::chrono;
  // Idle: sleep, from 20 µs doubling to 1 ms (compiles take 10 ms to
  // seconds), woken at once by a post.
  microseconds idle{20};
  for (;;) {
    if (pump(deliver)) {
      idle = microseconds{20};
      continue;
    }
    std::unique_lock lock(mutex_);
    if (stopping_ && outbox_.empty() && mpi_->sends.empty())
      return;
    if (outbox_.empty())
      wake_.wait_for(lock, idle);
    idle = std::min(idle * 2, microseconds{1000});
  }
}

Transport::~Transport() {
  stop();
  if (thread_.joinable())
    thread_.join();
  MPI_Finalize();
}

#else // without MPI: initialise() refuses; nothing else is ever reached.

struct Transport::Mpi {};

Expected<std::unique_ptr<Transport>> Transport::initialise() {
  return makeError("this build of mlgo-es has no MPI (configure with -DMLGO_WITH_MPI=ON after "
                   "scripts/setup.sh installs libopenmpi-dev)");
}

bool Transport::pump(const Deliver&) {
  if (int code = abortCode_.load(); code >= 0)
    std::_Exit(code);
  return false;
}

void Transport::loop(const Deliver&) {}

Transport::~Transport() {
  stop();
  if (thread_.joinable())
    thread_.join();
}

#endif

void Transport::post(int to, std::string message) {
  {
    std::lock_guard lock(mutex_);
    outbox_.emplace_back(to, std::move(message));
  }
  wake_.notify_one();
}

void Transport::start(Deliver deliver) {
  thread_ = std::thread([this, deliver = std::move(deliver)] { loop(deliver); });
}

void Transport::run(Deliver deliver) {
  loop(deliver);
}

void Transport::abort(int exitCode) {
  abortCode_.store(std::max(0, exitCode));
  wake_.notify_one();
}

void Transport::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
}

} // namespace mlgo::evaluators
