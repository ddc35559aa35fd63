// A module's features for a module-level policy (the pass-pipeline task):
// Autophase-like counts of the module's IR as the optimisation pipeline
// receives it (functions, blocks, instructions by kind, the control flow's
// shape), and the vector a policy reads, made of them.
//
// The counts are facts the compiler side computes (inprocess/src/
// ModuleFeatures.h, the same code in the worker and the pass plugin); the
// vector is the model's business and lives here: sizes as log1p, kinds as
// shares of the module's instructions, so that a policy learned on one code
// base reads another's modules on the same scale.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::policies {

enum class ModuleCount : size_t {
  Functions,    // defined
  Declarations, // declared only
  Globals,      // global variables
  Blocks,
  Instructions,
  MaxFunctionInstructions, // the largest function's
  InternalFunctions,       // defined with local linkage
  LinkOnceFunctions,       // linkonce/weak (C++ inline functions, templates)
  SingleCallFunctions,     // local functions called exactly once, directly
  Loads,
  Stores,
  Allocas,
  GetElementPtrs,
  DirectCallsToDefined, // calls to functions defined in the module
  CallsToDeclared,      // calls to declared functions (not intrinsics)
  IndirectCalls,
  Invokes,
  MemoryIntrinsics, // memcpy, memmove, memset
  OtherIntrinsics,
  Returns,
  ConditionalBranches,
  UnconditionalBranches,
  Switches,
  SwitchCases,
  Unreachables,
  Phis,
  PhiIncoming, // incoming values over all phis
  Selects,
  IntCompares,
  FloatCompares,
  IntAddSub,
  IntMul,
  IntDivRem,
  Shifts,
  Logic, // and, or, xor
  FloatArithmetic,
  IntCasts, // trunc, zext, sext
  OtherCasts,
  Aggregates, // extract/insert value and element, shufflevector
  LandingPads,
  BlocksOneSuccessor,
  BlocksTwoSuccessors,
  BlocksManySuccessors,   // more than two
  BlocksOnePredecessor,   // predecessor edges, as LLVM's pred_size counts them
  BlocksManyPredecessors, // two or more
  BlocksWithPhis,
  ConstantIntOperands,
  ConstantZeroOperands,
  Count_
};
constexpr size_t moduleCountSize = static_cast<size_t>(ModuleCount::Count_);
using ModuleCounts = std::array<uint64_t, moduleCountSize>;

// "functions", "max_function_instructions", … in enum order (a TSV's header).
const std::vector<std::string>& moduleCountNames();
// The vector a policy reads (moduleFeatureNames() order) and its names.
std::vector<double> moduleFeatureVector(const ModuleCounts& counts);
const std::vector<std::string>& moduleFeatureNames();

// The optional IR2Vec part of the features: the module's IR2Vec embedding
// (the symbolic function vectors of its defined functions summed, with the
// policy's vocabulary) divided by its instruction count, so that it says
// what the code is made of and the counts say how much of it there is.
// Its names: "ir2vec_0" … "ir2vec_<dimension - 1>".
std::vector<std::string> moduleEmbeddingNames(size_t dimension);
// moduleFeatureNames(), then moduleEmbeddingNames(dimension).
std::vector<std::string> moduleFeatureNames(size_t embeddingDimension);

} // namespace mlgo::policies
