// The three trainers driven end to end by a made-up compiler (FakeCompiler.h)
// instead of clang: what the skeleton promises — resume equals an
// uninterrupted run, failures are recorded and the run goes on, the best
// policy is the one the run's own numbers say is best, a callback can stop a
// run, the typed step records are what the run file holds — checked in
// milliseconds.
#include "FakeCompiler.h"
#include "RunRecordAssertions.h"
#include "TestSupport.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Files.h"
#include "mlgo/training/BcTrainer.h"
#include "mlgo/training/EsTrainer.h"
#include "mlgo/training/PpoTrainer.h"
#include "mlgo/training/ProgramScorer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::training {
namespace {

using mlgo::testing::FakeCompiler;
using mlgo::testing::ScratchDirectory;

std::vector<std::string> moduleNames(const std::string& prefix, size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i)
    names.push_back(prefix + std::to_string(i));
  return names;
}

struct Corpora {
  fs::path training;
  fs::path validation;
};

Corpora writeCorpora(const ScratchDirectory& dir) {
  return {mlgo::testing::writeFakeCorpus(dir / "train", moduleNames("t", 8)),
          mlgo::testing::writeFakeCorpus(dir / "valid", moduleNames("v", 4))};
}

// A short run into `output`, a snapshot every step; trainers that write a
// policy file write it beside.
RunOptions shortRun(const fs::path& output, int64_t steps, uint64_t seed, bool policyFile) {
  RunOptions run;
  run.steps = steps;
  run.seed = seed;
  run.snapshotInterval = 1;
  run.output = output;
  if (policyFile)
    run.policyOutput = fs::path(output).replace_extension(".json");
  run.threads = 1;
  run.configToml = "# test\n";
  return run;
}

// A small MLP over a small vocabulary, the trainer's defaults otherwise.
void shrink(PolicyStartOptions& policy, std::vector<int> hidden) {
  policy.vocabularyQuantiles = 20;
  policy.mlp.hiddenLayers = std::move(hidden);
}

EsTrainerOptions esRun(const Corpora& corpora, const fs::path& output) {
  EsTrainerOptions o;
  o.data.corpus = corpora.training;
  o.data.modulesPerStep = 3;
  shrink(o.policy, {6});
  std::get<es::GradientEs::Options>(o.optimizer).sampling.directions = 4;
  std::get<es::GradientEs::Options>(o.optimizer).sampling.sigma = 0.5;
  std::get<es::GradientEs::Options>(o.optimizer).stepRule.learningRate = 0.1;
  o.run = shortRun(output, 6, 3, true);
  return o;
}

PpoTrainerOptions ppoRun(const Corpora& corpora, const fs::path& output) {
  PpoTrainerOptions o;
  o.data.corpus = corpora.training;
  o.data.modulesPerStep = 4;
  shrink(o.policy, {6});
  o.update.adam.learningRate = 0.01;
  o.update.minibatchSize = 16;
  o.update.updatesPerIteration = 5;
  o.run = shortRun(output, 5, 9, true);
  return o;
}

BcTrainerOptions bcRun(const Corpora& corpora, const fs::path& output) {
  BcTrainerOptions o;
  o.corpus = corpora.training;
  o.heldoutFraction = 0.25;
  shrink(o.policy, {8});
  o.update.adam.learningRate = 0.01;
  o.update.minibatchSize = 8;
  o.run = shortRun(output, 12, 2, true);
  return o;
}

// Runs `stopAt` steps, stopped by the progress callback, then resumes with a
// fresh trainer (and a fresh compiler, as a new process would have) on the
// options the library reads back from the run file's stored config: the
// run file must equal an uninterrupted run's.
// A fresh scorer as a new process would have one (a made-up compiler by
// default).
using ScorerFactory = std::function<std::unique_ptr<evaluators::Scorer>()>;
ScorerFactory fakeCompilers() {
  return [] { return std::make_unique<FakeCompiler>(); };
}

