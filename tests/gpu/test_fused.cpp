// The fused backend against the float64 CPU reference (backend_check.hpp): every cell x dtype x pass
// on random data over small shapes (T = 1, B = 1, a head dimension that is not a multiple of 16, the
// batch-first layout), then a few large ones one by one (T = 1024 at (NH, DH) = (12, 64), one head
// of 768 in every dtype, B = 64, the largest head dimension this GPU runs); the three
// recurrent-gradient policies; the gate cache shared with the alternating backend in both directions;
// the refusals; and a captured CUDA graph that replays the eager results bit for bit. Outputs are
// poisoned before each run. Each (cell, dtype, B, NH, DH, pass) compiles a kernel once (cached on disk).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backend_check.hpp"
#include "flashrnn/rnn/fused.hpp"
#include "flashrnn/tiling/device_limits.hpp"

namespace flashrnn::testing {
namespace {

// bf16 and fp16 keep the states in fp32 on chip and store them rounded as the alternating backend
// does: its tolerances. fp32 multiplies R on the tensor cores in tf32, whose 10-bit mantissa is
// fp16's: fp16's tolerances.
Tolerance fused_forward_tolerance(DType dtype) {
    return alternating_forward_tolerance(dtype == DType::fp32 ? DType::fp16 : dtype);
}
Tolerance fused_backward_tolerance(DType dtype) {
    return alternating_backward_tolerance(dtype == DType::fp32 ? DType::fp16 : dtype);
}

const Backend fused_backend{"fused", rnn::Backend::fused, fused_forward_tolerance, fused_backward_tolerance};
// Either backend in each pass: the fused tolerances, which are the looser ones.
const Backend automatic_backend{"automatic", rnn::Backend::automatic, fused_forward_tolerance,
                                fused_backward_tolerance};

constexpr DType kDTypes[] = {DType::fp32, DType::bf16, DType::fp16};

// Few distinct (B, NH, DH): each is a compiled kernel per cell, dtype and pass.
const Case kCases[] = {
    {1, 1, 1, 16},                             // one step, one sequence, the smallest head
    {7, 3, 4, 48},                             // a batch that pads its mma tile
    {7, 16, 2, 16},                            // two full batch tiles
    {9, 3, 1, 40},                             // a head dimension that is not a multiple of 16
    {6, 3, 4, 48, SequenceLayout::batch_first} // batch-first gate inputs, the kernels of {7, 3, 4, 48}
};

// The largest head dimension (a multiple of 16) for which the fused backend runs both passes of one
// head over `batch` sequences on this GPU: the model's largest (scanned down from what the chip could
// hold at all, since feasibility is not monotone), confirmed by fused::traits, which compiles the
// kernels and feeds spills back to the model; a head dimension that feedback rules out moves the scan
// down, at most a few times (each costs compilations). 0 when none.
std::int64_t largest_head_dim(Cell cell, DType dtype, std::int64_t batch) {
    int device = 0;
    cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
    const DeviceLimits limits = device_limits_of(device);
    const int g_rec = cell_info(cell).num_recurrent_gates;
    const double chip_bytes = double(limits.sm_count) * (double(limits.registers_per_sm) * 4 +
                                                         double(limits.shared_memory_per_block_optin));
    int confirmations_left = 6;
    for (int dh = int(std::sqrt(chip_bytes / (g_rec * bytes_of(dtype)))) / 16 * 16;
         dh >= 16 && confirmations_left > 0; dh -= std::max(16, dh / 4 / 16 * 16)) {
        bool fits = true;
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            FusedTilingRequest request;
            request.pass = pass;
            request.cell = cell;
            request.dtype = dtype;
            request.heads = 1;
            request.head_dim = dh;
            request.batch = static_cast<int>(batch);
            fits = fits && fused_tiling_exists(limits, request);
        }
        if (!fits) continue;
        --confirmations_left;
        try {
            const ProblemShape shape{1, batch, 1, dh};
            fused::traits({cell, dtype, shape}, FusedPass::forward);
            fused::traits({cell, dtype, shape}, FusedPass::backward);
            return dh;
        } catch (const TilingError& e) {
            MESSAGE("DH " << dh << " fits the model but not the compiled kernel: " << std::string(e.what()));
        }
    }
    return 0;
}

// The message of the ShapeError `call` throws; "" when it throws none (other exceptions propagate).
std::string shape_error_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const ShapeError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("fused backend matches the float64 reference: every cell, dtype and shape") {
    std::uint64_t seed = 3000;
    for (Cell cell : all_cells)
        for (DType dtype : kDTypes)
            for (const Case& c : kCases)
                check_cell(fused_backend, cell, dtype, c, RecurrentGradient::full(), ++seed);
}

TEST_CASE("fused backend: 1024 steps at (NH, DH) = (12, 64)") {
    check_cell(fused_backend, Cell::lstm, DType::bf16, {1024, 16, 12, 64}, RecurrentGradient::full(), 3100);
}

TEST_CASE("fused backend: one head of 768 in every dtype") {
    std::uint64_t seed = 3200;
    for (DType dtype : kDTypes)
        check_cell(fused_backend, Cell::lstm, dtype, {7, 16, 1, 768}, RecurrentGradient::full(), ++seed);
}

// A head too large for one block in every cell (R of one head over 483 KiB): split over blocks
// that exchange each step's operand, in step-tagged words (the forward's small rows) and after a
// barrier (the backward's rows of G_rec x DH, for the cells with more than one recurrent gate). Small
// enough for compute-sanitizer (tests/gpu/run.sh).
TEST_CASE("fused backend: a head split over blocks, both ways of exchanging a step") {
    std::uint64_t seed = 3250;
    int tagged = 0, barrier = 0;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16}) {
            const Case c{4, 3, 1, 512};
            const ProblemShape shape{c.T, c.B, c.NH, c.DH};
            for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
                const FusedKernelTraits t = fused::traits({cell, dtype, shape}, pass);
                CHECK_MESSAGE(t.cooperative,
                              cell_info(cell).name << " " << to_string(dtype) << " " << to_string(pass));
                (t.tagged_exchange ? tagged : barrier) += 1;
            }
            check_cell(fused_backend, cell, dtype, c, RecurrentGradient::full(), ++seed);
            check_cell(fused_backend, cell, dtype, c, RecurrentGradient::clipped(0.05), ++seed);
        }
    CHECK(tagged > 0);
    CHECK(barrier > 0);
}

