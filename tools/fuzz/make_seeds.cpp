// tapecheck_fuzz_seeds OUT SOURCE_DIR: seed corpora for the fuzz targets from the committed
// golden vectors (SOURCE_DIR/vectors/golden), the vector tests' data
// (SOURCE_DIR/vectors/tests/data), the limits cases and the regression inputs of tools/fuzz,
// written to OUT/<target>/:
//   vectors  every data file as it is (malformed ones included) and each golden test as a
//            one-test file, when at most kMaxSeedBytes long
//   paramio  the ParamIO test files and, from a few golden tests, their leaves as a ParamIO file
//   tape     each golden test whose leaves hold at most 64 values, encoded as a tape program
//            (tape_program.h)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tape_program.h"
#include "tapecheck/vectors/load.h"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

constexpr std::size_t kMaxSeedBytes = 12000;

bool write(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return static_cast<bool>(out);
}

std::vector<fs::path> jsonFiles(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".json") out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string stemOf(const fs::path& p, const fs::path& root) {
  std::string s = fs::relative(p, root).replace_extension().generic_string();
  std::replace(s.begin(), s.end(), '/', '-');
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tapecheck_fuzz_seeds OUT SOURCE_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path source = argv[2];
  const fs::path golden = source / "vectors" / "golden";
  const fs::path data = source / "vectors" / "tests" / "data";
  for (const char* t : {"vectors", "paramio", "tape"}) fs::create_directories(out / t);
  std::size_t counts[3] = {0, 0, 0};

  // Data files as they are: the loader's malformed, passing and failing examples.
  for (const fs::path& p : jsonFiles(data)) {
    auto text = tapecheck::vectors::readTextFile(p.string());
    if (!text || text.value().size() > kMaxSeedBytes) continue;
    const bool paramio = p.parent_path().filename() == "paramio";
    const char* target = paramio ? "paramio" : "vectors";
    counts[paramio ? 1 : 0] += write(out / target / ("data-" + stemOf(p, data) + ".json"),
                                     text.value());
  }

  // The limits cases and every committed regression input, as they are.
  const fs::path fuzzDir = source / "tools" / "fuzz";
  for (const char* t : {"vectors", "paramio"})
    for (const fs::path& p : jsonFiles(fuzzDir / "limits" / t)) {
      auto text = tapecheck::vectors::readTextFile(p.string());
      if (text) counts[t[0] == 'v' ? 0 : 1] += write(out / t / ("limits-" + p.filename().string()), text.value());
    }
  for (const char* t : {"vectors", "paramio", "tape"}) {
    std::error_code ec;
    for (fs::directory_iterator it(fuzzDir / "regressions" / t, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      auto text = tapecheck::vectors::readTextFile(it->path().string());
      const std::size_t i = t[0] == 'v' ? 0 : t[0] == 'p' ? 1 : 2;
      if (text) counts[i] += write(out / t / ("regression-" + it->path().filename().string()), text.value());
    }
  }

  // Golden files, one test per seed.
  std::vector<fs::path> sources = jsonFiles(golden);
  for (const fs::path& p : jsonFiles(data)) sources.push_back(p);
  for (const fs::path& p : sources) {
    auto text = tapecheck::vectors::readTextFile(p.string());
    if (!text) continue;
    Json doc;
    try {
      doc = Json::parse(text.value());
    } catch (const std::exception&) {
      continue;
    }
    if (!doc.is_object() || !doc.contains("tests") || !doc["tests"].is_array()) continue;
    const std::string stem = stemOf(p, p.parent_path());
    std::size_t paramSeeds = 0;
    for (const Json& test : doc["tests"]) {
      Json one = doc;
      one["numberOfTests"] = 1;
      one["tests"] = Json::array({test});
      const std::string tc = test.contains("tcId") ? test["tcId"].dump() : "x";
      const std::string dumped = one.dump(1);
      if (dumped.size() <= kMaxSeedBytes)
        counts[0] += write(out / "vectors" / (stem + "-" + tc + ".json"), dumped);
      if (paramSeeds < 3 && test.contains("leaves") && test["leaves"].is_array()) {
        Json params = Json::array();
        for (const Json& leaf : test["leaves"])
          if (leaf.is_object() && leaf.contains("shape") && leaf.contains("values"))
            params.push_back({{"shape", leaf["shape"]}, {"values", leaf["values"]}});
        const std::string pio =
            Json{{"format", "torchlean_paramlist_bits_v1"}, {"params", params}}.dump();
        if (pio.size() <= kMaxSeedBytes) {
          counts[1] += write(out / "paramio" / (stem + "-" + tc + ".json"), pio);
          ++paramSeeds;
        }
      }
    }
    // Tape programs from the tests that load.
    auto file = tapecheck::vectors::parseVectorText(text.value(), p.string());
    if (!file) continue;
    for (const auto& t : file.value().tests) {
      bool small = true;
      for (const auto& l : t.testCase.leaves)
        small = small && l.value.values.size() <= tapecheck::fuzz::kMaxLeafValues;
      if (!small) continue;
      const auto bytes = tapecheck::fuzz::encodeProgram(t.testCase);
      counts[2] += write(out / "tape" / (stem + "-" + std::to_string(t.tcId) + ".bin"),
                         std::string(bytes.begin(), bytes.end()));
    }
  }
  std::printf("seeds: vectors %zu, paramio %zu, tape %zu in %s\n", counts[0], counts[1],
              counts[2], out.string().c_str());
  return 0;
}
