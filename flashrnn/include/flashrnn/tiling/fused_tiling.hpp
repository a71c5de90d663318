// The fused kernels' compile-time configuration, chosen by ConstrINT: the tiling of the recurrent
// product over batch, the parallel dimension and the accumulated dimension, into mma tiles, warps,
// blocks and loops (the paper's E/W/B/L factors, App. B), with R held in registers and shared memory.
//
// Forward, per head: gates[b, :] = R s0[b, :], R of G_rec * DH rows (gate units, parallel) and DH
// columns (state units, accumulated). Backward: ds0[b, :] = R^T dg[b, :], DH rows (state units,
// parallel) and G_rec * DH columns (gate units, accumulated). The kernel multiplies with mma.sync:
// R (or R^T) is the A operand (m rows x k columns), the batch is the n dimension.
#pragma once

#include "flashrnn/cells/registry.hpp"
#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/tiling/device_limits.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flashrnn {

enum class FusedPass { forward, backward };

std::string_view to_string(FusedPass pass);

// Every compile-time choice of one fused kernel (the kernel-traits struct of CUTLASS / FlashAttention).
// "Rows" are the parallel dimension of the product (forward: gate units, backward: state units);
// "k" is the accumulated one (forward: state units, backward: gate units). Rows of a block are
// unit-major: row = unit * rows_per_unit + gate, so that a block holds every gate of its units.
struct FusedKernelTraits {
    // The problem the traits were solved for.
    FusedPass pass = FusedPass::forward;
    Cell cell = Cell::lstm;
    DType dtype = DType::bf16;
    int head_dim = 0;
    int heads = 0;
    int batch = 0;
    // The kernel indexes its tensors with the problem's sizes as compile-time constants (fewer
    // instructions per step, more registers); off, it reads them at run time.
    bool compile_time_sizes = true;
    int num_states = 0;          // states of the cell (S)
    int num_gates = 0;           // bias rows (G)
    int num_recurrent_gates = 0; // blocks of R (G_rec)
    int compute_capability = 0;  // the architecture the configuration was solved for
    int warp_size = 0;           // its DeviceLimits::warp_size (threads_per_block = warps x warp_size)

    // The tensor-core instruction: mma.sync m{mma_m}n{mma_n}k{mma_k}, fp32 accumulation.
    int mma_m = 0, mma_n = 0, mma_k = 0;
    int element_bytes = 0; // bytes of one element of R in registers and shared memory

    // The rows of one head (forward: G_rec * DH, backward: DH) and the accumulated length.
    int rows_per_unit = 0; // forward: G_rec, backward: 1
    int rows = 0;
    int k_length = 0;

    // Grid: heads_per_launch * batch_blocks * row_blocks * k_blocks blocks per launch.
    int heads_per_launch = 0; // heads of one launch (divides NH); launches = NH / heads_per_launch
    int launches = 0;
    int batch_blocks = 0; // blocks along the batch, each with its own copy of its part of R
    // Batch chunks of one block: it runs the whole sequence for one chunk of batch_tiles_per_block
    // tiles, then for the next (R stays on chip, the accumulators and pointwise items scale with the
    // chunk, not with B). 1 at every batch where the block's tiles fit at once.
    int batch_chunks = 0;
    // Where the chunks run: one launch each, the whole sequence per chunk (false), or all in one
    // launch, in turn inside every step against the same R, the states of every chunk on chip and
    // one step exchange per step (true; only with chunks, and with the barrier exchange).
    bool chunks_in_step = false;
    // Chunks inside each step with a second operand buffer: chunk c + 1's gather is issued before
    // chunk c's product and lands while it runs (the model's choice where the buffer fits).
    bool prefetch_operand = false;
    int row_blocks = 0;       // blocks along the rows (the paper's B_G forward, B_S backward)
    int k_blocks = 0;         // blocks along the accumulated dimension (partial sums through memory)
    bool cooperative = false; // a head spans several blocks: they exchange the state each step
    // How they exchange it (fused_exchange.cuh): words tagged with their step (no barrier, twice the
    // bytes), or a barrier and the tensor the blocks wrote. Tagged while a block reads at most
    // kTaggedExchangeBytes per step.
    bool tagged_exchange = false;
    static constexpr std::int64_t kTaggedExchangeBytes = 32 * 1024;
    // Or (Hopper, forward) the row blocks of a group form one thread-block cluster and write each
    // step's operand straight into every peer's shared memory, then meet at the cluster's barrier:
    // no trip through L2, no polling, no grid-wide residency needed.
    bool cluster_exchange = false;
    // With the barrier (Hopper, 16-bit types): the row blocks of a group run as thread-block clusters
    // (their size chosen at launch) whose blocks share the gather after the barrier, each copying
    // some of the operand's rows into every block of its cluster (bulk copies multicast from L2), so
    // that L2 serves each row once per cluster instead of once per block.
    bool multicast_gather = false;
    // R loaded by whole words (forward) or 16-byte pieces through ldmatrix (backward) instead of two-
    // byte elements (16-bit types; Product::load_pairs / load_columns in fused_common.cuh): asked for
    // by FusedTilingRequest::direct_r_load (the default; FLASHRNN_FUSED_DIRECT_R_LOAD=0 turns it off).
    bool direct_r_load = false;

