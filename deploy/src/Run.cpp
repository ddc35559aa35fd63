// Running the plan: exec for the plain case (the build system then sees
// clang's own exit status and signals), two children for --best-of.
#include "mlgo/deploy/Launcher.h"

#include "mlgo/deploy/ElfText.h"
#include "mlgo/policies/PolicyLocation.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mlgo::deploy {

namespace {

std::vector<char*> argvOf(const std::string& program, const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : arguments)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

void printCommand(const std::string& compiler, const std::vector<std::string>& arguments) {
  std::cerr << "mlgo-cc:";
  std::cerr << " " << compiler;
  for (const std::string& a : arguments)
    std::cerr << " " << a;
  std::cerr << "\n";
}

// Exit status as a shell reports it (128 + signal for a killed child).
int runChild(const std::string& compiler, const std::vector<std::string>& arguments, bool quiet) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::vector<char*> argv = argvOf(compiler, arguments);
  pid_t pid = -1;
  int error = posix_spawnp(&pid, compiler.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    std::cerr << "mlgo-cc: cannot run " << compiler << ": " << std::strerror(error) << "\n";
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The second object of --best-of, removed if the launcher is interrupted.
char pendingObject[4096] = {0};

void removePendingObject(int signal) {
  if (pendingObject[0])
    ::unlink(pendingObject);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

int runBestOf(const LaunchPlan& plan) {
  int status = runChild(plan.compiler, plan.arguments, /*quiet=*/false);
  if (status != 0)
    return status; // clang's diagnostics are out; nothing to compare
  std::string object = plan.command.objectPath();
  std::string plain = object + ".mlgo-oz.o";
  std::snprintf(pendingObject, sizeof pendingObject, "%s", plain.c_str());
  for (int signal : {SIGINT, SIGTERM, SIGHUP})
    std::signal(signal, removePendingObject);
  // Without the plugin, quietly: its diagnostics would repeat the first's.
  std::vector<std::string> plainArguments = withOnlyObjectOutput(plan.userArguments, plain);
  if (plan.options.verbose)
    printCommand(plan.compiler, plainArguments);
  int plainStatus = runChild(plan.compiler, plainArguments, /*quiet=*/true);
  Expected<uint64_t> withPolicy = textBytes(object);
  Expected<uint64_t> withoutPolicy =
      plainStatus == 0 ? textBytes(plain) : Expected<uint64_t>(makeError("did not compile"));
  bool keepPlain = withPolicy && withoutPolicy && *withoutPolicy < *withPolicy;
  std::error_code error;
  if (keepPlain)
    std::filesystem::rename(plain, object, error);
  else
    std::filesystem::remove(plain, error);
  pendingObject[0] = 0;
  if (plan.options.verbose && withPolicy && withoutPolicy)
    std::cerr << "mlgo-cc: " << object << ": .text " << *withPolicy << " B with the policy, "
              << *withoutPolicy << " B without: kept "
              << (keepPlain ? "the object without" : "the policy's") << "\n";
  if (error) {
    std::cerr << "mlgo-cc: " << object << ": " << error.message() << "\n";
    return 1;
  }
  return 0;
}

} // namespace

int runLaunch(const LaunchPlan& plan) {
  if (plan.policyFile)
    ::setenv(policies::kPolicyEnvironment, plan.policyFile->c_str(), 1);
  if (plan.options.verbose)
    printCommand(plan.compiler, plan.arguments);
  if (plan.bestOf)
    return runBestOf(plan);
  std::vector<char*> argv = argvOf(plan.compiler, plan.arguments);
  ::execvp(plan.compiler.c_str(), argv.data());
  std::cerr << "mlgo-cc: cannot run " << plan.compiler << ": " << std::strerror(errno) << "\n";
  return 127;
}

} // namespace mlgo::deploy
