// The entry point of a fuzz target, written once for two builds:
//   - the libFuzzer build (TAPECHECK_FUZZ, clang): LLVMFuzzerTestOneInput, the symbol
//     -fsanitize=fuzzer calls;
//   - the replay build (TAPECHECK_FUZZ_REPLAY, the normal g++ build): a named function that
//     tools/fuzz/replay_main.cpp calls on every committed regression input, so that each crash
//     the fuzzer ever found is replayed by ctest through exactly the code that found it.
// A target returns 0; a violated property prints the reason and aborts (a crash for libFuzzer,
// a failed test for the replay).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef TAPECHECK_FUZZ_REPLAY
#define TAPECHECK_FUZZ_TARGET(name) \
  int tapecheckFuzz_##name(const std::uint8_t* data, std::size_t size)
#else
#define TAPECHECK_FUZZ_TARGET(name) \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
#endif

namespace tapecheck::fuzz {

// A property of the code under test does not hold: say which and abort.
[[noreturn]] inline void violated(const std::string& what) {
  std::fprintf(stderr, "tapecheck fuzz: PROPERTY VIOLATED: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tapecheck::fuzz
