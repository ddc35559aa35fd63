// The evaluator against a stand-in compiler that crashes, hangs, writes
// garbage or exits early: every job ends with its status, nothing is left
// behind (FIFOs, scratch files, zombies), and the other jobs are intact.
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Policy.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

namespace fs = std::filesystem;

namespace mlgo::evaluators {
namespace {

using mlgo::testing::ScratchDirectory;

struct FaultCase {
  const char* mode;
  JobStatus expected;
};

const FaultCase kCases[] = {
    {"ok", JobStatus::Ok},
    {"crash", JobStatus::CompilerCrashed},
    {"crash-mid", JobStatus::CompilerCrashed},
    {"hang", JobStatus::TimedOut},
    {"hang-mid", JobStatus::TimedOut},
    {"garbage", JobStatus::ProtocolError},
    {"truncate", JobStatus::ProtocolError},
    {"early", JobStatus::BadObject},
    {"nochannel", JobStatus::Ok},
    {"fail", JobStatus::CompilerFailed},
};

class EvaluatorFaults : public ::testing::Test {
protected:
  void SetUp() override {
    // One real object the fake "produces", and one module per fault mode.
    fs::path object = dir_ / "real.o";
    mlgo::testing::compileWithEmbeddedBitcode("int f(int x) { return x + 1; }\n", object);
    std::string modules;
    for (const FaultCase& c : kCases) {
      std::string name = c.mode;
      mlgo::testing::writeText(dir_ / "corpus" / (name + ".bc"), "BC");
      std::string cmd = std::string("-cc1") + '\0' + "-fake-mode=" + name + '\0' +
                        "-fake-object=" + object.string() + '\0' +
                        "-fake-header=" + std::string(MLGO_TEST_DATA_DIR) +
                        "/inliner-header-llvm22.json";
      mlgo::testing::writeText(dir_ / "corpus" / (name + ".cmd"), cmd);
      modules += (modules.empty() ? "\"" : ", \"") + name + "\"";
    }
    mlgo::testing::writeText(dir_ / "corpus/corpus_description.json",
                             "{\"has_thinlto\": false, \"modules\": [" + modules + "]}");
    fs::create_directories(dir_ / "scratch");
  }

  EvaluatorOptions options() const {
    EvaluatorOptions o;
    o.clang = std::string(MLGO_TEST_DATA_DIR) + "/fake-clang.py";
    o.workers = 2;
    o.compileTimeout = std::chrono::milliseconds(1500);
    o.scratchDirectory = dir_ / "scratch";
    return o;
  }

  ScratchDirectory dir_;
};

TEST_F(EvaluatorFaults, EveryFaultIsRecordedAndNothingIsLeftBehind) {
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(dir_ / "corpus");
  ASSERT_TRUE(corpus) << corpus.error().message;
  Expected<std::unique_ptr<Evaluator>> evaluator =
      Evaluator::create(options(), CompilerTask::inliningForSize());
  ASSERT_TRUE(evaluator) << evaluator.error().message;
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy();
  EvaluationRequest request;
  request.candidates = {echo.get()};
  for (const corpus::ModuleSpec& m : corpus->modules())
    request.modules.push_back(&m);
  request.recordTrajectories = true;
  EvaluationResult result = (*evaluator)->evaluate(request);

  ASSERT_EQ(result.jobs.size(), std::size(kCases));
  for (size_t i = 0; i < std::size(kCases); ++i) {
    const JobResult& job = result.job(0, i);
    EXPECT_EQ(job.status, kCases[i].expected)
        << kCases[i].mode << ": got " << jobStatusName(job.status) << " — " << job.message;
    if (!job.ok()) {
      EXPECT_NE(job.message.find(kCases[i].mode), std::string::npos)
          << "message must name the module: " << job.message;
    }
  }
  // The good job's decisions went through and were recorded.
  const JobResult& ok = result.job(0, 0);
  EXPECT_EQ(ok.decisions, 3u);
  ASSERT_TRUE(ok.trajectory);
  EXPECT_EQ(ok.trajectory->defaultDecisions, (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(ok.trajectory->actions, (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(ok.trajectory->width, 39u);
  EXPECT_EQ(ok.trajectory->row(2)[0], 20.0);
  EXPECT_GT(ok.sizeBytes, 0u);
  EXPECT_DOUBLE_EQ(ok.reward, 0.0); // same object as the baseline
  // The failed compile kept clang's stderr.
  EXPECT_NE(result.job(0, std::size(kCases) - 1).stderrTail.find("fake failure"),
            std::string::npos);

  EXPECT_TRUE(fs::is_empty(dir_ / "scratch")) << "FIFOs or scratch files left behind";
  int status;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1) << "a child process was left unreaped";
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(EvaluatorFaults, PolicyThatDisagreesWithTheHeaderIsAClearError) {
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(dir_ / "corpus");
  ASSERT_TRUE(corpus);
  Expected<std::unique_ptr<Evaluator>> evaluator =
      Evaluator::create(options(), CompilerTask::inliningForSize());
  ASSERT_TRUE(evaluator);
  // A policy reading a feature clang does not send.
  std::unique_ptr<policies::Policy> wrong = policies::makeHeuristicEchoPolicy("no_such_feature");
  JobResult job = (*evaluator)
                      ->compile(*corpus->find("ok"), wrong.get(),
                                policies::DecisionMode::Deterministic, 0, false);
  EXPECT_EQ(job.status, JobStatus::PolicyMismatch);
  EXPECT_NE(job.message.find("no_such_feature"), std::string::npos) << job.message;
}

TEST(EvaluatorOptions, ValidationNamesTheField) {
  EvaluatorOptions o;
  o.workers = 0;
  Status s = o.validate();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("workers"), std::string::npos);
  EvaluatorOptions p;
  p.clang = "/nonexistent/clang";
  ASSERT_FALSE(p.validate());
  EXPECT_NE(p.validate().error().message.find("clang"), std::string::npos);
}

TEST(SizeReward, MatchesMlCompilerOpt) {
  EXPECT_DOUBLE_EQ(sizeReward(100, 100), 0.0);
  EXPECT_NEAR(sizeReward(90, 100), 1.0 - 90.01 / 100.01, 1e-15);
  EXPECT_LT(sizeReward(110, 100), 0.0);
}

} // namespace
} // namespace mlgo::evaluators