template <class Trainer, class Options, class Progress>
void expectResumeEqualsUninterrupted(Options whole, Options parts, int64_t stopAt,
                                     const ScorerFactory& makeScorer = fakeCompilers()) {
  parts.run.configToml = Options::schema().toToml(parts);
  std::unique_ptr<evaluators::Scorer> scorer = makeScorer();
  evaluators::Scorer& compiler = *scorer;
  Expected<Trainer> a = Trainer::create(whole, compiler);
  ASSERT_TRUE(a) << a.error().message;
  auto all = a->run();
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->termination, Termination::Completed);
  {
    Expected<Trainer> first = Trainer::create(parts, compiler);
    ASSERT_TRUE(first) << first.error().message;
    auto stopped = first->run([&](const Progress& p) {
      return p.step + 1 >= stopAt ? CallbackAction::Stop : CallbackAction::Continue;
    });
    ASSERT_TRUE(stopped) << stopped.error().message;
    EXPECT_EQ(stopped->termination, Termination::StoppedByCallback);
    EXPECT_EQ(stopped->stepsRun, stopAt);
    EXPECT_NE(stopped->message.find("--resume"), std::string::npos) << stopped->message;
  }
  std::unique_ptr<evaluators::Scorer> freshScorer = makeScorer();
  evaluators::Scorer& fresh = *freshScorer;
  Expected<Options> stored = Trainer::storedOptions(parts.run.output);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(Options::schema().toToml(*stored), parts.run.configToml);
  EXPECT_EQ(stored->run.output, parts.run.output);
  Expected<Trainer> b = Trainer::resume(*stored, fresh);
  ASSERT_TRUE(b) << b.error().message;
  auto rest = b->run();
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->stepsRun, whole.run.steps - stopAt);
  EXPECT_EQ(rest->termination, Termination::Completed);
  Expected<results::RunRecord> ra = results::readRunFile(whole.run.output);
  Expected<results::RunRecord> rb = results::readRunFile(parts.run.output);
  ASSERT_TRUE(ra && rb);
  mlgo::testing::expectSameStepNumbers(*ra, *rb);
  EXPECT_EQ(ra->snapshots, rb->snapshots);
  EXPECT_EQ(ra->bestPolicy, rb->bestPolicy);
  EXPECT_EQ(ra->failures, rb->failures);
  EXPECT_EQ(ra->validations, rb->validations);
  ASSERT_TRUE(ra->checkpoint && rb->checkpoint);
  const StateArchive& sa = ra->checkpoint->trainerState;
  const StateArchive& sb = rb->checkpoint->trainerState;
  EXPECT_EQ(sa.integers(), sb.integers());
  ASSERT_EQ(sa.vectors().size(), sb.vectors().size());
  for (const auto& [name, values] : sa.vectors()) {
    const std::vector<double>& other = sb.vectors().at(name);
    ASSERT_EQ(values.size(), other.size()) << name;
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_TRUE(mlgo::testing::sameOrBothNaN(values[i], other[i])) << name << "[" << i << "]";
  }
}

// The datasets of /steps are exactly the trainer's column table's and the
// skeleton's timing columns.
template <class Record>
void expectColumnsAreTheStepDatasets(const ColumnTable<Record>& table,
                                     const results::RunRecord& record) {
  std::set<std::string> columns;
  for (const auto& column : table.columns())
    columns.insert(column.dataset);
  for (const auto& column : timingColumns().columns())
    columns.insert(column.dataset);
  std::set<std::string> datasets;
  for (const auto& [name, values] : record.stepScalars) {
    datasets.insert(name);
    EXPECT_EQ(values.size(), record.steps()) << name;
  }
  EXPECT_EQ(columns, datasets);
}

TEST(EsTrainerOnAFakeCompiler, LearnsAndRecordsEveryStep) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  EsTrainerOptions o = esRun(corpora, dir / "es.h5");
  o.data.validationCorpus = corpora.validation;
  o.data.validationInterval = 2;
  o.data.modulesPerStep = 8;
  std::get<es::GradientEs::Options>(o.optimizer).sampling.directions = 8;
  std::get<es::GradientEs::Options>(o.optimizer).stepRule.learningRate = 0.5;
  o.run.steps = 12;
  FakeCompiler compiler;
  Expected<EsTrainer> trainer = EsTrainer::create(o, compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  std::vector<int64_t> seen;
  Expected<EsTrainerSummary> summary = trainer->run([&](const EsProgress& p) {
    seen.push_back(p.step);
    EXPECT_EQ(p.record.compile.compilations, 16u * 8u);
    EXPECT_EQ(p.validationTotalReward.has_value(), (p.step + 1) % 2 == 0);
    return CallbackAction::Continue;
  });
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(summary->steps.size(), 12u);
  EXPECT_EQ(summary->compiles.compilations, 12u * 16u * 8u);
  const results::RunRecord& record = trainer->record();
  expectColumnsAreTheStepDatasets(esStepColumns(), record);
  EXPECT_EQ(record.attributes.at("compiler"), compiler.compilerIdentity());
  // The start (step 0), then every second step.
  ASSERT_EQ(record.validations.size(), 7u);
  EXPECT_EQ(record.validations.front().step, 0);
  // The made-up task is learnable: the policy ends better on unseen modules
  // than it started.
  EXPECT_GT(record.validations.back().totalReward, record.validations.front().totalReward);
  // The summary's records are the file's rows.
  for (size_t s = 0; s < 12; ++s)
    EXPECT_TRUE(mlgo::testing::sameOrBothNaN(summary->steps[s].rewardMean,
                                             record.stepScalars.at("reward_mean")[s]));
}

// es-train --programs: whole benchmark programs are the jobs (the program
// scorer, with a made-up measure here: a candidate's run cost follows its
// policy file's contents), validation is by their run cost, the plain
// builds are measured once, and a run on programs is as deterministic as one
// on modules.
struct ProgramRuns {
  size_t plain = 0, candidates = 0;
};

