#include "mlgo/deploy/ResponseFiles.h"

#include "mlgo/support/Files.h"

#include <algorithm>
#include <filesystem>

namespace mlgo::deploy {

namespace {

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Past this depth clang's driver reports the expansion as recursive too.
constexpr size_t kMaxDepth = 64;

Status expandInto(const std::vector<std::string>& arguments, std::vector<std::string>& chain,
                  std::vector<std::string>& out) {
  for (const std::string& argument : arguments) {
    std::error_code error;
    if (argument.size() < 2 || argument[0] != '@' ||
        !std::filesystem::exists(argument.substr(1), error)) {
      out.push_back(argument);
      continue;
    }
    std::string file = argument.substr(1);
    std::string canonical = std::filesystem::weakly_canonical(file, error).string();
    auto chainText = [&] {
      std::string text;
      for (const std::string& f : chain)
        text += f + " -> ";
      return text + canonical;
    };
    if (std::find(chain.begin(), chain.end(), canonical) != chain.end() ||
        chain.size() >= kMaxDepth)
      return makeError("response file " + chainText() + " includes itself");
    Expected<std::string> text = readFileBytes(file);
    if (!text)
      return makeError("response file " + chainText() + ": " + text.error().message);
    chain.push_back(canonical);
    Status nested = expandInto(splitGnuArguments(*text), chain, out);
    chain.pop_back();
    if (!nested)
      return nested;
  }
  return Status::ok();
}

} // namespace

std::vector<std::string> splitGnuArguments(std::string_view text) {
  std::vector<std::string> arguments;
  std::string token;
  bool inToken = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      token.push_back(text[++i]);
      inToken = true;
    } else if (c == '\'' || c == '"') {
      // Quoted text up to the same quote; a backslash still escapes inside.
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\' && i + 1 < text.size())
          ++i;
        token.push_back(text[i]);
      }
      inToken = true;
    } else if (isBlank(c)) {
      // LLVM drops empty tokens: "" alone is no argument.
      if (inToken && !token.empty())
        arguments.push_back(token);
      token.clear();
      inToken = false;
    } else {
      token.push_back(c);
      inToken = true;
    }
  }
  if (!token.empty())
    arguments.push_back(token);
  return arguments;
}

std::string quoteGnuArgument(std::string_view argument) {
  std::string quoted;
  for (char c : argument) {
    if (isBlank(c) || c == '\\' || c == '\'' || c == '"')
      quoted.push_back('\\');
    quoted.push_back(c);
  }
  return quoted;
}

Expected<std::vector<std::string>> expandResponseFiles(const std::vector<std::string>& arguments) {
  std::vector<std::string> out;
  std::vector<std::string> chain;
  if (Status expanded = expandInto(arguments, chain, out); !expanded)
    return expanded.error();
  return out;
}

bool usesResponseFiles(const std::vector<std::string>& arguments) {
  std::error_code error;
  return std::any_of(arguments.begin(), arguments.end(), [&](const std::string& a) {
    return a.size() > 1 && a[0] == '@' && std::filesystem::exists(a.substr(1), error);
  });
}

} // namespace mlgo::deploy
