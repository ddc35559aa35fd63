// Checkpoints of the decision search on a made-up compiler: a round compiled
// in chunks is the same search; a search stopped at any checkpoint and
// continued from its saved text tries the same decisions in the same order
// and keeps the same flips as one that never stopped; a checkpoint of
// another search, or a damaged one, is refused.
#include "FakeCompiler.h"
#include "TestSupport.h"
#include "mlgo/training/DecisionSearch.h"

#include "../policies/PoliciesTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlgo::training {
namespace {

using mlgo::testing::FakeCompiler;

// (module, position, size with the flip, kept), in the order onTried saw them.
using TriedRows = std::vector<std::tuple<size_t, size_t, uint64_t, bool>>;

struct CheckpointRun {
  std::optional<DecisionSearchResult> result;
  std::optional<Error> error;
  TriedRows tried;
  std::vector<std::string> checkpoints; // every checkpoint's text, in order
};

struct Setup {
  size_t chunk = 2;                     // checkpointModules
  std::optional<size_t> stopAfter;      // stop at this checkpoint (0-based)
  std::optional<size_t> stopAfterRound; // onRound says stop after this round
  uint64_t seed = 5;
  bool fromNever = false;
  bool fromAlways = false; // start from inlining every call
};

CheckpointRun run(const std::vector<const corpus::ModuleSpec*>& modules, const Setup& setup,
                  const SearchProgress* resume = nullptr) {
  FakeCompiler compiler;
  compiler.sitesPerModule = 20;
  compiler.incremental = true;
  std::unique_ptr<policies::Policy> never = policies::makeConstantPolicy(0);
  std::unique_ptr<policies::Policy> always = policies::makeConstantPolicy(1);
  DecisionSearchOptions options;
  options.maxDecisions = 15;
  options.order = SearchOrder::Random;
  options.seed = setup.seed;
  options.trialsPerRound = 3;
  if (setup.fromNever)
    options.start = never.get();
  if (setup.fromAlways)
    options.start = always.get();
  CheckpointRun out;
  options.onTried = [&](const TriedDecision& t) {
    out.tried.emplace_back(t.module, t.decision, t.trial->sizeBytes, t.kept);
  };
  options.checkpointModules = setup.chunk;
  options.onCheckpoint = [&](const SearchProgress& progress) {
    out.checkpoints.push_back(progress.text());
    return !(setup.stopAfter && out.checkpoints.size() == *setup.stopAfter + 1);
  };
  options.onRound = [&](size_t round, size_t, const policies::FlipSetPolicy&) {
    return !(setup.stopAfterRound && round >= *setup.stopAfterRound);
  };
  options.resume = resume;
  Expected<DecisionSearchResult> result = searchDecisions(compiler, modules, options);
  if (result)
    out.result = result.take();
  else
    out.error = result.error();
  return out;
}

class SearchCheckpoint : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<std::string> names;
    for (int i = 0; i < 7; ++i)
      names.push_back("m" + std::to_string(i));
    Expected<corpus::Corpus> loaded =
        corpus::Corpus::load(mlgo::testing::writeFakeCorpus(dir_ / "corpus", names));
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus_.emplace(loaded.take());
    for (const corpus::ModuleSpec& m : corpus_->modules())
      modules_.push_back(&m);
  }

  static void expectSameSearch(const DecisionSearchResult& a, const DecisionSearchResult& b) {
    EXPECT_EQ(a.policy.flipSet(), b.policy.flipSet());
    EXPECT_EQ(a.rounds, b.rounds);
    ASSERT_EQ(a.modules.size(), b.modules.size());
    for (size_t m = 0; m < a.modules.size(); ++m) {
      SCOPED_TRACE("module " + std::to_string(m));
      EXPECT_EQ(a.modules[m].start, b.modules[m].start);
      EXPECT_EQ(a.modules[m].best, b.modules[m].best);
      EXPECT_EQ(a.modules[m].kept, b.modules[m].kept);
      EXPECT_EQ(a.modules[m].tried, b.modules[m].tried);
      EXPECT_EQ(a.modules[m].decisions, b.modules[m].decisions);
    }
  }

  mlgo::testing::ScratchDirectory dir_;
  std::optional<corpus::Corpus> corpus_;
  std::vector<const corpus::ModuleSpec*> modules_;
};