ProgramRunCostScorer programScorer(const fs::path& candidates, ProgramRuns& runs) {
  return ProgramRunCostScorer(
      evaluators::CompilerTask::inliningForSize(), candidates, "O2",
      [&runs](const std::string& recipe, const std::string&,
              const deploy::DeployedPolicies& deployed) -> Expected<deploy::RunCost> {
        deploy::RunCost run;
        run.counts = deploy::CachegrindCounts{};
        run.output = recipe;
        run.cost = 1000;
        if (deployed.plain()) {
          ++runs.plain;
          return run;
        }
        ++runs.candidates;
        Expected<std::string> policy = readFileBytes(deployed.policies.at(0).second);
        if (!policy)
          return policy.error();
        run.cost = 990 + static_cast<double>(hashBytes(*policy + recipe) % 21);
        return run;
      });
}

EsTrainerOptions programRun(const fs::path& initial, const fs::path& output) {
  EsTrainerOptions o;
  o.data.programs = {"lua", "zstd"};
  o.data.validationPrograms = {"zlib"};
  o.data.validationInterval = 1;
  o.policy.initialPolicy = initial;
  std::get<es::GradientEs::Options>(o.optimizer).sampling.directions = 2;
  o.run = shortRun(output, 2, 5, true);
  return o;
}

