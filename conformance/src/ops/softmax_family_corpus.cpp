// The golden vectors of the softmax family: softmaxLast's files, which logSoftmaxLast
// (log_softmax_last.cpp) extends with its own cases, since docs/spec.md gives both the same dispatch
// (rowOpLast) and the same non-finite rules; every comment below holds for both ops.
#include "corpus_support.h"

namespace tapecheck::conformance::ops {

namespace {

std::vector<CaseDef> edgeCases() {
  std::vector<CaseDef> c;
  c.push_back(CaseDef("two rows of small finite values", {"Normal"})
                  .leaf({2, 3}, {1, 2, 3, -1, 0, 0.5})
                  .arg("x", 0)
                  .s({2, 3})
                  .upstream({2, 3}, {0.5, -1, 0.25, 1, 1, 1}));
  c.push_back(CaseDef("rank 1: one row of five", {"Normal"})
                  .leaf({5}, {-2, -1, 0, 1, 2})
                  .arg("x", 0)
                  .s({5})
                  .upstream({5}, {1, 0, 0, 0, 0}));
  c.push_back(CaseDef("rank 3 [2,2,3]: rows are the last axis", {"Normal", "HigherRank"})
                  .leaf({2, 2, 3}, grid(12, 11, 0, 64, 1.0 / 16))
                  .arg("x", 0)
                  .s({2, 2, 3})
                  .upstream({2, 2, 3}, grid(12, 12, 0, 16, 1.0 / 8)));
  c.push_back(CaseDef("rank 4 [2,1,2,2]", {"Normal", "HigherRank"})
                  .leaf({2, 1, 2, 2}, {0.25, -0.25, 3, 3.5, -8, 8, 1, 1})
                  .arg("x", 0)
                  .s({2, 1, 2, 2})
                  .upstream({2, 1, 2, 2}, {1, -1, 2, 0, 0.5, 0.5, -3, 1}));
  c.push_back(CaseDef("a row of equal entries is uniform; upstream 1..4", {"Ties"})
                  .leaf({1, 4}, filled(4, 0.75))
                  .arg("x", 0)
                  .s({1, 4})
                  .upstream({1, 4}, {1, 2, 3, 4}));
  c.push_back(CaseDef("the row maximum appears three times", {"Ties"})
                  .leaf({1, 4}, {3, 3, 1, 3})
                  .arg("x", 0)
                  .s({1, 4})
                  .upstream({1, 4}, {0, 1, 0, -1}));
  c.push_back(CaseDef("-0 and +0 are equal inputs", {"Ties", "SignedZero"})
                  .leaf({2}, {-0.0, 0.0})
                  .arg("x", 0)
                  .s({2})
                  .upstream({2}, {1, 0}));
  c.push_back(CaseDef("scalar: the value is the constant (1 or 0), the gradient zero",
                      {"Scalar"})
                  .leaf({}, {3.5})
                  .arg("x", 0)
                  .s({})
                  .upstream({}, {2}));
  c.push_back(CaseDef("scalar without grad and without backward", {"Scalar", "NoGrad"})
                  .leaf({}, {-7}, false)
                  .arg("x", 0)
                  .s({}));
  c.push_back(CaseDef("scalar NaN input: the scalar value ignores x", {"Scalar", "NaN"})
                  .leaf({}, {kNaN})
                  .arg("x", 0)
                  .s({})
                  .upstream({}, {1}));
  c.push_back(CaseDef("empty [0]: value and gradient are empty copies", {"Empty"})
                  .leaf({0}, {})
                  .arg("x", 0)
                  .s({0})
                  .upstream({0}, {}));
  c.push_back(CaseDef("empty [3,0] with backward (pytorch#17256)", {"Empty"})
                  .leaf({3, 0}, {})
                  .arg("x", 0)
                  .s({3, 0})
                  .upstream({3, 0}, {}));
  c.push_back(CaseDef("empty [0,3] with backward (pytorch#17262)", {"Empty"})
                  .leaf({0, 3}, {})
                  .arg("x", 0)
                  .s({0, 3})
                  .upstream({0, 3}, {}));
  c.push_back(CaseDef("empty rank 3 [2,0,4] with backward", {"Empty", "HigherRank"})
                  .leaf({2, 0, 4}, {})
                  .arg("x", 0)
                  .s({2, 0, 4})
                  .upstream({2, 0, 4}, {}));
  c.push_back(CaseDef("a row of one entry gives exactly 1 (0 for log) and a zero gradient",
                      {"RowOfOne"})
                  .leaf({1}, {5.5})
                  .arg("x", 0)
                  .s({1})
                  .upstream({1}, {3}));
  c.push_back(CaseDef("four rows of one, including +-1e30", {"RowOfOne", "LargeMagnitude"})
                  .leaf({4, 1}, {1e30f, -1e30f, 0, 3.25})
                  .arg("x", 0)
                  .s({4, 1})
                  .upstream({4, 1}, {1, -2, 0.5, 4}));
  c.push_back(CaseDef("x does not require grad: backward gives it zeros", {"NoGrad"})
                  .leaf({2, 2}, {1, 2, 3, 4}, false)
                  .arg("x", 0)
                  .s({2, 2})
                  .upstream({2, 2}, {1, 1, 1, 1}));
  c.push_back(CaseDef("no upstream: forward only", {"Normal"})
                  .leaf({3, 2}, {0, 1, 10, 20, -5, 5}, false)
                  .arg("x", 0)
                  .s({3, 2}));
  c.push_back(CaseDef("NaN in the first row makes that row all NaN; the second row is normal",
                      {"NaN"})
                  .leaf({2, 3}, {1, kNaN, 2, 0, 1, 2})
                  .arg("x", 0)
                  .s({2, 3})
                  .upstream({2, 3}, {1, 1, 1, 1, 0, -1}));
  c.push_back(CaseDef("+inf in a row gives an all-NaN row (inf - inf)", {"PosInf"})
                  .leaf({2, 3}, {0, kInf, 1, 1, 1, 1})
                  .arg("x", 0)
                  .s({2, 3})
                  .upstream({2, 3}, {1, 0, 0, 1, 0, 0}));
  c.push_back(CaseDef("a row of only -inf gives an all-NaN row (pytorch#25110)", {"AllNegInf"})
                  .leaf({2, 3}, {-kInf, -kInf, -kInf, 0.5, 0.25, 0})
                  .arg("x", 0)
                  .s({2, 3})
                  .upstream({2, 3}, {1, 2, 3, 1, 2, 3}));
  c.push_back(CaseDef("-inf beside a finite maximum: 0 for softmax, -inf for log-softmax",
                      {"SomeNegInf"})
                  .leaf({1, 4}, {-kInf, 0, -kInf, 1})
                  .arg("x", 0)
                  .s({1, 4})
                  .upstream({1, 4}, {1, 1, -1, 0.5}));
  c.push_back(CaseDef("-inf and NaN in one row: NaN wins, the row is all NaN",
                      {"SomeNegInf", "NaN"})
                  .leaf({1, 3}, {-kInf, kNaN, 2})
                  .arg("x", 0)
                  .s({1, 3})
                  .upstream({1, 3}, {1, 0, 0}));
  c.push_back(CaseDef("entries beyond the binary32 exp overflow point (~88.72): exp must "
                      "follow the max subtraction",
                      {"ExpOverflow"})
                  .leaf({2, 4}, {88, 88.5, 89, 90, 100, 99, 98, 0})
                  .arg("x", 0)
                  .s({2, 4})
                  .upstream({2, 4}, {1, -1, 0.5, 2, 1, 0, 0, 1}));
  c.push_back(CaseDef("huge spread: +-1e30", {"LargeMagnitude"})
                  .leaf({1, 3}, {1e30f, -1e30f, 0})
                  .arg("x", 0)
                  .s({1, 3})
                  .upstream({1, 3}, {1, 1, 1}));
  c.push_back(CaseDef("exp(-100) and exp(-200) underflow binary32 but not binary64",
                      {"Underflow"})
                  .leaf({1, 3}, {0, -100, -200})
                  .arg("x", 0)
                  .s({1, 3})
                  .upstream({1, 3}, {0.25, 1, -1}));
  c.push_back(CaseDef("inputs near -1e7, where binary32 spacing is 1 (pytorch#38839)",
                      {"LargeNegative"})
                  .leaf({2, 4}, {-1e7, -1e7 + 1, -1e7 + 2, -1e7 + 3, -1e7, -1e7, -1e7, -1e7 + 16})
                  .arg("x", 0)
                  .s({2, 4})
                  .upstream({2, 4}, {1, 0, 0, 0, 0.5, 0.5, 0.5, 0.5}));
  c.push_back(CaseDef("binary32 subnormal inputs (2^-140, 2^-149)", {"Subnormal"})
                  .leaf({1, 3}, {std::ldexp(1.0, -140), 0, -std::ldexp(1.0, -149)})
                  .arg("x", 0)
                  .s({1, 3})
                  .upstream({1, 3}, {std::ldexp(1.0, -140), 1, 0}));
  return c;
}

std::vector<CaseDef> widthCases() {
  std::vector<CaseDef> c;
  c.push_back(CaseDef("513 columns: one past a 512-wide block (pytorch#143644)", {"OddWidth"})
                  .leaf({2, 513}, grid(1026, 513, 0, 2048, 1.0 / 256))
                  .arg("x", 0)
                  .s({2, 513})
                  .upstream({2, 513}, grid(1026, 514, 0, 64, 1.0 / 64)));
  c.push_back(CaseDef("1025 columns: one past a 1024-wide block (pytorch#147284)",
                      {"OddWidth"})
                  .leaf({2, 1025}, grid(2050, 1025, 0, 2048, 1.0 / 256))
                  .arg("x", 0)
                  .s({2, 1025})
                  .upstream({2, 1025}, grid(2050, 1026, 0, 64, 1.0 / 64)));
  c.push_back(CaseDef("1027 columns: odd, not a multiple of 4 (vectorized loads)", {"OddWidth"})
                  .leaf({1, 1027}, grid(1027, 1027, 0, 2048, 1.0 / 256))
                  .arg("x", 0)
                  .s({1, 1027})
                  .upstream({1, 1027}, grid(1027, 1028, 0, 64, 1.0 / 64)));
  // An attention mask: -inf everywhere except 5 entries, the last one at the far end.
  std::vector<double> masked(1025, -kInf);
  masked[0] = 1;
  masked[7] = 2;
  masked[511] = -3;
  masked[512] = 0.5;
  masked[1024] = 4;
  c.push_back(CaseDef("1025 columns of -inf but five (a padding mask), the last in the tail "
                      "block",
                      {"OddWidth", "SomeNegInf"})
                  .leaf({1, 1025}, masked)
                  .arg("x", 0)
                  .s({1, 1025})
                  .upstream({1, 1025}, grid(1025, 7, 0, 8, 0.25)));
  c.push_back(CaseDef("513 columns between 80 and 100: binary32 exp overflows without the "
                      "max shift",
                      {"OddWidth", "ExpOverflow"})
                  .leaf({1, 513}, grid(513, 80, 90, 640, 1.0 / 64))
                  .arg("x", 0)
                  .s({1, 513})
                  .upstream({1, 513}, grid(513, 81, 0, 4, 0.5)));
  return c;
}

}  // namespace

std::vector<CorpusFile> softmaxFamilyCorpus(const std::string& op) {
  const bool log = op == "logSoftmaxLast";
  const std::string name = log ? "log-softmax" : "softmax";
  const std::string rule = log ? "docs/spec.md#log-softmax-last" : "docs/spec.md#softmax-last";
  std::vector<CorpusFile> files;
  files.push_back(CorpusFile{
      op,
      "edge-cases",
      {name + " along the last axis (docs/spec.md#operations, rowOpLast): the empty, scalar and "
              "row-of-one cases, non-finite rows, ties, extreme magnitudes.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      edgeCases(),
      {rule, "docs/spec.md#row-op-last", "docs/spec.md#non-finite-rows", "docs/spec.md#lean-max",
       "docs/spec.md#requires-grad", "docs/spec.md#backward"}});
  files.push_back(CorpusFile{
      op,
      "widths",
      {name + " on row widths just past GPU block sizes (512, 1024) and masked rows, the "
              "widths where real kernels have failed.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      widthCases(),
      {rule, "docs/spec.md#row-folding"}});
  files.push_back(CorpusFile{
      op,
      "errors",
      {name + ": docs/spec.md's validation order and error strings (rowOpLast), and backward's "
              "seed shape check.",
       "Expected errors are written in the case definitions from docs/spec.md; generation fails "
       "if the reference disagrees."},
      rowOpLastErrorCases([](CaseDef&) {}),
      {"docs/spec.md#row-op-last", "docs/spec.md#row-folding", "docs/spec.md#leaf",
       "docs/spec.md#lookup", "docs/spec.md#uint32", "docs/spec.md#error-strings",
       "docs/spec.md#errors-leave-tape-unchanged", "docs/spec.md#backward"}});
  return files;
}

}  // namespace tapecheck::conformance::ops
