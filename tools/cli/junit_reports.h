// What `tapecheck run`, `vectors check` and `certify` write with --junit: their results as JUnit
// test suites (junit_xml.h), so a CI system shows each failing group, vector or pass with its
// reason and the command that reproduces it.
#pragma once

#include <string>
#include <vector>

#include "junit_xml.h"
#include "tapecheck/certify/certificate.h"
#include "tapecheck/conformance/run_report.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/vector_file.h"

namespace tapecheck::cli {

// A suite per op (report order), a test case per status group named "<pass> <shape class>":
// FAILED groups fail with the worst case's reason and reproduce command, SKIPPED and MISTRUSTED
// groups are skipped (nothing was judged that could fail), PASSED groups pass.
std::vector<JunitSuite> runJunitSuites(const conformance::RunReport& report);

// A suite per vector file, a test case per vector named "tcId <n>"; a failing vector fails with
// its reason and `<checkCommand> FILE`, the command that checks that file again.
std::vector<JunitSuite> vectorJunitSuites(const std::vector<vectors::VectorFile>& files,
                                          const vectors::VectorCheckResult& result,
                                          const std::string& checkCommand);

// A suite "certificate" whose test case "verdict" fails when the certificate is rejected (every
// reason in its text), then a suite per op with a test case per pass, failing with that pass's
// reasons and the reproduce commands of its worst cases; a pass with no case run is skipped.
std::vector<JunitSuite> certificateJunitSuites(const certify::Certificate& cert);

// `word` as one word for a POSIX shell: as it is when that is safe, else single-quoted.
std::string shellWord(const std::string& word);

}  // namespace tapecheck::cli
