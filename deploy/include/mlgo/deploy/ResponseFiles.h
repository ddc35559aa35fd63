// Response files as clang's driver reads them: an argument `@FILE` whose file
// exists stands for the arguments written in it (GNU quoting: blanks separate,
// '…' and "…" quote, a backslash takes the next character literally), and
// those may name response files again. CMake and Ninja pass long command lines
// this way, so the launcher must see through them to see what a command does.
#pragma once

#include "mlgo/support/Expected.h"

#include <string>
#include <string_view>
#include <vector>

namespace mlgo::deploy {

// The arguments of a response file's text, split as LLVM's GNU tokenizer does.
std::vector<std::string> splitGnuArguments(std::string_view text);

// One argument quoted so that splitGnuArguments gives it back.
std::string quoteGnuArgument(std::string_view argument);

// The arguments with every `@FILE` that exists replaced by its contents,
// recursively (a nested `@FILE` is found as clang finds it: relative to the
// working directory). `@FILE` that does not exist stays, as in clang (which
// then reports it as a missing input). An unreadable file or a file that
// includes itself is an error naming the chain of files.
Expected<std::vector<std::string>> expandResponseFiles(const std::vector<std::string>& arguments);

// Whether any argument is a response file (so commands built from the
// expanded arguments may need one again).
bool usesResponseFiles(const std::vector<std::string>& arguments);

} // namespace mlgo::deploy
