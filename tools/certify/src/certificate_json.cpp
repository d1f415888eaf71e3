#include "tapecheck/certify/certificate_json.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "tapecheck/certify/schema_check.h"

namespace tapecheck::certify {
namespace {

using nlohmann::json;

template <class J>
J reasonsToJson(const std::vector<std::string>& reasons) {
  J out = J::array();
  for (const std::string& r : reasons) out.push_back(r);
  return out;
}

std::vector<std::string> reasonsFromJson(const json& j) {
  std::vector<std::string> out;
  for (const json& r : j) out.push_back(r.get<std::string>());
  return out;
}

Verdict verdictFromJson(const json& j) {
  const std::string word = j.get<std::string>();
  if (word == "certified") return Verdict::Certified;
  if (word == "not provided") return Verdict::NotProvided;
  return Verdict::Rejected;
}

template <class J>
J ulpsTo(double ulps) {
  if (std::isnan(ulps)) return "nan";
  if (std::isinf(ulps)) return "inf";
  return ulps;
}

template <class J>
J passToJson(const PassRecord& p, bool withErrors) {
  J j = {{"pass", p.pass},
            {"cases", p.cases},
            {"failures", p.failures},
            {"mistrusted", p.mistrusted},
            {"skipped", p.skipped},
            {"maxUlps", ulpsTo<J>(p.maxUlps)},
            {"p99Ulps", ulpsTo<J>(p.p99Ulps)},
            {"meanUlps", ulpsTo<J>(p.meanUlps)},
            {"budgetUlps", ulpsTo<J>(p.budgetUlps)},
            {"verdict", verdictWord(p.verdict)},
            {"reasons", reasonsToJson<J>(p.reasons)}};
  J examples = J::array();
  for (const conformance::CaseExample& e : p.examples)
    examples.push_back({{"group", e.group},
                        {"shape", e.shape},
                        {"reason", e.reason},
                        {"reproducer", e.reproducer},
                        {"valuesFile", e.valuesFile},
                        {"errorUlps", ulpsTo<J>(e.errorUlps)}});
  j["examples"] = std::move(examples);
  if (withErrors) {
    J errors = J::array();
    for (double e : p.errorsUlps) errors.push_back(ulpsTo<J>(e));
    j["errorsUlps"] = std::move(errors);
  }
  // Present only for a partial table or misbehaving kernels: other certificates read as before.
  if (!p.missingEntries.empty()) j["missingEntries"] = reasonsToJson<J>(p.missingEntries);
  if (p.faults > 0) {
    j["faults"] = p.faults;
    j["firstFault"] = p.firstFault;
  }
  return j;
}

PassRecord passFromJson(const json& j) {
  PassRecord p;
  p.pass = j.at("pass").get<std::string>();
  p.cases = j.at("cases").get<std::uint64_t>();
  p.failures = j.at("failures").get<std::uint64_t>();
  p.mistrusted = j.at("mistrusted").get<std::uint64_t>();
  p.skipped = j.at("skipped").get<std::uint64_t>();
  p.maxUlps = ulpsFromJson(j.at("maxUlps"));
  p.p99Ulps = ulpsFromJson(j.at("p99Ulps"));
  p.meanUlps = ulpsFromJson(j.at("meanUlps"));
  p.budgetUlps = ulpsFromJson(j.at("budgetUlps"));
  p.verdict = verdictFromJson(j.at("verdict"));
  p.reasons = reasonsFromJson(j.at("reasons"));
  for (const json& e : j.at("examples")) {
    conformance::CaseExample x;
    x.group = e.at("group").get<std::string>();
    x.shape = e.at("shape").get<std::string>();
    x.reason = e.at("reason").get<std::string>();
    x.reproducer = e.at("reproducer").get<std::string>();
    x.valuesFile = e.at("valuesFile").get<std::string>();
    x.errorUlps = ulpsFromJson(e.at("errorUlps"));
    p.examples.push_back(std::move(x));
  }
  if (j.contains("errorsUlps"))
    for (const json& e : j.at("errorsUlps")) p.errorsUlps.push_back(ulpsFromJson(e));
  if (j.contains("missingEntries")) p.missingEntries = reasonsFromJson(j.at("missingEntries"));
  if (j.contains("faults")) p.faults = j.at("faults").get<std::uint64_t>();
  if (j.contains("firstFault")) p.firstFault = j.at("firstFault").get<std::string>();
  return p;
}

template <class J>
J changeToJson(const BaselineChange& c) {
  return {{"op", c.op},
          {"pass", c.pass},
          {"kind", c.kind},
          {"baselineFailures", c.baselineFailures},
          {"failures", c.failures},
          {"baselineMaxUlps", ulpsTo<J>(c.baselineMaxUlps)},
          {"maxUlps", ulpsTo<J>(c.maxUlps)},
          {"baselineP99Ulps", ulpsTo<J>(c.baselineP99Ulps)},
          {"p99Ulps", ulpsTo<J>(c.p99Ulps)},
          {"rejects", c.rejects}};
}

BaselineChange changeFromJson(const json& j) {
  BaselineChange c;
  c.op = j.at("op").get<std::string>();
  c.pass = j.at("pass").get<std::string>();
  c.kind = j.at("kind").get<std::string>();
  c.baselineFailures = j.at("baselineFailures").get<std::uint64_t>();
  c.failures = j.at("failures").get<std::uint64_t>();
  c.baselineMaxUlps = ulpsFromJson(j.at("baselineMaxUlps"));
  c.maxUlps = ulpsFromJson(j.at("maxUlps"));
  c.baselineP99Ulps = ulpsFromJson(j.at("baselineP99Ulps"));
  c.p99Ulps = ulpsFromJson(j.at("p99Ulps"));
  c.rejects = j.at("rejects").get<bool>();
  return c;
}

}  // namespace

json ulpsToJson(double ulps) { return ulpsTo<json>(ulps); }

double ulpsFromJson(const json& value) {
  if (value.is_string())
    return value.get<std::string>() == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                             : std::numeric_limits<double>::infinity();
  return value.get<double>();
}

namespace {

// Members in the order a reader wants them: format and verdict first, the ops last.
template <class J>
J certificateTo(const Certificate& cert) {
  const Identity& id = cert.identity;
  J j = J::object();
  j["format"] = kCertificateFormat;
  j["kind"] = cert.shard ? "shard" : "certificate";
  if (cert.shard) j["shard"] = {{"index", cert.shard->index}, {"count", cert.shard->count}};
  if (cert.mergedShards > 0) j["mergedShards"] = cert.mergedShards;
  j["created"] = cert.created;
  j["verdict"] = verdictWord(cert.verdict);
  j["reasons"] = reasonsToJson<J>(cert.reasons);
  j["kernels"] = {{"name", id.kernelsName},
                  {"version", id.kernelsVersion},
                  {"source", id.kernelsSource},
                  {"file", id.kernelsFile},
                  {"sha256", id.kernelsSha256}};
  j["harness"] = {{"name", "tapecheck"},
                  {"version", id.harnessVersion},
                  {"gitRevision", id.gitRevision}};
  j["corpus"] = {{"sha256", id.corpusSha256}, {"files", id.corpusFiles}};
  j["device"] = id.device;
  j["seed"] = id.seed;
  j["casesPerOp"] = id.casesPerOp;
  j["totals"] = {{"tests", cert.totals.tests},
                 {"passed", cert.totals.passed},
                 {"failed", cert.totals.failed},
                 {"mistrusted", cert.totals.mistrusted},
                 {"skipped", cert.totals.skipped}};
  if (cert.baseline) {
    const BaselineInfo& b = *cert.baseline;
    J changes = J::array();
    for (const BaselineChange& c : cert.changes) changes.push_back(changeToJson<J>(c));
    j["baseline"] = {{"sha256", b.sha256},
                     {"kernelsName", b.kernelsName},
                     {"kernelsVersion", b.kernelsVersion},
                     {"gitRevision", b.gitRevision},
                     {"corpusSha256", b.corpusSha256},
                     {"growthFactor", b.growthFactor},
                     {"growthSlackUlps", b.growthSlackUlps},
                     {"changes", std::move(changes)}};
  }
  J ops = J::array();
  for (const OpRecord& op : cert.ops) {
    J passes = J::array();
    for (const PassRecord& p : op.passes)
      passes.push_back(passToJson<J>(p, cert.shard.has_value()));
    ops.push_back({{"op", op.op},
                   {"verdict", verdictWord(op.verdict)},
                   {"reasons", reasonsToJson<J>(op.reasons)},
                   {"passes", std::move(passes)}});
  }
  j["ops"] = std::move(ops);
  return j;
}

}  // namespace

json certificateToJson(const Certificate& cert) { return certificateTo<json>(cert); }

std::string certificateText(const Certificate& cert) {
  return certificateTo<nlohmann::ordered_json>(cert).dump(
             2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

Result<Certificate> certificateFromJson(const json& doc) {
  if (!doc.is_object() || !doc.contains("format") || doc.at("format") != kCertificateFormat)
    return Error{std::string("not a ") + kCertificateFormat + " document (member \"format\")"};
  const std::vector<std::string> violations = validateAgainstSchema(doc, certificateSchema());
  if (!violations.empty()) {
    std::string text = "does not conform to the certificate schema:";
    for (const std::string& v : violations) text += "\n  " + v;
    return Error{text};
  }
  Certificate cert;
  Identity& id = cert.identity;
  const json& k = doc.at("kernels");
  id.kernelsName = k.at("name").get<std::string>();
  id.kernelsVersion = k.at("version").get<std::string>();
  id.kernelsSource = k.at("source").get<std::string>();
  id.kernelsFile = k.at("file").get<std::string>();
  id.kernelsSha256 = k.at("sha256").get<std::string>();
  id.harnessVersion = doc.at("harness").at("version").get<std::string>();
  id.gitRevision = doc.at("harness").at("gitRevision").get<std::string>();
  id.corpusSha256 = doc.at("corpus").at("sha256").get<std::string>();
  id.corpusFiles = doc.at("corpus").at("files").get<std::uint64_t>();
  id.device = doc.at("device").get<std::string>();
  id.seed = doc.at("seed").get<std::uint64_t>();
  id.casesPerOp = doc.at("casesPerOp").get<std::uint64_t>();
  const json& t = doc.at("totals");
  cert.totals = {t.at("tests").get<std::uint64_t>(), t.at("passed").get<std::uint64_t>(),
                 t.at("failed").get<std::uint64_t>(), t.at("mistrusted").get<std::uint64_t>(),
                 t.at("skipped").get<std::uint64_t>()};
  if (doc.contains("shard")) {
    const json& s = doc.at("shard");
    const std::uint64_t index = s.at("index").get<std::uint64_t>();
    const std::uint64_t count = s.at("count").get<std::uint64_t>();
    if (index >= count || count > 0xFFFFFFFFu)
      return Error{"shard index " + std::to_string(index) + " is not below its count " +
                   std::to_string(count)};
    cert.shard = ShardInfo{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(count)};
  }
  if (doc.contains("mergedShards"))
    cert.mergedShards = doc.at("mergedShards").get<std::uint32_t>();
  cert.created = doc.at("created").get<std::string>();
  cert.verdict = verdictFromJson(doc.at("verdict"));
  cert.reasons = reasonsFromJson(doc.at("reasons"));
  if (doc.contains("baseline")) {
    const json& b = doc.at("baseline");
    BaselineInfo info;
    info.sha256 = b.at("sha256").get<std::string>();
    info.kernelsName = b.at("kernelsName").get<std::string>();
    info.kernelsVersion = b.at("kernelsVersion").get<std::string>();
    info.gitRevision = b.at("gitRevision").get<std::string>();
    info.corpusSha256 = b.at("corpusSha256").get<std::string>();
    info.growthFactor = b.at("growthFactor").get<double>();
    info.growthSlackUlps = b.at("growthSlackUlps").get<double>();
    cert.baseline = info;
    for (const json& c : b.at("changes")) cert.changes.push_back(changeFromJson(c));
  }
  for (const json& o : doc.at("ops")) {
    OpRecord op;
    op.op = o.at("op").get<std::string>();
    if (cert.findOp(op.op)) return Error{"op " + op.op + " is listed twice"};
    op.verdict = verdictFromJson(o.at("verdict"));
    op.reasons = reasonsFromJson(o.at("reasons"));
    for (const json& p : o.at("passes")) {
      PassRecord pass = passFromJson(p);
      for (const PassRecord& q : op.passes)
        if (q.pass == pass.pass) return Error{"op " + op.op + " lists pass " + q.pass + " twice"};
      if (cert.shard && !p.contains("errorsUlps"))
        return Error{"shard certificate lacks the error list of " + op.op + " " + pass.pass};
      op.passes.push_back(std::move(pass));
    }
    cert.ops.push_back(std::move(op));
  }
  return cert;
}

Result<Certificate> readCertificateFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read certificate " + path};
  std::ostringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{path + ": not valid JSON"};
  Result<Certificate> cert = certificateFromJson(doc);
  if (!cert) return Error{path + ": " + cert.message()};
  return cert;
}

}  // namespace tapecheck::certify
