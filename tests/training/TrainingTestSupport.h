// For the trainer tests on real corpora: real evaluators, and the trainer
// CLIs run as child processes (to completion, or killed mid-run).
#pragma once

#include "TestSupport.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/results/RunFile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

extern char** environ;

namespace mlgo::testing {

// An in-process evaluator for the inlining task, without the on-disk
// baseline cache (tests compile their own baselines).
inline std::unique_ptr<evaluators::Evaluator> testEvaluator(size_t workers,
                                                            const std::filesystem::path& scratch) {
  evaluators::EvaluatorOptions options;
  options.workers = workers;
  options.scratchDirectory = scratch;
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
  EXPECT_TRUE(evaluator) << evaluator.error().message;
  return evaluator ? evaluator.take() : nullptr;
}

// A trainer CLI on the zlib corpus with a small MLP, two workers, the test's
// scratch directory and `output`; `flags` are the trainer's own.
inline std::vector<std::string> zlibTrainerCommand(const std::string& program,
                                                   const std::vector<std::string>& flags,
                                                   const std::filesystem::path& scratch,
                                                   const std::filesystem::path& output) {
  std::vector<std::string> command{
      program,    "--corpus", realCorpusDirectory("zlib").string(), "--vocabulary-quantiles", "50",
      "--hidden", "8"};
  command.insert(command.end(), flags.begin(), flags.end());
  for (const std::string& tail :
       {std::string("--workers"), std::string("2"), std::string("--scratch"), scratch.string(),
        std::string("-o"), output.string()})
    command.push_back(tail);
  return command;
}

inline pid_t spawnProgram(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  return pid;
}

inline int waitForProgram(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Runs a command to its end; success if it exited with 0.
inline ::testing::AssertionResult runsToCompletion(const std::vector<std::string>& args) {
  int status = waitForProgram(spawnProgram(args));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << args.front() << " did not exit cleanly (status " << status << ")";
}

// A SIGKILLed trainer cannot stop the compilers it started; they stay
// behind, blocked on their channel. Kills the ones whose command line names
// `scratch` (and nothing else).
inline void killLeftoverCompilers(const std::filesystem::path& scratch) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(scratch.string() + "/mlgo-job-") != std::string::npos)
      kill(static_cast<pid_t>(std::stol(name)), SIGKILL);
  }
}

// Starts a trainer writing `runFile` and SIGKILLs it once the file holds
// `steps` steps; success if it died by the signal and left a readable file
// with fewer than `totalSteps` steps (something left to resume).
inline ::testing::AssertionResult killedAfterCheckpoint(const std::vector<std::string>& args,
                                                        const std::filesystem::path& runFile,
                                                        size_t steps, size_t totalSteps,
                                                        const std::filesystem::path& scratch) {
  pid_t pid = spawnProgram(args);
  bool reached = false;
  for (int i = 0; i < 1200 && !reached; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Expected<results::RunRecord> partial = results::readRunFile(runFile);
    reached = partial && partial->steps() >= steps;
  }
  kill(pid, SIGKILL);
  int status = waitForProgram(pid);
  killLeftoverCompilers(scratch);
  if (!reached)
    return ::testing::AssertionFailure() << "the run never checkpointed step " << steps;
  if (!WIFSIGNALED(status))
    return ::testing::AssertionFailure() << "the trainer was not killed (status " << status << ")";
  Expected<results::RunRecord> partial = results::readRunFile(runFile);
  if (!partial)
    return ::testing::AssertionFailure()
           << "the run file is unreadable after SIGKILL: " << partial.error().message;
  if (partial->steps() >= totalSteps)
    return ::testing::AssertionFailure() << "killed too late to test resuming";
  return ::testing::AssertionSuccess();
}

// The resume-after-SIGKILL experiment: `command(file)` run to its end into
// whole.h5, and again into killed.h5, killed after 2 of its `steps` steps and
// resumed with one worker (which must not matter). Both files, to compare.
inline void runKilledAndResumed(
    const std::string& program,
    const std::function<std::vector<std::string>(const std::filesystem::path&)>& command,
    size_t steps, const std::filesystem::path& scratch, results::RunRecord& whole,
    results::RunRecord& resumed) {
  const std::filesystem::path wholeFile = scratch / "whole.h5", killed = scratch / "killed.h5";
  ASSERT_TRUE(runsToCompletion(command(wholeFile)));
  ASSERT_TRUE(killedAfterCheckpoint(command(killed), killed, 2, steps, scratch));
  ASSERT_TRUE(runsToCompletion({program, "--resume", killed.string(), "--workers", "1"}));
  Expected<results::RunRecord> a = results::readRunFile(wholeFile);
  Expected<results::RunRecord> b = results::readRunFile(killed);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->steps(), steps);
  whole = a.take();
  resumed = b.take();
}

} // namespace mlgo::testing
