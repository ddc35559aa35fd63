// Training across machines: the MPI job a tool was started in (mpirun, srun).
// Rank 0 runs the trainer; its evaluator's remote backend (RemoteBackend)
// spreads the compilations over every rank's local worker pool, its own
// included. Every other rank only serves: it compiles the jobs rank 0 sends
// and answers with sizes, statuses, code hashes and trajectories, never
// object files. MPI stays inside evaluators/src: this header has none of it.
//
// Failure model: a compiler crash or hang on any rank is a job failure as on
// one machine. A rank that dies ends the whole MPI job (MPI's semantics; the
// launcher names the rank); the run file holds every finished step, and
// --resume, with or without MPI, continues exactly.
#pragma once

#include "mlgo/policies/Policy.h"
#include "mlgo/support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::evaluators {

// Candidates a rank can rebuild from one shared description and the
// candidate's index: ES's step (centre, per-coordinate scale, noise seed and
// step; candidate i = centre ± scale ⊙ ε(seed, step, direction)). The
// evaluator sends the description once per rank and evaluation instead of
// every candidate's policy file; the decoder registered under `kind` on the
// ranks rebuilds candidate i bit for bit. Opaque to the evaluator.
struct CandidateFamily {
  std::string kind;
  std::string description;
};

// A family's description decoded on a rank: candidate i on demand.
class DecodedFamily {
public:
  virtual ~DecodedFamily() = default;
  virtual size_t size() const = 0;
  virtual std::unique_ptr<policies::Policy> candidate(size_t index) const = 0;
};

using FamilyDecoder =
    std::function<Expected<std::unique_ptr<DecodedFamily>>(std::string_view description)>;
using FamilyDecoders = std::map<std::string, FamilyDecoder, std::less<>>;

// What crossed the network (rank 0's view) and where the jobs went.
struct ClusterStatistics {
  uint64_t bytesSent = 0;
  uint64_t bytesReceived = 0;
  uint64_t messagesSent = 0;
  std::vector<size_t> jobsPerRank; // rank 0's own compiles first
};

class Cluster {
public:
  // Joins the MPI job this process was started in, recognised by the
  // launcher's environment (OpenMPI, PMI/PMIx, Slurm with MPI); null when the
  // process runs alone or as the only rank. An error when started as several
  // ranks by a build without MPI (MLGO_WITH_MPI off).
  static Expected<std::shared_ptr<Cluster>> joinIfLaunched();

  int rank() const;
  int size() const;
  // Ranks of this job on this node (they share its cores).
  int localSize() const;
  const std::string& host() const;

  // Ranks other than 0: compile the jobs rank 0 sends, with family decoders
  // for compact candidates, until rank 0 ends the job. Returns the exit code.
  int serve(const FamilyDecoders& decoders);

  ClusterStatistics statistics() const;

  // Rank 0 tells the other ranks to stop; every rank finalises MPI.
  ~Cluster();

  class Impl;
  Impl& impl() { return *impl_; }

private:
  explicit Cluster(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The compile slots a rank offers when the user gave none (workers = 0): the
// node's hardware threads shared by the ranks on it, at least one.
size_t workersPerRank(size_t requested, int ranksOnNode);

} // namespace mlgo::evaluators