// DIR/start.json: a start policy with the fake compiler's features (as
// bc-train's would be), from one ES step on a made-up corpus.
void writeStartPolicy(const ScratchDirectory& dir) {
  EsTrainerOptions start = esRun(writeCorpora(dir), dir / "start.h5");
  start.run.steps = 1;
  FakeCompiler compiler;
  Expected<EsTrainer> trainer = EsTrainer::create(start, compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  ASSERT_TRUE(trainer->run());
}

TEST(EsTrainerOnPrograms, ProgramsAreTheJobsAndRunCostChoosesTheBest) {
  ScratchDirectory dir;
  ASSERT_NO_FATAL_FAILURE(writeStartPolicy(dir));
  std::vector<std::vector<double>> rewards;
  for (int repeat = 0; repeat < 2; ++repeat) {
    const fs::path output = dir / ("programs" + std::to_string(repeat) + ".h5");
    EsTrainerOptions o = programRun(dir / "start.json", output);
    ASSERT_TRUE(o.validate()) << o.validate().error().message;
    ProgramRuns runs;
    ProgramRunCostScorer scorer = programScorer(dir / "candidates", runs);
    Expected<EsTrainer> trainer = EsTrainer::create(o, scorer);
    ASSERT_TRUE(trainer) << trainer.error().message;
    Expected<EsTrainerSummary> summary = trainer->run([](const EsProgress& p) {
      EXPECT_EQ(p.record.compile.compilations, 4u * 2u); // 4 candidates × 2 programs
      EXPECT_TRUE(p.validationTotalReward);
      return CallbackAction::Continue;
    });
    ASSERT_TRUE(summary) << summary.error().message;
    const results::RunRecord& record = trainer->record();
    EXPECT_EQ(record.moduleNames, (std::vector<std::string>{"lua", "zstd"}));
    EXPECT_EQ(record.validationModuleNames, std::vector<std::string>{"zlib"});
    EXPECT_EQ(record.attributes.at("corpus"), "programs lua,zstd");
    EXPECT_EQ(runs.plain, 3u); // each program's plain build once
    // The start, then every step; the kept policy is the best of them.
    ASSERT_EQ(record.validations.size(), 3u);
    ASSERT_TRUE(record.bestPolicy);
    for (const results::ValidationRecord& v : record.validations)
      EXPECT_LE(v.totalReward, record.bestPolicyValue);
    rewards.push_back({});
    for (const std::vector<double>& step : record.candidateRewards)
      rewards.back().insert(rewards.back().end(), step.begin(), step.end());
    for (const results::ValidationRecord& v : record.validations)
      rewards.back().push_back(v.totalReward);
  }
  // The same seed, the same run (the rewards vary: the measure is not flat).
  EXPECT_EQ(rewards[0], rewards[1]);
  EXPECT_NE(*std::min_element(rewards[0].begin(), rewards[0].end()),
            *std::max_element(rewards[0].begin(), rewards[0].end()));
}

// A run on programs resumes as one on modules does: the stored config names
// the programs, and the resumed run equals the uninterrupted one.
TEST(EsTrainerOnPrograms, ResumedRunEqualsAnUninterruptedOne) {
  ScratchDirectory dir;
  ASSERT_NO_FATAL_FAILURE(writeStartPolicy(dir));
  EsTrainerOptions whole = programRun(dir / "start.json", dir / "whole.h5");
  whole.run.steps = 3;
  EsTrainerOptions parts = programRun(dir / "start.json", dir / "parts.h5");
  parts.run.steps = 3;
  auto runs = std::make_shared<ProgramRuns>();
  expectResumeEqualsUninterrupted<EsTrainer, EsTrainerOptions, EsProgress>(
      whole, parts, 2, [&dir, runs]() -> std::unique_ptr<evaluators::Scorer> {
        return std::make_unique<ProgramRunCostScorer>(programScorer(dir / "candidates", *runs));
      });
}

TEST(EsTrainerOnPrograms, NeedsAnInitialPolicyAndProgramsOnly) {
  ScratchDirectory dir;
  ProgramRuns runs;
  ProgramRunCostScorer scorer = programScorer(dir / "candidates", runs);
  EsTrainerOptions o = programRun(dir / "none.json", dir / "p.h5");
  o.policy.initialPolicy.reset();
  Expected<EsTrainer> trainer = EsTrainer::create(o, scorer);
  ASSERT_FALSE(trainer);
  EXPECT_NE(trainer.error().message.find("needs an initial policy"), std::string::npos)
      << trainer.error().message;
  // A run trains on a corpus or on programs, validated in kind.
  o.data.corpus = "c";
  EXPECT_EQ(o.validate().error().message.rfind("data.programs:", 0), 0u);
  o.data.corpus.clear();
  o.data.validationCorpus = "v";
  EXPECT_EQ(o.validate().error().message.rfind("data.validationCorpus:", 0), 0u);
  o.data.validationCorpus.reset();
  o.data.programWorkload = "huge";
  EXPECT_EQ(o.validate().error().message.rfind("data.programWorkload:", 0), 0u);
  o.data.programWorkload = "tiny";
  // PPO needs the decisions' trajectories, which a program's job has not.
  PpoTrainerOptions ppo;
  ppo.data = o.data;
  EXPECT_NE(ppo.validate().error().message.find("with es-train"), std::string::npos);
  o.data.programs.clear();
  EXPECT_EQ(o.validate().error().message.rfind("data.corpus:", 0), 0u);
}

// --candidate-reward total: a candidate's reward is the relative reward of
// its total over the step's modules (sizes of the run file's rows), not the
// mean of the modules' rewards.
TEST(EsTrainerOnAFakeCompiler, TotalCandidateRewardIsTheRewardOfTheTotal) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  EsTrainerOptions o = esRun(corpora, dir / "es.h5");
  o.candidateReward = EsTrainerOptions::CandidateReward::Total;
  o.run.steps = 2;
  FakeCompiler compiler;
  Expected<EsTrainer> trainer = EsTrainer::create(o, compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  ASSERT_TRUE(trainer->run([](const EsProgress&) { return CallbackAction::Continue; }));
  const results::RunRecord& record = trainer->record();
  size_t differFromMean = 0;
  for (size_t step = 0; step < record.steps(); ++step) {
    const std::vector<int64_t>& modules = record.stepModules[step];
    const std::vector<double>& rewards = record.candidateRewards[step];
    for (size_t c = 0; c < rewards.size(); ++c) {
      double total = 0, baseline = 0, meanReward = 0;
      for (size_t m = 0; m < modules.size(); ++m) {
        const double size = static_cast<double>(record.stepSizes[step][c * modules.size() + m]);
        const double base =
            static_cast<double>(record.baselineSizes[static_cast<size_t>(modules[m])]);
        total += size;
        baseline += base;
        meanReward +=
            evaluators::sizeReward(static_cast<uint64_t>(size), static_cast<uint64_t>(base)) /
            static_cast<double>(modules.size());
      }
      EXPECT_NEAR(rewards[c], evaluators::RelativeReward{}(total, baseline), 1e-12);
      differFromMean += std::abs(rewards[c] - meanReward) > 1e-9;
    }
  }
  EXPECT_GT(differFromMean, 0u) << "total and mean rewards never differed: nothing was tested";
}

TEST(EsTrainerOnAFakeCompiler, BestPolicyIsTheBestValidatedOne) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  EsTrainerOptions o = esRun(corpora, dir / "es.h5");
  o.data.validationCorpus = corpora.validation;
  o.data.validationInterval = 1;
  FakeCompiler compiler;
  Expected<EsTrainer> trainer = EsTrainer::create(o, compiler);
  ASSERT_TRUE(trainer);
  Expected<EsTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary);
  const results::RunRecord& record = trainer->record();
  auto best =
      std::max_element(record.validations.begin(), record.validations.end(),
                       [](const auto& a, const auto& b) { return a.totalReward < b.totalReward; });
  ASSERT_TRUE(record.bestPolicy);
  EXPECT_EQ(record.bestPolicyValue, best->totalReward);
  EXPECT_EQ(record.bestPolicy->step, best->step); // the first of equal ones
  EXPECT_EQ(record.bestPolicy->policyJson,
            record.snapshots[static_cast<size_t>(best->step)].policyJson);
  EXPECT_NE(record.bestPolicyMetric.find("validation"), std::string::npos);
  ASSERT_TRUE(summary->bestValidationTotalReward());
  EXPECT_EQ(*summary->bestValidationTotalReward(), best->totalReward);
}

