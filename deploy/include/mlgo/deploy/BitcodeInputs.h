// Whether a link is an LTO link by what it links: lld runs LTO whenever an
// input is LLVM bitcode, with or without -flto on the link line, and then
// its inliner must ask the policy too. Read from the files' first bytes (no
// libLLVM: the launcher runs once per command of a build).
#pragma once

#include "mlgo/deploy/CompilerCommand.h"

#include <filesystem>
#include <optional>
#include <string>

namespace mlgo::deploy {

// Raw bitcode ('BC' 0xC0DE) or bitcode in its wrapper header.
bool isBitcodeFile(const std::filesystem::path& file);

// The first input that is or holds bitcode: an object, a member of an
// archive (regular or thin), or a -lNAME found as libNAME.a in the -L
// directories. "lib.a(member.o)" names an archive member. Unreadable inputs
// are not bitcode here (the linker reports them).
std::optional<std::string> firstBitcodeInput(const CompilerCommand& command);

} // namespace mlgo::deploy