    // One block.
    int units_per_block = 0;       // state units whose rows the block computes (DH / row_blocks)
    int row_tiles_per_block = 0;   // mma_m-row tiles of the block (its rows rounded up to tiles)
    int k_tiles_per_block = 0;     // mma_k-column tiles of the block's accumulated slice
    int batch_tiles_per_block = 0; // mma_n-wide batch tiles a block holds at once (one chunk)
    // The batch rows of one chunk: batch_tiles_per_block x mma_n, or fewer in a narrow block (one
    // batch tile of which only the first 1 to mma_n - 1 columns are its rows, the others idle): the
    // model's choice where the batch has fewer tiles than free SMs for independent blocks.
    int batch_rows_per_block = 0;
    int row_warps = 0; // warps along the rows
    int k_warps = 0;   // warps along the accumulated dimension (summed in shared memory)
    int threads_per_block = 0;

    // One warp: a row_tiles_per_warp x k_tiles_per_warp patch of R tiles, looped over; of each row
    // tile's k tiles the first k_tiles_in_registers are held in registers, the rest in shared memory.
    int row_tiles_per_warp = 0;
    int k_tiles_per_warp = 0;
    int k_tiles_in_registers = 0;
    int k_tiles_in_shared_memory = 0;

    // What the model estimates (the compiler's report may differ; see FusedTilingRequest::feedback).
    int registers_per_thread = 0;
    int r_registers_per_thread = 0;
    std::int64_t shared_memory_bytes = 0;   // dynamic shared memory per block
    std::int64_t r_shared_memory_bytes = 0; // the part of it that holds R

    friend bool operator==(const FusedKernelTraits&, const FusedKernelTraits&) = default;

    // The compile-time constants as (name, value), names prefixed FLASHRNN_FUSED_.
    std::vector<std::pair<std::string, std::int64_t>> defines() const;
    // The constants as C++ for NVRTC: a struct FusedTraits of static constexpr members.
    std::string to_source() const;
    // The constants as compiler options "-DNAME=VALUE".
    std::vector<std::string> compiler_options() const;
    // A canonical one-line text of every choice: equal keys mean equal kernels (the cache key).
    std::string key() const;

    // One launch's grid: its groups (a head of a batch block, whose row and k blocks exchange each
    // step) and blocks.
    int groups_per_launch() const { return heads_per_launch * batch_blocks; }
    int blocks_per_launch() const { return groups_per_launch() * row_blocks * k_blocks; }
};

// The resource a compiled or loaded configuration ran short of.
enum class FusedResource { registers, shared_memory };

// What the compiler or the driver reported for a configuration (the feedback of the paper's Fig. 5).
// Registers: the registers per thread it used and the bytes it spilled. Shared memory: the driver
// could not give a block shared_memory_bytes of dynamic shared memory (cudaFuncSetAttribute refused
// it, or it does not fit beside the kernel's static shared memory, or no block fits on an SM).
struct KernelFeedback {
    FusedKernelTraits traits;
    int registers_per_thread = 0;
    std::int64_t spill_bytes = 0; // bytes of spill stores per thread (0: no spill)
    FusedResource resource = FusedResource::registers;
    std::int64_t shared_memory_bytes = 0; // shared memory: the dynamic bytes per block that failed
};