TEST_F(SearchCheckpoint, ChunkedRoundsAreTheSameSearch) {
  CheckpointRun whole = run(modules_, {.chunk = 0});
  ASSERT_TRUE(whole.result) << whole.error->message;
  size_t kept = 0;
  for (const ModuleSearch& m : whole.result->modules)
    kept += m.kept;
  ASSERT_GT(kept, 0u) << "the made-up compiler has flips that pay";
  for (size_t chunk : {1, 2, 3, 100}) {
    CheckpointRun chunked = run(modules_, {.chunk = chunk});
    ASSERT_TRUE(chunked.result);
    EXPECT_EQ(chunked.tried, whole.tried) << chunk << " modules per chunk";
    expectSameSearch(*chunked.result, *whole.result);
    EXPECT_EQ(chunked.result->compilations, whole.result->compilations);
  }
}

// A round visits its modules in a random order drawn from the seed and the
// round, so a round cut short (a time budget, checked after each chunk) has
// searched a sample of the corpus, not its first modules; the same seed
// visits them in the same order.
TEST_F(SearchCheckpoint, ARoundVisitsModulesInASeededRandomOrder) {
  auto visited = [&](uint64_t seed) {
    CheckpointRun run1 = run(modules_, {.chunk = 0, .seed = seed});
    EXPECT_TRUE(run1.result);
    std::vector<size_t> order; // first round: modules in the order tried
    for (const auto& [module, position, size, kept] : run1.tried)
      if (order.empty() || order.back() != module)
        if (std::find(order.begin(), order.end(), module) == order.end())
          order.push_back(module);
    return order;
  };
  const std::vector<size_t> a = visited(5), again = visited(5), other = visited(6);
  ASSERT_EQ(a.size(), modules_.size());
  EXPECT_EQ(a, again);
  std::vector<size_t> corpusOrder(modules_.size());
  std::iota(corpusOrder.begin(), corpusOrder.end(), size_t{0});
  EXPECT_NE(a, corpusOrder);
  EXPECT_NE(a, other);
}

// Stopped at every checkpoint in turn (mid-round and at a round's end), the
// saved text read back and the search continued: the decisions tried after
// the stop complete the uninterrupted search's, in its order.
TEST_F(SearchCheckpoint, ResumingAtAnyCheckpointContinuesTheSameSearch) {
  for (bool fromNever : {false, true}) {
    SCOPED_TRACE(fromNever ? "from never-inline" : "from -Oz");
    CheckpointRun full = run(modules_, {.fromNever = fromNever});
    ASSERT_TRUE(full.result) << full.error->message;
    ASSERT_GT(full.checkpoints.size(), 6u) << "several rounds of several chunks";
    for (size_t stop = 0; stop < full.checkpoints.size(); ++stop) {
      SCOPED_TRACE("stopped at checkpoint " + std::to_string(stop));
      CheckpointRun first = run(modules_, {.stopAfter = stop, .fromNever = fromNever});
      ASSERT_TRUE(first.result);
      ASSERT_EQ(first.checkpoints.size(), stop + 1);
      EXPECT_EQ(first.checkpoints.back(), full.checkpoints[stop]);
      Expected<SearchProgress> saved = SearchProgress::parse(first.checkpoints.back());
      ASSERT_TRUE(saved) << saved.error().message;
      EXPECT_EQ(saved->text(), first.checkpoints.back()) << "the text reads back exactly";

      CheckpointRun rest = run(modules_, {.fromNever = fromNever}, &*saved);
      ASSERT_TRUE(rest.result) << rest.error->message;
      TriedRows together = first.tried;
      together.insert(together.end(), rest.tried.begin(), rest.tried.end());
      EXPECT_EQ(together, full.tried);
      expectSameSearch(*rest.result, *full.result);
      // The later checkpoints are the uninterrupted search's, but for the
      // compiles that restored the trajectories.
      ASSERT_EQ(stop + 1 + rest.checkpoints.size(), full.checkpoints.size());
      EXPECT_GE(rest.result->compilations, full.result->compilations);
    }
  }
}

