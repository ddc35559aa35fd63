#include "mlgo/deploy/Cc1Command.h"

#include "mlgo/deploy/Process.h"
#include "mlgo/support/Files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <unistd.h>

namespace mlgo::deploy {

namespace {

// cc1 options that write files of their own beside the object, with their
// value as the next argument (-dependency-file, -MT, -MQ) or none.
constexpr std::string_view kDependencyWithValue[] = {"-dependency-file", "-MT", "-MQ"};
constexpr std::string_view kDependencyAlone[] = {"-sys-header-deps", "-module-file-deps", "-MP",
                                                 "-MG"};

bool contains(std::span<const std::string_view> list, std::string_view argument) {
  return std::find(list.begin(), list.end(), argument) != list.end();
}

std::vector<std::string> withoutDependencyOutputs(const std::vector<std::string>& arguments) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (contains(kDependencyWithValue, arguments[i])) {
      ++i;
      continue;
    }
    if (!contains(kDependencyAlone, arguments[i]))
      kept.push_back(arguments[i]);
  }
  return kept;
}

} // namespace

std::vector<std::string> Cc1Command::backend(const std::string& bitcode,
                                             const std::string& object) const {
  std::vector<std::string> out = corpusArguments();
  out.insert(out.end(), {"-o", object, "-x", "ir", bitcode});
  return out;
}

std::vector<std::string> Cc1Command::corpusArguments() const {
  // -fembed-bitcode: the module already holds what the frontend embedded.
  std::vector<std::string> out;
  for (std::string& a : withoutDependencyOutputs(arguments))
    if (!a.starts_with("-fembed-bitcode"))
      out.push_back(std::move(a));
  return out;
}

std::vector<std::vector<std::string>> parseDriverJobs(const std::string& text) {
  std::vector<std::vector<std::string>> jobs;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    // A job line: ` "exe" "arg" …`, each argument quoted, \\ \" \$ escaped.
    if (!line.starts_with(" \""))
      continue;
    std::vector<std::string> job;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] != '"')
        continue;
      std::string argument;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size())
          ++i;
        argument.push_back(line[i]);
      }
      job.push_back(std::move(argument));
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Expected<Cc1Command> cc1CommandFor(const std::string& compiler,
                                   const std::vector<std::string>& arguments) {
  const char* tmp = std::getenv("TMPDIR");
  std::string file = std::string(tmp && *tmp ? tmp : "/tmp") + "/mlgo-cc-jobs-XXXXXX";
  int fd = ::mkstemp(file.data());
  if (fd < 0)
    return makeError(file + ": cannot create");
  ::close(fd);
  std::vector<std::string> query = arguments;
  query.push_back("-###");
  ChildStreams streams;
  streams.errors = file;
  int status = runProgram(compiler, query, streams);
  Expected<std::string> text = readFileBytes(file);
  std::filesystem::remove(file);
  if (!text)
    return text.error();
  if (status != 0)
    return makeError(compiler + " -### failed: " + text->substr(0, 2000));
  std::vector<std::vector<std::string>> jobs = parseDriverJobs(*text);
  if (jobs.size() != 1)
    return makeError("the driver runs " + std::to_string(jobs.size()) +
                     " jobs for it, not one frontend job");
  std::vector<std::string>& job = jobs.front();
  if (job.size() < 5 || job[1] != "-cc1" ||
      std::find(job.begin(), job.end(), "-emit-obj") == job.end())
    return makeError("the driver's job is not a -cc1 compile to an object");
  Cc1Command command;
  command.compiler = job.front();
  // The input comes last, after its -x.
  command.input = job.back();
  command.language = job[job.size() - 2];
  if (job[job.size() - 3] != "-x")
    return makeError("the frontend job does not end in -x LANGUAGE INPUT");
  job.resize(job.size() - 3);
  auto output = std::find(job.begin(), job.end(), "-o");
  if (output == job.end() || output + 1 == job.end())
    return makeError("the frontend job has no -o");
  command.output = *(output + 1);
  job.erase(output, output + 2);
  command.arguments.assign(job.begin() + 1, job.end());
  return command;
}

} // namespace mlgo::deploy
