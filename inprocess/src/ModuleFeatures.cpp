#include "ModuleFeatures.h"

#include <llvm/Analysis/IR2Vec.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <map>
#include <string>

namespace mlgo::inprocess {

namespace {

using policies::ModuleCount;

struct Counter {
  policies::ModuleCounts counts{};
  void add(ModuleCount which, uint64_t n = 1) { counts[static_cast<size_t>(which)] += n; }

  void countCall(const llvm::CallBase& call) {
    if (llvm::isa<llvm::InvokeInst>(call))
      add(ModuleCount::Invokes);
    const llvm::Function* callee = call.getCalledFunction();
    if (!callee)
      add(ModuleCount::IndirectCalls);
    else if (llvm::isa<llvm::MemIntrinsic>(call))
      add(ModuleCount::MemoryIntrinsics);
    else if (callee->isIntrinsic())
      add(ModuleCount::OtherIntrinsics);
    else if (callee->isDeclaration())
      add(ModuleCount::CallsToDeclared);
    else
      add(ModuleCount::DirectCallsToDefined);
  }

  void countTerminator(const llvm::Instruction& terminator) {
    if (const auto* branch = llvm::dyn_cast<llvm::BranchInst>(&terminator))
      add(branch->isConditional() ? ModuleCount::ConditionalBranches
                                  : ModuleCount::UnconditionalBranches);
    else if (const auto* select = llvm::dyn_cast<llvm::SwitchInst>(&terminator)) {
      add(ModuleCount::Switches);
      add(ModuleCount::SwitchCases, select->getNumCases());
    } else if (llvm::isa<llvm::ReturnInst>(terminator))
      add(ModuleCount::Returns);
    else if (llvm::isa<llvm::UnreachableInst>(terminator))
      add(ModuleCount::Unreachables);
  }

  void countInstruction(const llvm::Instruction& instruction) {
    add(ModuleCount::Instructions);
    for (const llvm::Value* operand : instruction.operands())
      if (const auto* constant = llvm::dyn_cast<llvm::ConstantInt>(operand)) {
        add(ModuleCount::ConstantIntOperands);
        if (constant->isZero())
          add(ModuleCount::ConstantZeroOperands);
      }
    if (instruction.isTerminator())
      countTerminator(instruction);
    if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction))
      return countCall(*call);
    switch (instruction.getOpcode()) {
    case llvm::Instruction::Load:
      return add(ModuleCount::Loads);
    case llvm::Instruction::Store:
      return add(ModuleCount::Stores);
    case llvm::Instruction::Alloca:
      return add(ModuleCount::Allocas);
    case llvm::Instruction::GetElementPtr:
      return add(ModuleCount::GetElementPtrs);
    case llvm::Instruction::PHI:
      add(ModuleCount::PhiIncoming, llvm::cast<llvm::PHINode>(instruction).getNumIncomingValues());
      return add(ModuleCount::Phis);
    case llvm::Instruction::Select:
      return add(ModuleCount::Selects);
    case llvm::Instruction::ICmp:
      return add(ModuleCount::IntCompares);
    case llvm::Instruction::FCmp:
      return add(ModuleCount::FloatCompares);
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub:
      return add(ModuleCount::IntAddSub);
    case llvm::Instruction::Mul:
      return add(ModuleCount::IntMul);
    case llvm::Instruction::UDiv:
    case llvm::Instruction::SDiv:
    case llvm::Instruction::URem:
    case llvm::Instruction::SRem:
      return add(ModuleCount::IntDivRem);
    case llvm::Instruction::Shl:
    case llvm::Instruction::LShr:
    case llvm::Instruction::AShr:
      return add(ModuleCount::Shifts);
    case llvm::Instruction::And:
    case llvm::Instruction::Or:
    case llvm::Instruction::Xor:
      return add(ModuleCount::Logic);
    case llvm::Instruction::FAdd:
    case llvm::Instruction::FSub:
    case llvm::Instruction::FMul:
    case llvm::Instruction::FDiv:
    case llvm::Instruction::FRem:
    case llvm::Instruction::FNeg:
      return add(ModuleCount::FloatArithmetic);
    case llvm::Instruction::Trunc:
    case llvm::Instruction::ZExt:
    case llvm::Instruction::SExt:
      return add(ModuleCount::IntCasts);
    case llvm::Instruction::ExtractValue:
    case llvm::Instruction::InsertValue:
    case llvm::Instruction::ExtractElement:
    case llvm::Instruction::InsertElement:
    case llvm::Instruction::ShuffleVector:
      return add(ModuleCount::Aggregates);
    case llvm::Instruction::LandingPad:
      return add(ModuleCount::LandingPads);
    default:
      if (llvm::isa<llvm::CastInst>(instruction))
        add(ModuleCount::OtherCasts);
    }
  }