// The policy file is the kept policy: the best validated one, the start
// included, so a run never keeps a policy that validates worse than where
// it started.
TEST(EsTrainerOnAFakeCompiler, KeepsTheStartWhenNothingValidatesBetter) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  EsTrainerOptions o = esRun(corpora, dir / "es.h5");
  o.data.validationCorpus = corpora.validation;
  o.data.validationInterval = 1;
  o.policy.mlp.residualMargin = 0.5; // starts at the heuristic: reward 0
  FakeCompiler compiler;
  compiler.invertedModules = {"v0", "v1", "v2", "v3"}; // validation teaches the opposite
  Expected<EsTrainer> trainer = EsTrainer::create(o, compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  Expected<EsTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  const results::RunRecord& record = trainer->record();
  ASSERT_EQ(record.validations.size(), 7u);
  EXPECT_EQ(record.validations[0].step, 0);
  EXPECT_EQ(record.validations[0].totalReward, 0.0);
  // Later policies validate no better (equal until they leave the
  // heuristic's decisions; ties keep the earlier), and worse once they do.
  for (size_t v = 1; v < record.validations.size(); ++v)
    EXPECT_LE(record.validations[v].totalReward, 0.0) << "step " << record.validations[v].step;
  EXPECT_LT(record.validations.back().totalReward, 0.0);
  ASSERT_TRUE(summary->kept);
  EXPECT_TRUE(summary->kept->validated);
  EXPECT_EQ(summary->kept->step, 0);
  EXPECT_NE(summary->kept->why().find("the start"), std::string::npos) << summary->kept->why();
  Expected<std::string> file = readFileBytes(*summary->policyOutput);
  ASSERT_TRUE(file);
  EXPECT_EQ(*file, record.snapshots.front().policyJson);
  EXPECT_NE(*file, record.finalPolicy->policyJson);

  // Where training does carry over, a later step is kept, and said to be.
  FakeCompiler plain;
  o.run.output = dir / "es-plain.h5";
  o.run.policyOutput = dir / "es-plain.json";
  Expected<EsTrainer> learning = EsTrainer::create(o, plain);
  ASSERT_TRUE(learning);
  Expected<EsTrainerSummary> learned = learning->run();
  ASSERT_TRUE(learned && learned->kept);
  EXPECT_GT(learned->kept->step, 0);
  EXPECT_GT(*learned->kept->validationTotalReward, *learned->kept->startValidationTotalReward);
  Expected<std::string> kept = readFileBytes(*learned->policyOutput);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, learning->record().bestPolicy->policyJson);
}

TEST(EsTrainerOnAFakeCompiler, WithoutValidationTheBestIsThePointWithTheBestNeighbourhood) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  FakeCompiler compiler;
  Expected<EsTrainer> trainer = EsTrainer::create(esRun(corpora, dir / "es.h5"), compiler);
  ASSERT_TRUE(trainer);
  Expected<EsTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary);
  const results::RunRecord& record = trainer->record();
  const std::vector<double>& values = record.stepScalars.at("current_value");
  size_t best =
      static_cast<size_t>(std::max_element(values.begin(), values.end()) - values.begin());
  ASSERT_TRUE(record.bestPolicy);
  EXPECT_EQ(record.bestPolicyValue, values[best]);
  // The point before step `best`'s update: the snapshot after step best - 1.
  EXPECT_EQ(record.bestPolicy->step, static_cast<int64_t>(best));
  EXPECT_EQ(record.bestPolicy->policyJson, record.snapshots[best].policyJson);
  EXPECT_FALSE(summary->bestValidationTotalReward());
}

TEST(EsTrainerOnAFakeCompiler, FailuresAreRecordedAndTheRunGoesOn) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  EsTrainerOptions o = esRun(corpora, dir / "es.h5");
  o.data.validationCorpus = corpora.validation;
  o.data.validationInterval = 3;
  FakeCompiler compiler;
  compiler.brokenBaselines = {"t5"};
  // Candidate 1 crashes on every module of step 0; validation module v2
  // always crashes.
  compiler.fails = [](uint64_t step, size_t candidate, const std::string& module) {
    return (step == 0 && candidate == 1 && module[0] == 't') || module == "v2";
  };
  Expected<EsTrainer> trainer = EsTrainer::create(o, compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  Expected<EsTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->stepsTotal, 6);
  const results::RunRecord& r = trainer->record();

  // The module without a baseline: recorded once, never sampled.
  const int64_t t5 = 5;
  ASSERT_EQ(r.moduleNames[static_cast<size_t>(t5)], "t5");
  EXPECT_EQ(r.baselineSizes[static_cast<size_t>(t5)], 0u);
  size_t baselineFailures = 0, stepFailures = 0, validationFailures = 0;
  for (const results::FailureRecord& f : r.failures) {
    if (f.status == "baseline-unavailable") {
      EXPECT_EQ(f.module, "t5");
      EXPECT_EQ(f.step, -1);
      ++baselineFailures;
    } else if (f.candidate == -1) {
      EXPECT_EQ(f.module, "v2");
      EXPECT_EQ(f.status, "compiler-crashed");
      EXPECT_EQ(f.step % 3, 0);
      ++validationFailures;
    } else {
      EXPECT_EQ(f.step, 0);
      EXPECT_EQ(f.candidate, 1);
      EXPECT_EQ(f.stderrTail, "fake stack dump");
      ++stepFailures;
    }
  }
  EXPECT_EQ(baselineFailures, 1u);
  EXPECT_EQ(stepFailures, 3u);       // one per module of step 0
  EXPECT_EQ(validationFailures, 3u); // the start's, steps 3 and 6
  for (const std::vector<int64_t>& modules : r.stepModules)
    EXPECT_EQ(std::count(modules.begin(), modules.end(), t5), 0);
  // Step 0: candidate 1 has no reward, its antithetic pair is dropped.
  EXPECT_TRUE(std::isnan(r.candidateRewards[0][1]));
  EXPECT_EQ(r.stepScalars.at("failed_compilations")[0], 3.0);
  EXPECT_EQ(r.stepScalars.at("dropped_pairs")[0], 1.0);
  EXPECT_EQ(r.stepScalars.at("failed_compilations")[1], 0.0);
  EXPECT_EQ(summary->compiles.failed, 3u);
  // Validation is scored on the modules that compiled.
  for (const results::ValidationRecord& v : r.validations) {
    EXPECT_EQ(v.ok, (std::vector<uint8_t>{1, 1, 0, 1}));
    EXPECT_TRUE(std::isfinite(v.totalReward));
  }
}

