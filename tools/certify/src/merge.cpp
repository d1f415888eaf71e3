#include "tapecheck/certify/merge.h"

#include <algorithm>
#include <set>

namespace tapecheck::certify {
namespace {

std::string sameIdentity(const Identity& a, const Identity& b) {
  if (a.kernelsName != b.kernelsName) return "kernels name";
  if (a.kernelsVersion != b.kernelsVersion) return "kernels version";
  if (a.kernelsSha256 != b.kernelsSha256) return "kernels file SHA-256";
  if (a.harnessVersion != b.harnessVersion) return "harness version";
  if (a.gitRevision != b.gitRevision) return "harness git revision";
  if (a.corpusSha256 != b.corpusSha256) return "vector corpus SHA-256";
  if (a.device != b.device) return "device";
  if (a.seed != b.seed) return "seed";
  if (a.casesPerOp != b.casesPerOp) return "cases per op";
  return "";
}

void addPass(PassRecord& into, const PassRecord& p) {
  into.cases += p.cases;
  into.failures += p.failures;
  into.mistrusted += p.mistrusted;
  into.skipped += p.skipped;
  into.maxUlps = std::max(into.maxUlps, p.maxUlps);
  into.budgetUlps = std::max(into.budgetUlps, p.budgetUlps);
  into.errorsUlps.insert(into.errorsUlps.end(), p.errorsUlps.begin(), p.errorsUlps.end());
  into.examples.insert(into.examples.end(), p.examples.begin(), p.examples.end());
  if (into.missingEntries.empty()) into.missingEntries = p.missingEntries;
  if (into.firstFault.empty()) into.firstFault = p.firstFault;  // the lowest shard's first
  into.faults += p.faults;
}

}  // namespace

Result<Certificate> mergeShards(const std::vector<Certificate>& shards) {
  if (shards.empty()) return Error{"no shard certificates to merge"};
  const Certificate& first = shards.front();
  if (!first.shard) return Error{"certificate 1 is not a shard certificate"};
  const std::uint32_t count = first.shard->count;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Certificate& s = shards[i];
    const std::string which = "certificate " + std::to_string(i + 1);
    if (!s.shard) return Error{which + " is not a shard certificate"};
    if (s.shard->count != count)
      return Error{which + " is a shard of " + std::to_string(s.shard->count) + ", not of " +
                   std::to_string(count)};
    if (!seen.insert(s.shard->index).second)
      return Error{which + " repeats shard " + std::to_string(s.shard->index) + "/" +
                   std::to_string(count)};
    if (std::string field = sameIdentity(first.identity, s.identity); !field.empty())
      return Error{which + " comes from a different run (its " + field + " differs)"};
  }
  if (seen.size() != count) {
    std::string missing;
    for (std::uint32_t i = 0; i < count; ++i)
      if (!seen.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    return Error{"shards missing from " + std::to_string(count) + ": " + missing};
  }

  Certificate merged;
  merged.identity = first.identity;
  merged.mergedShards = count;
  merged.created = utcTimestamp();
  // Shards in index order, so ops and passes come out in the unsharded order where they agree.
  std::vector<const Certificate*> ordered;
  for (const Certificate& s : shards) ordered.push_back(&s);
  std::sort(ordered.begin(), ordered.end(),
            [](const Certificate* a, const Certificate* b) {
              return a->shard->index < b->shard->index;
            });
  for (const Certificate* s : ordered) {
    merged.totals.tests += s->totals.tests;
    merged.totals.passed += s->totals.passed;
    merged.totals.failed += s->totals.failed;
    merged.totals.mistrusted += s->totals.mistrusted;
    merged.totals.skipped += s->totals.skipped;
    for (const OpRecord& op : s->ops) {
      OpRecord* into = nullptr;
      for (OpRecord& o : merged.ops)
        if (o.op == op.op) into = &o;
      if (!into) {
        merged.ops.push_back(OpRecord{});
        merged.ops.back().op = op.op;
        into = &merged.ops.back();
      }
      for (const PassRecord& p : op.passes) {
        PassRecord* target = nullptr;
        for (PassRecord& q : into->passes)
          if (q.pass == p.pass) target = &q;
        if (!target) {
          into->passes.push_back(PassRecord{});
          into->passes.back().pass = p.pass;
          target = &into->passes.back();
        }
        addPass(*target, p);
      }
    }
  }
  finalizePassFigures(merged.ops);
  return merged;
}

}  // namespace tapecheck::certify
