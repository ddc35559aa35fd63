// Trainers' candidates as families (evaluators/Cluster.h): what an MPI rank
// needs to rebuild every candidate of a step from one description. ES sends
// its population (centre, per-coordinate scale, noise seed and step,
// sampling) and the policy's structure once per rank and step; a rank
// regenerates candidate i's noise itself (es::GaussianNoise is a pure
// function of integers), bit for bit the trainer's.
#pragma once

#include "mlgo/es/Perturbations.h"
#include "mlgo/evaluators/Cluster.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/support/Expected.h"

#include <string_view>

namespace mlgo::training {

inline constexpr std::string_view kEsPopulationFamily = "es-population";

// Candidate i of the family is policy.withParameters(population.candidate(i)).
Expected<evaluators::CandidateFamily> describePopulation(const es::Population& population,
                                                         const policies::MlpPolicy& policy);

// Every family a trainer may send, for Cluster::serve.
evaluators::FamilyDecoders candidateFamilyDecoders();

} // namespace mlgo::training
