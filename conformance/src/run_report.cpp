#include "tapecheck/conformance/run_report.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/conformance/format.h"
#include "tapecheck/conformance/judge.h"

namespace tapecheck::conformance {

const char* statusWord(Status s) {
  switch (s) {
    case Status::Passed: return "PASSED";
    case Status::Failed: return "FAILED";
    case Status::Mistrusted: return "MISTRUSTED";
    case Status::Skipped: return "SKIPPED";
    case Status::NotProvided: return "NOT PROVIDED";
  }
  return "?";
}

namespace {

Status statusOf(std::uint64_t cases, std::uint64_t failures, std::uint64_t mistrusted,
                std::uint64_t skipped) {
  if (failures > 0) return Status::Failed;
  if (cases == 0 || skipped == cases) return Status::Skipped;
  if (mistrusted + skipped == cases) return Status::Mistrusted;
  return Status::Passed;
}

// JSON has no infinity: non-finite figures are written as the string "inf".
nlohmann::json ulpsJson(double v) {
  if (!std::isfinite(v)) return "inf";
  return std::round(v * 1000) / 1000;  // stable text, sub-0.001 ulp noise dropped
}

nlohmann::json exampleJson(const CaseExample& e) {
  return {{"group", e.group},           {"shape", e.shape},
          {"reason", e.reason},         {"reproducer", e.reproducer},
          {"valuesFile", e.valuesFile}, {"errorUlps", ulpsJson(e.errorUlps)}};
}

// Counts per power-of-two bucket of the error: [0, 0.5), [0.5, 1), [1, 2), ... [2^14, inf), inf.
nlohmann::json histogram(const std::vector<double>& errors) {
  std::vector<std::uint64_t> buckets(18, 0);
  for (double e : errors) {
    std::size_t b;
    if (!std::isfinite(e)) b = 17;
    else if (e < 0.5) b = 0;
    else b = std::min<std::size_t>(16, 1 + static_cast<std::size_t>(std::floor(std::log2(e * 2))));
    ++buckets[b];
  }
  return buckets;
}

}  // namespace

Status groupStatus(const GroupStats& g) {
  return statusOf(g.cases, g.failures, g.mistrusted, g.skipped);
}
Status passStatus(const PassStats& p) {
  if (!p.missingEntries.empty()) return Status::NotProvided;
  return statusOf(p.cases, p.failures, p.mistrusted, p.skipped);
}

std::string statusLine(const GroupStats& g) {
  std::ostringstream line;
  line << statusWord(groupStatus(g)) << " " << g.op << " " << g.pass << " " << g.shapeClass
       << " cases:" << g.cases;
  if (g.failures) line << " failed:" << g.failures;
  if (g.mistrusted) line << " mistrusted:" << g.mistrusted;
  if (g.skipped) line << " skipped:" << g.skipped;
  if (g.pass == "vectors")
    line << " max:" << formatUlps(g.maxUlps) << " p99:" << formatUlps(g.p99Ulps);
  else if (g.pass != "errors")
    line << " max:" << formatUlps(g.maxUlps) << " p99:" << formatUlps(g.p99Ulps)
         << " budget:" << formatUlps(g.budgetUlps);
  return line.str();
}

std::string summaryLine(const RunReport& r) {
  std::ostringstream line;
  line << "tests:" << r.tests << " passed:" << r.passed << " failed:" << r.failed
       << " mistrusted:" << r.mistrusted << " skipped:" << r.skipped;
  return line.str();
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& i : items) text += (text.empty() ? "" : ",") + i;
  return text;
}

// Every missing entry point of the run, each once, in the order the passes name them.
std::vector<std::string> missingOfRun(const RunReport& r) {
  std::vector<std::string> all;
  for (const PassStats& p : r.passes)
    for (const std::string& e : p.missingEntries)
      if (std::find(all.begin(), all.end(), e) == all.end()) all.push_back(e);
  return all;
}

}  // namespace

bool partialCoverage(const RunReport& r) {
  return std::any_of(r.passes.begin(), r.passes.end(),
                     [](const PassStats& p) { return !p.missingEntries.empty(); });
}

std::string notProvidedLine(const PassStats& p) {
  return std::string(statusWord(Status::NotProvided)) + " " + p.op + " " + p.pass +
         " missing:" + joined(p.missingEntries);
}

