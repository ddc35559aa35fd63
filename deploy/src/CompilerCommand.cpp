#include "mlgo/deploy/CompilerCommand.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>

namespace mlgo::deploy {

namespace {

// Options whose value is the next argument (GCC/clang driver spelling).
constexpr auto kSeparateValue =
    std::to_array<std::string_view>({"-o",           "-I",          "-D",
                                     "-U",           "-include",    "-imacros",
                                     "-isystem",     "-iquote",     "-idirafter",
                                     "-isysroot",    "-iprefix",    "-iwithprefix",
                                     "-x",           "-MF",         "-MT",
                                     "-MQ",          "-MJ",         "-Xclang",
                                     "-Xlinker",     "-Xassembler", "-Xpreprocessor",
                                     "-mllvm",       "-target",     "-arch",
                                     "-L",           "-l",          "-T",
                                     "-u",           "-z",          "--param",
                                     "-include-pch", "-F",          "--sysroot",
                                     "-dumpdir",     "-dumpbase",   "--serialize-diagnostics",
                                     "-aux-info"});

bool takesSeparateValue(std::string_view argument) {
  return std::find(kSeparateValue.begin(), kSeparateValue.end(), argument) != kSeparateValue.end();
}

// The -x languages clang knows, and whether LLVM's optimiser sees them.
struct Language {
  std::string_view name;
  bool optimised;
};
constexpr auto kLanguages = std::to_array<Language>({{"c", true},
                                                     {"c++", true},
                                                     {"objective-c", true},
                                                     {"objective-c++", true},
                                                     {"cpp-output", true},
                                                     {"c++-cpp-output", true},
                                                     {"objective-c-cpp-output", true},
                                                     {"objective-c++-cpp-output", true},
                                                     {"cuda", true},
                                                     {"hip", true},
                                                     {"cl", true},
                                                     {"ir", true},
                                                     {"c-header", false},
                                                     {"c++-header", false},
                                                     {"objective-c-header", false},
                                                     {"objective-c++-header", false},
                                                     {"assembler", false},
                                                     {"assembler-with-cpp", false}});

const Language* findLanguage(std::string_view name) {
  auto found = std::find_if(kLanguages.begin(), kLanguages.end(),
                            [&](const Language& l) { return l.name == name; });
  return found == kLanguages.end() ? nullptr : &*found;
}

// Inputs the optimiser sees, by extension (or by -x language).
bool isOptimisedSource(std::string_view file, std::string_view language) {
  if (!language.empty() && language != "none") {
    const Language* known = findLanguage(language);
    return known && known->optimised;
  }
  std::string extension = std::filesystem::path(file).extension().string();
  // As clang's driver types them (clang/Driver/Types.cpp): C, C++ (and its
  // module interfaces), Objective-C, preprocessed forms, CUDA, HIP, OpenCL, IR.
  static constexpr auto kSources = std::to_array<std::string_view>(
      {".c",    ".cc",  ".cp",   ".cpp",  ".cxx", ".c++", ".C", ".CC", ".CPP",
       ".cppm", ".ccm", ".cxxm", ".c++m", ".i",   ".ii",  ".m", ".mm", ".M",
       ".mi",   ".mii", ".cu",   ".hip",  ".cl",  ".bc",  ".ll"});
  return std::find(kSources.begin(), kSources.end(), extension) != kSources.end();
}

bool isCxxSource(std::string_view file, std::string_view language) {
  if (!language.empty() && language != "none")
    return language.starts_with("c++") || language.starts_with("objective-c++") ||
           language == "cuda" || language == "hip";
  std::string extension = std::filesystem::path(file).extension().string();
  static constexpr auto kCxx = std::to_array<std::string_view>(
      {".cc", ".cp", ".cpp", ".cxx", ".c++", ".C", ".CC", ".CPP", ".cppm", ".ccm", ".cxxm", ".c++m",
       ".ii", ".mm", ".M", ".mii", ".cu", ".hip"});
  return std::find(kCxx.begin(), kCxx.end(), extension) != kCxx.end();
}

} // namespace

bool CompilerCommand::readsStandardInput() const {
  return std::find(sources.begin(), sources.end(), "-") != sources.end();
}

std::string CompilerCommand::whyNotSingleNativeObject() const {
  if (assemblyOrIr)
    return "-S or -emit-llvm: no native object";
  if (!compileOnly || stopsBeforeOptimiser)
    return "not a compile to an object (-c)";
  if (lto)
    return "-flto: the object is bitcode, optimised again at link time";
  if (splitDwarf)
    return "-gsplit-dwarf: a .dwo beside the object";
  if (sources.size() != 1)
    return std::to_string(sources.size()) + " sources in one command";
  return "";
}

std::string CompilerCommand::objectPath() const {
  if (output)
    return *output;
  return std::filesystem::path(sources.empty() ? "a" : sources.front()).stem().string() + ".o";
}

CompilerCommand parseCompilerCommand(const std::vector<std::string>& arguments) {
  CompilerCommand command;
  std::string language;
  auto setLanguage = [&](const std::string& value) {
    language = value;
    if (value != "none" && !findLanguage(value))
      command.unclassified = "-x " + value + ": a language the launcher does not know";
  };
  if (!arguments.empty() && (arguments[0] == "-cc1" || arguments[0] == "-cc1as"))
    command.unclassified = arguments[0] + ": clang's frontend called directly";
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    if (a.empty())
      continue;
    if (a[0] != '-' || a == "-") {
      if (isOptimisedSource(a, language)) {
        command.sources.push_back(a);
        command.cxxSource |= isCxxSource(a, language);
      } else if (a != "-")
        command.linkInputs.push_back(a);
      continue;
    }
    if (takesSeparateValue(a)) {
      if (i + 1 < arguments.size()) {
        const std::string& value = arguments[i + 1];
        if (a == "-o")
          command.output = value;
        else if (a == "-x")
          setLanguage(value);
        else if (a == "-l")
          command.libraries.push_back(value);
        else if (a == "-L")
          command.libraryDirectories.push_back(value);
      }
      ++i;
      continue;
    }
    if (a.starts_with("-o") && a.size() > 2)
      command.output = a.substr(2);
    else if (a.starts_with("-x") && a.size() > 2)
      setLanguage(a.substr(2));
    else if (a.starts_with("-l") && a.size() > 2)
      command.libraries.push_back(a.substr(2));
    else if (a.starts_with("-L") && a.size() > 2)
      command.libraryDirectories.push_back(a.substr(2));
    else if (a == "-save-temps" || a.starts_with("-save-temps="))
      command.saveTemps = true;
    else if (a.starts_with("--driver-mode=") && a != "--driver-mode=gcc" &&
             a != "--driver-mode=g++" && a != "--driver-mode=cpp")
      command.unclassified = a + ": another driver's command-line syntax";
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
                             a.starts_with("-ftime-trace") || a == "-save-temps" ||
                             a.starts_with("-save-temps=") || (a.starts_with("-o") && a.size() > 2);
    if (!writesAnotherFile)
      result.push_back(a);
  }
  result.push_back("-o");
  result.push_back(output);
  return result;
}

} // namespace mlgo::deploy
