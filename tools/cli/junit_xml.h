// JUnit XML, the test-report format CI systems display (Jenkins, GitLab, GitHub Actions through
// the usual reporters): <testsuites> holding a <testsuite> per op or per vector file, each holding
// a <testcase> per status group or per vector, with <failure> or <skipped/> inside. Written by
// hand because the format needs only elements, attributes and escaping; no timings, so a report
// is the same for the same run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tapecheck::cli {

enum class JunitOutcome { Passed, Failed, Skipped };

struct JunitCase {
  std::string name;
  std::string classname;
  JunitOutcome outcome = JunitOutcome::Passed;
  std::string message;  // Failed / Skipped: the attribute CI systems show as the headline
  std::string detail;   // Failed: the element's text (every reason, the reproduce commands)
  std::optional<std::uint64_t> assertions;  // cases judged, where a test case groups several
};

struct JunitSuite {
  std::string name;
  std::vector<JunitCase> cases;
};

// Text for an attribute value (inAttribute) or element content: & < > " ' as entities; carriage
// return as a character reference, and in an attribute tab and newline too (a parser would turn
// them into spaces there); other control characters, which XML 1.0 cannot carry at all, as U+FFFD.
// Bytes >= 0x80 pass through (UTF-8).
std::string xmlEscape(std::string_view text, bool inAttribute = true);

// The whole document, with tests/failures/errors/skipped counted on <testsuites> and on each
// <testsuite>.
std::string junitXml(const std::string& name, const std::vector<JunitSuite>& suites);

}  // namespace tapecheck::cli
