// The evaluator against a stand-in compiler that crashes, hangs, writes
// garbage or exits early: every job ends with its status, nothing is left
// behind (FIFOs, scratch files, zombies), and the other jobs are intact.
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/evaluators/Process.h"
#include "mlgo/policies/Policy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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
      mlgo::testing::writeText(dir_ / "corpus" / (name + ".bc"), mlgo::testing::kBitcodeSignature);
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
    // The stand-in compiler is a clang process: this is the clang backend.
    o.backend = BackendKind::Clang;
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
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
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
  JobResult job = (*evaluator)->compile({.module = corpus->find("ok"), .policy = wrong.get()});
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

namespace mlgo::evaluators {
namespace {

bool processIsGone(pid_t pid) {
  // Gone, or a zombie waiting for init to reap it: either way not running.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return true;
  size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// A trainer killed with SIGKILL runs no cleanup: its compilers must die with
// it rather than linger (a clang whose channel peer vanished spins).
TEST(ChildProcess, DiesWithAKilledParent) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t trainer = fork();
  ASSERT_GE(trainer, 0);
  if (trainer == 0) {
    close(fds[0]);
    Expected<ChildProcess> child = ChildProcess::spawn("/bin/sleep", {"100"}, "/dev/null");
    pid_t pid = child ? child->pid() : -1;
    if (write(fds[1], &pid, sizeof pid) != sizeof pid)
      _exit(1);
    pause();
    _exit(0);
  }
  close(fds[1]);
  pid_t compiler = -1;
  ASSERT_EQ(read(fds[0], &compiler, sizeof compiler), static_cast<ssize_t>(sizeof compiler));
  close(fds[0]);
  ASSERT_GT(compiler, 0);
  EXPECT_FALSE(processIsGone(compiler));
  kill(trainer, SIGKILL);
  int status;
  waitpid(trainer, &status, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gone = processIsGone(compiler);
  }
  EXPECT_TRUE(gone) << "the child outlived its killed parent";
  if (!gone)
    kill(compiler, SIGKILL);
}

// A corpus of the other -O level than the task's baseline gets a warning
// naming the levels found, the task and --task; a matching one none.
TEST(CorpusOptimisationLevel, AMismatchIsNamed) {
  ScratchDirectory dir;
  std::string modules;
  for (const char* name : {"a.o", "b.o", "c.o"}) {
    std::string level = std::string(name) == "c.o" ? "-O2" : "-Oz";
    ASSERT_TRUE(corpus::writeModuleFiles(dir.path(), name, mlgo::testing::kBitcodeSignature,
                                         corpus::joinCommandFile({"-cc1", "-O1", level})));
    modules += (modules.empty() ? "\"" : ", \"") + std::string(name) + "\"";
  }
  mlgo::testing::writeText(dir / "corpus_description.json",
                           "{\"has_thinlto\": false, \"modules\": [" + modules + "]}");
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(dir.path());
  ASSERT_TRUE(corpus) << corpus.error().message;
  EXPECT_EQ(optimisationLevelOf(corpus->modules()[2]), "-O2"); // the last -O option
  std::optional<std::string> inlining =
      optimisationLevelWarning(*corpus, CompilerTask::inliningForSize());
  ASSERT_TRUE(inlining);
  EXPECT_NE(inlining->find("-O2 (1 of 3 modules)"), std::string::npos) << *inlining;
  EXPECT_NE(inlining->find("inlining-size (--task) compares against -Oz"), std::string::npos)
      << *inlining;
  std::optional<std::string> eviction =
      optimisationLevelWarning(*corpus, CompilerTask::regallocEviction());
  ASSERT_TRUE(eviction);
  EXPECT_NE(eviction->find("-Oz (2 of 3 modules)"), std::string::npos) << *eviction;
  mlgo::testing::writeText(dir / "corpus_description.json",
                           "{\"has_thinlto\": false, \"modules\": [\"a.o\", \"b.o\"]}");
  Expected<corpus::Corpus> oz = corpus::Corpus::load(dir.path());
  ASSERT_TRUE(oz);
  EXPECT_FALSE(optimisationLevelWarning(*oz, CompilerTask::inliningForSize()));
}

} // namespace
} // namespace mlgo::evaluators
