// topKMask for 2 <= k <= kClusterMaxK on rows longer than one block holds (topk_sorted.cu's
// block plan stops at kSortedMaxCols): a thread-block cluster holds the row in registers, so
// it is read from HBM once, where the streaming search (topk_stream.cuh) reads it twice.
//
// Block b of the cluster holds the entries [b * share, (b + 1) * share) of the row, share =
// kClusterSlots keys a thread, as one block team (topk_teams.cuh) of that part. Each block finds
// the k largest keys of its part by sorting networks and tournaments (topk_sorted.cuh) and
// sends the list to every block of the cluster (one mailbox exchange, row_cluster.cuh). T, the
// row's k-th largest key, is the k-th largest of the C lists, since each of the row's k largest
// is among its own block's k largest. The lists also give each block its share of the ties at
// T: the keys > T are fewer than k, so each block's are all in its list, and the keys == T of
// the blocks before it, counted up to the number the row keeps, are too (below). Every block
// then writes its part of the mask with topk_select.cuh's write_row_mask.
#include "row_cluster.cuh"
#include "topk_histogram.h"
#include "topk_sorted.cuh"
#include "topk_sorted.h"

namespace tapecheck_cuda {
namespace {

// 16 keys a thread, as the block plan; blocks of 512 threads, so that a multiprocessor holds two
// (64 registers a thread) and one block's loads overlap the other's tournaments and exchange
// (row_cluster.cuh: narrow cluster blocks measured faster for the other ops). Up to 8 blocks:
// 64K columns. Lists of 8 at most: 16 lost to the search on block rows (topk_sorted.cu).
constexpr int kClusterSlots = 16;
constexpr unsigned kClusterBlockThreads = 512;
constexpr uint32_t kClusterMaxK = 8;
constexpr uint32_t kClusterMinCols = 16385;  // up to 16K columns, topk_sorted.cu's block rows
constexpr uint32_t kClusterMaxCols = kMaxCluster * kClusterBlockThreads * kClusterSlots;
// The next row's part asked of L2 while this one is selected, as the cluster forward kernels do.
constexpr bool kClusterPrefetch = true;
static_assert(kClusterMaxK <= kSortedMaxK, "lists fit SortedBlockScratch");

// What one block of the cluster needs to write its part, from the C blocks' lists.
struct ClusterCut {
  uint32_t t;          // T
  uint32_t above;      // this block's keys > T
  uint32_t equal;      // this block's keys == T, when equal_known
  bool equal_known;    // false: the list is all >= T, so the block may hold more ties than it shows
  uint32_t ties_left;  // the row's ties at T still to keep when this block's turn comes
};

// Run by every warp alike (the result is uniform over the block): lane c < C takes block c's
// list (descending, zeros past k).
template <int K>
__device__ __forceinline__ ClusterCut cut_from_lists(const double (*part)[K], unsigned C,
                                                     unsigned rank, uint32_t k) {
  const unsigned lane = threadIdx.x & 31u;
  const bool sender = lane < C;
  auto entry = [&](int j) { return sender ? static_cast<uint32_t>(part[lane][j]) : 0u; };
  uint32_t list[K];
#pragma unroll
  for (int j = 0; j < K; ++j) list[j] = entry(j);
  uint32_t t = 0;
#pragma unroll
  for (int r = 0; r < K; ++r) {  // every round, whatever k (pop_largest: why)
    const uint32_t m = pop_largest(list);
    if (static_cast<uint32_t>(r) + 1u == k) t = m;
  }
  // The tournament consumed the lists: read them again (shared memory, not registers).
  uint32_t above = 0, equal = 0, below = 0;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const uint32_t e = entry(j);
    if (sender && static_cast<uint32_t>(j) < k) {
      above += e > t ? 1u : 0u;
      equal += e == t ? 1u : 0u;
      below += e < t ? 1u : 0u;
    }
  }
  // The row keeps `ties` keys == T. A block whose list has an entry < T shows all its keys ==
  // T; one whose list is all >= T shows k - above >= ties of them. Either way min(shown, ties)
  // is min(held, ties), which is all the count of the blocks before this one needs.
  const uint32_t ties = k - __reduce_add_sync(kFullWarp, above);
  const uint32_t before = __reduce_add_sync(kFullWarp, lane < rank ? ::min(equal, ties) : 0u);
  ClusterCut cut;
  cut.t = t;
  cut.above = __shfl_sync(kFullWarp, above, rank);
  cut.equal = __shfl_sync(kFullWarp, equal, rank);
  cut.equal_known = __shfl_sync(kFullWarp, below, rank) > 0;
  cut.ties_left = ties - ::min(before, ties);
  return cut;
}

template <int K, bool kPrefetch>
__global__ void __launch_bounds__(kClusterBlockThreads, 1024 / kClusterBlockThreads)
    topk_sorted_by_cluster(size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask) {
  __shared__ BlockTeamScratch scratch;
  __shared__ SortedBlockScratch lists;
  __shared__ Mailbox<K> mail;  // one exchange a row: the block's list
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks(), rank = cl.block_rank();
  BlockTeam team(&scratch);
  const uint32_t share = blockDim.x * kClusterSlots;
  const uint32_t first = rank * share;  // the plan leaves every block at least k entries
  const uint32_t part_cols = ::min(share, cols - first);
  const size_t clusters = gridDim.x / C;
  unsigned turn = 0;  // the cluster's rows so far
  mailbox_open(mail);

  // Cluster-uniform loop: every block of the cluster takes part in every exchange.
  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t offset = row * cols + first;
    uint32_t key[kClusterSlots];
    load_keys<kClusterSlots>(key, x + offset, threadIdx.x, blockDim.x, part_cols);
    if (kPrefetch && threadIdx.x == 0 && row + clusters < rows) {  // this block's part of its next row
      prefetch_l2(x + (row + clusters) * cols + first, part_cols * static_cast<uint32_t>(sizeof(float)));
    }
    uint32_t top[K];
    block_top_list<K>(team, lists, turn & 1u, key, k, top);
    const double word = static_cast<double>(kth_of_sorted(top, threadIdx.x + 1u));  // threads < K
    const ClusterCut cut = cut_from_lists<K>(mailbox_exchange(mail, word, turn), C, rank, k);

    uint32_t equal = cut.equal;
    if (!cut.equal_known) {  // uniform over the block
      uint32_t mine = 0;
#pragma unroll
      for (int i = 0; i < kClusterSlots; ++i) {
        mine += threadIdx.x + static_cast<uint32_t>(i) * blockDim.x < part_cols && key[i] == cut.t ? 1u : 0u;
      }
      equal = team.sum(mine);
    }
    // Keep the keys > T and the first `kept_ties` keys == T by index: all of them (keys >= T),
    // none (keys >= T + 1; T <= 0xff800000, no overflow) or, otherwise, ranked by write_row_mask
    // as a row whose k is above + kept_ties.
    const uint32_t kept_ties = ::min(cut.ties_left, equal);
    const bool all_or_none = kept_ties == equal || kept_ties == 0;
    const uint32_t t = kept_ties == 0 ? cut.t + 1u : cut.t;
    write_row_mask(team, key, part_cols, cut.above + kept_ties, t, all_or_none, true, mask + offset);
  }
  cl.sync();  // no block leaves while another's sends may still be in flight
}

