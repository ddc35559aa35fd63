// Incremental evaluation on real code (clang-22): the decision search with
// the in-process workers forking each tried decision from one compile of its
// module and reusing unchanged functions' code gives exactly the search that
// compiles every tried decision in full (same decisions tried, same sizes,
// same flips), and verification compiles every incremental answer in full
// and finds it identical.
#include "TestSupport.h"
#include "mlgo/corpus/Extract.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/CalleeConsistent.h"
#include "mlgo/training/DecisionSearch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlgo::training {
namespace {

class IncrementalSearch : public ::testing::TestWithParam<const char*> {
protected:
  struct Run {
    std::optional<DecisionSearchResult> result;
    // Per module, in order: (position, size with the flip, code hash, kept).
    std::map<size_t, std::vector<std::tuple<size_t, uint64_t, uint64_t, bool>>> tried;
    evaluators::EvaluatorStatistics statistics;
    size_t triedCommitted = 0; // tried at a call a commitment answers
  };

  void SetUp() override {
    const std::string name = GetParam();
    Expected<corpus::Corpus> loaded =
        name == "cxx-methods"    ? methodsCorpus()
        : name == "c-inline-asm" ? inlineAsmCorpus()
                                 : corpus::Corpus::load(mlgo::testing::realCorpusDirectory(name));
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus_.emplace(loaded.take());
    for (const corpus::ModuleSpec& m : corpus_->modules())
      if (modules_.size() < 6)
        modules_.push_back(&m);
  }

  Expected<std::unique_ptr<evaluators::Evaluator>> makeEvaluator(bool incremental, bool verify) {
    evaluators::EvaluatorOptions options;
    options.workers = 2;
    options.scratchDirectory = dir_.path();
    options.incremental = incremental;
    options.incrementalVerify = verify;
    // Every trial compiled, none answered from an earlier one.
    options.replay = false;
    return evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
  }

  Run search(bool incremental, bool verify, const policies::Policy* start,
             std::string* error = nullptr, bool consistent = false, size_t decisions = 5) {
    Expected<std::unique_ptr<evaluators::Evaluator>> evaluator = makeEvaluator(incremental, verify);
    EXPECT_TRUE(evaluator) << evaluator.error().message;
    Run run;
    if (!evaluator)
      return run;
    EXPECT_EQ((*evaluator)->incrementalTrials(), incremental);
    DecisionSearchOptions search;
    search.maxDecisions = decisions;
    search.order = SearchOrder::Random;
    search.seed = 3;
    search.start = start;
    search.calleeConsistent = consistent;
    search.onTried = [&](const TriedDecision& t) {
      run.tried[t.module].emplace_back(t.decision, t.trial->sizeBytes, t.trial->codeHash, t.kept);
      const std::vector<uint8_t>& marks = t.before->followsCommitment;
      run.triedCommitted += t.decision < marks.size() && marks[t.decision];
    };
    Expected<DecisionSearchResult> result = searchDecisions(**evaluator, modules_, search);
    if (error) {
      EXPECT_FALSE(result);
      if (!result)
        *error = result.error().message;
      return run;
    }
    EXPECT_TRUE(result) << result.error().message;
    if (result)
      run.result.emplace(result.take());
    run.statistics = (*evaluator)->statistics();
    return run;
  }

  // C++ whose member functions are `align 2` at -Oz (the Itanium ABI's) and
  // of odd sizes, with calls to inline: a reused function must keep its IR
  // alignment, or the next one moves by a byte.
  Expected<corpus::Corpus> methodsCorpus() {
    std::vector<std::string> units;
    for (int unit = 0; unit < 2; ++unit) {
      std::string source = kHelpers;
      for (int k = 0; k < 6; ++k) {
        const std::string c = "Shape" + std::to_string(unit) + std::to_string(k);
        source += "struct " + c +
                  " { int w, h; int area() const; int grow(int by); char tag() "
                  "const; };\n";
        source += "int " + c + "::area() const { return clampv(mix(w, h), 0, 1000 + " +
                  std::to_string(k) + "); }\n";
        source += "int " + c + "::grow(int by) { w = mix(w, by) + clampv(by, " + std::to_string(k) +
                  ", 9); return area() + h; }\n";
        source += "char " + c + "::tag() const { return (char)(w + " + std::to_string(k) + "); }\n";
        source += "int use" + c + "(" + c + "& s, int n) { return s.grow(n) + s.tag() + " +
                  "mix(n, s.h); }\n";
      }
      units.push_back(source);
    }
    return generatedCorpus("methods", units, ".cpp");
  }