// An environment variable of the fused backend set for the scope (fused_backend.cpp reads them at each
// kernel lookup): FLASHRNN_FUSED_CLUSTER, FLASHRNN_FUSED_DIRECT_R_LOAD, the model's limits.
struct ScopedEnvironment {
    const char* name;
    ScopedEnvironment(const char* variable, const char* value) : name(variable) { setenv(name, value, 1); }
    ~ScopedEnvironment() { unsetenv(name); }
    ScopedEnvironment(const ScopedEnvironment&) = delete;
    ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;
};

// The k split (FLASHRNN_FUSED_MIN_K_BLOCKS; the model takes it by itself only where no configuration
// without it fits, the largest heads): the k blocks of a row block each multiply their k columns of R
// (forward: state units) or R^T (backward: gate units) and meet after a second barrier per step, each
// applying the cell or its derivative to its share of the row block's items. Every cell, both passes,
// 2 to 4 k blocks (3 splits the backward's 192 k tiles at (1, 768) in 64), odd batches (a share's
// last items past the batch), two heads per launch, fp32's tf32, the clipped and the cut gradient (no
// barrier at all in the backward). Small enough for compute-sanitizer (tests/gpu/run.sh).
TEST_CASE("fused backend: the k split, both passes, every cell") {
    struct Split {
        Cell cell;
        DType dtype;
        Case c;
        const char* k_blocks;
    };
    const Split splits[] = {
        {Cell::lstm, DType::bf16, {5, 16, 1, 768}, "2"}, {Cell::lstm, DType::bf16, {3, 13, 1, 768}, "3"},
        {Cell::lstm, DType::fp32, {3, 37, 1, 256}, "4"}, {Cell::gru, DType::bf16, {4, 21, 1, 512}, "4"},
        {Cell::slstm, DType::fp16, {3, 9, 2, 128}, "2"}, {Cell::elman, DType::bf16, {4, 5, 2, 256}, "2"}};
    std::uint64_t seed = 3900;
    for (const Split& split : splits) {
        const ScopedEnvironment k_blocks("FLASHRNN_FUSED_MIN_K_BLOCKS", split.k_blocks);
        const Case c = split.c;
        const ProblemShape shape{c.T, c.B, c.NH, c.DH};
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            const FusedKernelTraits t = fused::traits({split.cell, split.dtype, shape}, pass);
            INFO(to_string(pass) << " " << cell_info(split.cell).name << " " << to_string(split.dtype)
                                 << " B " << c.B << " NH " << c.NH << " DH " << c.DH << ": " << t.k_blocks
                                 << " k blocks");
            CHECK(t.k_blocks >= std::atoi(split.k_blocks));
            CHECK(t.cooperative);
            CHECK_FALSE(t.tagged_exchange);
            CHECK_FALSE(t.cluster_exchange);
        }
        check_cell(fused_backend, split.cell, split.dtype, c, RecurrentGradient::full(), ++seed);
        check_cell(fused_backend, split.cell, split.dtype, c, RecurrentGradient::clipped(0.05), ++seed);
        check_cell(fused_backend, split.cell, split.dtype, c, RecurrentGradient::cut(), ++seed);
    }
}

// The k split with the batch in chunks one after the other (a launch per chunk, each with its own
// exchange words) and many batch tiles per block: LSTM bf16 (1, 768) B 256 in 4 k blocks (the forward
// 8 batch tiles at once, the backward 2 chunks on the H200 preset), LSTM fp32 (1, 512) B 517 in 2 (2 and
// 11 chunks, the last one short). Not in the sanitizers' subset: its grids are large.
TEST_CASE("fused backend: the k split with batch chunks") {
    const std::pair<DType, Case> cases[] = {{DType::bf16, {3, 256, 1, 768}}, {DType::fp32, {2, 517, 1, 512}}};
    const char* k_blocks[] = {"4", "2"};
    std::uint64_t seed = 3920;
    for (int i = 0; i < 2; ++i) {
        const ScopedEnvironment split("FLASHRNN_FUSED_MIN_K_BLOCKS", k_blocks[i]);
        const DType dtype = cases[i].first;
        const Case c = cases[i].second;
        const ProblemShape shape{c.T, c.B, c.NH, c.DH};
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            const FusedKernelTraits t = fused::traits({Cell::lstm, dtype, shape}, pass);
            INFO(to_string(pass) << " " << to_string(dtype) << " B " << c.B << ": " << t.k_blocks
                                 << " k blocks, " << t.batch_chunks << " chunks of "
                                 << t.batch_tiles_per_block << " tiles");
            CHECK(t.k_blocks >= std::atoi(k_blocks[i]));
        }
        check_cell(fused_backend, Cell::lstm, dtype, c, RecurrentGradient::full(), ++seed);
    }
}

