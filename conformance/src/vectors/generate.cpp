// Generation of the committed corpus: case definitions -> v1 files, expected values from the
// multi-precision oracle, expected errors from the case definitions (checked against the
// oracle, never taken from it).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include "tapecheck/conformance/epsilon_abi.h"
#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/corpus.h"
#include "tapecheck/vectors/schema_rules.h"
#include "tapecheck/vectors/write.h"

#ifndef TAPECHECK_VERSION
#define TAPECHECK_VERSION "0"
#endif

namespace tapecheck::vectors {

const char* generatorVersion() { return TAPECHECK_VERSION; }

CaseDef::CaseDef(std::string c, std::vector<std::string> f)
    : comment(std::move(c)), flags(std::move(f)) {}

CaseDef& CaseDef::leaf(Shape shape, std::vector<double> values, bool requiresGrad) {
  tc.leaves.push_back(conformance::Leaf{{std::move(shape), std::move(values)}, requiresGrad});
  return *this;
}
CaseDef& CaseDef::arg(const std::string& name, NodeId id) {
  tc.call[name] = id;
  return *this;
}
CaseDef& CaseDef::s(Shape v) {
  tc.attrs.s = std::move(v);
  return *this;
}
CaseDef& CaseDef::k(std::uint64_t v) {
  tc.attrs.k = v;
  return *this;
}
CaseDef& CaseDef::axis(std::uint64_t v) {
  tc.attrs.axis = v;
  return *this;
}
CaseDef& CaseDef::mean(bool v) {
  tc.attrs.mean = v;
  return *this;
}
CaseDef& CaseDef::epsilon(double v) {
  tc.attrs.epsilon = v;
  return *this;
}
CaseDef& CaseDef::seqLen(std::uint64_t v) {
  tc.attrs.seqLen = v;
  return *this;
}
CaseDef& CaseDef::embedDim(std::uint64_t v) {
  tc.attrs.embedDim = v;
  return *this;
}
CaseDef& CaseDef::channels(std::uint64_t v) {
  tc.attrs.channels = v;
  return *this;
}
CaseDef& CaseDef::spatial(Shape v) {
  tc.attrs.spatial = std::move(v);
  return *this;
}
CaseDef& CaseDef::upstream(Shape shape, std::vector<double> values) {
  tc.upstream = conformance::TensorData{std::move(shape), std::move(values)};
  return *this;
}
CaseDef& CaseDef::invalid(const std::string& spec) {
  result = Expectation::Invalid;
  error = spec;
  return *this;
}
CaseDef& CaseDef::acceptable() {
  result = Expectation::Acceptable;
  return *this;
}

std::vector<CorpusFile> corpusFiles() {
  std::vector<CorpusFile> all;
  for (const conformance::OpInfo& op : conformance::opRegistry()) {
    if (!op.corpus) continue;
    auto files = op.corpus();
    all.insert(all.end(), files.begin(), files.end());
  }
  return all;
}

namespace {

Status checkBinary32(const std::vector<double>& values, const std::string& what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!isBinary32(values[i])) {
      std::ostringstream m;
      m.precision(17);
      m << what << "[" << i << "] = " << values[i] << " is not representable in binary32";
      return Error{m.str()};
    }
  return okStatus();
}

}  // namespace

