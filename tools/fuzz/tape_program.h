// Arbitrary bytes -> one small tape program (a conformance::TestCase: leaves, one operation with
// its ids and attributes, an optional backward seed), for the differential fuzz target
// fuzz_tape.cpp. Every byte string decodes to some program; most programs are well formed (the
// leaves follow the attributes), and bytes choose where they are not: missing attributes, huge
// and zero dimensions, ids past the tape or at 2^64-1, leaves whose value count disagrees with
// their shape, seeds of the wrong shape, NaN and infinities among the values.
//
// Format (every read past the end yields 0, so short inputs are programs too):
//   op        1 byte: registry operation op % 7 (opRegistry() order)
//   attrs     per attribute the op takes (required, then optional; registry order): a presence
//             byte (% 8 == 7: absent), then the value: a shape (rank % 5, then dims), a natural
//             number (a dim), mean (bit 0) or epsilon (a palette byte; 15: 4 raw binary32 bytes)
//   leaves    a mode byte: % 4 == 3 explicit (count % 6, each with its own shape), otherwise one
//             leaf per tensor argument shaped as the attributes say (mode 2: plus one explicit
//             extra leaf); per leaf a flags byte (bit 0 requiresGrad; bits 1-3 all set: a value
//             count that disagrees with the shape), then the values
//   call      per tensor argument a byte: % 8 < 6 the argument's own leaf, 6 any id below
//             leaves + 3 (next byte), 7 a huge id (next byte picks 2^32, 2^63, 2^64-1 or 1000)
//   upstream  a byte: % 4 == 0 none, 1-2 the output's shape, 3 an explicit shape; a flags byte
//             (as a leaf's) and the values
//   dim       a byte: small (0-5, 1-4, 1-8, 1-32 by its top bits), a huge palette entry
//             (2^16 .. 2^64-1) or 8 raw bytes
//   value     a byte: < 192 (b - 96) / 4 (ties everywhere); < 224 a special (NaN, +-inf, -0,
//             88.5, -1e7, 1e4, a subnormal, ...); otherwise 4 raw binary32 bytes (finite values
//             clamped to +-1e7, where the conformance budgets hold for binary32)
// Leaves realize at most 64 values; a shape with more elements gets a short value list, which
// both tapes must refuse with the same error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tapecheck/conformance/test_case.h"

namespace tapecheck::fuzz {

inline constexpr std::size_t kMaxLeafValues = 64;

struct Program {
  conformance::TestCase testCase;
  // false when an input lies outside the domain where the binary32 budgets are meaningful: an
  // epsilon below 1e-6 (0, negative, subnormal: binary32 rounding noise in the variance decides
  // between NaN and a number), or an infinity outside the first tensor argument (inf times a
  // factor that binary32 rounds to 0 but binary64 does not). The tapes must still agree on
  // errors and shapes; values are not judged.
  bool judgeValues = true;
};

Program decodeProgram(const std::uint8_t* data, std::size_t size);

// The bytes that decode to `c` (as nearly as the format allows: values outside +-1e7 are
// clamped, ids far past the leaves become a huge id). For seed corpora made from golden vectors.
std::vector<std::uint8_t> encodeProgram(const conformance::TestCase& c);

// A readable dump of the case for failure messages.
std::string describeProgram(const conformance::TestCase& c);

}  // namespace tapecheck::fuzz
