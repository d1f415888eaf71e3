// Merging shard certificates (`tapecheck certify merge`): shards 0..N-1 of one run, each made with
// `--shard I/N`, combine into the certificate the unsharded run would have written. Counts add,
// max is the max, p99 and mean are recomputed from the concatenated error lists, examples keep
// the worst. The result is not judged yet (verdict.h does that).
#pragma once

#include <vector>

#include "tapecheck/certify/certificate.h"
#include "tapecheck/result.h"

namespace tapecheck::certify {

// An Error (exit 2) when the set is not exactly shards 0..N-1 of one run: a certificate that is
// not a shard, a different shard count, a duplicate or missing index, or a different identity
// (kernels name/version/file digest, harness, corpus, device, seed, cases per op).
Result<Certificate> mergeShards(const std::vector<Certificate>& shards);

}  // namespace tapecheck::certify