  // C whose loops align themselves with inline assembly (zstd's
  // `__asm__(".p2align 5")`), after functions whose size changes with the
  // inlining: the assembler pads by where the function lands, so such a
  // function's bytes cannot be reused.
  Expected<corpus::Corpus> inlineAsmCorpus() {
    std::vector<std::string> units;
    for (int unit = 0; unit < 2; ++unit) {
      std::string source = kHelpers;
      for (int k = 0; k < 6; ++k) {
        const std::string n = std::to_string(unit) + std::to_string(k);
        source += "int use" + n + "(int* p, int n) { return mix(p[0], n) + clampv(n, " +
                  std::to_string(k) + ", 9) + mix(n, p[1]); }\n";
        source += "int scan" + n +
                  "(const unsigned char* p, int n) { int s = 0; for (int i = 0; i < n; ++i) { "
                  "__asm__(\".p2align 5\"); s += p[i] * (i | " +
                  std::to_string(k + 1) + "); } return s; }\n";
      }
      units.push_back(source);
    }
    return generatedCorpus("asm", units, ".c");
  }

  // A corpus of `units` compiled by clang-22 with embedded bitcode.
  Expected<corpus::Corpus> generatedCorpus(const std::string& stem,
                                           const std::vector<std::string>& units,
                                           const std::string& extension) {
    std::vector<corpus::ObjectInput> objects;
    for (size_t unit = 0; unit < units.size(); ++unit) {
      const std::filesystem::path object =
          dir_.path() / "build" / (stem + std::to_string(unit) + ".o");
      mlgo::testing::compileWithEmbeddedBitcode(units[unit], object, extension);
      objects.push_back({object, object.filename().string()});
    }
    Expected<corpus::ExtractSummary> extracted =
        corpus::extractCorpus(objects, dir_.path() / "corpus", {});
    if (!extracted)
      return extracted.error();
    return corpus::Corpus::load(dir_.path() / "corpus");
  }

  // Small functions to inline or not, in C and C++.
  static constexpr const char* kHelpers =
      "static int mix(int a, int b) { int s = a; for (int i = 0; i < b; ++i) "
      "s = s * 31 + (i ^ a); return s; }\n"
      "static int clampv(int v, int lo, int hi) { return v < lo ? lo : v > "
      "hi ? hi : v; }\n";

