// mlgo-alternatives: writes the forced policy files of a pipeline policy's
// choice for mlgo-cc --mlgo-best-of-set (the launcher runs this once per
// policy and caches what it writes; it must not load libLLVM itself).
//   mlgo-alternatives POLICY DIRECTORY
#include "mlgo/deploy/ForcedAlternatives.h"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) == "--help") {
    std::cerr << "usage: mlgo-alternatives POLICY DIRECTORY\n"
                 "Writes DIRECTORY/0.json … (one pipeline policy per alternative of POLICY's\n"
                 "choice, each forcing it) and DIRECTORY/count last, for mlgo-cc "
                 "--mlgo-best-of-set.\n";
    return argc == 2 ? 0 : 2;
  }
  if (mlgo::Status written = mlgo::deploy::writeForcedAlternatives(argv[1], argv[2]); !written) {
    std::cerr << "mlgo-alternatives: error: --mlgo-best-of-set: " << written.error().message
              << "\n";
    return 1;
  }
  return 0;
}