// The forward's cluster exchange (Hopper), asked for: a head split over one thread-block cluster per
// batch block, the operand stored into the peers' shared memory. (3, 256) over a cluster of 16 (the
// non-portable size), (1, 768), (12, 64) over clusters of 4, odd batches, fp32's 32-bit stores; the backward
// keeps its exchange. Where the device has no clusters the same calls run without them.
TEST_CASE("fused backend: a head split over a thread-block cluster, forward") {
    int device = 0;
    cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
    const bool clusters = device_limits_of(device).max_cluster_blocks >= 2;
    const ScopedEnvironment always("FLASHRNN_FUSED_CLUSTER", "1");
    std::uint64_t seed = 3260;
    const std::pair<DType, Case> cases[] = {{DType::bf16, {16, 16, 1, 768}}, {DType::bf16, {9, 16, 3, 256}},
                                            {DType::bf16, {64, 16, 12, 64}}, {DType::bf16, {9, 5, 12, 64}},
                                            {DType::fp16, {9, 3, 2, 256}},   {DType::fp32, {9, 7, 2, 128}}};
    for (const auto& [case_dtype, case_shape] : cases) {
        const DType dtype = case_dtype; // named again: clang 14 does not capture a structured binding
        const Case c = case_shape;
        const ProblemShape shape{c.T, c.B, c.NH, c.DH};
        const FusedKernelTraits forward = fused::traits({Cell::lstm, dtype, shape}, FusedPass::forward);
        // (1, 768) over a cluster of 16 falls back to the tagged exchange on the H100 (2026-11-24, after
        // the compiler's feedback; fused_backend.cpp): only its results are checked.
        if (c.DH != 768)
            CHECK_MESSAGE(forward.cluster_exchange == clusters, to_string(dtype)
                                                                    << " NH " << c.NH << " DH " << c.DH);
        CHECK_FALSE(fused::traits({Cell::lstm, dtype, shape}, FusedPass::backward).cluster_exchange);
        check_cell(fused_backend, Cell::lstm, dtype, c, RecurrentGradient::full(), ++seed);
    }
    // Another cell: GRU's recurrent gates (3 rows per unit) over a cluster.
    check_cell(fused_backend, Cell::gru, DType::bf16, {9, 5, 2, 96}, RecurrentGradient::full(), ++seed);
}

// The barrier exchange's gather shared by clusters (Hopper, 16-bit types): a split head whose blocks
// meet at the barrier, odd batches (a batch block's last rows padding, rows not a multiple of the
// cluster), both passes, forward and backward at (1, 768) and a GRU (3 recurrent gates); each case also
// with clusters turned off (FLASHRNN_FUSED_CLUSTER=0: the blocks gather for themselves).
TEST_CASE("fused backend: the multicast gather after the barrier, odd batches") {
    int device = 0;
    cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
    const bool clusters = device_limits_of(device).max_cluster_blocks >= 2;
    std::uint64_t seed = 3290;
    // The backward at (1, 768): B 13 one row warp per k range, B 37 two (its first choice spilled with
    // the gather and keeps it through the compiler's feedback), B 64 chunks inside each step
    // (test_fused_register_feedback.cpp compiles the same choices).
    const std::pair<Cell, Case> cases[] = {{Cell::lstm, {5, 13, 1, 768}},
                                           {Cell::lstm, {4, 37, 1, 768}},
                                           {Cell::lstm, {4, 64, 1, 768}},
                                           {Cell::gru, {3, 21, 1, 512}}};
    for (const auto& m : cases) {
        const Cell cell = m.first;
        const Case c = m.second;
        CAPTURE(c.B);
        const ProblemShape shape{c.T, c.B, c.NH, c.DH};
        const FusedKernelTraits backward = fused::traits({cell, DType::bf16, shape}, FusedPass::backward);
        CHECK(backward.cooperative);
        if (!backward.tagged_exchange) CHECK(backward.multicast_gather == clusters);
        check_cell(fused_backend, cell, DType::bf16, c, RecurrentGradient::full(), ++seed);
        check_cell(fused_backend, cell, DType::fp16, c, RecurrentGradient::clipped(0.05), ++seed);
        const ScopedEnvironment never("FLASHRNN_FUSED_CLUSTER", "0");
        CHECK_FALSE(fused::traits({cell, DType::bf16, shape}, FusedPass::backward).multicast_gather);
        check_cell(fused_backend, cell, DType::bf16, c, RecurrentGradient::full(), ++seed);
    }
}

