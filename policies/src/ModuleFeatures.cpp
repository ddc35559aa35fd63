#include "mlgo/policies/ModuleFeatures.h"

#include <cmath>

namespace mlgo::policies {

const std::vector<std::string>& moduleCountNames() {
  static const std::vector<std::string> names{
      "functions",
      "declarations",
      "globals",
      "blocks",
      "instructions",
      "max_function_instructions",
      "internal_functions",
      "linkonce_functions",
      "single_call_functions",
      "loads",
      "stores",
      "allocas",
      "getelementptrs",
      "direct_calls_to_defined",
      "calls_to_declared",
      "indirect_calls",
      "invokes",
      "memory_intrinsics",
      "other_intrinsics",
      "returns",
      "conditional_branches",
      "unconditional_branches",
      "switches",
      "switch_cases",
      "unreachables",
      "phis",
      "phi_incoming",
      "selects",
      "int_compares",
      "float_compares",
      "int_add_sub",
      "int_mul",
      "int_div_rem",
      "shifts",
      "logic",
      "float_arithmetic",
      "int_casts",
      "other_casts",
      "aggregates",
      "landing_pads",
      "blocks_one_successor",
      "blocks_two_successors",
      "blocks_many_successors",
      "blocks_one_predecessor",
      "blocks_many_predecessors",
      "blocks_with_phis",
      "constant_int_operands",
      "constant_zero_operands",
  };
  static_assert(moduleCountSize == 48, "a count without a name");
  return names;
}

namespace {

using C = ModuleCount;

// Instruction kinds, read as shares of the module's instructions.
constexpr C instructionKinds[] = {C::Loads,
                                  C::Stores,
                                  C::Allocas,
                                  C::GetElementPtrs,
                                  C::DirectCallsToDefined,
                                  C::CallsToDeclared,
                                  C::IndirectCalls,
                                  C::Invokes,
                                  C::MemoryIntrinsics,
                                  C::OtherIntrinsics,
                                  C::Returns,
                                  C::ConditionalBranches,
                                  C::UnconditionalBranches,
                                  C::Switches,
                                  C::Unreachables,
                                  C::Phis,
                                  C::Selects,
                                  C::IntCompares,
                                  C::FloatCompares,
                                  C::IntAddSub,
                                  C::IntMul,
                                  C::IntDivRem,
                                  C::Shifts,
                                  C::Logic,
                                  C::FloatArithmetic,
                                  C::IntCasts,
                                  C::OtherCasts,
                                  C::Aggregates,
                                  C::LandingPads,
                                  C::ConstantIntOperands,
                                  C::ConstantZeroOperands};
// Function kinds, as shares of the defined functions.
constexpr C functionKinds[] = {C::InternalFunctions, C::LinkOnceFunctions, C::SingleCallFunctions};
// Block kinds, as shares of the blocks.
constexpr C blockKinds[] = {C::BlocksOneSuccessor,     C::BlocksTwoSuccessors,
                            C::BlocksManySuccessors,   C::BlocksOnePredecessor,
                            C::BlocksManyPredecessors, C::BlocksWithPhis};

double count(const ModuleCounts& counts, C which) {
  return static_cast<double>(counts[static_cast<size_t>(which)]);
}
double share(double part, double whole) {
  return whole > 0 ? part / whole : 0;
}

} // namespace

std::vector<double> moduleFeatureVector(const ModuleCounts& counts) {
  const double instructions = count(counts, C::Instructions);
  const double functions = count(counts, C::Functions);
  const double blocks = count(counts, C::Blocks);
  std::vector<double> vector{
      std::log1p(instructions),
      std::log1p(functions),
      std::log1p(count(counts, C::Declarations)),
      std::log1p(count(counts, C::Globals)),
      std::log1p(count(counts, C::MaxFunctionInstructions)),
      std::log1p(share(blocks, functions)),
      std::log1p(share(instructions, blocks)),
      share(count(counts, C::MaxFunctionInstructions), instructions),
      share(count(counts, C::PhiIncoming), count(counts, C::Phis)),
      std::log1p(share(count(counts, C::SwitchCases), count(counts, C::Switches))),
  };
  for (C kind : instructionKinds)
    vector.push_back(share(count(counts, kind), instructions));
  for (C kind : functionKinds)
    vector.push_back(share(count(counts, kind), functions));
  for (C kind : blockKinds)
    vector.push_back(share(count(counts, kind), blocks));
  return vector;
}

const std::vector<std::string>& moduleFeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result{"log_instructions",
                                    "log_functions",
                                    "log_declarations",
                                    "log_globals",
                                    "log_max_function_instructions",
                                    "log_blocks_per_function",
                                    "log_instructions_per_block",
                                    "largest_function_share",
                                    "phi_incoming_per_phi",
                                    "log_cases_per_switch"};
    const std::vector<std::string>& counts = moduleCountNames();
    for (C kind : instructionKinds)
      result.push_back(counts[static_cast<size_t>(kind)] + "_share");
    for (C kind : functionKinds)
      result.push_back(counts[static_cast<size_t>(kind)] + "_share");
    for (C kind : blockKinds)
      result.push_back(counts[static_cast<size_t>(kind)] + "_share");
    return result;
  }();
  return names;
}

std::vector<std::string> moduleEmbeddingNames(size_t dimension) {
  std::vector<std::string> names;
  for (size_t i = 0; i < dimension; ++i)
    names.push_back("ir2vec_" + std::to_string(i));
  return names;
}

std::vector<std::string> moduleFeatureNames(size_t embeddingDimension) {
  std::vector<std::string> names = moduleFeatureNames();
  for (std::string& name : moduleEmbeddingNames(embeddingDimension))
    names.push_back(std::move(name));
  return names;
}

} // namespace mlgo::policies