// The report that `bytes` of dynamic shared memory per block failed for `traits`.
KernelFeedback shared_memory_feedback(const FusedKernelTraits& traits, std::int64_t bytes);

// Whether a split head's blocks exchange through a thread-block cluster (FusedKernelTraits::
// cluster_exchange): as the model prefers, never, or always where the device and the pass have it
// (the forward on sm_90: the head is then split over a cluster).
enum class FusedCluster { automatic, never, always };

struct FusedTilingRequest {
    FusedPass pass = FusedPass::forward;
    Cell cell = Cell::lstm;
    DType dtype = DType::bf16;
    int heads = 1;
    int head_dim = 0;
    int batch = 1;
    // Half the 1024 threads a block may have. Measured on the H100 (LSTM bf16, B = 16, T = 1024):
    // 512 threads against the paper's 256 (App. D) made the forward 15% faster at (12, 64) and
    // (6, 128) and 20% faster at (1, 768); the items per thread halve, and so do the registers.
    int max_threads_per_block = 512;
    // At most this many blocks share one head (0: no limit beyond the SM count). Fewer, larger
    // blocks trade product time for less traffic in the step exchange.
    int max_blocks_per_head = 0;
    // At most this many row warps per block (0: no limit): the others of its warps split the
    // accumulated dimension (k warps). Each row warp reads the block's whole operand from shared memory
    // every step, a k warp only its k tiles, at the cost of summing the k warps' partial products in
    // shared memory; the model prefers row warps, so this is for measuring the trade (docs/kernels.md).
    int max_row_warps = 0;
    // At least this many blocks along the accumulated dimension (0 or 1: as few as the model
    // prefers, which is one wherever that fits). The k blocks' partial sums meet in the group's
    // exchange, a second barrier per step: for measuring the split and testing it at sizes that do
    // not need it (docs/kernels.md, "The k split").
    int min_k_blocks = 0;
    // At most this many (0: no limit; 1: no k split, as every kernel before 2026-12-04).
    int max_k_blocks = 0;
    // Registers per thread the kernel needs besides R and its accumulators (addresses, loop
    // counters, the pointwise function). A guess until the compiler reports; feedback raises it.
    int overhead_registers_per_thread = 40;
    FusedCluster cluster = FusedCluster::automatic;
    // Whether the kernel may index with compile-time sizes (FusedKernelTraits::compile_time_sizes);
    // the backend turns it off before moving R out of registers when a kernel spills.
    bool compile_time_sizes = true;
    // Reports of earlier compilations and loads (use with_feedback): a spilling configuration is
    // excluded together with every configuration holding as many registers of R per thread or more;
    // a shared-memory report excludes every configuration with as much shared memory per block.
    // With spills_exclude_every_block_size false, a spill excludes those only in blocks whose threads
    // may have as few registers (ptxas's cap: 128 at 512 threads, 168 at 384, 255 at 256): blocks of
    // fewer threads are left to the raised register estimate. The compile loop asks for that only
    // after a refusal (after_refusal): where the strict rule leaves a configuration, the loop ends
    // where it ended when the backends' speeds were measured.
    bool spills_exclude_every_block_size = true;
    // The kernels load R directly (FusedKernelTraits::direct_r_load) where the type is 16-bit: the
    // default since it ran on the H200 (docs/kernels.md, "Direct load of R"); the backend leaves it
    // off with FLASHRNN_FUSED_DIRECT_R_LOAD=0.
    bool direct_r_load = true;
    std::vector<KernelFeedback> feedback;
};

// The request for one pass of a problem (its heads, head size and batch), with the default limits.
FusedTilingRequest fused_tiling_request(FusedPass pass, Cell cell, DType dtype, const ProblemShape& shape);

struct FusedTilingResult {
    FusedKernelTraits traits;
    double solve_seconds = 0;
    std::uint64_t search_nodes = 0;
};

