#include "mlgo/deploy/CompilerCommand.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>

namespace mlgo::deploy {

namespace {

// Options whose value is the next argument (GCC/clang driver spelling).
constexpr auto kSeparateValue = std::to_array<std::string_view>({"-o",
                                                                 "-I",
                                                                 "-D",
                                                                 "-U",
                                                                 "-include",
                                                                 "-imacros",
                                                                 "-isystem",
                                                                 "-iquote",
                                                                 "-idirafter",
                                                                 "-isysroot",
                                                                 "-iprefix",
                                                                 "-iwithprefix",
                                                                 "-x",
                                                                 "-MF",
                                                                 "-MT",
                                                                 "-MQ",
                                                                 "-MJ",
                                                                 "-Xclang",
                                                                 "-Xlinker",
                                                                 "-Xassembler",
                                                                 "-Xpreprocessor",
                                                                 "-mllvm",
                                                                 "-target",
                                                                 "-arch",
                                                                 "-L",
                                                                 "-T",
                                                                 "-u",
                                                                 "-z",
                                                                 "--param",
                                                                 "-include-pch",
                                                                 "-F",
                                                                 "--sysroot",
                                                                 "-dumpdir",
                                                                 "-dumpbase",
                                                                 "--serialize-diagnostics",
                                                                 "-aux-info"});

bool takesSeparateValue(std::string_view argument) {
  return std::find(kSeparateValue.begin(), kSeparateValue.end(), argument) != kSeparateValue.end();
}

// Inputs the optimiser sees, by extension (or by -x language).
bool isOptimisedSource(std::string_view file, std::string_view language) {
  if (!language.empty() && language != "none")
    return language.find("assembler") == std::string_view::npos;
  std::string extension = std::filesystem::path(file).extension().string();
  static constexpr auto kSources =
      std::to_array<std::string_view>({".c", ".cc", ".cp", ".cpp", ".cxx", ".c++", ".C", ".CC",
                                       ".CPP", ".i", ".ii", ".m", ".mm", ".cu", ".bc", ".ll"});
  return std::find(kSources.begin(), kSources.end(), extension) != kSources.end();
}

} // namespace

std::string CompilerCommand::objectPath() const {
  if (output)
    return *output;
  return std::filesystem::path(sources.empty() ? "a" : sources.front()).stem().string() + ".o";
}

CompilerCommand parseCompilerCommand(const std::vector<std::string>& arguments) {
  CompilerCommand command;
  std::string language;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    if (a.empty())
      continue;
    if (a[0] != '-' || a == "-") {
      if (a != "-" && isOptimisedSource(a, language))
        command.sources.push_back(a);
      continue;
    }
    if (takesSeparateValue(a)) {
      if (i + 1 < arguments.size()) {
        if (a == "-o")
          command.output = arguments[i + 1];
        else if (a == "-x")
          language = arguments[i + 1];
      }
      ++i;
      continue;
    }
    if (a.starts_with("-o") && a.size() > 2)
      command.output = a.substr(2);
    else if (a.starts_with("-x") && a.size() > 2)
      language = a.substr(2);
    else if (a == "-c")
      command.compileOnly = true;
    else if (a == "-E" || a == "-fsyntax-only" || a == "-M" || a == "-MM")
      command.stopsBeforeOptimiser = true;
    else if (a == "-S" || a == "-emit-llvm")
      command.assemblyOrIr = true;
    else if (a == "-flto" || a.starts_with("-flto="))
      command.lto = true;
    else if (a == "-fno-lto")
      command.lto = false;
    else if (a == "-fuse-ld=lld" || a == "--ld-path=ld.lld")
      command.usesLld = true;
    else if (a.starts_with("-fuse-ld="))
      command.usesLld = a.find("lld") != std::string::npos;
    else if (a == "-gsplit-dwarf" || a.starts_with("-gsplit-dwarf="))
      command.splitDwarf = true;
  }
  return command;
}

std::vector<std::string> withOnlyObjectOutput(const std::vector<std::string>& arguments,
                                              const std::string& output) {
  std::vector<std::string> result;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ" || a == "--serialize-diagnostics") {
      ++i; // and its value
      continue;
    }
    bool writesAnotherFile = a == "-MD" || a == "-MMD" || a == "-MP" || a.starts_with("-MF") ||
                             a.starts_with("-MT") || a.starts_with("-MQ") ||
                             a.starts_with("-Wp,-MD") || a.starts_with("-Wp,-MMD") ||
                             a.starts_with("-ftime-trace") || (a.starts_with("-o") && a.size() > 2);
    if (!writesAnotherFile)
      result.push_back(a);
  }
  result.push_back("-o");
  result.push_back(output);
  return result;
}

} // namespace mlgo::deploy