TEST_F(SearchCheckpoint, AStoppedSearchResumesAsFinished) {
  CheckpointRun stopped = run(modules_, {.stopAfterRound = 2});
  ASSERT_TRUE(stopped.result);
  EXPECT_EQ(stopped.result->rounds, 2u);
  Expected<SearchProgress> saved = SearchProgress::parse(stopped.checkpoints.back());
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_TRUE(saved->stopped);
  CheckpointRun again = run(modules_, {}, &*saved);
  ASSERT_TRUE(again.result) << again.error->message;
  EXPECT_TRUE(again.tried.empty()) << "nothing is left to try";
  expectSameSearch(*again.result, *stopped.result);
}

TEST_F(SearchCheckpoint, AnotherSearchsCheckpointIsRefused) {
  CheckpointRun first = run(modules_, {.stopAfter = 3});
  Expected<SearchProgress> saved = SearchProgress::parse(first.checkpoints.back());
  ASSERT_TRUE(saved);
  CheckpointRun otherSeed = run(modules_, {.seed = 6}, &*saved);
  ASSERT_TRUE(otherSeed.error);
  EXPECT_NE(otherSeed.error->message.find("another search"), std::string::npos)
      << otherSeed.error->message;
  // Same options, another start policy: caught by the modules' start
  // measures.
  CheckpointRun never = run(modules_, {.stopAfter = 3, .fromNever = true});
  Expected<SearchProgress> neverSaved = SearchProgress::parse(never.checkpoints.back());
  ASSERT_TRUE(neverSaved);
  CheckpointRun always = run(modules_, {.fromAlways = true}, &*neverSaved);
  ASSERT_TRUE(always.error);
  EXPECT_NE(always.error->message.find("does not start where it did"), std::string::npos)
      << always.error->message;
}

// Every number reads back exactly: negative measures (a task's measure
// need not be a size), none, the largest state hash, a reason with spaces.
TEST(SearchProgressText, ReadsBackExactly) {
  SearchProgress progress;
  progress.fingerprint = 0xfedcba9876543210ull;
  progress.rounds = 3;
  progress.fullCompiles["state met before its position"] = 2;
  progress.extra["seconds"] = 1234.5678901234567;
  SearchProgress::Module& m = progress.modules.emplace_back();
  m.start = -2.5;
  m.best = -1.0 / 3.0;
  m.toggled = {~0ull, 7};
  progress.modules.emplace_back(); // no measures at all (`m` is stale now)
  Expected<SearchProgress> read = SearchProgress::parse(progress.text());
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->text(), progress.text());
  EXPECT_EQ(read->modules[0].best, -1.0 / 3.0);
  EXPECT_FALSE(read->modules[1].start);
  EXPECT_EQ(read->modules[0].toggled, (std::vector<uint64_t>{~0ull, 7}));
  EXPECT_EQ(read->fullCompiles, progress.fullCompiles);
}

TEST_F(SearchCheckpoint, ADamagedCheckpointIsNamed) {
  CheckpointRun first = run(modules_, {.stopAfter = 4});
  const std::string text = first.checkpoints.back();
  Expected<SearchProgress> truncated = SearchProgress::parse(text.substr(0, text.size() / 2));
  ASSERT_FALSE(truncated);
  // Cut mid-line or at a line's end: either the line or the end is missing.
  EXPECT_TRUE(truncated.error().message.find("malformed") != std::string::npos ||
              truncated.error().message.find("truncated") != std::string::npos)
      << truncated.error().message;
  std::string noEnd = text.substr(0, text.rfind("end\n"));
  Expected<SearchProgress> unfinished = SearchProgress::parse(noEnd);
  ASSERT_FALSE(unfinished);
  EXPECT_NE(unfinished.error().message.find("truncated"), std::string::npos);
  Expected<SearchProgress> other = SearchProgress::parse("{\"kind\": \"mlp\"}\n");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("not a decision search checkpoint"), std::string::npos);
  std::string badModule = text;
  badModule.replace(badModule.find("module "), 7, "module x");
  Expected<SearchProgress> bad = SearchProgress::parse(badModule);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("malformed \"module\" line"), std::string::npos)
      << bad.error().message;
}

} // namespace
} // namespace mlgo::training