Result<VectorFile> generateVectorFile(const CorpusFile& def) {
  if (!conformance::findOp(def.op))
    return Error{def.fileName() + ": '" + def.op + "' is not a registry operation"};
  VectorFile f;
  f.op = def.op;
  f.generator = Generator{kGeneratorName, generatorVersion(), kOracleProvenance};
  if (def.specRules.empty())
    return Error{def.fileName() + ": the file must name the docs/spec.md rules it exercises"};
  for (const auto& rule : def.specRules)
    if (!schema::isSpecRule(rule))
      return Error{def.fileName() + ": '" + rule + "' is not a docs/spec.md#anchor rule"};
  f.specRules = def.specRules;
  f.torchleanCommit = kTorchLeanCommit;
  f.header = def.header;
  std::set<std::string> used;
  for (std::size_t i = 0; i < def.cases.size(); ++i) {
    const CaseDef& c = def.cases[i];
    const std::string where =
        def.fileName() + ": case " + std::to_string(i + 1) + " (\"" + c.comment + "\")";
    auto fail = [&](const std::string& m) { return Error{where + ": " + m}; };
    if (c.comment.empty()) return fail("every case needs a comment");
    if (c.flags.empty()) return fail("every case needs at least one flag");
    for (const auto& flag : c.flags) {
      if (!flagDescription(flag)) return fail("flag '" + flag + "' has no description");
      used.insert(flag);
    }
    for (std::size_t l = 0; l < c.tc.leaves.size(); ++l) {
      const auto& leaf = c.tc.leaves[l].value;
      if (leaf.values.size() != sizeOf(leaf.shape))
        return fail("leaf " + std::to_string(l) + " has " + std::to_string(leaf.values.size()) +
                    " values for shape " + toString(leaf.shape));
      if (auto s = checkBinary32(leaf.values, "leaf " + std::to_string(l)); !s)
        return fail(s.message());
    }
    if (c.tc.upstream) {
      if (c.tc.upstream->values.size() != sizeOf(c.tc.upstream->shape))
        return fail("upstream has the wrong number of values");
      if (auto s = checkBinary32(c.tc.upstream->values, "upstream"); !s) return fail(s.message());
    }
    if (c.result == Expectation::Invalid && !c.error)
      return fail("an invalid case must state its docs/spec.md error");
    {
      // The flag that tells readers a device target does not judge the case must agree with
      // the classification that decides it (docs/spec.md#epsilon-abi-safe).
      conformance::TestCase probe = c.tc;
      probe.op = def.op;
      const bool unsafe = conformance::classifyEpsilonAbi(probe) == conformance::EpsilonAbi::Unsafe;
      const bool flagged =
          std::find(c.flags.begin(), c.flags.end(), "EpsilonAbiUnsafe") != c.flags.end();
      if (unsafe != flagged)
        return fail(unsafe ? "kernel ABI v1's binary32 epsilon changes this case's result: flag "
                             "it EpsilonAbiUnsafe"
                           : "the flag EpsilonAbiUnsafe is set, but rounding epsilon to binary32 "
                             "does not change this case's result beyond the oracle's");
    }

    VectorTest t;
    t.tcId = i + 1;
    t.comment = c.comment;
    t.flags = c.flags;
    t.testCase = c.tc;
    t.testCase.op = def.op;
    t.result = c.result;

    auto oracle = conformance::makeReferenceTapeOracle();
    const conformance::Outcome o = conformance::evaluate(*oracle, t.testCase);
    if (c.error) {
      if (!o.error)
        return fail("the case expects the error \"" + *c.error +
                    "\" but the oracle returned a value");
      if (*o.error != *c.error)
        return fail("the case expects the error \"" + *c.error + "\" but the oracle says \"" +
                    *o.error + "\"");
      t.expected.error = *c.error;
    } else {
      if (o.error)
        return fail("the oracle failed with \"" + *o.error + "\" on a case that expects a value");
      t.expected.value = o.value;
      if (t.testCase.upstream) t.expected.grads = o.grads;
    }
    f.tests.push_back(std::move(t));
  }
  for (const auto& flag : used) f.notes.emplace_back(flag, flagDescription(flag));
  return f;
}

Result<std::vector<std::string>> generateCorpus(const std::string& outDir,
                                                const std::optional<std::string>& op,
                                                std::ostream& log) {
  namespace fs = std::filesystem;
  if (op && !conformance::findOp(*op)) return Error{"unknown op '" + *op + "'"};
  // Generate everything first: a failing case writes nothing.
  std::vector<std::pair<std::string, std::string>> outputs;  // name, text
  std::set<std::string> names;
  for (const CorpusFile& def : corpusFiles()) {
    if (op && def.op != *op) continue;
    if (!names.insert(def.fileName()).second)
      return Error{def.fileName() + ": two corpus files have this name"};
    TAPECHECK_TRY(f, generateVectorFile(def));
    auto text = formatVectorFile(f);
    if (!text) return Error{def.fileName() + ": " + text.message()};
    outputs.emplace_back(def.fileName(), std::move(text).value());
  }
  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec) return Error{outDir + ": cannot create: " + ec.message()};
  std::vector<std::string> written;
  for (const auto& [name, text] : outputs) {
    const std::string path = (fs::path(outDir) / name).generic_string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Error{path + ": cannot write"};
    log << "wrote " << path << "\n";
    written.push_back(path);
  }
  return written;
}

}  // namespace tapecheck::vectors