template <int K>
bool launch_cluster_k(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                      float* mask, const ClusterTile& ct) {
  // The bulk prefetch needs 16-byte addresses and sizes: every part starts at a multiple of
  // share (a multiple of 4) and holds a multiple of 4 entries when cols is.
  if (kClusterPrefetch && cols % 4 == 0 && aligned16(x)) {
    return launch_cluster(topk_sorted_by_cluster<K, true>, ct, rows, s, rows, cols, k, x, mask);
  }
  return launch_cluster(topk_sorted_by_cluster<K, false>, ct, rows, s, rows, cols, k, x, mask);
}

}  // namespace

bool topk_sorted_cluster_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k,
                              const float* x, float* mask, int& status) {
  if (k < 2 || k > kClusterMaxK || k >= cols || cols < kClusterMinCols || cols > kClusterMaxCols) {
    return false;
  }
  if (rows < kSplitMaxRows && cols >= kSplitMinCols) return false;  // topk_split spreads few rows wider
  ClusterTile ct;
  ct.V = 1;
  const uint32_t share = kClusterBlockThreads * kClusterSlots;
  ct.C = static_cast<unsigned>(ceil_div(cols, share));
  if (ct.C < 2) return false;
  // Blocks as narrow as the row allows, in whole warps. Each part but the last is T *
  // kClusterSlots entries, less than cols / C + 32 * kClusterSlots, so the last keeps more than
  // cols / C - (C - 1) * 32 * kClusterSlots > share / 2 - share * 7 / 16 entries: far more than k.
  ct.T = static_cast<unsigned>(ceil_div(ceil_div(cols, ct.C * kClusterSlots), 32) * 32);
  bool launched = false;  // a refused cluster launch falls back to the search
  with_list_length<static_cast<int>(kClusterMaxK)>(k, [&](auto list_length) {
    launched = launch_cluster_k<decltype(list_length)::value>(s, rows, cols, k, x, mask, ct);
  });
  if (launched) status = launch_status();
  return launched;
}

}  // namespace tapecheck_cuda