// The chunks' operand prefetch with the multicast gather where ptxas had folded chunk 1's transaction
// barrier to chunk 0's (CUDA 13.0, sm_90a; fused_exchange.cuh, MulticastGather::chunk_operand): chunk
// 0's barrier then took two arrivals and the kernel stopped with a hardware exception. Found on the H200
// (2026-12-03) at LSTM bf16 (1, 768), B 256 under FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK=192 and
// FLASHRNN_FUSED_MAX_ROW_WARPS=2 (2 x 3 warps, 2 chunks inside each step; compute-sanitizer memcheck:
// "Unknown Error" at the arrival); the SASS of the model's own choices for GRU 16-bit (1, 1024) at B 192
// (6 x 2 warps) and (2, 512) at B 768 had the same folding. All three run here, forward and backward against
// the float64 reference. tests/gpu/run.sh runs this case in a process of its own: a fault ends the CUDA
// context.
TEST_CASE("fused backend: the chunks' prefetch with the multicast gather, both barriers") {
    int device = 0;
    cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
    const bool clusters = device_limits_of(device).max_cluster_blocks >= 2;
    const auto check_prefetch = [&](Cell cell, const Case& c, std::uint64_t seed) {
        const FusedKernelTraits forward =
            fused::traits({cell, DType::bf16, {c.T, c.B, c.NH, c.DH}}, FusedPass::forward);
        CAPTURE(forward.threads_per_block);
        CAPTURE(forward.row_warps);
        CAPTURE(forward.k_warps);
        if (clusters) { // the H100's and the H200's choice (flashrnn tune --gpu h100|h200)
            CHECK(forward.chunks_in_step);
            CHECK(forward.prefetch_operand);
            CHECK(forward.multicast_gather);
        }
        check_cell(fused_backend, cell, DType::bf16, c, RecurrentGradient::full(), seed);
    };
    check_prefetch(Cell::gru, {8, 192, 1, 1024}, 3296);
    check_prefetch(Cell::gru, {4, 768, 2, 512}, 3297);
    const ScopedEnvironment threads("FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", "192");
    const ScopedEnvironment row_warps("FLASHRNN_FUSED_MAX_ROW_WARPS", "2");
    check_prefetch(Cell::lstm, {8, 256, 1, 768}, 3295);
}

// The paper's head-dimension sweep at hidden 768 (B = 16): (6, 128), whose one-block step is long
// while 12 blocks leave most SMs idle, runs split over blocks like (3, 256) and (1, 768).
TEST_CASE("fused backend: the head-dimension sweep at hidden 768, (6, 128) split over blocks") {
    std::uint64_t seed = 3270;
    for (auto [heads, head_dim] : {std::pair{48, 16}, {24, 32}, {12, 64}, {6, 128}, {3, 256}, {1, 768}}) {
        const Case c{16, 16, heads, head_dim};
        if (head_dim == 128)
            for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                CHECK(fused::traits({Cell::lstm, DType::bf16, {c.T, c.B, c.NH, c.DH}}, pass).cooperative);
        check_cell(fused_backend, Cell::lstm, DType::bf16, c, RecurrentGradient::full(), ++seed);
    }
}

// Narrow batch blocks (fewer rows than a tile in independent blocks, so that a small batch fills more
// SMs): (12, 64) at B = 16 in 8 blocks of 2 rows per head, and every cell at odd sizes in blocks of one
// row; both passes against the reference, the choice checked on this GPU's compiled kernels.
TEST_CASE("fused backend: narrow batch blocks") {
    std::uint64_t seed = 3280;
    const std::pair<Cell, Case> cases[] = {{Cell::lstm, {9, 16, 12, 64}},
                                           {Cell::gru, {5, 5, 3, 40}},
                                           {Cell::slstm, {4, 11, 4, 32}},
                                           {Cell::elman, {3, 3, 2, 24}}};
    for (const auto& [cell, c] : cases) {
        for (DType dtype : kDTypes) {
            CAPTURE(dtype);
            for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
                const FusedKernelTraits t = fused::traits({cell, dtype, {c.T, c.B, c.NH, c.DH}}, pass);
                CAPTURE(describe(t));
                CHECK(t.batch_rows_per_block < t.batch_tiles_per_block * t.mma_n);
            }
            check_cell(fused_backend, cell, dtype, c, RecurrentGradient::full(), ++seed);
        }
    }
}

TEST_CASE("fused backend: a batch of 64") {
    check_cell(fused_backend, Cell::lstm, DType::fp16, {7, 64, 12, 64}, RecurrentGradient::full(), 3300);
}

TEST_CASE("fused backend: every batch size of the grid") {
    std::uint64_t seed = 3350;
    for (std::int64_t batch : {1, 2, 3, 17, 64, 100, 256, 1024}) {
        CAPTURE(batch);
        check_cell(fused_backend, Cell::lstm, DType::bf16, {3, batch, 2, 48}, RecurrentGradient::full(),
                   ++seed);
    }
    for (Cell cell : all_cells)
        for (DType dtype : kDTypes)
            for (std::int64_t batch : {3, 100, 1024}) {
                CAPTURE(batch);
                check_cell(fused_backend, cell, dtype, {2, batch, 1, 32}, RecurrentGradient::full(), ++seed);
            }
}

