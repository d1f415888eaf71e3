// The failure files of a certification: the inputs of failing (and grown) cases that the runner
// writes, as golden-vector files, into a folder of the run's own. A certificate takes them into
// its folder, under failures/, so it travels with what it refers to, and its examples and
// reproducers name the files there.
#pragma once

#include <string>
#include <vector>

#include "tapecheck/certify/certificate.h"
#include "tapecheck/result.h"

namespace tapecheck::certify {

inline constexpr const char* kFailuresDir = "failures";

// Copies every regular file directly in `from` into `to` (created if needed), keeping the names,
// and returns the names copied, sorted. A missing or empty `from` copies nothing.
Result<std::vector<std::string>> copyFailureFiles(const std::string& from, const std::string& to);

// Points every example (and the golden vectors' worst case) whose values file is one of `names`
// in folder `from` at the same name in `to`, in its valuesFile and its reproducer. With an empty
// `from`, any folder matches (shards moved from where they were written).
void relocateFailureFiles(Certificate& cert, const std::string& from, const std::string& to,
                          const std::vector<std::string>& names);

}  // namespace tapecheck::certify