std::string coverageLine(const RunReport& r) {
  if (!partialCoverage(r)) return "";
  const auto notProvided = static_cast<std::size_t>(
      std::count_if(r.passes.begin(), r.passes.end(),
                    [](const PassStats& p) { return !p.missingEntries.empty(); }));
  std::ostringstream line;
  line << "coverage: passes:" << r.passes.size() << " provided:" << r.passes.size() - notProvided
       << " not-provided:" << notProvided << " missing:" << joined(missingOfRun(r));
  return line.str();
}

void printReport(const RunReport& r, std::ostream& out) {
  for (const GroupStats& g : r.groups) {
    out << statusLine(g) << "\n";
    if (!g.note.empty()) out << "  note: " << g.note << "\n";
    for (const CaseExample& e : g.examples) {
      out << "  case " << e.shape << ": " << e.reason << "\n";
      if (!e.valuesFile.empty()) out << "  values: " << e.valuesFile << "\n";
      if (!e.reproducer.empty()) out << "  reproduce: " << e.reproducer << "\n";
    }
  }
  for (const PassStats& p : r.passes)
    if (!p.missingEntries.empty()) out << notProvidedLine(p) << "\n";
  if (partialCoverage(r)) out << coverageLine(r) << "\n";
  out << summaryLine(r) << "\n";
}

std::string reportJson(const RunReport& r) {
  nlohmann::json passes = nlohmann::json::array();
  for (const PassStats& p : r.passes) {
    nlohmann::json examples = nlohmann::json::array();
    for (const CaseExample& e : p.examples) examples.push_back(exampleJson(e));
    passes.push_back({{"op", p.op},
                      {"pass", p.pass},
                      {"status", statusWord(passStatus(p))},
                      {"cases", p.cases},
                      {"failed", p.failures},
                      {"mistrusted", p.mistrusted},
                      {"skipped", p.skipped},
                      {"maxUlps", ulpsJson(p.maxUlps)},
                      {"p99Ulps", ulpsJson(p.p99Ulps)},
                      {"meanUlps", ulpsJson(p.meanUlps)},
                      {"budgetUlps", ulpsJson(p.budgetUlps)},
                      {"maxBudgetShare", ulpsJson(p.maxBudgetShare)},
                      {"histogram", histogram(p.errorsUlps)},
                      {"failures", examples}});
    if (!p.missingEntries.empty()) passes.back()["missingEntries"] = p.missingEntries;
    if (p.faults > 0) {
      passes.back()["faults"] = p.faults;
      passes.back()["firstFault"] = p.firstFault;
    }
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupStats& g : r.groups) {
    nlohmann::json examples = nlohmann::json::array();
    for (const CaseExample& e : g.examples) examples.push_back(exampleJson(e));
    groups.push_back({{"op", g.op},
                      {"pass", g.pass},
                      {"shapeClass", g.shapeClass},
                      {"status", statusWord(groupStatus(g))},
                      {"cases", g.cases},
                      {"failed", g.failures},
                      {"mistrusted", g.mistrusted},
                      {"skipped", g.skipped},
                      {"maxUlps", ulpsJson(g.maxUlps)},
                      {"p99Ulps", ulpsJson(g.p99Ulps)},
                      {"budgetUlps", ulpsJson(g.budgetUlps)},
                      {"maxBudgetShare", ulpsJson(g.maxBudgetShare)},
                      {"failures", examples}});
    if (!g.note.empty()) groups.back()["note"] = g.note;
  }
  nlohmann::json doc = {
      {"schema", "tapecheck-run-v1"},
      {"kernels", {{"name", r.kernelsName}, {"version", r.kernelsVersion},
                   {"source", r.kernelsSource}}},
      {"device", r.device},
      {"seed", r.seed},
      {"casesPerOp", r.casesPerOp},
      {"valuesDir", r.valuesDir},
      {"summary", {{"tests", r.tests}, {"passed", r.passed}, {"failed", r.failed},
                   {"mistrusted", r.mistrusted}, {"skipped", r.skipped}}},
      {"passes", passes},
      {"groups", groups},
  };
  if (partialCoverage(r)) {
    const auto notProvided = static_cast<std::uint64_t>(
        std::count_if(r.passes.begin(), r.passes.end(),
                      [](const PassStats& p) { return !p.missingEntries.empty(); }));
    doc["coverage"] = {{"passes", r.passes.size()},
                       {"provided", r.passes.size() - notProvided},
                       {"notProvided", notProvided},
                       {"missingEntries", missingOfRun(r)}};
  }
  return doc.dump(2) + "\n";
}

}  // namespace tapecheck::conformance
