// tapecheck_fuzz_replay --TARGET PATH... [--TARGET PATH...]: runs every file under each PATH
// (a file, or a folder's files, sorted) through fuzz target TARGET (vectors, paramio, tape,
// state-bits, state-float32, tlsf32b), the same function libFuzzer calls, compiled into the
// normal build. A violated property aborts, so ctest reports the input; otherwise it prints one
// line per target and exits 0.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fuzz_entry.h"

TAPECHECK_FUZZ_TARGET(vectors);
TAPECHECK_FUZZ_TARGET(paramio);
TAPECHECK_FUZZ_TARGET(tape);
TAPECHECK_FUZZ_TARGET(state_bits);
TAPECHECK_FUZZ_TARGET(state_float32);
TAPECHECK_FUZZ_TARGET(tlsf32b);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  using Target = int (*)(const std::uint8_t*, std::size_t);
  const std::map<std::string, Target> targets = {
      {"--vectors", tapecheckFuzz_vectors},       {"--paramio", tapecheckFuzz_paramio},
      {"--tape", tapecheckFuzz_tape},             {"--state-bits", tapecheckFuzz_state_bits},
      {"--state-float32", tapecheckFuzz_state_float32}, {"--tlsf32b", tapecheckFuzz_tlsf32b}};
  std::string current;
  std::map<std::string, std::vector<fs::path>> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (targets.count(a)) {
      current = a;
      continue;
    }
    if (current.empty()) {
      std::fprintf(stderr, "usage: tapecheck_fuzz_replay --vectors|--paramio|--tape|--state-bits|"
                           "--state-float32|--tlsf32b PATH...\n");
      return 2;
    }
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::recursive_directory_iterator(a))
        if (e.is_regular_file()) found.push_back(e.path());
      std::sort(found.begin(), found.end());
      inputs[current].insert(inputs[current].end(), found.begin(), found.end());
    } else if (fs::is_regular_file(a, ec)) {
      inputs[current].push_back(a);
    } else {
      std::fprintf(stderr, "tapecheck_fuzz_replay: %s: no such file or folder\n", a.c_str());
      return 2;
    }
  }
  for (const auto& [flag, files] : inputs) {
    for (const fs::path& p : files) {
      std::ifstream in(p, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replay %s %s\n", flag.c_str() + 2, p.string().c_str());
      targets.at(flag)(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("replayed %zu %s inputs: no property violated\n", files.size(), flag.c_str() + 2);
  }
  return 0;
}
