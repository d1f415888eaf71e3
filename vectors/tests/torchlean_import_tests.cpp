// TorchLean's tensor files as leaves (`tapecheck vectors import`): the state files in both word
// widths, the TLSF32B stream, detection from the content, and every kind of bad input. Expected
// values are IEEE-754 bit patterns written out by hand: binary32 1 = 0x3F800000 (1065353216),
// -2 = 0xC0000000, 0.5 = 0x3F000000; binary64 1 = 0x3FF0000000000000 (4607182418800017408),
// -2 = 0xC000000000000000, 0.5 = 0x3FE0000000000000, -0 = 0x8000000000000000, the quiet NaN
// 0x7FF8000000000000 (9221120237041090560); the smallest binary32 subnormal 2^-149 is binary64
// exponent 1023 - 149 = 874, bits 874 << 52 = 3936146074321813504.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/load.h"
#include "tapecheck/vectors/paramio.h"
#include "tapecheck/vectors/torchlean_import.h"
#include "tapecheck/vectors/torchlean_state.h"
#include "tapecheck/vectors/torchlean_stream.h"

using namespace tapecheck;
using namespace tapecheck::vectors;

namespace {

const std::string kTorchLeanData = std::string(TAPECHECK_VECTORS_DIR) + "/tests/data/torchlean";

std::string bytesOf(const std::string& name) {
  auto t = readTextFile(kTorchLeanData + "/" + name);
  REQUIRE(t.ok());
  return t.value();
}

std::vector<std::uint64_t> bitsOf(const conformance::TensorData& t) {
  std::vector<std::uint64_t> out;
  for (double v : t.values) out.push_back(toBits(v));
  return out;
}

// The import of a file must fail with a message holding every fragment.
void requireRejected(const std::string& name, const std::vector<std::string>& fragments) {
  auto r = importTorchLeanTensors(bytesOf(name), name);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().rfind(name + ": ", 0) == 0);
  for (const auto& f : fragments) {
    INFO(r.message());
    CHECK(r.message().find(f) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("a binary64 state file reads every word exactly, canonical NaN and -0 included") {
  auto r = importTorchLeanTensors(bytesOf("state-bits.json"), "s.json");
  REQUIRE(r.ok());
  CHECK(r.value().format == "torchlean_state_bits_v1");
  const auto& t = r.value().tensors;
  REQUIRE(t.size() == 3);
  CHECK(t[0].shape == Shape{2, 2});
  CHECK(bitsOf(t[0]) == std::vector<std::uint64_t>{4607182418800017408ULL, 13835058055282163712ULL,
                                                   9221120237041090560ULL, 9223372036854775808ULL});
  CHECK(t[1].shape == Shape{});
  CHECK(t[1].values == std::vector<double>{0.5});
  CHECK(t[2].shape == Shape{0, 3});
  CHECK(t[2].values.empty());
}

TEST_CASE("a float32 state file widens each binary32 word to the same number") {
  auto r = importTorchLeanTensors(bytesOf("state-float32.json"), "f.json");
  REQUIRE(r.ok());
  CHECK(r.value().format == "torchlean_state_float32_bits_v1");
  const auto& t = r.value().tensors;
  REQUIRE(t.size() == 2);
  CHECK(t[0].shape == Shape{3});
  CHECK(t[0].values[0] == 1.0);
  CHECK(t[0].values[1] == -2.0);
  CHECK(toBits(t[0].values[2]) == 9221120237041090560ULL);  // 0x7FC00000 -> 0x7FF8000000000000
  CHECK(t[1].shape == Shape{1, 2});
  CHECK(toBits(t[1].values[0]) == 3936146074321813504ULL);  // word 1 = 2^-149
  CHECK(t[1].values[1] == std::numeric_limits<double>::infinity());
}

TEST_CASE("a TLSF32B stream reads shapes and words exactly, a NaN's payload included") {
  auto r = importTorchLeanTensors(bytesOf("stream.bin"), "stream.bin");
  REQUIRE(r.ok());
  CHECK(r.value().format == "TLSF32B");
  const auto& t = r.value().tensors;
  REQUIRE(t.size() == 3);
  CHECK(t[0].shape == Shape{2, 1});
  CHECK(t[0].values == std::vector<double>{1.0, -2.0});
  CHECK(t[1].shape == Shape{});
  CHECK(t[1].values == std::vector<double>{0.5});
  CHECK(t[2].shape == Shape{2});
  // 0x7FC00001: payload bit 0 moves to bit 29 of the binary64 fraction.
  CHECK(toBits(t[2].values[0]) == 0x7FF8000020000000ULL);
  CHECK(toBits(t[2].values[1]) == 3936146074321813504ULL);
}

TEST_CASE("imported tensors print as leaves in the ParamIO import's exact layout") {
  auto r = importTorchLeanTensors(bytesOf("stream.bin"), "stream.bin");
  REQUIRE(r.ok());
  r.value().tensors.pop_back();  // the NaN with a payload prints too, but is long to spell here
  auto leaves = leavesJson(r.value(), "stream.bin");
  REQUIRE(leaves.ok());
  CHECK(leaves.value() ==
        "[\n"
        "  {\"shape\": [2, 1], \"requiresGrad\": false, \"values\": [4607182418800017408, "
        "13835058055282163712]},\n"
        "  {\"shape\": [], \"requiresGrad\": false, \"values\": [4602678819172646912]}\n"
        "]\n");
  // A ParamIO file goes through the same printer and gives what import-paramio always gave.
  auto text = readTextFile(std::string(TAPECHECK_VECTORS_DIR) + "/tests/data/paramio/params.json");
  REQUIRE(text.ok());
  auto viaImport = importTorchLeanTensors(text.value(), "p.json");
  REQUIRE(viaImport.ok());
  CHECK(viaImport.value().format == "torchlean_paramlist_bits_v1");
  auto direct = parseParamIO(text.value(), "p.json");
  REQUIRE(direct.ok());
  CHECK(leavesJson(viaImport.value(), "p.json").value() ==
        paramsAsLeavesJson(direct.value(), "p.json").value());
}

TEST_CASE("a value that is not binary32 is refused as a leaf, naming the entry") {
  auto r = importTorchLeanTensors(bytesOf("state-bits-not-binary32.json"), "n.json");
  REQUIRE(r.ok());  // 0.1 is a valid binary64 word
  auto leaves = leavesJson(r.value(), "n.json");
  REQUIRE_FALSE(leaves.ok());
  CHECK(leaves.message() ==
        "n.json: state[0].values[1]: 0.10000000000000001 is not representable in binary32 "
        "(golden-vector inputs must be)");
}

TEST_CASE("malformed state files are refused with the entry index and the reason") {
  requireRejected("state-bits-count.json",
                  {"state[1].values: holds 5 values but shape [2,3] needs 6"});
  requireRejected("state-bits-word-too-large.json",
                  {"state[0].values[1]: expected a binary64 word (a natural number below 2^64)"});
  requireRejected("state-bits-noncanonical-nan.json",
                  {"state[1].values[2]: word 18444492273895866368 (0xFFF8000000000000) is a NaN "
                   "other than Lean's quiet NaN 0x7FF8000000000000"});
  requireRejected("state-float32-word-too-large.json",
                  {"state[0].values[0]: word 4294967296 does not fit in 32 bits"});
  requireRejected("state-float32-noncanonical-nan.json",
                  {"state[0].values[1]: word 4290772992 (0xFFC00000) is a NaN other than Lean's "
                   "quiet NaN 0x7FC00000"});
  requireRejected("state-float32-negative-dim.json",
                  {"state[0].shape[0]: expected a natural number"});
}

TEST_CASE("malformed TLSF32B streams are refused with the tensor, its offset and the reason") {
  requireRejected("stream-truncated.bin",
                  {"tensor 2: truncated at byte 107: the payload of 2 binary32 values needs 8 "
                   "bytes, 5 remain"});
  requireRejected("stream-count-mismatch.bin",
                  {"tensor 1: (byte 63) element count 2 disagrees with shape [] of 1 elements"});
  requireRejected("stream-version.bin",
                  {"unsupported TLSF32B version 2 (this reader knows version 1)"});
  requireRejected("stream-trailing.bin", {"1 trailing bytes after the last tensor (byte 43)"});
  requireRejected("stream-huge-count.bin",
                  {"tensor 1: truncated at byte 43: the rank needs 8 bytes, 0 remain"});
  requireRejected("stream-huge-shape.bin",
                  {"tensor 0: (byte 23) element count 18446744073709551615 disagrees with shape "
                   "[4294967296,4294967296], whose size exceeds 2^64 - 1"});
  // Every prefix of a good stream is refused as truncated (never accepted, never a crash).
  const std::string good = bytesOf("stream.bin");
  for (std::size_t n = 7; n < good.size(); ++n) {
    auto r = parseFloat32Stream(good.substr(0, n), "prefix");
    INFO(n);
    REQUIRE_FALSE(r.ok());
    CHECK(r.message().find("truncated") != std::string::npos);
  }
}

TEST_CASE("content of no TorchLean format is refused before any reader runs") {
  requireRejected("other-content.txt", {"not valid JSON, nor a TLSF32B stream"});
  requireRejected("unknown-format.json",
                  {"unsupported format 'torchlean_state_binary_8_23_127_ieee_v1'",
                   "torchlean_state_bits_v1", "TLSF32B"});
  CHECK_FALSE(importTorchLeanTensors("[1, 2]", "a.json").ok());
  CHECK_FALSE(importTorchLeanTensors("{\"format\": 7}", "a.json").ok());
  CHECK_FALSE(importTorchLeanTensors("", "empty").ok());
  // Each reader refuses the other's tag, so detection is the only way in.
  CHECK_FALSE(parseStateBits(bytesOf("state-float32.json"), "x").ok());
  CHECK_FALSE(parseStateFloat32(bytesOf("state-bits.json"), "x").ok());
  CHECK_FALSE(parseFloat32Stream(bytesOf("state-bits.json"), "x").ok());
}
