// The kernel table of the built-in CUDA kernels and the one symbol the library exports.
#include "entry.h"
#include "tapecheck/kernels_v1.h"

namespace {

const tapecheck_kernels_v1 kTable = {
    /*abi_version=*/1u,
    /*name=*/"tapecheck-cuda",
    // 1.0.0: the first, generic row engine (certified on an H200, vectors/certificates/).
    // 1.1.0: the tiled kernels of README.md (never certified; see conformance/results/).
    // 1.2.0: 1.1.0 with the register and streaming topk_mask kernels (README.md).
    // 1.3.0: one reduction a row for the norms' statistics, their backward sums and the
    //        softmax / cross-entropy maximum and sum over several warps (README.md).
    // 1.3.1: 1.3.0 with scratch memory from the library's own pool (scratch_pool.h).
    // 1.4.0: 1.3.1 with layer_norm_bwd's column sums fused across a cluster for rows of 8K-16K
    //        (ln_bwd_cluster.cuh) and the next row prefetched into L2 by the cluster forward
    //        kernels (row_cluster.cuh).
    // 1.4.1: 1.4.0 with ln_bwd_fused's block rows of 2K-8K prefetching their next row
    //        (ln_bwd_fused.cuh).
    // 1.5.0: 1.4.1 with topk_mask's k = 1 as two exact reductions instead of a search
    //        (topk_first.cuh).
    // 1.5.1: 1.5.0 with k = 1's lane groups sized for 4 units a lane, at least 8 lanes.
    // 1.6.0: 1.5.1 with the cluster kernels' block partials pushed into each block's mailbox
    //        with st.async instead of exchanged behind a cluster barrier (row_cluster.cuh).
    // 1.6.1: 1.6.0 with layer_norm_bwd's fused clusters up to 8 blocks (64K columns), and
    //        256-thread cluster blocks for the softmax family's forward and cross-entropy.
    // 1.7.0: 1.6.1 with topk_mask's T for 2 <= k <= 16 by sorting networks on rows held in
    //        registers (topk_sorted.cu): up to 32 columns a thread a row, staged through
    //        shared memory; up to 512 lane groups; up to 16K blocks, for k <= 8.
    // 1.8.0: 1.7.0 with topk_mask's rows of 16K-64K columns, k <= 8, held across a cluster
    //        (topk_sorted_cluster.cu), and every tournament running all its rounds.
    // 1.9.0: 1.8.0 with a block for every row group of the register tiles (softmax family,
    //        norms, cross-entropy backward) and of topk_mask's k = 1 block rows, where
    //        the grid was capped at 8192 blocks (common.cuh).
    // 1.9.1: 1.9.0 with layer_norm_bwd's column sums finished by at least 264 blocks
    //        (ln_finish_columns), where rows of up to 8K columns had fewer (16 at 512).
    // 1.9.2: 1.9.1 with layer_norm_bwd's block rows of 8K columns taking two rows an
    //        iteration (ln_bwd_fused.cuh, kLnPairRows), and a row's two sums reduced together;
    //        topk_mask's streamed rows bounded from a sample of the row (topk_stream.cuh).
    // 1.9.3: 1.9.2 with topk_mask's streamed rows gathered by 16-byte loads, in blocks of 512
    //        threads, bounded by chunk maxima for k > 128, and taking every row of 16K columns
    //        or more for 2 <= k <= 2048 (the cluster plan of topk_sorted_cluster.cu removed).
    // 1.9.4: 1.9.3 with topk_mask's rows of 513-2048 columns in whole warps for 2 <= k <= 16,
    //        and of 1025-16383 in a warp reading its row in chunks for 9 <= k <= 16
    //        (topk_sorted_warp.cuh); k = 1 two rows a lane on rows of up to 32 columns; layer
    //        norm's forward rows past 16K floats held across a cluster.
    // 1.9.5: 1.9.4 with topk_mask's rows of 513-2048 columns, and of 2049-4096 for k <= 64, in
    //        whole warps for k > 16, their candidates packed in shared memory (topk_select.cuh).
    // 1.9.6: 1.9.5 with layer_norm_bwd's column sums added in float batches of 4 or 8 rows
    //        before their double accumulators (ln_colsum_batch.cuh; block rows and clusters),
    //        8K block rows one row an iteration again, 2K without the L2 prefetch, and
    //        clusters of 16 floats a thread in blocks of up to 512 (ln_bwd_cluster.cuh).
    // 1.9.7: 1.9.6 with the cluster kernels' warp partials in two sets by row parity
    //        (row_cluster.cuh, WarpPartials): the same arithmetic, nothing for racecheck to report.
    // 1.9.8: 1.9.7 with topk_mask's per-lane key counts in two instructions a key, by carries
    //        for 64 keys a lane or more (topk_key.cuh, count_keys_at_least): the same counts;
    //        layer_norm_bwd's per-unit steps shared by its two row kernels (same PTX opcodes).
    // 1.9.9: 1.9.8 with topk_mask's whole warps of 1025-4096 columns taking their next row through
    //        shared memory, copied by the TMA during the current row's search (topk_warp_stage.cuh).
    // 1.10.0: 1.9.9 with the staged whole warps also taking rows of 513-1024 columns (k > 16),
    //        and k = 2-16 at 2049-4096 columns (k = 9-16 at 1025-2048) ahead of the sorting
    //        networks (topk_mask.cu, whole_warps_take).
    // 1.11.0: 1.10.0 with topk_mask's rows of 4097-8192 columns in warp pairs for 5 <= k <= 64,
    //        128 keys a thread, the next row staged in shared memory (topk_warp_pair.cu).
    // 1.12.0: 1.11.0 with topk_mask's rows of 8193-16384 columns in groups of four warps for
    //        2 <= k <= 64, ahead of the stream at 16384 (topk_warp_groups.cu, which the warp
    //        pairs' file became; the pairs now WarpGroupTeam<2>, same arithmetic).
    // 1.13.0: 1.12.0 with topk_mask's teams of up to 16 keys a member skipping the register
    //        gather where it cannot hold k candidates (the bound then searched only down to where
    //        it parts from the row's maximum), and writing full rows' masks without bounds checks
    //        (topk_select.cuh).
    // 1.14.0: 1.13.0 with layer_norm_bwd's cluster kernel keeping each thread's gamma in shared
    //        memory, read once, on rows of 16-byte units (ln_bwd_cluster.cuh).
    // 1.15.0: 1.14.0 with the cluster kernels other than layer_norm_bwd's launching about 16
    //        waves of clusters of their tile on an H200 instead of 1024 (row_cluster.cuh,
    //        cluster_count; the kernels' code is 1.14.0's).
    // 1.16.0: 1.15.0 with the norms' cluster kernels (forward and backward) and
    //        cross_entropy's cluster forward copying their next row into shared memory by the
    //        TMA while they work on the current one (cluster_stage.cuh), and layer_norm_fwd's
    //        cluster kernel keeping each thread's gamma and beta in shared memory.
    // 1.17.0: 1.16.0 with layer_norm_bwd's rows of 4097-8192 columns of 16-byte units on
    //        ln_bwd_cluster's tile (16 floats a thread) in clusters of 2 x 256 threads instead of
    //        ln_bwd_fused's 1024-thread block rows (ln_bwd_cluster.cuh, kLnShortClusterBlocks).
    // 1.18.0: 1.17.0 with topk_mask's stream kernel appending each warp's candidates to its own
    //        region of the store, placed by ballots, instead of a scan and a shared atomic a
    //        tile into one store for the block (topk_stream.cuh, stream_append).
    // 1.19.0: 1.18.0 with topk_mask's 512-column warps, for k >= 64, searching every key only
    //        until the keys at or above t fit a store of 4 a lane and then the packed keys
    //        alone, instead of a bound from the chunks' maxima (topk_select.cuh,
    //        search_until_fit); whole warps and groups of warps refusing, uncounted, the
    //        search's candidates for T above the row's largest key; and the stream kernel's
    //        first pass gathering by an estimate of T from the sample, checked by its count,
    //        instead of a bound (topk_stream.cuh, stream_estimate_rank).
    // 1.20.0: 1.19.0 with the softmax family's and cross-entropy's exps taken by the fast
    //        exponential of the difference rounded to float, instead of CUDA's accurate expf of
    //        the exact difference restored by TwoSum (softmax_math.cuh, exp_of_diff).
    // 1.20.1: 1.20.0 with every warp of a staged cluster kernel waiting at the barrier before
    //        its stage's refill, where only warp 0 did (cluster_stage.cuh, refill).
    // 1.21.0: 1.20.1 with batch norm's cluster kernels loading a channel's gamma and beta
    //        (forward) or inv_std and gamma (backward) one row ahead (norm_cluster.cuh,
    //        row_cluster.cuh's RowScalars), where they were loaded as the row started.
    // 1.22.0: 1.21.0 with the cluster kernels' barriers after initialization and before exit
    //        arriving relaxed, not with release semantics, but for the softmax family's forward
    //        (row_cluster.cuh, cluster_barrier; softmax_cluster.cuh).
    // 1.22.1: 1.22.0 with the softmax family's forward arriving relaxed at its cluster barrier
    //        after initialization; its exit barrier keeps the release (softmax_cluster.cuh).
    // 1.22.2: 1.22.1 with layer norm's forward on clusters of 256-thread blocks, where they were
    //        512, and its rows of 8K-16K floats on clusters, where one block held them
    //        (norm_cluster.cuh, kLayerNormClusterThreads; norm_tiles.cuh).
    // 1.23.0: 1.22.2 with the softmax family's register tiles, its backward clusters and
    //        cross-entropy's kernels loading their inputs evict-first (row_tiles.cuh, Reads),
    //        and topk_mask's streamed rows of up to 32K floats prefetching their gather into L2
    //        (topk_stream.cuh, kStreamPrefetchMaxCols).
    // 1.24.0: 1.23.0 with topk_mask's lane teams of up to 16 keys a lane (rows of up to 512
    //        columns) searching by interpolation for k > 16 and wherever they counted every key
    //        (topk_interpolate.cuh); the 512-column warps no longer pack candidates.
    // 1.25.0: 1.24.0 with the softmax family's warp tiles of float4 rows taking 2 units a lane
    //        (not 4) in blocks of 128 threads (not 256; the forward pass's whole-warp rows keep
    //        256) (softmax.cu, kFwdWarpTiles / kBwdWarpTiles).
    // 1.26.0: 1.25.0 with the warp tiles' block size chosen by the units a lane holds, not by
    //        whether a row takes a whole warp (row_tiles.cuh, WarpTileChoice), so the softmax
    //        family's forward takes blocks of 128 threads at 256 columns; and with the norms'
    //        forward and cross-entropy's backward on warp tiles of 2 units a lane in blocks of
    //        128 threads up to 256 columns (norm_tiles.cuh, kNormFwdWarpTiles; ce_tiles.cuh,
    //        kCeBwdWarpTiles).
    // 1.27.0: 1.26.0 with topk_mask's streamed rows sampling the fewest whole steps that are
    //        long enough, not a step more where the length is exactly whole steps (k = 64 at
    //        64K columns: 4096 entries, not 8192) (topk_stream.cuh, stream_sample_cols).
    /*version=*/"1.27.0",
    /*memory=*/1u,
    &tapecheck_cuda::softmax_fwd,
    &tapecheck_cuda::softmax_bwd,
    &tapecheck_cuda::log_softmax_fwd,
    &tapecheck_cuda::log_softmax_bwd,
    &tapecheck_cuda::topk_mask,
    &tapecheck_cuda::layer_norm_fwd,
    &tapecheck_cuda::layer_norm_bwd,
    &tapecheck_cuda::batch_norm_fwd,
    &tapecheck_cuda::batch_norm_bwd,
    &tapecheck_cuda::cross_entropy_fwd,
    &tapecheck_cuda::cross_entropy_bwd,
};

}  // namespace

// Everything else in the library is hidden (CUDA_VISIBILITY_PRESET hidden).
extern "C" __attribute__((visibility("default"))) const tapecheck_kernels_v1* tapecheck_kernels_v1_get(void) {
  return &kTable;
}