TEST(EsTrainerOnAFakeCompiler, ResumedRunEqualsAnUninterruptedOne) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  for (es::OptimizerKind kind : {es::OptimizerKind::GradientEs, es::OptimizerKind::TrustRegionEs,
                                 es::OptimizerKind::SepCmaEs}) {
    SCOPED_TRACE(std::string(es::optimizerKindName(kind)));
    std::string name(es::optimizerKindName(kind));
    EsTrainerOptions whole = esRun(corpora, dir / (name + "-whole.h5"));
    if (kind != es::kindOf(whole.optimizer)) // the others at their defaults
      whole.optimizer = es::defaultOptimizerOptions(kind);
    whole.data.validationCorpus = corpora.validation;
    whole.data.validationInterval = 2;
    EsTrainerOptions parts = whole;
    parts.run.output = dir / (name + "-parts.h5");
    expectResumeEqualsUninterrupted<EsTrainer, EsTrainerOptions, EsProgress>(whole, parts, 3);
  }
}

TEST(EsTrainerOnAFakeCompiler, ResumeRefusesAnotherRunOrOtherData) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  FakeCompiler compiler;
  EsTrainerOptions o = esRun(corpora, dir / "es.h5");
  Expected<EsTrainer> trainer = EsTrainer::create(o, compiler);
  ASSERT_TRUE(trainer);
  ASSERT_TRUE(trainer->run({}, 2));

  PpoTrainerOptions ppo = ppoRun(corpora, dir / "es.h5");
  Expected<PpoTrainer> wrongTrainer = PpoTrainer::resume(ppo, compiler);
  ASSERT_FALSE(wrongTrainer);
  EXPECT_NE(wrongTrainer.error().message.find("written by es-train"), std::string::npos)
      << wrongTrainer.error().message;

  EsTrainerOptions otherOptimizer = o;
  otherOptimizer.optimizer = es::SepCmaEs::Options{};
  Expected<EsTrainer> wrongOptimizer = EsTrainer::resume(otherOptimizer, compiler);
  ASSERT_FALSE(wrongOptimizer);
  EXPECT_NE(wrongOptimizer.error().message.find("optimizer gradient-es"), std::string::npos)
      << wrongOptimizer.error().message;

  EsTrainerOptions otherData = o;
  otherData.data.corpus = corpora.validation;
  Expected<EsTrainer> wrongData = EsTrainer::resume(otherData, compiler);
  ASSERT_FALSE(wrongData);
  EXPECT_NE(wrongData.error().message.find("modules differ"), std::string::npos)
      << wrongData.error().message;
  // …naming a module of the run's that the data lacks.
  EXPECT_NE(wrongData.error().message.find("\" is missing"), std::string::npos)
      << wrongData.error().message;
}

TEST(PpoTrainerOnAFakeCompiler, RecordsEveryIterationAndChoosesTheBestSamplingPolicy) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  FakeCompiler compiler;
  Expected<PpoTrainer> trainer = PpoTrainer::create(ppoRun(corpora, dir / "ppo.h5"), compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  Expected<PpoTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->iterations.size(), 5u);
  EXPECT_EQ(summary->updates, 5 * 5);
  EXPECT_EQ(summary->decisions, 5u * 4u * 12u);
  ASSERT_TRUE(summary->policyOutput);
  EXPECT_TRUE(fs::exists(*summary->policyOutput));
  const results::RunRecord& r = trainer->record();
  expectColumnsAreTheStepDatasets(ppoStepColumns(), r);
  // Without validation, the best is the sampling policy (the one before the
  // iteration's update) with the best mean reward.
  const std::vector<double>& rewards = r.stepScalars.at("reward_mean");
  size_t best =
      static_cast<size_t>(std::max_element(rewards.begin(), rewards.end()) - rewards.begin());
  ASSERT_TRUE(r.bestPolicy);
  EXPECT_EQ(r.bestPolicy->step, static_cast<int64_t>(best));
  EXPECT_EQ(r.bestPolicy->policyJson, r.snapshots[best].policyJson);
  EXPECT_EQ(r.bestPolicyValue, rewards[best]);
  // Every decision is learned from: agreement with the heuristic is known.
  for (double agreement : r.stepScalars.at("heuristic_agreement"))
    EXPECT_TRUE(agreement >= 0 && agreement <= 1);
}

