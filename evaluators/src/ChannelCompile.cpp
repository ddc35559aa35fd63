#include "mlgo/evaluators/ChannelCompile.h"

#include "mlgo/evaluators/InteractiveChannel.h"
#include "mlgo/evaluators/Process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace mlgo::evaluators {

namespace {

// The compiler as the user's build runs it: inherited standard streams and
// environment (ChildProcess captures its output, which a build must see).
class Compiler {
public:
  static Expected<Compiler> start(const std::string& program,
                                  const std::vector<std::string>& arguments) {
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& argument : arguments)
      argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (int error = ::posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ))
      return makeError("cannot run " + program + ": " + std::strerror(error));
    return Compiler(pid);
  }
  Compiler(Compiler&& other) noexcept : pid_(other.pid_), status_(other.status_) {
    other.pid_ = -1;
  }
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;
  ~Compiler() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      wait(0);
    }
  }
  // Whether it still runs (reaping it if not).
  bool running() { return !status_ && !wait(WNOHANG); }
  int finish() { // its exit status, as a shell reports it
    while (!status_ && !wait(0)) {
    }
    return *status_;
  }

private:
  explicit Compiler(pid_t pid) : pid_(pid) {}
  bool wait(int flags) {
    int raw = 0;
    pid_t done = ::waitpid(pid_, &raw, flags);
    if (done == 0 || (done < 0 && errno == EINTR))
      return false;
    status_ = done < 0 ? 127 : WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    return true;
  }
  pid_t pid_;
  std::optional<int> status_;
};

} // namespace

Expected<int> runCompilerWithChannel(const CompilerTask& task, const policies::Policy& policy,
                                     const std::string& program, std::vector<std::string> arguments,
                                     const std::filesystem::path& scratchParent) {
  MLGO_ASSIGN_OR_RETURN(ScratchDirectory scratch,
                        ScratchDirectory::create(scratchParent, "mlgo-cc-channel-"));
  const std::filesystem::path base = scratch.path() / "channel";
  MLGO_ASSIGN_OR_RETURN(InteractiveChannel channel, InteractiveChannel::create(base));
  const std::vector<std::string> extra = task.argumentsFor(base);
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  MLGO_ASSIGN_OR_RETURN(Compiler compiler, Compiler::start(program, arguments));
  // A build's compile may be long; the deadline only guards a wedged peer.
  const Clock::time_point deadline = Clock::now() + std::chrono::hours(24);
  MLGO_ASSIGN_OR_RETURN(InteractiveChannel::OpenResult opened,
                        channel.open(deadline, [&] { return compiler.running(); }));
  if (opened == InteractiveChannel::OpenResult::Opened) {
    ChannelOutcome answered = answerChannel(channel, deadline,
                                            {.policy = &policy,
                                             .mode = policies::DecisionMode::Deterministic,
                                             .rngKey = 0,
                                             .taskName = task.name,
                                             .adviceName = task.adviceName,
                                             .defaultDecisionFeature = "",
                                             .recordTrajectory = false,
                                             .appended = std::nullopt,
                                             .adviceOnMismatch = std::nullopt});
    if (answered.kind != ChannelOutcome::Kind::Finished)
      return makeError("the " + task.name + " policy could not answer the compiler (" +
                       answered.message +
                       "); the compile was stopped rather than finished without it");
  }
  return compiler.finish();
}

} // namespace mlgo::evaluators