// Solves the model. Throws ShapeError for a malformed request (no heads), UnsupportedError when the
// architecture has no mma for the dtype, and TilingError when nothing fits.
FusedTilingResult choose_fused_tiling(const DeviceLimits& limits, const FusedTilingRequest& request);

// Whether a configuration exists (no explanation is computed: for scans over sizes).
bool fused_tiling_exists(const DeviceLimits& limits, const FusedTilingRequest& request);

// A multi-line human-readable description of the traits (for `flashrnn tune`).
std::string describe(const FusedKernelTraits& traits);

// The request without clusters (FusedCluster::never: neither the cluster exchange nor the multicast
// gather): what the compile loop asks for after a cluster-exchange kernel could not run, or after the
// multicast gather's feedback left no configuration (after_refusal).
FusedTilingRequest without_cluster(FusedTilingRequest request);

// The thread-block clusters of one launch of a cluster-exchange kernel: one per group of row blocks.
int clusters_per_launch(const FusedKernelTraits& traits);

// Why a cluster-exchange kernel should not run when `resident_clusters` of its clusters fit the
// device at once (cudaOccupancyMaxActiveClusters; fused_backend.cpp asks after loading it), nothing
// when it may: none fits, or (unless the user asked for clusters always) fewer than the launch has.
// Each cluster runs the whole sequence, so a launch with more clusters than are resident runs in
// waves, each as long as the whole launch: the compile loop then takes the split without clusters
// (after_register_shortage). Measured on the H200 (docs/kernels.md, "cluster exchange").
std::optional<std::string> cluster_residency_problem(const FusedKernelTraits& traits, int resident_clusters,
                                                     FusedCluster choice);

// The compile loop's next request after a kernel of `traits` ran short of registers (`local_bytes` of
// spills, or too few threads per block at `registers` each; fused_backend.cpp's load_kernel): the
// cluster exchange's kernel without clusters, else the same configuration without compile-time sizes,
// else the report as feedback (with_feedback: the registers used plus the spilled ones). The multicast
// gather's kernels take the feedback with their clusters kept (docs/kernels.md, "multicast gather").
FusedTilingRequest after_register_shortage(FusedTilingRequest request, const FusedKernelTraits& traits,
                                           int registers, std::int64_t local_bytes);

// The compile loop's answer to the model's refusal of `request`: where multicast kernels' reports
// are among its feedback, `first` (the loop's first request) without clusters, the kernels without
// the gather starting over from there; else, where its spills excluded every block size, `request`
// with them excluding only blocks whose threads may have as few registers
// (spills_exclude_every_block_size false), its feedback kept; otherwise nothing (the refusal stands).
std::optional<FusedTilingRequest> after_refusal(const FusedTilingRequest& first,
                                                const FusedTilingRequest& request);

// The compile loop's answer where after_refusal has none and the spills' feedback of `request` left no
// configuration: `first` again, with at least one k block more than any configuration that spilled
// (each block then holds less of R), unless that exceeds the request's max_k_blocks; otherwise nothing.
// The reports are not carried over: a spill of the split's largest blocks raised the estimate of the
// registers besides R for every configuration (with_feedback), where more k blocks need fewer (LSTM bf16
// at DH 2304 on the h200 preset compiles its forward with 4 k blocks after 2 and 3 were refused).
std::optional<FusedTilingRequest> with_more_k_blocks(const FusedTilingRequest& first,
                                                     const FusedTilingRequest& request);

// The most compilations the loop of load_kernel (and its CPU counterpart in the tests) makes for one
// request before it gives up: each one excludes what failed, so the loop ends on its own; this bounds
// the time of a first call. LSTM bf16's backward at DH 1536, B 3 on the H100 compiles at its 20th.
constexpr int kMaxFusedCompileAttempts = 32;

// The request tightened by one report: appended to feedback; a register report without spills also
// raises overhead_registers_per_thread to what the compiler used beyond the modelled registers (a
// shared-memory report leaves the registers alone).
FusedTilingRequest with_feedback(FusedTilingRequest request, const KernelFeedback& report);

} // namespace flashrnn
