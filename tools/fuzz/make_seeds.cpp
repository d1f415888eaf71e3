// tapecheck_fuzz_seeds OUT SOURCE_DIR: seed corpora for the fuzz targets from the committed
// golden vectors (SOURCE_DIR/vectors/golden), the vector tests' data
// (SOURCE_DIR/vectors/tests/data), the limits cases and the regression inputs of tools/fuzz,
// written to OUT/<target>/:
//   vectors  every data file as it is (malformed ones included) and each golden test as a
//            one-test file, when at most kMaxSeedBytes long
//   paramio  the ParamIO test files and, from a few golden tests, their leaves as a ParamIO file
//   tape     each golden test whose leaves hold at most 64 values, encoded as a tape program
//            (tape_program.h)
//   state_bits, state_float32, tlsf32b  the TorchLean tensor test files of that format, the
//            import limits cases, and from a few golden tests their leaves written in that format
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tape_program.h"
#include "tapecheck/vectors/bits.h"
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

std::vector<fs::path> filesWithExtension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ext) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

// The TorchLean reader target a test or limits file of TorchLean's formats belongs to.
const char* torchLeanTarget(const fs::path& p) {
  const std::string name = p.filename().string();
  if (p.extension() == ".bin") return "tlsf32b";
  return name.rfind("state-float32", 0) == 0 ? "state_float32" : "state_bits";
}

std::uint32_t binary32Word(double v) {
  if (std::isnan(v)) return 0x7FC00000U;
  const float f = static_cast<float>(v);
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return w;
}

void putU64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A golden test's leaves in TorchLean's three state formats (its inputs are binary32 values).
void writeStateSeeds(const fs::path& out, const std::string& stem, const Json& leaves,
                     std::size_t counts[]) {
  Json bits = Json::array(), words = Json::array();
  std::string stream = "TLSF32B";
  putU64(stream, 1);
  putU64(stream, leaves.size());
  for (const Json& leaf : leaves) {
    if (!leaf.is_object() || !leaf.contains("shape") || !leaf.contains("values")) return;
    Json w = Json::array();
    const auto shape = leaf["shape"].get<std::vector<std::uint64_t>>();
    const auto values = leaf["values"].get<std::vector<std::uint64_t>>();
    putU64(stream, shape.size());
    for (auto d : shape) putU64(stream, d);
    putU64(stream, values.size());
    for (auto b : values) {
      const std::uint32_t word = binary32Word(tapecheck::vectors::fromBits(b));
      w.push_back(word);
      for (int i = 0; i < 4; ++i) stream.push_back(static_cast<char>((word >> (8 * i)) & 0xFF));
    }
    bits.push_back({{"shape", leaf["shape"]}, {"values", leaf["values"]}});
    words.push_back({{"shape", leaf["shape"]}, {"values", w}});
  }
  const std::string b = Json{{"format", "torchlean_state_bits_v1"}, {"state", bits}}.dump();
  const std::string f =
      Json{{"format", "torchlean_state_float32_bits_v1"}, {"state", words}}.dump();
  if (b.size() <= kMaxSeedBytes) counts[3] += write(out / "state_bits" / (stem + ".json"), b);
  if (f.size() <= kMaxSeedBytes) counts[4] += write(out / "state_float32" / (stem + ".json"), f);
  if (stream.size() <= kMaxSeedBytes)
    counts[5] += write(out / "tlsf32b" / (stem + ".bin"), stream);
}

std::size_t targetIndex(const std::string& t) {
  const char* names[] = {"vectors", "paramio", "tape", "state_bits", "state_float32", "tlsf32b"};
  for (std::size_t i = 0; i < 6; ++i)
    if (t == names[i]) return i;
  return 0;
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
  const char* const targets[] = {"vectors", "paramio", "tape", "state_bits", "state_float32",
                                 "tlsf32b"};
  for (const char* t : targets) fs::create_directories(out / t);
  std::size_t counts[6] = {0, 0, 0, 0, 0, 0};

  // Data files as they are: the loader's malformed, passing and failing examples.
  for (const fs::path& p : jsonFiles(data)) {
    auto text = tapecheck::vectors::readTextFile(p.string());
    if (!text || text.value().size() > kMaxSeedBytes) continue;
    const std::string dir = p.parent_path().filename().string();
    const char* target = dir == "paramio"     ? "paramio"
                         : dir == "torchlean" ? torchLeanTarget(p)
                                              : "vectors";
    counts[targetIndex(target)] += write(out / target / ("data-" + stemOf(p, data) + ".json"),
                                         text.value());
  }
  // TorchLean's binary streams among the test data and the import limits cases.
  const fs::path fuzzDir = source / "tools" / "fuzz";
  for (const fs::path& dir : {data / "torchlean", fuzzDir / "limits" / "import"})
    for (const auto& ext : {".bin", ".json"})
      for (const fs::path& p : filesWithExtension(dir, ext)) {
        if (dir == data / "torchlean" && p.extension() == ".json") continue;  // done above
        auto bytes = tapecheck::vectors::readTextFile(p.string());
        const std::string name = dir.filename().string() + "-" + p.filename().string();
        if (bytes)
          counts[targetIndex(torchLeanTarget(p))] +=
              write(out / torchLeanTarget(p) / name, bytes.value());
      }

  // The limits cases and every committed regression input, as they are.
  for (const char* t : {"vectors", "paramio"})
    for (const fs::path& p : jsonFiles(fuzzDir / "limits" / t)) {
      auto text = tapecheck::vectors::readTextFile(p.string());
      if (text) counts[t[0] == 'v' ? 0 : 1] += write(out / t / ("limits-" + p.filename().string()), text.value());
    }
  for (const char* t : targets) {
    std::error_code ec;
    for (fs::directory_iterator it(fuzzDir / "regressions" / t, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      auto text = tapecheck::vectors::readTextFile(it->path().string());
      const std::size_t i = targetIndex(t);
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
          try {
            writeStateSeeds(out, stem + "-" + tc, test["leaves"], counts);
          } catch (const std::exception&) {
            // a malformed data file's leaves: no state seeds from it
          }
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
  std::printf("seeds: vectors %zu, paramio %zu, tape %zu, state_bits %zu, state_float32 %zu, "
              "tlsf32b %zu in %s\n",
              counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
              out.string().c_str());
  return 0;
}
