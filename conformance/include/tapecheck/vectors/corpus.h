// The golden-vector corpus as code: case definitions chosen by hand (each op's file,
// conformance/src/ops/<op>.cpp, its OpInfo's `corpus`), turned into v1 files by
// `tapecheck vectors generate`.
//
// A case states its inputs, its flags and what it expects: `valid` (the expected value and
// gradients are computed by the multi-precision oracle, rounded to binary64), `invalid` with the
// docs/spec.md error string written in the case (errors.h), or `acceptable`. For every case that
// names an error, generation FAILS unless the oracle reports exactly that error: the code under
// test never decides silently what an error case expects.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tapecheck/conformance/test_case.h"
#include "tapecheck/result.h"
#include "tapecheck/vectors/vector_file.h"

namespace tapecheck::vectors {

inline constexpr const char* kGeneratorName = "tapecheck vectors generate";
inline constexpr const char* kOracleProvenance =
    "tapecheck vectors generate: mpfr128 reference tape, rounded to binary64";
// The TorchLean commit docs/spec.md's rules were checked against (docs/spec.md#sources); every
// generated file records it as `torchleanCommit`.
inline constexpr const char* kTorchLeanCommit = "3447b74f6bf43f83ad50885851caf0bc01b4c53d";
const char* generatorVersion();  // the project version, e.g. "0.1.0"

struct CaseDef {
  std::string comment;
  std::vector<std::string> flags;
  conformance::TestCase tc;  // tc.op is filled in from the CorpusFile
  Expectation result = Expectation::Valid;
  std::optional<std::string> error;  // the docs/spec.md error this case expects, if any

  CaseDef(std::string comment, std::vector<std::string> flags);

  // Leaf i gets node id i.
  CaseDef& leaf(Shape shape, std::vector<double> values, bool requiresGrad = true);
  CaseDef& arg(const std::string& name, NodeId id);
  CaseDef& s(Shape v);
  CaseDef& k(std::uint64_t v);
  CaseDef& axis(std::uint64_t v);
  CaseDef& mean(bool v);
  CaseDef& epsilon(double v);
  CaseDef& seqLen(std::uint64_t v);
  CaseDef& embedDim(std::uint64_t v);
  CaseDef& channels(std::uint64_t v);
  CaseDef& spatial(Shape v);
  CaseDef& upstream(Shape shape, std::vector<double> values);
  // result invalid, expecting exactly `spec` (an errors.h constant).
  CaseDef& invalid(const std::string& spec);
  // result acceptable: the oracle's value is recorded, any outcome of the tape passes.
  CaseDef& acceptable();
};

struct CorpusFile {
  std::string op;     // docs/spec.md name
  std::string theme;  // e.g. "edge-cases"
  std::vector<std::string> header;
  std::vector<CaseDef> cases;
  // The docs/spec.md rules the cases exercise ("docs/spec.md#anchor"), written as `specRules`.
  std::vector<std::string> specRules;
  std::string fileName() const { return op + "-" + theme + ".json"; }
};

// Every op's files, in registry order.
std::vector<CorpusFile> corpusFiles();

// The description of every flag the corpus uses (a file's `notes` hold those it uses). An
// unknown flag is nullptr.
const char* flagDescription(const std::string& flag);

// One file: checks the inputs (binary32-representable, flags known) and computes the expected
// outcomes with the oracle. An Error names the file and case.
Result<VectorFile> generateVectorFile(const CorpusFile& def);

// Writes the corpus (every op, or one) into `outDir`, creating it; returns the paths written.
Result<std::vector<std::string>> generateCorpus(const std::string& outDir,
                                                const std::optional<std::string>& op,
                                                std::ostream& log);

}  // namespace tapecheck::vectors
