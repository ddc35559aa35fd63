// Running a program and waiting for it, as the launcher's compiles do:
// posix_spawn, optional redirections, the exit status as a shell reports it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mlgo::deploy {

struct ChildStreams {
  std::string input;  // standard input from this file (empty: inherited)
  std::string output; // standard output to this file (empty: inherited)
  std::string errors; // standard error to this file (empty: inherited)
  bool quiet = false; // standard output and error to /dev/null
  // Set in the child's environment on top of this process's.
  std::vector<std::pair<std::string, std::string>> environment;
};

// Prints "mlgo-cc: [NAME=VALUE …] PROGRAM ARGUMENTS…" on standard error
// (--mlgo-verbose).
void printCommand(const std::string& program, const std::vector<std::string>& arguments,
                  const std::vector<std::pair<std::string, std::string>>& environment = {});

// The exit status (128 + signal for a killed child; 127 when it cannot be
// started, with the reason on standard error).
int runProgram(const std::string& program, const std::vector<std::string>& arguments,
               const ChildStreams& streams = {});

} // namespace mlgo::deploy
