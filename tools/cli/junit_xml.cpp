#include "junit_xml.h"

#include <sstream>

namespace tapecheck::cli {

std::string xmlEscape(std::string_view text, bool inAttribute) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += inAttribute ? "&#9;" : "\t"; break;
      case '\n': out += inAttribute ? "&#10;" : "\n"; break;
      case '\r': out += "&#13;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) out += "\xEF\xBF\xBD";  // U+FFFD
        else out += ch;
    }
  }
  return out;
}

namespace {

struct Counts {
  std::size_t tests = 0, failures = 0, skipped = 0;
  void add(const JunitCase& c) {
    ++tests;
    failures += c.outcome == JunitOutcome::Failed;
    skipped += c.outcome == JunitOutcome::Skipped;
  }
};

std::string countAttributes(const Counts& c) {
  return "tests=\"" + std::to_string(c.tests) + "\" failures=\"" + std::to_string(c.failures) +
         "\" errors=\"0\" skipped=\"" + std::to_string(c.skipped) + "\"";
}

void writeCase(std::ostringstream& out, const JunitCase& c) {
  out << "    <testcase name=\"" << xmlEscape(c.name) << "\" classname=\""
      << xmlEscape(c.classname) << "\"";
  if (c.assertions) out << " assertions=\"" << *c.assertions << "\"";
  switch (c.outcome) {
    case JunitOutcome::Passed:
      out << "/>\n";
      return;
    case JunitOutcome::Skipped:
      out << ">\n      <skipped message=\"" << xmlEscape(c.message) << "\"/>\n";
      break;
    case JunitOutcome::Failed:
      out << ">\n      <failure message=\"" << xmlEscape(c.message) << "\" type=\"FAILED\">"
          << xmlEscape(c.detail, false) << "</failure>\n";
      break;
  }
  out << "    </testcase>\n";
}

}  // namespace

std::string junitXml(const std::string& name, const std::vector<JunitSuite>& suites) {
  Counts total;
  for (const JunitSuite& s : suites)
    for (const JunitCase& c : s.cases) total.add(c);
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"" << xmlEscape(name) << "\" " << countAttributes(total) << ">\n";
  for (const JunitSuite& s : suites) {
    Counts counts;
    for (const JunitCase& c : s.cases) counts.add(c);
    out << "  <testsuite name=\"" << xmlEscape(s.name) << "\" " << countAttributes(counts);
    if (s.cases.empty()) {
      out << "/>\n";
      continue;
    }
    out << ">\n";
    for (const JunitCase& c : s.cases) writeCase(out, c);
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
  return out.str();
}

}  // namespace tapecheck::cli
