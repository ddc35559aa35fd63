// The decision search's pair phase on a made-up compiler whose flips
// interact: two flips that pay only together are found where no single flip
// pays; a module that kept a single flip is not paired; the phase gives the
// same search with incremental trials or without, and continues exactly
// from any checkpoint, the one between the rounds and the pairs included.
#include "FakeCompiler.h"
#include "TestSupport.h"
#include "mlgo/training/DecisionSearch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlgo::training {
namespace {

using mlgo::testing::FakeCompiler;

// (module, position, size with the flip, kept), in the order onTried saw them.
using TriedRows = std::vector<std::tuple<size_t, size_t, uint64_t, bool>>;

bool has(const std::vector<size_t>& flipped, size_t site) {
  return std::find(flipped.begin(), flipped.end(), site) != flipped.end();
}

// Every flip costs a byte. In "pair", sites 2 and 6 flipped together save 5
// more; in "single", site 4 alone saves 3; "none" has nothing to find.
int64_t interactingSize(const std::string& module, const std::vector<size_t>& flipped) {
  int64_t size = 2000 + static_cast<int64_t>(flipped.size());
  if (module == "pair" && has(flipped, 2) && has(flipped, 6))
    size -= 5;
  if (module == "single" && has(flipped, 4))
    size -= 3;
  return size;
}

struct PairRun {
  std::optional<DecisionSearchResult> result;
  std::optional<Error> error;
  TriedRows tried;
  std::vector<std::string> checkpoints;
};

struct PairSetup {
  size_t firsts = 10;
  bool incremental = true;
  std::optional<size_t> stopAfter; // stop at this checkpoint (0-based)
};

PairSetup pairSetup(size_t firsts, bool incremental = true, std::optional<size_t> stopAfter = {}) {
  PairSetup out;
  out.firsts = firsts;
  out.incremental = incremental;
  out.stopAfter = stopAfter;
  return out;
}

PairRun run(const std::vector<const corpus::ModuleSpec*>& modules, const PairSetup& setup,
            const SearchProgress* resume = nullptr) {
  FakeCompiler compiler;
  compiler.sitesPerModule = 10;
  compiler.incremental = setup.incremental;
  compiler.flippedSize = interactingSize;
  DecisionSearchOptions options;
  options.maxDecisions = 10;
  options.trialsPerRound = 4;
  options.pairFirsts = setup.firsts;
  options.pairSeconds = 10;
  PairRun out;
  options.onTried = [&](const TriedDecision& t) {
    out.tried.emplace_back(t.module, t.decision, t.trial->sizeBytes, t.kept);
  };
  options.checkpointModules = 1;
  options.onCheckpoint = [&](const SearchProgress& progress) {
    out.checkpoints.push_back(progress.text());
    return !(setup.stopAfter && out.checkpoints.size() == *setup.stopAfter + 1);
  };
  options.resume = resume;
  Expected<DecisionSearchResult> result = searchDecisions(compiler, modules, options);
  if (result)
    out.result = result.take();
  else
    out.error = result.error();
  return out;
}

class SearchPairs : public ::testing::Test {
protected:
  void SetUp() override {
    Expected<corpus::Corpus> loaded = corpus::Corpus::load(
        mlgo::testing::writeFakeCorpus(dir_ / "corpus", {"pair", "single", "none"}));
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus_.emplace(loaded.take());
    for (const corpus::ModuleSpec& m : corpus_->modules())
      modules_.push_back(&m);
  }
  size_t index(const std::string& name) const {
    for (size_t m = 0; m < modules_.size(); ++m)
      if (modules_[m]->name == name)
        return m;
    ADD_FAILURE() << name;
    return 0;
  }
  static size_t keptRows(const TriedRows& rows, size_t module) {
    return std::count_if(rows.begin(), rows.end(), [&](const auto& row) {
      return std::get<0>(row) == module && std::get<3>(row);
    });
  }

