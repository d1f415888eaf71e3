#include "junit_reports.h"

#include <map>
#include <utility>

namespace tapecheck::cli {
namespace {

using conformance::CaseExample;

// The lines `tapecheck run` prints under a failing group.
std::string exampleText(const CaseExample& e) {
  std::string text = "case " + e.shape + ": " + e.reason + "\n";
  if (!e.valuesFile.empty()) text += "values: " + e.valuesFile + "\n";
  if (!e.reproducer.empty()) text += "reproduce: " + e.reproducer + "\n";
  return text;
}

std::string withReproducer(const std::string& reason, const std::string& reproducer) {
  return reproducer.empty() ? reason : reason + "; reproduce: " + reproducer;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

}  // namespace

std::string shellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-./=:,+@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (const char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::vector<JunitSuite> runJunitSuites(const conformance::RunReport& report) {
  std::vector<JunitSuite> suites;
  for (const conformance::GroupStats& g : report.groups) {
    if (suites.empty() || suites.back().name != g.op) suites.push_back(JunitSuite{g.op, {}});
    JunitCase c;
    c.name = g.pass + " " + g.shapeClass;
    c.classname = g.op;
    c.assertions = g.cases;
    const std::string line = conformance::statusLine(g);
    switch (conformance::groupStatus(g)) {
      case conformance::Status::Passed:
        break;
      case conformance::Status::Skipped:
      case conformance::Status::Mistrusted:
      case conformance::Status::NotProvided:
        c.outcome = JunitOutcome::Skipped;
        c.message = line;
        break;
      case conformance::Status::Failed:
        c.outcome = JunitOutcome::Failed;
        c.message = g.examples.empty()
                        ? line
                        : withReproducer(g.examples[0].reason, g.examples[0].reproducer);
        c.detail = line + "\n";
        for (const CaseExample& e : g.examples) c.detail += exampleText(e);
        break;
    }
    suites.back().cases.push_back(std::move(c));
  }
  return suites;
}

std::vector<JunitSuite> vectorJunitSuites(const std::vector<vectors::VectorFile>& files,
                                          const vectors::VectorCheckResult& result,
                                          const std::string& checkCommand) {
  std::map<std::pair<std::string, std::uint64_t>, std::string> failed;
  for (const vectors::VectorFailure& f : result.failures) failed[{f.file, f.tcId}] = f.reason;
  std::map<std::pair<std::string, std::uint64_t>, std::string> notJudged;
  for (const vectors::VectorFailure& f : result.notJudgedTests)
    notJudged[{f.file, f.tcId}] = f.reason;
  std::vector<JunitSuite> suites;
  for (const vectors::VectorFile& file : files) {
    JunitSuite suite{file.path, {}};
    const std::string reproducer = checkCommand + " " + shellWord(file.path);
    for (const vectors::VectorTest& t : file.tests) {
      JunitCase c;
      c.name = "tcId " + std::to_string(t.tcId);
      c.classname = file.op;
      if (auto it = failed.find({file.path, t.tcId}); it != failed.end()) {
        c.outcome = JunitOutcome::Failed;
        c.message = withReproducer(it->second, reproducer);
        c.detail = "FAILED " + file.path + " tcId " + std::to_string(t.tcId) + " (" + file.op +
                   "): " + it->second + "\n" + (t.comment.empty() ? "" : t.comment + "\n") +
                   "reproduce: " + reproducer + "\n";
      } else if (auto skip = notJudged.find({file.path, t.tcId}); skip != notJudged.end()) {
        c.outcome = JunitOutcome::Skipped;
        c.message = skip->second;
      }
      suite.cases.push_back(std::move(c));
    }
    suites.push_back(std::move(suite));
  }
  return suites;
}

std::vector<JunitSuite> certificateJunitSuites(const certify::Certificate& cert) {
  std::vector<JunitSuite> suites;
  JunitCase verdict;
  verdict.name = "verdict";
  verdict.classname = "certificate";
  if (cert.verdict == certify::Verdict::Rejected) {
    verdict.outcome = JunitOutcome::Failed;
    verdict.message = "REJECTED: " + std::to_string(cert.reasons.size()) +
                      (cert.reasons.size() == 1 ? " reason" : " reasons");
    verdict.detail = joinLines(cert.reasons);
  }
  suites.push_back(JunitSuite{"certificate", {verdict}});
  for (const certify::OpRecord& op : cert.ops) {
    JunitSuite suite{op.op, {}};
    if (!op.reasons.empty()) {
      JunitCase c;
      c.name = "op";
      c.classname = op.op;
      c.outcome = JunitOutcome::Failed;
      c.message = op.reasons[0];
      c.detail = joinLines(op.reasons);
      suite.cases.push_back(std::move(c));
    }
    for (const certify::PassRecord& p : op.passes) {
      JunitCase c;
      c.name = p.pass;
      c.classname = op.op;
      c.assertions = p.cases;
      if (!p.reasons.empty()) {
        c.outcome = JunitOutcome::Failed;
        c.message = p.examples.empty() ? p.reasons[0]
                                       : withReproducer(p.reasons[0], p.examples[0].reproducer);
        c.detail = joinLines(p.reasons);
        for (const CaseExample& e : p.examples) c.detail += exampleText(e);
      } else if (p.cases == 0 || p.skipped == p.cases) {
        c.outcome = JunitOutcome::Skipped;
        c.message = "SKIPPED: no case of " + op.op + " " + p.pass + " was judged";
      }
      suite.cases.push_back(std::move(c));
    }
    suites.push_back(std::move(suite));
  }
  return suites;
}

}  // namespace tapecheck::cli