  mlgo::testing::ScratchDirectory dir_;
  std::optional<corpus::Corpus> corpus_;
  std::vector<const corpus::ModuleSpec*> modules_;
};

// Callee-consistent flip sets (group trials): a forked trial commits its
// callee exactly as the full compile of the toggled flip set does.
TEST_P(IncrementalSearch, CalleeConsistentSearchIsExactToo) {
  Run incremental = search(true, true, nullptr, nullptr, /*consistent=*/true);
  Run full = search(false, false, nullptr, nullptr, /*consistent=*/true);
  ASSERT_TRUE(incremental.result);
  ASSERT_TRUE(full.result);
  EXPECT_GT(incremental.result->incremental, 0u);
  EXPECT_EQ(incremental.result->verified, incremental.result->incremental);
  EXPECT_EQ(incremental.tried, full.tried);
  EXPECT_EQ(incremental.result->policy.flipSet(), full.result->policy.flipSet());
  EXPECT_TRUE(incremental.result->policy.calleeConsistent());
  for (size_t m = 0; m < modules_.size(); ++m)
    EXPECT_EQ(incremental.result->modules[m].best, full.result->modules[m].best)
        << modules_[m]->name;
  // The rule is exercised: some group trial differs from its single flip
  // (zlib's five tried decisions in six modules happen to hit no group).
  if (std::string(GetParam()) != "zlib") {
    Run plain = search(true, false, nullptr);
    ASSERT_TRUE(plain.result);
    EXPECT_NE(plain.tried, incremental.tried);
  }
}

// Under callee consistency the trajectory marks the calls answered by an
// earlier call's commitment; flipping one there changes nothing (checked
// by compiling it), so the group-trial search does not try them.
TEST_P(IncrementalSearch, CallsAnsweredByACommitmentAreNotTried) {
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator = makeEvaluator(true, true);
  ASSERT_TRUE(evaluator) << evaluator.error().message;
  const std::string defaultFeature = (*evaluator)->task().defaultDecisionFeature;
  std::shared_ptr<const policies::Policy> heuristic =
      policies::makeHeuristicEchoPolicy(defaultFeature);
  policies::CalleeConsistentPolicy consistent(heuristic);
  evaluators::EvaluationRequest request;
  request.candidates = {heuristic.get(), &consistent};
  request.modules = modules_;
  request.recordTrajectories = true;
  evaluators::EvaluationResult start = (*evaluator)->evaluate(request);
  size_t followers = 0, checked = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    SCOPED_TRACE(modules_[m]->name);
    const evaluators::JobResult& plain = start.job(0, m);
    const evaluators::JobResult& job = start.job(1, m);
    ASSERT_TRUE(plain.ok() && job.ok() && plain.trajectory && job.trajectory);
    EXPECT_TRUE(plain.trajectory->followsCommitment.empty()) << "no rule, no marks";
    const policies::Trajectory& t = *job.trajectory;
    ASSERT_EQ(t.followsCommitment.size(), t.decisions());
    Expected<policies::FlipSetPolicy> base =
        policies::FlipSetPolicy::create(t.featureSpecs, defaultFeature);
    ASSERT_TRUE(base) << base.error().message;
    base->setCalleeConsistent(true);
    std::map<uint64_t, bool> onlyMarked; // state -> every occurrence marked
    for (size_t d = 0; d < t.decisions(); ++d) {
      const uint64_t state = base->stateHash({t.row(d), t.width});
      auto [it, fresh] = onlyMarked.emplace(state, true);
      it->second = it->second && t.followsCommitment[d];
    }
    // Each marked call whose state occurs only at marked calls (the first
    // few of the module), flipped: the module's own code.
    std::vector<policies::FlipSetPolicy> flipped;
    for (size_t d = 0; d < t.decisions() && flipped.size() < 4; ++d) {
      followers += t.followsCommitment[d];
      const uint64_t state = base->stateHash({t.row(d), t.width});
      if (t.followsCommitment[d] && onlyMarked[state]) {
        flipped.push_back(*base);
        flipped.back().toggle(state);
      }
    }
    if (flipped.empty())
      continue;
    evaluators::EvaluationRequest trials;
    for (const policies::FlipSetPolicy& policy : flipped)
      trials.candidates.push_back(&policy);
    trials.modules = {modules_[m]};
    evaluators::EvaluationResult result = (*evaluator)->evaluate(trials);
    for (size_t c = 0; c < flipped.size(); ++c) {
      ASSERT_TRUE(result.job(c, 0).ok());
      EXPECT_EQ(result.job(c, 0).codeHash, job.codeHash) << "a committed call flipped";
      ++checked;
    }
  }
  if (std::string(GetParam()) == "zlib")
    return; // its first six modules happen to commit no callee twice
  EXPECT_GT(followers, 0u);
  EXPECT_GT(checked, 0u);
  // The group-trial search never tries a marked call (over the first 40
  // positions of a random order, which hold some in the generated C++;
  // Lua's search would take long).
  if (std::string(GetParam()) == "lua")
    return;
  Run run = search(true, false, nullptr, nullptr, /*consistent=*/true, 40);
  ASSERT_TRUE(run.result);
  EXPECT_GT(run.result->modules[0].tried + run.result->modules[1].tried, 0u);
  EXPECT_EQ(run.triedCommitted, 0u);
}