// PPO learns from the task's reward (against its moving average), not from
// a formula of its own: changing the task's δ changes the training reward.
TEST(PpoTrainerOnAFakeCompiler, TrainsOnTheTasksReward) {
  // The task's reward is ml-compiler-opt's, also against a moving average.
  EXPECT_NEAR(evaluators::RelativeReward{}(90, 100), 1 - 90.01 / 100.01, 1e-15);
  EXPECT_NEAR(evaluators::RelativeReward{}(90, 98), 1 - 90.01 / 98.01, 1e-15);
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  auto trainingReward = [&](double delta, const char* name) {
    FakeCompiler compiler;
    compiler.compilerTask.reward.delta = delta;
    PpoTrainerOptions o = ppoRun(corpora, dir / name);
    o.run.steps = 1;
    Expected<PpoTrainer> trainer = PpoTrainer::create(o, compiler);
    EXPECT_TRUE(trainer) << trainer.error().message;
    EXPECT_TRUE(trainer->run());
    const auto& scalars = trainer->record().stepScalars;
    return std::pair{scalars.at("training_reward_mean").at(0), scalars.at("reward_total").at(0)};
  };
  const auto [usual, usualTotal] = trainingReward(0.01, "usual.h5");
  const auto [damped, dampedTotal] = trainingReward(1e9, "damped.h5");
  EXPECT_NE(usual, 0.0);
  EXPECT_NE(usual, damped);
  // 1 − (m + δ) / (b + δ) → 0 as δ grows: for the training reward and for
  // the iteration's total alike (one formula, the task's).
  EXPECT_LT(std::abs(damped), 1e-5);
  EXPECT_NE(usualTotal, 0.0);
  EXPECT_LT(std::abs(dampedTotal), 1e-5);
}

TEST(PpoTrainerOnAFakeCompiler, FailedModulesAreSkippedNotLearnedFrom) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  FakeCompiler compiler;
  compiler.fails = [](uint64_t step, size_t, const std::string&) { return step == 1; };
  Expected<PpoTrainer> trainer = PpoTrainer::create(ppoRun(corpora, dir / "ppo.h5"), compiler);
  ASSERT_TRUE(trainer);
  ASSERT_TRUE(trainer->run());
  const results::RunRecord& r = trainer->record();
  // Iteration 1 compiled nothing: no decisions, no updates, no reward.
  EXPECT_EQ(r.stepScalars.at("failed_compilations")[1], 4.0);
  EXPECT_EQ(r.stepScalars.at("training_decisions")[1], 0.0);
  EXPECT_EQ(r.stepScalars.at("updates")[1], 0.0);
  EXPECT_TRUE(std::isnan(r.stepScalars.at("reward_mean")[1]));
  EXPECT_EQ(r.stepScalars.at("updates")[2], 5.0);
  EXPECT_EQ(r.failures.size(), 4u);
  EXPECT_EQ(r.snapshots[1].policyJson, r.snapshots[2].policyJson); // no update
}

TEST(PpoTrainerOnAFakeCompiler, ResumedRunEqualsAnUninterruptedOne) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  PpoTrainerOptions whole = ppoRun(corpora, dir / "whole.h5");
  whole.data.validationCorpus = corpora.validation;
  whole.data.validationInterval = 2;
  PpoTrainerOptions parts = whole;
  parts.run.output = dir / "parts.h5";
  parts.run.policyOutput = dir / "parts.json";
  expectResumeEqualsUninterrupted<PpoTrainer, PpoTrainerOptions, PpoProgress>(whole, parts, 2);
}

// A wall-clock budget ends the run like a complete one: the step expected
// to pass it (here the first: the budget is a nanosecond) is validated, its
// policy is the final one and written, and --resume continues to `steps`.
TEST(PpoTrainerOnAFakeCompiler, ATimeBudgetEndsTheRunWithItsFinalPolicy) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  PpoTrainerOptions options = ppoRun(corpora, dir / "budget.h5");
  options.data.validationCorpus = corpora.validation;
  options.data.validationInterval = 10;
  options.run.maxSeconds = 1e-9;
  FakeCompiler compiler;
  Expected<PpoTrainer> trainer = PpoTrainer::create(options, compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  auto ended = trainer->run();
  ASSERT_TRUE(ended) << ended.error().message;
  EXPECT_EQ(ended->termination, Termination::TimeBudget);
  EXPECT_EQ(ended->stepsRun, 1);
  EXPECT_NE(ended->message.find("--resume"), std::string::npos) << ended->message;
  EXPECT_TRUE(fs::exists(dir / "budget.json"));
  Expected<results::RunRecord> stored = results::readRunFile(dir / "budget.h5");
  ASSERT_TRUE(stored) << stored.error().message;
  ASSERT_TRUE(stored->finalPolicy);
  EXPECT_EQ(stored->finalPolicy->step, 1);
  EXPECT_TRUE(stored->bestPolicy) << "the budget's last step is validated";

  options.run.maxSeconds = 0;
  Expected<PpoTrainer> resumed = PpoTrainer::resume(options, compiler);
  ASSERT_TRUE(resumed) << resumed.error().message;
  auto rest = resumed->run();
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->termination, Termination::Completed);
  EXPECT_EQ(rest->stepsTotal, options.run.steps);
}