// A block that runs its batch in chunks: one launch each, the whole sequence per chunk, or in turn
// inside each step of one launch (every chunk's states on chip). Shapes where the backend (h100_sxm,
// after the compiler's feedback) runs several chunks, forward or backward, either way: the way is
// that of the register-feedback loop without a GPU (test_fused_register_feedback.cpp; a spill of one
// way sends the model to the other). The small ones also run under compute-sanitizer
// (tests/gpu/run.sh).
namespace {

struct ChunkCase {
    Cell cell;
    DType dtype;
    Case shape;
    FusedPass chunked;   // the pass that runs in chunks
    bool chunks_in_step; // where: inside each step, or one launch each
};

void check_chunks(const ChunkCase& c, std::uint64_t seed,
                  const RecurrentGradient& gradient = RecurrentGradient::full()) {
    const ProblemShape shape{c.shape.T, c.shape.B, c.shape.NH, c.shape.DH};
    const FusedKernelTraits t = fused::traits({c.cell, c.dtype, shape}, c.chunked);
    CAPTURE(describe(t));
    CHECK(t.batch_chunks > 1);
    CHECK(t.chunks_in_step == c.chunks_in_step);
    check_cell(fused_backend, c.cell, c.dtype, c.shape, gradient, seed);
}

} // namespace

TEST_CASE("fused backend: batch chunks of a small head") {
    // 5 chunks in launches since the register check counts a block's warps in multiples of 4 (the
    // H100, 2026-11-24; before, 2 chunks inside each step).
    check_chunks({Cell::slstm, DType::fp32, {3, 100, 2, 512}, FusedPass::backward, false}, 3380);
}

TEST_CASE("fused backend: batch chunks inside each step, odd batches, forward and backward") {
    // GRU fp16's backward at B = 255: at B = 201 it ran 2 chunks inside each step with R loaded element
    // by element, and 2 chunks in launches with the direct load (its first choice compiles there).
    check_chunks({Cell::gru, DType::fp16, {3, 255, 1, 768}, FusedPass::backward, true}, 3384);
    check_chunks({Cell::gru, DType::fp16, {3, 255, 1, 768}, FusedPass::backward, true}, 3385,
                 RecurrentGradient::cut());
    check_chunks({Cell::gru, DType::fp16, {3, 201, 1, 768}, FusedPass::backward, false}, 3388);
    check_chunks({Cell::elman, DType::bf16, {3, 999, 1, 768}, FusedPass::forward, true}, 3386);
}

TEST_CASE("fused backend: batch chunks at (1, 768), forward and backward") {
    // 8 chunks inside each step since the register check counts a block's warps in multiples of 4
    // (the H100, 2026-11-24; before, 8 chunks in launches after 13 compiles, every configuration with
    // chunks inside each step having spilled).
    check_chunks({Cell::lstm, DType::bf16, {2, 256, 1, 768}, FusedPass::backward, true}, 3381);
    check_chunks({Cell::lstm, DType::bf16, {2, 1024, 1, 768}, FusedPass::forward, false}, 3383);
    check_chunks({Cell::lstm, DType::bf16, {2, 201, 1, 768}, FusedPass::backward, false}, 3387);
    // Refused on the H100 (2026-11-24) when the kernels looped over the chunks around the whole
    // sequence (ptxas spilled in every configuration the feedback tried); with one launch per chunk
    // the register feedback loop ended in 4 compiles, 168 registers, no spill. Now: 2 chunks inside
    // each step, 3 compiles, 168 registers (test_fused_register_feedback.cpp).
    check_chunks({Cell::gru, DType::fp16, {2, 256, 1, 768}, FusedPass::backward, true}, 3382);
}

TEST_CASE("fused backend: the largest head dimension of this GPU") {
    std::uint64_t seed = 3400;
    const std::pair<Cell, DType> cases[] = {{Cell::lstm, DType::bf16},
                                            {Cell::gru, DType::fp16},
                                            {Cell::slstm, DType::fp32},
                                            {Cell::elman, DType::bf16}};
    for (auto [cell, dtype] : cases) {
        const std::int64_t batch = 3;
        const std::int64_t dh = largest_head_dim(cell, dtype, batch);
        MESSAGE("largest fused head dimension for " << cell_info(cell).name << " " << to_string(dtype)
                                                    << ", B " << batch << ": " << dh);
        REQUIRE(dh > 0);
        check_cell(fused_backend, cell, dtype, {3, batch, 1, dh}, RecurrentGradient::full(), ++seed);
    }
}

