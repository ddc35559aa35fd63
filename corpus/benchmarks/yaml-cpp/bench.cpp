// yaml-cpp benchmark driver (corpus/recipes/yaml-cpp.sh): generates a YAML
// document from a fixed LCG (a sequence of records: nested block maps and
// sequences, flow collections, anchors and aliases, plain, quoted and
// literal scalars of every kind), parses it with YAML::Load, walks the tree
// (scalar conversions, map lookups), emits it back with YAML::Emitter in
// block and flow style and parses both again: the scanner, parser, node
// builder and emitter that a configuration library spends its time in.
// Prints sizes, node counts and FNV-1a hashes of the trees and the emitted
// text; exits 1 if a re-parsed tree differs. The number of records comes
// from the file given on the command line.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "yaml-cpp/yaml.h"

namespace {

uint64_t state = 0x5eed2024;
unsigned lcg(unsigned range) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<unsigned>((state >> 33) % range);
}

const char *const kWords[] = {"alpha", "bravo", "delta", "echo", "gamma", "kilo",
                              "lima", "oscar", "sierra", "tango", "zulu", "nova"};

std::string scalar(const std::string &pad) {
  switch (lcg(9)) {
    case 0: return std::to_string(lcg(100000));
    case 1: return "-" + std::to_string(lcg(5000));
    case 2: return std::to_string(lcg(1000)) + "." + std::to_string(10 + lcg(90)) + "e" + std::to_string(lcg(5));
    case 3: return lcg(2) ? "true" : "false";
    case 4: return "~";
    case 5: return std::string("\"") + kWords[lcg(12)] + "\\t" + kWords[lcg(12)] + " \\u00e9\\n\"";
    case 6: return std::string("'it''s ") + kWords[lcg(12)] + ": " + kWords[lcg(12)] + "'";
    case 7: return "|\n" + pad + "  " + kWords[lcg(12)] + " line\n" + pad + "  " + kWords[lcg(12)] + " end";
    default: return std::string(kWords[lcg(12)]) + " " + kWords[lcg(12)] + "-" + std::to_string(lcg(99));
  }
}

void value(std::string &out, const std::string &pad, int depth);

void block_map(std::string &out, const std::string &pad, int depth) {
  for (unsigned i = 0, n = 2 + lcg(4); i < n; i++) {
    out += pad + "k" + std::to_string(i) + "_" + kWords[lcg(12)] + ":";
    value(out, pad + "  ", depth + 1);
  }
}

void value(std::string &out, const std::string &pad, int depth) {
  unsigned kind = depth < 3 ? lcg(10) : 9;
  if (kind < 2) {
    out += "\n";
    block_map(out, pad, depth);
  } else if (kind < 4) {
    out += "\n";
    for (unsigned i = 0, n = 1 + lcg(4); i < n; i++) {
      out += pad + "-";
      value(out, pad + "  ", depth + 1);
    }
  } else if (kind == 4) {
    out += " [" + std::to_string(lcg(50)) + ", " + kWords[lcg(12)] + ", {x: " +
           std::to_string(lcg(9)) + ", y: " + kWords[lcg(12)] + "}]\n";
  } else {
    out += " " + scalar(pad.substr(2)) + "\n";
  }
}

struct Walk {
  uint64_t hash = 14695981039346656037ULL;
  long nodes = 0, numbers = 0, flags = 0;
  void mix(const std::string &text) {
    for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
    hash = (hash ^ 0xFF) * 1099511628211ULL;
  }
  void operator()(const YAML::Node &node) {
    nodes++;
    mix(std::to_string(static_cast<int>(node.Type())));
    if (node.IsScalar()) {
      mix(node.Scalar());
      double number;
      bool flag;
      if (YAML::convert<double>::decode(node, number)) numbers++;
      if (YAML::convert<bool>::decode(node, flag)) flags += flag ? 2 : 1;
    } else if (node.IsSequence()) {
      for (const auto &item : node) (*this)(item);
    } else if (node.IsMap()) {
      for (const auto &item : node) {
        mix(item.first.Scalar());
        (*this)(item.second);
      }
    }
  }
};

Walk walk(const YAML::Node &root) {
  Walk result;
  result(root);
  long ids = 0;  // map lookups by key, as an application reads its records
  for (const auto &record : root["records"]) ids += record["id"].as<long>();
  result.mix(std::to_string(ids));
  return result;
}

}  // namespace

int main(int argc, char **argv) {
  long records = 0;
  std::ifstream params(argc == 2 ? argv[1] : "");
  if (!(params >> records) || records < 1) {
    std::fprintf(stderr, "usage: bench-yaml-cpp PARAMS (a file holding the number of records)\n");
    return 2;
  }
  std::string text = "title: generated\nrecords:\n";
  for (long r = 0; r < records; r++) {
    text += "  - id: " + std::to_string(r) + "\n    name: " + kWords[lcg(12)] + "\n";
    if (r == 0) text += "    tags: &common [" + std::string(kWords[lcg(12)]) + ", shared]\n";
    if (r % 10 == 9) text += "    same: *common\n";
    text += "    body:\n";
    block_map(text, "      ", 1);
  }
  try {
    YAML::Node tree = YAML::Load(text);
    Walk first = walk(tree);
    std::printf("parsed %zu bytes: %ld nodes, %ld numbers, %ld flags, fnv1a %016llx\n",
                text.size(), first.nodes, first.numbers, first.flags,
                static_cast<unsigned long long>(first.hash));
    for (int flow = 0; flow < 2; flow++) {
      YAML::Emitter out;
      if (flow) {
        out.SetMapFormat(YAML::Flow);
        out.SetSeqFormat(YAML::Flow);
      }
      out << tree;
      if (!out.good()) throw std::runtime_error("emitter: " + out.GetLastError());
      std::string emitted = out.c_str();
      Walk again = walk(YAML::Load(emitted)), text_hash;
      text_hash.mix(emitted);
      std::printf("%s emit: %zu bytes, fnv1a %016llx; re-parsed %ld nodes\n",
                  flow ? "flow" : "block", emitted.size(),
                  static_cast<unsigned long long>(text_hash.hash), again.nodes);
      if (again.hash != first.hash || again.nodes != first.nodes) {
        std::fprintf(stderr, "bench-yaml-cpp: the re-parsed %s tree differs\n",
                     flow ? "flow" : "block");
        return 1;
      }
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "bench-yaml-cpp: %s\n", error.what());
    return 1;
  }
  return 0;
}