  mlgo::testing::ScratchDirectory dir_;
  std::optional<corpus::Corpus> corpus_;
  std::vector<const corpus::ModuleSpec*> modules_;
};

TEST_F(SearchPairs, APairPaysWhereNoSingleFlipDoes) {
  const size_t pair = index("pair"), single = index("single"), none = index("none");
  PairRun singles = run(modules_, pairSetup(0));
  ASSERT_TRUE(singles.result) << singles.error->message;
  EXPECT_EQ(singles.result->modules[pair].kept, 0u) << "no single flip pays in it";
  EXPECT_EQ(singles.result->modules[pair].best, 2000.0);
  EXPECT_EQ(singles.result->modules[single].kept, 1u);
  EXPECT_EQ(singles.result->pairTrials, 0u);

  PairRun pairs = run(modules_, {});
  ASSERT_TRUE(pairs.result) << pairs.error->message;
  const DecisionSearchResult& r = *pairs.result;
  EXPECT_EQ(r.modules[pair].kept, 2u);
  EXPECT_EQ(r.modules[pair].best, 1997.0) << "two flips cost 2 and save 5";
  EXPECT_EQ(r.policy.flipSet().size(), singles.result->policy.flipSet().size() + 2);
  EXPECT_EQ(r.pairModules, 1u);
  EXPECT_GT(r.pairTrials, 0u);
  EXPECT_EQ(keptRows(pairs.tried, pair), 1u) << "the pair's second flip, a kept row";
  // A module that kept a single flip is not paired; one with nothing to
  // find tries pairs and keeps none.
  EXPECT_EQ(r.modules[single].tried, singles.result->modules[single].tried);
  EXPECT_EQ(r.modules[single].best, singles.result->modules[single].best);
  EXPECT_GT(r.modules[none].tried, singles.result->modules[none].tried);
  EXPECT_EQ(r.modules[none].kept, 0u);
  EXPECT_EQ(r.modules[none].best, 2000.0);

  // Fewer first steps than the one that pays (site 2 is the third tried):
  // nothing found.
  PairRun two = run(modules_, pairSetup(2));
  ASSERT_TRUE(two.result);
  EXPECT_EQ(two.result->modules[pair].kept, 0u);
}

// Per module, what it tried in order (one trial per round without
// incremental trials, so modules interleave otherwise).
std::vector<TriedRows> byModule(const TriedRows& rows, size_t modules) {
  std::vector<TriedRows> out(modules);
  for (const auto& row : rows)
    out[std::get<0>(row)].push_back(row);
  return out;
}

TEST_F(SearchPairs, IncrementalTrialsGiveTheSamePairs) {
  PairRun incremental = run(modules_, {});
  PairRun full = run(modules_, pairSetup(10, false));
  ASSERT_TRUE(incremental.result && full.result);
  EXPECT_EQ(byModule(incremental.tried, modules_.size()), byModule(full.tried, modules_.size()));
  EXPECT_EQ(incremental.result->policy.flipSet(), full.result->policy.flipSet());
}

TEST_F(SearchPairs, ResumingAtAnyCheckpointGivesTheSamePairs) {
  PairRun whole = run(modules_, {});
  ASSERT_TRUE(whole.result) << whole.error->message;
  ASSERT_GE(whole.checkpoints.size(), 3u);
  const std::string& last = whole.checkpoints.back();
  EXPECT_NE(last.find("pairs-done"), std::string::npos) << last;
  EXPECT_NE(whole.checkpoints[whole.checkpoints.size() - 2].find("firsts "), std::string::npos)
      << "the checkpoint before the pairs keeps the first steps";
  for (size_t stop = 0; stop < whole.checkpoints.size(); ++stop) {
    SCOPED_TRACE("stopped at checkpoint " + std::to_string(stop));
    PairRun first = run(modules_, pairSetup(10, true, stop));
    ASSERT_TRUE(first.result);
    Expected<SearchProgress> saved = SearchProgress::parse(first.checkpoints.back());
    ASSERT_TRUE(saved) << saved.error().message;
    EXPECT_EQ(saved->text(), first.checkpoints.back()) << "the text reads back exactly";
    PairRun rest = run(modules_, {}, &*saved);
    ASSERT_TRUE(rest.result) << rest.error->message;
    TriedRows together = first.tried;
    together.insert(together.end(), rest.tried.begin(), rest.tried.end());
    EXPECT_EQ(together, whole.tried);
    EXPECT_EQ(rest.result->policy.flipSet(), whole.result->policy.flipSet());
    EXPECT_EQ(rest.result->pairModules, whole.result->pairModules);
    for (size_t m = 0; m < modules_.size(); ++m) {
      EXPECT_EQ(rest.result->modules[m].best, whole.result->modules[m].best);
      EXPECT_EQ(rest.result->modules[m].kept, whole.result->modules[m].kept);
      EXPECT_EQ(rest.result->modules[m].tried, whole.result->modules[m].tried);
    }
  }
}

TEST(SearchPairsOptions, PairsNeedSeconds) {
  DecisionSearchOptions options;
  options.pairFirsts = 3;
  options.pairSeconds = 0;
  EXPECT_FALSE(options.validate());
  options.pairFirsts = 0;
  EXPECT_TRUE(options.validate());
}

} // namespace
} // namespace mlgo::training
