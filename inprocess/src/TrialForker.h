// Incremental trials: one compile of a module answers many single-decision
// trials. The worker compiles the base flip set; at each trial's decision it
// fork()s, and the child takes the other action there and finishes the
// compile, paying only for what comes after that decision (copy-on-write
// keeps everything before it: the module, the analyses, the advisor). The
// last trial is taken by the worker itself, so the base's own remainder is
// never compiled.
//
// Why a trial is not forked is a short reason without numbers (the
// evaluator counts them); such trials are compiled in full.
//
// Exactness: a full compile with the toggled flip set makes the same
// decisions as the base up to the first decision whose state is the toggled
// one. The child starts at the trial's position, so that position must be
// the state's first occurrence; a state met earlier in the base is not
// forked (NotIncremental: the trainer compiles that trial in full). After
// the fork the child toggles the state for the rest of its compile, as the
// full compile's flip set does. The worker is single-threaded while it
// compiles (no thread of ours or LLVM's runs then), which fork() requires.
#pragma once

#include "mlgo/evaluators/WorkerProtocol.h"
#include "mlgo/policies/FlipSet.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace mlgo::inprocess {

class TrialForker {
public:
  // `absorb` takes the code a child generated (CodeReuse::learned), so the
  // next children reuse it.
  TrialForker(const evaluators::protocol::JobMessage& job, const policies::FlipSetPolicy& flips,
              std::function<void(std::string_view)> absorb = {});

  // The advisor's hook (AdvisorSession::invert): forks at trial positions;
  // true where this process takes the other action.
  bool beforeDecision(uint64_t decision, const std::vector<double>& inputs);

  // A child, or the worker once it has become the last trial: this
  // process's compile is that trial's.
  bool isTrial() const { return own_.has_value(); }
  bool isChild() const { return childPipe_ >= 0; }
  // Still compiling only the base: nothing after the inliner is needed.
  bool baseOnly() const { return !isTrial(); }

  // For the trial's time report (evaluators::CompileTimes): when this
  // process's trial reached its decision, and how long the worker had waited
  // for children before then (not the trial's cost, nor the base's).
  std::chrono::steady_clock::time_point decisionReached() const { return decisionAt_; }
  double secondsWaited() const { return waited_; }

  // In a child: what its compile generated, to hand to the worker.
  void setLearned(std::string learned) { learned_ = std::move(learned); }
  // In a child: sends its result (and setLearned's code) to the worker and
  // ends the process.
  [[noreturn]] void finishChild(const evaluators::protocol::ResultMessage& result);
  // In the worker: every trial's result, `own` (this process's compile)
  // placed at the trial it became; trials never reached say so.
  std::vector<evaluators::protocol::ResultMessage>
  results(std::optional<evaluators::protocol::ResultMessage> own);

private:
  // Runs trial `index` in a child and waits for its result (runChild),
  // timing it.
  evaluators::protocol::ResultMessage fork(size_t index, uint64_t state);
  evaluators::protocol::ResultMessage runChild(size_t index, uint64_t state);

  const std::vector<evaluators::protocol::TrialPoint>& trials_;
  const policies::FlipSetPolicy& flips_;
  std::chrono::duration<double> childDeadline_;
  size_t next_ = 0;                   // the next trial to reach
  std::unordered_set<uint64_t> seen_; // states decided so far (the base's)
  std::optional<size_t> own_;         // the trial this process compiles
  uint64_t toggled_ = 0;              // its state
  int childPipe_ = -1;                // in a child: where its result goes
  std::vector<std::optional<evaluators::protocol::ResultMessage>> results_;
  std::function<void(std::string_view)> absorb_;
  std::string learned_;
  std::chrono::steady_clock::time_point decisionAt_{};
  double waited_ = 0;
};

} // namespace mlgo::inprocess