// R loaded directly (the default, FusedKernelTraits::direct_r_load: words of two elements forward,
// 16-byte pieces through ldmatrix backward): every cell in bf16 and fp16 against the float64
// reference. The forward loads directly at every size; the backward where the operand buffer lends
// every warp its scratch (traits_of): small heads (DH 24 to 48) keep the element load there, DH 196
// (pieces not 16-byte aligned in every row: read element by element) and 768 load directly, with
// split heads, odd batches, and LSTM bf16 at 2112, the model's largest head on the H100, which
// compiles at the first attempt this way (test_fused_register_feedback.cpp) and is refused without it.
TEST_CASE("fused backend: R loaded directly for every cell in 16-bit types") {
    std::uint64_t seed = 3450;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::bf16, DType::fp16})
            for (const Case& c : {Case{5, 3, 4, 48}, Case{4, 5, 2, 40}, Case{3, 7, 1, 24}, Case{3, 5, 2, 196},
                                  Case{4, 16, 1, 768}}) {
                CAPTURE(c.DH);
                const ProblemShape shape{c.T, c.B, c.NH, c.DH};
                CHECK(fused::traits({cell, dtype, shape}, FusedPass::forward).direct_r_load);
                if (c.DH == 768 || (c.DH == 196 && cell == Cell::lstm))
                    CHECK(fused::traits({cell, dtype, shape}, FusedPass::backward).direct_r_load);
                check_cell(fused_backend, cell, dtype, c, RecurrentGradient::full(), ++seed);
            }
    for (const Case& c : {Case{3, 37, 1, 768}, Case{3, 256, 1, 768}, Case{3, 3, 1, 2112}}) {
        CHECK(fused::traits({Cell::lstm, DType::bf16, {c.T, c.B, c.NH, c.DH}}, FusedPass::backward)
                  .direct_r_load);
        check_cell(fused_backend, Cell::lstm, DType::bf16, c, RecurrentGradient::full(), ++seed);
    }
    // fp32 (tf32) keeps the element-by-element load.
    CHECK_FALSE(fused::traits({Cell::lstm, DType::fp32, {3, 3, 2, 64}}, FusedPass::backward).direct_r_load);
}

// FLASHRNN_FUSED_DIRECT_R_LOAD=0: R loaded element by element, the load of every fused kernel until
// 2026-12-02, kept for comparison and for fp32; every cell in bf16 and fp16, a head split over blocks.
// (With it LSTM bf16's backward at (2, 196), B 5 is refused: its one-block choice spills in the load
// of R, test_fused_register_feedback.cpp; the direct load compiles it at the first attempt.)
TEST_CASE("fused backend: R loaded element by element when the direct load is off") {
    const ScopedEnvironment element_wise("FLASHRNN_FUSED_DIRECT_R_LOAD", "0");
    std::uint64_t seed = 3470;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::bf16, DType::fp16})
            for (const Case& c : {Case{5, 3, 4, 48}, Case{4, 3, 1, 512}, Case{4, 16, 1, 768}}) {
                CAPTURE(c.DH);
                const ProblemShape shape{c.T, c.B, c.NH, c.DH};
                CHECK_FALSE(fused::traits({cell, dtype, shape}, FusedPass::forward).direct_r_load);
                CHECK_FALSE(fused::traits({cell, dtype, shape}, FusedPass::backward).direct_r_load);
                check_cell(fused_backend, cell, dtype, c, RecurrentGradient::full(), ++seed);
            }
}

// Both loads of R for compute-sanitizer (tests/gpu/run.sh, rnn-sanitizers): the scratch of the
// backward's pieces in the operand buffer, pieces not aligned (DH 196, the direct load only: see
// above), a split head.
TEST_CASE("fused backend: R loaded directly under the sanitizers") {
    for (const bool direct : {true, false}) {
        CAPTURE(direct);
        const ScopedEnvironment load("FLASHRNN_FUSED_DIRECT_R_LOAD", direct ? "1" : "0");
        if (direct)
            check_cell(fused_backend, Cell::lstm, DType::bf16, {3, 5, 2, 196}, RecurrentGradient::full(),
                       3480);
        check_cell(fused_backend, Cell::gru, DType::fp16, {3, 3, 4, 48}, RecurrentGradient::full(), 3481);
        check_cell(fused_backend, Cell::lstm, DType::bf16, {3, 16, 1, 768}, RecurrentGradient::full(), 3482);
    }
}

TEST_CASE("fused backend: clipped and cut recurrent gradients") {
    std::uint64_t seed = 3500;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16}) {
            check_cell(fused_backend, cell, dtype, {6, 3, 4, 48}, RecurrentGradient::clipped(0.05), ++seed);
            check_cell(fused_backend, cell, dtype, {6, 3, 4, 48}, RecurrentGradient::cut(), ++seed);
        }
}

TEST_CASE("fused backend: its gate cache feeds the alternating backward, and the other way round") {
    std::uint64_t seed = 3600;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16}) {
            check_cell(fused_backend, alternating_backend, cell, dtype, {7, 3, 4, 48},
                       RecurrentGradient::full(), ++seed);
            check_cell(alternating_backend, fused_backend, cell, dtype, {7, 3, 4, 48},
                       RecurrentGradient::full(), ++seed);
        }
}