TEST(BcTrainerOnAFakeCompiler, RecordsTheCorpusClonesTheHeuristicAndKeepsTheBestEpoch) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  FakeCompiler compiler;
  Expected<BcTrainer> trainer = BcTrainer::create(bcRun(corpora, dir / "bc.h5"), compiler);
  ASSERT_TRUE(trainer) << trainer.error().message;
  EXPECT_EQ(compiler.evaluations, 1u); // the recording
  Expected<BcTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->trainingModules, 6u);
  EXPECT_EQ(summary->heldoutModules, 2u);
  EXPECT_EQ(summary->trainingDecisions, 6u * 12u);
  const results::RunRecord& r = trainer->record();
  expectColumnsAreTheStepDatasets(bcStepColumns(), r);
  const std::vector<double>& accuracy = r.stepScalars.at("heldout_accuracy");
  const std::vector<double>& loss = r.stepScalars.at("heldout_loss");
  size_t best = 0;
  for (size_t e = 1; e < accuracy.size(); ++e)
    if (accuracy[e] > accuracy[best] || (accuracy[e] == accuracy[best] && loss[e] < loss[best]))
      best = e;
  ASSERT_TRUE(r.bestPolicy);
  EXPECT_EQ(r.bestPolicy->step, static_cast<int64_t>(best + 1)); // epochs completed
  EXPECT_EQ(r.bestPolicy->policyJson, r.snapshots[best + 1].policyJson);
  EXPECT_EQ(summary->bestEpoch, static_cast<int64_t>(best + 1));
  EXPECT_EQ(r.checkpoint->trainerState.integers().at("best_epoch"), static_cast<int64_t>(best + 1));
  EXPECT_GT(*summary->finalHeldoutAccuracy, 0.6);

  // A second run reuses the recording instead of compiling again.
  BcTrainerOptions again = bcRun(corpora, dir / "bc.h5");
  again.run.steps = 1;
  again.recordedTrace = dir / "bc.trace.h5";
  Expected<BcTrainer> rerun = BcTrainer::create(again, compiler);
  ASSERT_TRUE(rerun) << rerun.error().message;
  EXPECT_EQ(compiler.evaluations, 1u);
  EXPECT_NE(rerun->record().attributes.at("recorded_trace").find("reused"), std::string::npos);
}

TEST(BcTrainerOnAFakeCompiler, ResumedRunEqualsAnUninterruptedOne) {
  ScratchDirectory dir;
  Corpora corpora = writeCorpora(dir);
  BcTrainerOptions whole = bcRun(corpora, dir / "whole.h5");
  BcTrainerOptions parts = whole;
  parts.run.output = dir / "parts.h5";
  parts.run.policyOutput = dir / "parts.json";
  expectResumeEqualsUninterrupted<BcTrainer, BcTrainerOptions, BcProgress>(whole, parts, 5);
}

TEST(TrainerOptions, ValidationNamesTheGroupAndField) {
  EsTrainerOptions es;
  ASSERT_FALSE(es.validate());
  EXPECT_EQ(es.validate().error().message.rfind("data.corpus:", 0), 0u)
      << es.validate().error().message;
  es.data.corpus = "c";
  es.run.snapshotInterval = 0;
  EXPECT_EQ(es.validate().error().message.rfind("run.snapshotInterval:", 0), 0u);
  PpoTrainerOptions ppo;
  ppo.data.corpus = "c";
  EXPECT_TRUE(ppo.validate());
  ppo.run.policyOutput.reset();
  EXPECT_EQ(ppo.validate().error().message.rfind("run.policyOutput:", 0), 0u);
  ppo.run.policyOutput = "p.json";
  ppo.update.minibatchSize = 0;
  EXPECT_EQ(ppo.validate().error().message.rfind("update.minibatchSize:", 0), 0u);
  BcTrainerOptions bc;
  bc.traces = {"t.h5"};
  bc.policy.initialPolicy = "p.json";
  EXPECT_EQ(bc.validate().error().message.rfind("policy.initialPolicy:", 0), 0u);
}

TEST(StepColumns, ValuesAreNumbersFlagsOrMissing) {
  struct Row {
    size_t count = 3;
    bool flag = true;
    std::optional<double> maybe;
  };
  ColumnTable<Row> table{ColumnTable<Row>::field("count", &Row::count),
                         ColumnTable<Row>::field("flag", &Row::flag),
                         ColumnTable<Row>::field("maybe", &Row::maybe)};
  results::RunRecord record;
  table.append(Row{}, record);
  table.append(Row{7, false, 0.5}, record);
  EXPECT_EQ(record.stepScalars.at("count"), (std::vector<double>{3, 7}));
  EXPECT_EQ(record.stepScalars.at("flag"), (std::vector<double>{1, 0}));
  EXPECT_TRUE(std::isnan(record.stepScalars.at("maybe")[0]));
  EXPECT_EQ(record.stepScalars.at("maybe")[1], 0.5);
}

} // namespace
} // namespace mlgo::training