TEST_P(IncrementalSearch, GivesTheSearchOfFullCompilesAndVerifies) {
  std::unique_ptr<policies::Policy> never = policies::makeConstantPolicy(0);
  for (const policies::Policy* start : {static_cast<const policies::Policy*>(nullptr),
                                        static_cast<const policies::Policy*>(never.get())}) {
    SCOPED_TRACE(start ? "from never-inline" : "from -Oz");
    // Incremental answers, each also compiled in full and compared; from
    // -Oz, also the whole search against the search of full compiles.
    Run incremental = search(true, true, start);
    ASSERT_TRUE(incremental.result);
    EXPECT_EQ(incremental.result->verified, incremental.result->incremental);
    // The time report (--time-report): trials pay from their decision on
    // and share the rest with their base; full compiles pay every phase.
    const evaluators::EvaluatorStatistics& s = incremental.statistics;
    EXPECT_GT(s.timedTrials, 0u);
    EXPECT_GT(s.trialTimes.shared, 0);
    EXPECT_EQ(s.trialTimes.beforeInliner, 0);
    EXPECT_GT(s.trialTimes.codeGeneration, 0);
    EXPECT_GT(s.trialTimes.codeReuse, 0);
    EXPECT_GT(s.timedCompiles, 0u);
    EXPECT_GT(s.compileTimes.beforeInliner, 0);
    EXPECT_GT(s.compileTimes.inliner, 0);
    EXPECT_GT(s.compileTimes.afterInliner, 0);
    EXPECT_EQ(s.compileTimes.shared, 0);
    if (!start) {
      Run full = search(false, false, start);
      ASSERT_TRUE(full.result);
      EXPECT_EQ(incremental.tried, full.tried);
      EXPECT_EQ(incremental.result->policy.flipSet(), full.result->policy.flipSet());
      for (size_t m = 0; m < modules_.size(); ++m)
        EXPECT_EQ(incremental.result->modules[m].best, full.result->modules[m].best)
            << modules_[m]->name;
      EXPECT_EQ(full.result->incremental, 0u);
    }
    size_t fullCompiles = 0;
    std::string why;
    for (const auto& [reason, count] : incremental.result->fullCompiles) {
      fullCompiles += count;
      why += " " + std::to_string(count) + " " + reason + ";";
    }
    EXPECT_GT(incremental.result->incremental, 10 * fullCompiles)
        << "trials are answered from their module's one compile; in full:" << why;
  }
}

// A forked trial that lies (a test hook makes each one byte larger) stops
// a verified search at the first one, naming its module and decision.
TEST_P(IncrementalSearch, VerificationCatchesAWrongAnswer) {
  ::setenv("MLGO_WORKER_FAULT", "wrong-trial", 1);
  std::string error;
  search(true, true, nullptr, &error);
  ::unsetenv("MLGO_WORKER_FAULT");
  EXPECT_NE(error.find("verify-incremental: module \""), std::string::npos) << error;
  EXPECT_NE(error.find("the trial at decision"), std::string::npos) << error;
  EXPECT_NE(error.find("measured"), std::string::npos) << error;
}

// A compile whose reused code does not come out as its functions' (a test
// hook makes every one that reused code say so) is compiled again in full:
// the search stays exact, and the retries are counted.
TEST_P(IncrementalSearch, ReuseThatDoesNotFitIsCompiledAgain) {
  ::setenv("MLGO_WORKER_FAULT", "reuse-mismatch", 1);
  Run run = search(true, true, nullptr);
  ::unsetenv("MLGO_WORKER_FAULT");
  ASSERT_TRUE(run.result);
  EXPECT_EQ(run.result->verified, run.result->incremental);
  EXPECT_GT(run.statistics.reuse.retried, 0u);
}

INSTANTIATE_TEST_SUITE_P(Recipes, IncrementalSearch,
                         ::testing::Values("zlib", "lua", "cxx-methods", "c-inline-asm"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

} // namespace
} // namespace mlgo::training
