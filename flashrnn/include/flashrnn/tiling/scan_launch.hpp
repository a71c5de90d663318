// The launch configuration of the scan kernels (linrec, RG-LRU, the Newton solvers' reduction), chosen
// by a ConstrINT model over the device limits and the sequence length. The configurations compiled ahead of
// time are listed here once: the CUDA code instantiates exactly these, and the model takes them as its
// domains.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "flashrnn/tiling/device_limits.hpp"

namespace flashrnn {

// How a thread gets its elements (a contiguous chunk of `elements_per_thread` of one row):
//  direct: element-wise loads and stores of the chunk (any alignment);
//  shared: each warp reads its span coalesced, element by element, and transposes it through shared
//          memory (any alignment);
//  vector: the chunk in consecutive aligned 16-byte packets (or one narrower packet), no transposition;
//          needs aligned rows.
enum class ScanAccess { direct = 0, shared = 1, vector = 2 };

std::string_view to_string(ScanAccess access);

struct ScanConfig {
    int elements_per_thread = 0;
    int threads_per_block = 0;
    ScanAccess access = ScanAccess::direct;
    friend bool operator==(const ScanConfig&, const ScanConfig&) = default;
};

// The scan kernels with a launch model. Each has its own compiled configurations.
enum class ScanKernel {
    linrec_forward,
    linrec_backward,
    rglru_forward,
    rglru_backward,
    newton_reduce_diagonal,     // the Newton reduction (newton/reduction.hpp) with scalar Jacobians
    newton_reduce_2x2,          // and with 2x2 blocks
    newton_fused_gru,           // the fused Newton forward (newton/passes.hpp, Backend::fused) of FlashGRU
    newton_fused_lstm,          // and of FlashLSTM
    newton_fused_backward_gru,  // the fused Newton backward (Backend::fused) of FlashGRU
    newton_fused_backward_lstm, // and of FlashLSTM
};

std::string_view to_string(ScanKernel kernel);
ScanKernel parse_scan_kernel(std::string_view name); // throws UnsupportedError

// The compiled configurations: the product of these domains. Kept small, since each configuration is
// one kernel per dtype and direction.
struct ScanDomains {
    std::array<int, 3> elements_per_thread;
    std::array<int, 4> threads_per_block;
    std::array<ScanAccess, 3> accesses;
};
inline constexpr ScanDomains kLinrecDomains{
    {4, 8, 16}, {32, 128, 256, 512}, {ScanAccess::direct, ScanAccess::shared, ScanAccess::vector}};
struct RglruDomains {
    std::array<int, 2> elements_per_thread;
    std::array<int, 3> threads_per_block;
    std::array<ScanAccess, 2> accesses;
};
inline constexpr RglruDomains kRglruDomains{{4, 8}, {32, 128, 256}, {ScanAccess::shared, ScanAccess::vector}};
// The Newton reduction reads K Jacobian rows and N right-hand-side rows per element (K + N = 2 or 6):
// shared access only (any alignment), 4 or 8 elements per thread.
struct NewtonReduceDomains {
    std::array<int, 2> elements_per_thread;
    std::array<int, 3> threads_per_block;
    std::array<ScanAccess, 1> accesses;
};
inline constexpr NewtonReduceDomains kNewtonReduceDomains{{4, 8}, {32, 128, 256}, {ScanAccess::shared}};
// The fused Newton forward holds a tile of inputs, iterate, maps and updates in registers: shared access
// (any alignment), 4 or 8 steps per thread, up to 512 threads (a longer tile is more steps per block
// before the next tile's carry, fewer sequential tiles for long sequences).
struct NewtonFusedDomains {
    std::array<int, 2> elements_per_thread;
    std::array<int, 4> threads_per_block;
    std::array<ScanAccess, 1> accesses;
};
inline constexpr NewtonFusedDomains kNewtonFusedDomains{{4, 8}, {32, 128, 256, 512}, {ScanAccess::shared}};

// Number of element streams a kernel moves per element (loaded + stored), and loaded only.
int tensors_moved(ScanKernel kernel);
int tensors_loaded(ScanKernel kernel);

struct ScanProblem {
    std::int64_t sequences = 0;
    std::int64_t length = 0;
    int bytes_per_element = 4; // 4 (fp32), 2 (bf16, fp16)
    bool rows_aligned = true;  // every tensor's rows start on 16-byte boundaries (vector access allowed)
    bool single_tile = false;  // the "tile" variant: one tile must hold the whole sequence
};

// Solves the model: a compiled configuration within the block's thread, register and static shared
// memory limits; vector access only on 16-byte aligned rows and with one 16-byte packet per thread
// and tensor; a tile not much longer than the sequence (or a single tile, for the tile variant).
// Preferences, in order (measured on an H100, see scan_launch.cpp): shared access; 32 bytes per
// thread and tensor (16 for linrec's backward); a tile near the sequence length, at most 2048 fp32 or
// 256 16-bit elements; vector before direct access. Answers are cached per device and problem. Throws
// ShapeError for a bad problem and TilingError naming the conflicting constraints
// when nothing fits.
ScanConfig choose_scan_config(const DeviceLimits& limits, ScanKernel kernel, const ScanProblem& problem);

// The launch of a Newton reduction (newton_reduce_*): the block configuration and the grid level. A
// block scans one segment of one sequence, `max_sequential_steps` tiles one after the other (the
// paper's max_sequential_steps, App. D.2.2); with more than one segment per sequence (few sequences,
// long rows: too few blocks to fill the GPU) three stream-ordered launches solve it: each segment's
// composed map (its total), a scan over the totals of each sequence (the state entering each
// segment), then each segment from its entering state. Every size derived from the choice is here.
struct ReductionLaunch {
    ScanConfig config;                     // chunk_size (elements per thread) x threads per block
    std::int64_t tile = 0;                 // elements per thread x threads
    std::int64_t segments = 1;             // per sequence
    std::int64_t max_sequential_steps = 1; // tiles per segment, scanned in turn by one block
    std::int64_t segment_length = 0;       // max_sequential_steps tiles; the last segment may be shorter
    std::int64_t map_words = 0;            // 32-bit words of one composed map (2 or 6)
    std::int64_t state_words = 0;          // of one state (1 or 2)
    std::size_t entering_offset = 0;       // bytes: the entering states in the workspace, after the totals
    std::size_t workspace_bytes = 0; // totals [sequences, segments] maps + entering states; 0 for 1 segment
    int launches() const { return segments > 1 ? 3 : 1; }
};

// The grid level's preferences and limits (estimates, not measured yet): aim at
// `kReductionBlocksPerSm` blocks per SM in all, with segments of at least
// `kReductionMinTilesPerSegment` tiles and at most `kReductionMaxSegments` per sequence.
inline constexpr int kReductionBlocksPerSm = 4;
inline constexpr int kReductionMinTilesPerSegment = 4;
inline constexpr std::int64_t kReductionMaxSegments = 4096;

// One ConstrINT model (scan_launch.cpp) chooses the block configuration among the compiled ones
// (kNewtonReduceDomains), the segments and the sequential steps for the sequences, the length, the
// element size and the device: ShapeError for a kernel other than newton_reduce_* or a bad problem,
// TilingError naming the conflicting constraints when nothing fits. Cached per device and problem.
ReductionLaunch choose_reduction_launch(const DeviceLimits& limits, ScanKernel kernel,
                                        const ScanProblem& problem);

// Whether a configuration is one of the kernel's compiled ones.
bool is_compiled(ScanKernel kernel, const ScanConfig& config);

// "8 elements per thread x 256 threads (tile 2048), vector access"
std::string describe(const ScanConfig& config);

} // namespace flashrnn
