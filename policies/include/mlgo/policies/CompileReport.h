// What a compile through the pass plugin tells mlgo-cc about itself, so that
// --mlgo-best-of need not compile a unit again without the policy where the
// policy's compile already was that compile: the pipeline -Oz's own and
// every inlining decision the heuristic's. Guards then cost a second
// compile only where a policy changed something (docs/deployment.md).
// Header-only: mlgo-cc reads it and must not load libLLVM.
#pragma once

#include <string_view>

namespace mlgo::policies {

// The file the plugin appends its lines to; mlgo-cc sets it for the
// policy's compile of --mlgo-best-of.
inline constexpr const char* kCompileReportEnvironment = "MLGO_COMPILE_REPORT";

// The file the plugin writes the unit's module to, as bitcode, before any
// pass runs; mlgo-cc sets it for the first compile of a C++ unit under
// --mlgo-best-of(-set), whose other compiles then start from it instead of
// parsing the source again (deploy::Cc1Command::backend). A write that
// fails leaves no file, and the other compiles start from the source.
inline constexpr const char* kUnitBitcodeEnvironment = "MLGO_UNIT_BITCODE";

// The plugin writes one line when the unit's optimisation pipeline ends
// (after every inlining decision): this one for a compile that was clang's
// own, else "changed:" and what changed. No line (a ccache hit, a compile
// the plugin did not see or that stopped, a failed write) proves nothing.
inline constexpr std::string_view kReportPlain = "plain";

// Whether a report proves the compile was clang's own: at least one line,
// every line kReportPlain.
inline bool reportShowsPlainCompile(std::string_view report) {
  bool plain = false;
  while (!report.empty()) {
    const size_t end = report.find('\n');
    if (report.substr(0, end) != kReportPlain)
      return false;
    plain = true;
    report = end == std::string_view::npos ? std::string_view() : report.substr(end + 1);
  }
  return plain;
}

} // namespace mlgo::policies