TEST_CASE("fused backend: refuses bad arguments with the name of what is wrong") {
    const ProblemShape shape{3, 2, 2, 16};
    const DType dtype = DType::fp32;
    const rnn::Problem problem{Cell::lstm, dtype, shape};
    const rnn::Options options{rnn::Backend::fused};
    const CellInfo info = cell_info(Cell::lstm);
    DeviceTensor tensor(dtype, 4 * 2 * 16 * 16); // holds the largest tensor, R: [4, 2, 16, 16]
    const std::size_t forward_needed = rnn::forward_workspace_bytes(problem, options);
    const std::size_t backward_needed = rnn::backward_workspace_bytes(problem, options);
    DeviceTensor ws(DType::fp32, (std::max(forward_needed, backward_needed) + 256) / 4);
    void* misaligned = static_cast<char*>(ws.data()) + 4;
    // Views of one buffer with the shapes of `of` (never read when the call is refused).
    auto view = [&](const NamedShape& s) { return TensorView{tensor.data(), dtype, s.sizes()}; };
    auto forward_args_of = [&](const ProblemShape& of, Workspace workspace) {
        return rnn::ForwardArgs{view(gate_inputs_shape(info, of)),
                                view(recurrent_weights_shape(info, of)),
                                view(bias_shape(info, of)),
                                view(states_shape(info, of)),
                                view(state_sequence_shape(info, of)),
                                {},
                                {},
                                workspace};
    };
    auto backward_args_of = [&](const ProblemShape& of, Workspace workspace) {
        const rnn::Problem p{Cell::lstm, dtype, of};
        return rnn::BackwardArgs{
            view(recurrent_weights_shape(info, of)),
            view(state_sequence_shape(info, of)),
            TensorView{tensor.data(), DType::fp32, {static_cast<std::int64_t>(rnn::gate_cache_elements(p))}},
            {},
            {},
            view(gate_inputs_shape(info, of)),
            view(recurrent_weights_shape(info, of)),
            view(bias_shape(info, of)),
            view(states_shape(info, of)),
            workspace};
    };
    const rnn::ForwardArgs args = forward_args_of(shape, {ws.data(), forward_needed});
    const rnn::BackwardArgs backward_args = backward_args_of(shape, {ws.data(), backward_needed});
    auto forward = [&](const rnn::ForwardArgs& a, const ProblemShape& of = ProblemShape{3, 2, 2, 16}) {
        return [=] { rnn::forward({Cell::lstm, dtype, of}, a, options, nullptr); };
    };
    auto backward = [&](const rnn::BackwardArgs& a) {
        return [=] { rnn::backward(problem, a, options, nullptr); };
    };

    // Each missing tensor is named (": NAME", so that "states" is not found in "initial_states").
    const std::pair<const char*, std::function<void(rnn::ForwardArgs&)>> forward_tensors[] = {
        {"gate_inputs", [](rnn::ForwardArgs& a) { a.gate_inputs = {}; }},
        {"recurrent_weights", [](rnn::ForwardArgs& a) { a.recurrent_weights = {}; }},
        {"bias", [](rnn::ForwardArgs& a) { a.bias = {}; }},
        {"initial_states", [](rnn::ForwardArgs& a) { a.initial_states = {}; }},
        {"states", [](rnn::ForwardArgs& a) { a.states = {}; }},
    };
    for (const auto& removal : forward_tensors) {
        const char* const name = removal.first;
        const auto& remove = removal.second;
        rnn::ForwardArgs broken = args;
        remove(broken);
        const std::string message = shape_error_of(forward(broken));
        CAPTURE(name);
        CAPTURE(message);
        CHECK(message.find(std::string(": ") + name) != std::string::npos);
        CHECK(message.find("null") != std::string::npos);
    }
    const std::pair<const char*, std::function<void(rnn::BackwardArgs&)>> backward_tensors[] = {
        {"recurrent_weights", [](rnn::BackwardArgs& a) { a.recurrent_weights = {}; }},
        {"states", [](rnn::BackwardArgs& a) { a.states = {}; }},
        {"gate_cache", [](rnn::BackwardArgs& a) { a.gate_cache = {}; }},
        {"d_gate_inputs", [](rnn::BackwardArgs& a) { a.d_gate_inputs = {}; }},
        {"d_recurrent_weights", [](rnn::BackwardArgs& a) { a.d_recurrent_weights = {}; }},
        {"d_bias", [](rnn::BackwardArgs& a) { a.d_bias = {}; }},
        {"d_initial_states", [](rnn::BackwardArgs& a) { a.d_initial_states = {}; }},
    };
    for (const auto& removal : backward_tensors) {
        const char* const name = removal.first;
        const auto& remove = removal.second;
        rnn::BackwardArgs broken = backward_args;
        remove(broken);
        const std::string message = shape_error_of(backward(broken));
        CAPTURE(name);
        CAPTURE(message);
        CHECK(message.find(std::string(": ") + name) != std::string::npos);
        CHECK(message.find("null") != std::string::npos);
    }

    // A workspace too small (with what it needs) or misaligned, a misaligned gate cache, a bad shape.
    if (forward_needed > 0) {
        const std::string needs = "needs " + std::to_string(forward_needed);
        rnn::ForwardArgs small = args;
        small.workspace.bytes = forward_needed - 1;
        CHECK_THROWS_WITH_AS(forward(small)(), doctest::Contains(needs.c_str()), ShapeError);
        rnn::ForwardArgs moved = args;
        moved.workspace.data = misaligned;
        CHECK_THROWS_WITH_AS(forward(moved)(), doctest::Contains("workspace must be 16-byte aligned"),
                             ShapeError);
    }
    if (backward_needed > 0) {
        const std::string needs = "needs " + std::to_string(backward_needed);
        rnn::BackwardArgs small = backward_args;
        small.workspace.bytes = backward_needed - 1;
        CHECK_THROWS_WITH_AS(backward(small)(), doctest::Contains(needs.c_str()), ShapeError);
        rnn::BackwardArgs moved = backward_args;
        moved.workspace.data = misaligned;
        CHECK_THROWS_WITH_AS(backward(moved)(), doctest::Contains("workspace must be 16-byte aligned"),
                             ShapeError);
    }
    rnn::ForwardArgs misaligned_cache = args;
    misaligned_cache.gate_cache =
        TensorView{misaligned, DType::fp32, {static_cast<std::int64_t>(rnn::gate_cache_elements(problem))}};
    CHECK_THROWS_WITH_AS(forward(misaligned_cache)(), doctest::Contains("gate_cache must be 16-byte aligned"),
                         ShapeError);
    rnn::BackwardArgs misaligned_backward_cache = backward_args;
    misaligned_backward_cache.gate_cache.data = misaligned;
    CHECK_THROWS_WITH_AS(backward(misaligned_backward_cache)(),
                         doctest::Contains("gate_cache must be 16-byte aligned"), ShapeError);
    CHECK_THROWS_AS(forward(args, {0, 2, 2, 16})(), ShapeError);

    // A head no GPU holds (R alone is 512 MiB): TilingError with the problem, before any launch
    // (the views have its shapes but lie over a small buffer that is never touched).
    const ProblemShape too_large{1, 1, 1, 8192};
    const rnn::Problem too_large_problem{Cell::lstm, DType::bf16, too_large};
    CHECK_THROWS_WITH_AS(fused::traits(too_large_problem, FusedPass::forward), doctest::Contains("DH 8192"),
                         TilingError);
    CHECK_THROWS_AS(fused::traits(too_large_problem, FusedPass::backward), TilingError);
    CHECK_THROWS_AS(fused::prepare(too_large_problem), TilingError);
    CHECK_THROWS_AS(rnn::forward_workspace_bytes(too_large_problem, options), TilingError);
    CHECK_THROWS_AS(rnn::backward_workspace_bytes(too_large_problem, options), TilingError);
    rnn::ForwardArgs too_large_args = forward_args_of(too_large, {ws.data(), forward_needed});
    for (auto* v : {&too_large_args.gate_inputs, &too_large_args.recurrent_weights, &too_large_args.bias,
                    &too_large_args.initial_states})
        v->dtype = DType::bf16;
    too_large_args.states.dtype = DType::bf16;
    CHECK_THROWS_AS(rnn::forward(too_large_problem, too_large_args, options, nullptr), TilingError);
    // The automatic backend falls back to the alternating one for it, in both passes.
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
        CHECK(rnn::resolve_backend(too_large_problem, rnn::Backend::automatic, pass) ==
              rnn::Backend::alternating);
        const std::string reason = rnn::automatic_choice(too_large_problem, pass).reason;
        CHECK_MESSAGE(reason.find("has no configuration") != std::string::npos, reason);
        CHECK(rnn::resolve_backend(problem, rnn::Backend::automatic, pass) == rnn::Backend::fused);
    }
    cuda_ok(cudaDeviceSynchronize(), "no launch failed");
}

