// The .cmd file format on its own, without LLVM: the launcher
// (mlgo-cc --mlgo-search) writes and reads it and must not load libLLVM.
#include "mlgo/corpus/Corpus.h"

namespace mlgo::corpus {

std::vector<std::string> splitCommandFile(std::string_view contents) {
  std::vector<std::string> arguments;
  size_t begin = 0;
  while (begin < contents.size()) {
    size_t end = contents.find('\0', begin);
    if (end == std::string_view::npos)
      end = contents.size();
    arguments.emplace_back(contents.substr(begin, end - begin));
    begin = end + 1;
  }
  return arguments;
}

std::string joinCommandFile(const std::vector<std::string>& arguments) {
  std::string contents;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i)
      contents.push_back('\0');
    contents += arguments[i];
  }
  return contents;
}

} // namespace mlgo::corpus