  void countBlock(const llvm::BasicBlock& block) {
    add(ModuleCount::Blocks);
    const unsigned successors = llvm::succ_size(&block);
    if (successors == 1)
      add(ModuleCount::BlocksOneSuccessor);
    else if (successors == 2)
      add(ModuleCount::BlocksTwoSuccessors);
    else if (successors > 2)
      add(ModuleCount::BlocksManySuccessors);
    const size_t predecessors = llvm::pred_size(&block);
    if (predecessors == 1)
      add(ModuleCount::BlocksOnePredecessor);
    else if (predecessors >= 2)
      add(ModuleCount::BlocksManyPredecessors);
    if (!block.phis().empty())
      add(ModuleCount::BlocksWithPhis);
    for (const llvm::Instruction& instruction : block)
      countInstruction(instruction);
  }

  // A local function whose one use is a direct call of it.
  static bool calledOnce(const llvm::Function& function) {
    if (!function.hasLocalLinkage() || !function.hasOneUse())
      return false;
    const auto* call = llvm::dyn_cast<llvm::CallBase>(*function.user_begin());
    return call && call->getCalledOperand() == &function;
  }

  void countFunction(const llvm::Function& function) {
    if (function.isDeclaration()) {
      if (!function.isIntrinsic())
        add(ModuleCount::Declarations);
      return;
    }
    add(ModuleCount::Functions);
    if (function.hasLocalLinkage())
      add(ModuleCount::InternalFunctions);
    if (function.hasLinkOnceLinkage() || function.hasWeakLinkage())
      add(ModuleCount::LinkOnceFunctions);
    if (calledOnce(function))
      add(ModuleCount::SingleCallFunctions);
    const uint64_t before = counts[static_cast<size_t>(ModuleCount::Instructions)];
    for (const llvm::BasicBlock& block : function)
      countBlock(block);
    uint64_t& largest = counts[static_cast<size_t>(ModuleCount::MaxFunctionInstructions)];
    largest = std::max(largest, counts[static_cast<size_t>(ModuleCount::Instructions)] - before);
  }
};

} // namespace

policies::ModuleCounts countModule(const llvm::Module& module) {
  Counter counter;
  for (const llvm::Function& function : module)
    counter.countFunction(function);
  counter.add(ModuleCount::Globals, module.global_size());
  return counter.counts;
}

struct ModuleEmbedder::LlvmVocabulary {
  llvm::ir2vec::Vocabulary llvm;
};

ModuleEmbedder::ModuleEmbedder(const policies::Ir2VecVocabulary& vocabulary)
    : dimension_(policies::ir2VecDimension(vocabulary)) {
  using llvm::ir2vec::Vocabulary;
  std::map<std::string, const std::vector<double>*, std::less<>> byName;
  for (size_t i = 0; i < vocabulary.entities.size(); ++i)
    byName[vocabulary.entities[i]] = &vocabulary.embeddings[i];
  // LLVM's layout: its sections in order, each entity at its canonical
  // position (Vocabulary::getStringKey names it).
  const unsigned sizes[] = {Vocabulary::MaxOpcodes, Vocabulary::MaxCanonicalTypeIDs,
                            Vocabulary::MaxOperandKinds, Vocabulary::MaxPredicateKinds};
  std::vector<std::vector<llvm::ir2vec::Embedding>> sections;
  unsigned position = 0;
  for (unsigned size : sizes) {
    std::vector<llvm::ir2vec::Embedding>& section = sections.emplace_back();
    for (unsigned i = 0; i < size; ++i, ++position) {
      const auto found = byName.find(Vocabulary::getStringKey(position).str());
      section.push_back(found == byName.end() ? llvm::ir2vec::Embedding(dimension_, 0.0)
                                              : llvm::ir2vec::Embedding(*found->second));
    }
  }
  vocabulary_ = std::make_unique<LlvmVocabulary>(
      LlvmVocabulary{Vocabulary(llvm::ir2vec::VocabStorage(std::move(sections)))});
}

ModuleEmbedder::~ModuleEmbedder() = default;

std::vector<double> ModuleEmbedder::embed(const llvm::Module& module) const {
  std::vector<double> sum(dimension_, 0.0);
  size_t instructions = 0;
  for (const llvm::Function& function : module) {
    if (function.isDeclaration())
      continue;
    instructions += function.getInstructionCount();
    std::unique_ptr<llvm::ir2vec::Embedder> embedder =
        llvm::ir2vec::Embedder::create(llvm::IR2VecKind::Symbolic, function, vocabulary_->llvm);
    const llvm::ir2vec::Embedding vector = embedder->getFunctionVector();
    for (size_t i = 0; i < dimension_ && i < vector.size(); ++i)
      sum[i] += vector[i];
  }
  if (instructions > 0)
    for (double& x : sum)
      x /= static_cast<double>(instructions);
  return sum;
}

std::vector<double> moduleFeatures(const llvm::Module& module, const policies::ModuleCounts& counts,
                                   const ModuleEmbedder* embedder) {
  std::vector<double> features = policies::moduleFeatureVector(counts);
  if (embedder)
    for (double x : embedder->embed(module))
      features.push_back(x);
  return features;
}

} // namespace mlgo::inprocess