// The benchmark's shapes at (1, 768): from B = 64 the compiled kernels of one pass or both run the
// batch in chunks or with many tiles per SM on the H100, and each pass follows its own kernel.
TEST_CASE("automatic backend: each pass follows the cost model on its own compiled kernel") {
    const int sm_count = device_limits_of(0).sm_count;
    for (std::int64_t batch : {16, 64, 128, 256}) {
        const rnn::Problem problem{Cell::lstm, DType::bf16, ProblemShape{16, batch, 1, 768}};
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            const FusedKernelTraits compiled = fused::traits(problem, pass);
            const rnn::AutomaticChoice choice = rnn::automatic_choice(problem, pass);
            CAPTURE(choice.reason);
            MESSAGE("B = " << batch << ", " << to_string(pass) << ": " << choice.reason);
            CHECK(rnn::resolve_backend(problem, rnn::Backend::automatic, pass) == choice.backend);
            if (compiled.batch_chunks > 1) {
                CHECK(choice.backend == rnn::Backend::alternating);
                const std::string chunks = " in " + std::to_string(compiled.batch_chunks) + " chunks";
                CHECK(choice.reason.find(chunks) != std::string::npos);
                continue;
            }
            const std::int64_t tiles = rnn::step_tiles_per_sm(compiled, sm_count);
            CHECK(choice.backend ==
                  (tiles <= rnn::kFusedStepTilesPerSm ? rnn::Backend::fused : rnn::Backend::alternating));
            const std::string work = std::to_string(tiles) + " mma tiles per SM and step";
            CHECK(choice.reason.find(work) != std::string::npos);
        }
    }
    // A training step of the automatic backend against the float64 reference where its passes may
    // differ (at B = 64 on the H100: a fused forward, an alternating backward).
    check_cell(automatic_backend, Cell::lstm, DType::bf16, {7, 64, 1, 768}, RecurrentGradient::full(), 3800);
}

TEST_CASE("fused backend: a captured CUDA graph replays the eager results bitwise") {
    check_graph_replay(fused_backend, Cell::lstm, DType::bf16, {7, 3, 4, 48}, RecurrentGradient::full(),
                       3700);
    check_graph_replay(fused_backend, Cell::lstm, DType::bf16, {7, 16, 1, 768}, RecurrentGradient::full(),
                       3701); // a head over several blocks
    check_graph_replay(fused_backend, Cell::slstm, DType::fp32, {5, 16, 2, 16}, RecurrentGradient::full(),
                       3702);
}

} // namespace flashrnn::testing
