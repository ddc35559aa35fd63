// A module's counts for module-level pipeline policies, on IR written here
// so that every count is known by hand, and the vector a policy reads.
#include "ModuleFeatures.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::inprocess {
namespace {

using policies::ModuleCount;

constexpr const char* source = R"(
@table = internal global [4 x i32] zeroinitializer
@name = global i32 7
declare i32 @puts(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

define internal i32 @helper(i32 %x) {
entry:
  %y = mul i32 %x, 3
  ret i32 %y
}

define i32 @pick(i32 %k, ptr %p) {
entry:
  %slot = alloca i32
  store i32 0, ptr %slot
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 16, i1 false)
  switch i32 %k, label %other [ i32 0, label %zero
                                i32 1, label %one
                                i32 2, label %one ]
zero:
  %h = call i32 @helper(i32 %k)
  br label %done
one:
  %c = icmp sgt i32 %k, 1
  br i1 %c, label %done, label %other
other:
  %q = getelementptr i32, ptr %p, i64 1
  %v = load i32, ptr %q
  %r = call i32 @puts(ptr %p)
  br label %done
done:
  %result = phi i32 [ %h, %zero ], [ 1, %one ], [ %v, %other ]
  ret i32 %result
}
)";

uint64_t at(const policies::ModuleCounts& counts, ModuleCount which) {
  return counts[static_cast<size_t>(which)];
}

TEST(ModuleFeatures, CountsWhatTheModuleHas) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(source, error, context);
  ASSERT_TRUE(module) << error.getMessage().str();
  const policies::ModuleCounts counts = countModule(*module);
  EXPECT_EQ(at(counts, ModuleCount::Functions), 2u);
  EXPECT_EQ(at(counts, ModuleCount::Declarations), 1u); // puts; the intrinsic is not counted
  EXPECT_EQ(at(counts, ModuleCount::Globals), 2u);
  EXPECT_EQ(at(counts, ModuleCount::Blocks), 6u);
  EXPECT_EQ(at(counts, ModuleCount::Instructions), 16u); // helper 2, pick 14
  EXPECT_EQ(at(counts, ModuleCount::MaxFunctionInstructions), 14u);
  EXPECT_EQ(at(counts, ModuleCount::InternalFunctions), 1u);
  EXPECT_EQ(at(counts, ModuleCount::SingleCallFunctions), 1u); // helper
  EXPECT_EQ(at(counts, ModuleCount::DirectCallsToDefined), 1u);
  EXPECT_EQ(at(counts, ModuleCount::CallsToDeclared), 1u);
  EXPECT_EQ(at(counts, ModuleCount::MemoryIntrinsics), 1u);
  EXPECT_EQ(at(counts, ModuleCount::Switches), 1u);
  EXPECT_EQ(at(counts, ModuleCount::SwitchCases), 3u);
  EXPECT_EQ(at(counts, ModuleCount::ConditionalBranches), 1u);
  EXPECT_EQ(at(counts, ModuleCount::UnconditionalBranches), 2u);
  EXPECT_EQ(at(counts, ModuleCount::Returns), 2u);
  EXPECT_EQ(at(counts, ModuleCount::Phis), 1u);
  EXPECT_EQ(at(counts, ModuleCount::PhiIncoming), 3u);
  EXPECT_EQ(at(counts, ModuleCount::Loads), 1u);
  EXPECT_EQ(at(counts, ModuleCount::Stores), 1u);
  EXPECT_EQ(at(counts, ModuleCount::Allocas), 1u);
  EXPECT_EQ(at(counts, ModuleCount::GetElementPtrs), 1u);
  EXPECT_EQ(at(counts, ModuleCount::IntMul), 1u);
  EXPECT_EQ(at(counts, ModuleCount::IntCompares), 1u);
  // Successors: pick's entry 4 (switch), one 2, zero/other 1 each.
  EXPECT_EQ(at(counts, ModuleCount::BlocksManySuccessors), 1u);
  EXPECT_EQ(at(counts, ModuleCount::BlocksTwoSuccessors), 1u);
  EXPECT_EQ(at(counts, ModuleCount::BlocksOneSuccessor), 2u);
  // Predecessor edges (LLVM's pred_size): zero 1, one 2 (two switch cases),
  // other 2, done 3.
  EXPECT_EQ(at(counts, ModuleCount::BlocksOnePredecessor), 1u);
  EXPECT_EQ(at(counts, ModuleCount::BlocksManyPredecessors), 3u);
  EXPECT_EQ(at(counts, ModuleCount::BlocksWithPhis), 1u);
}

TEST(ModuleFeatures, TheVectorIsNamedAndScaled) {
  policies::ModuleCounts counts{};
  EXPECT_EQ(policies::moduleCountNames().size(), counts.size());
  counts[static_cast<size_t>(ModuleCount::Instructions)] = 100;
  counts[static_cast<size_t>(ModuleCount::Loads)] = 25;
  counts[static_cast<size_t>(ModuleCount::Functions)] = 4;
  counts[static_cast<size_t>(ModuleCount::InternalFunctions)] = 1;
  const std::vector<double> vector = policies::moduleFeatureVector(counts);
  const std::vector<std::string>& names = policies::moduleFeatureNames();
  ASSERT_EQ(vector.size(), names.size());
  auto feature = [&](const std::string& name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name)
        return vector[i];
    ADD_FAILURE() << "no feature " << name;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(feature("log_instructions"), std::log1p(100.0));
  EXPECT_DOUBLE_EQ(feature("loads_share"), 0.25);
  EXPECT_DOUBLE_EQ(feature("internal_functions_share"), 0.25);
  EXPECT_DOUBLE_EQ(feature("phi_incoming_per_phi"), 0); // no phi: no division by zero
  for (double value : policies::moduleFeatureVector(policies::ModuleCounts{}))
    EXPECT_TRUE(std::isfinite(value));
}

} // namespace
} // namespace mlgo::inprocess
