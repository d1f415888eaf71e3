// logSoftmaxLast vectors: the softmax family's cases (corpus_softmax.cpp) plus the failure
// class proper to log-softmax, inputs far below zero (pytorch#38839), where a kernel that
// computes log(sum exp(x)) without the max shift returns -inf or NaN.
#include "corpus_util.h"

namespace tapecheck::vectors {

std::vector<CorpusFile> corpusLogSoftmaxLast() {
  using namespace corpus;
  std::vector<CorpusFile> files = softmaxFamilyCorpus("logSoftmaxLast");
  std::vector<CaseDef>& edge = files.at(0).cases;
  edge.push_back(CaseDef("three equal entries at -1e7 give -ln 3 each (pytorch#38839)",
                         {"LargeNegative", "Ties"})
                     .leaf({1, 3}, filled(3, -1e7))
                     .arg("x", 0)
                     .s({1, 3})
                     .upstream({1, 3}, {1, 0, 0}));
  edge.push_back(CaseDef("-1e7 beside 0: a log-probability of about -1e7, exact in binary32",
                         {"LargeNegative"})
                     .leaf({2, 2}, {-1e7, 0, 0, -1e7})
                     .arg("x", 0)
                     .s({2, 2})
                     .upstream({2, 2}, {1, 1, 0.5, -0.5}));
  edge.push_back(CaseDef("every entry below -1e30: exp(x) alone underflows to 0 and log(0) is "
                         "-inf without the max shift",
                         {"LargeNegative", "LargeMagnitude"})
                     .leaf({1, 3}, {-1e30f, -1.5e30f, -2e30f})
                     .arg("x", 0)
                     .s({1, 3})
                     .upstream({1, 3}, {1, 2, 3}));
  return files;
}

}  // namespace tapecheck::vectors
