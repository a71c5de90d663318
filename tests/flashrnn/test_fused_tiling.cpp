// The fused kernels' tiling model: every configuration it picks respects every limit, recomputed
// here from the traits alone; App. D's preferences show in the answers; impossible sizes explain
// themselves with numbers; compiler feedback excludes spilling configurations; the table of the
// largest head dimensions in docs/kernels.md is what the model computes.
#include "flashrnn/core/error.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"
#include "fused_request.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>

using namespace flashrnn;
using flashrnn::testing::request_of;

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

// Every limit, recomputed from the traits without the model.
void check_fits(const DeviceLimits& limits, const FusedTilingRequest& r, const FusedKernelTraits& t) {
    const CellInfo cell = cell_info(r.cell);
    const bool forward = r.pass == FusedPass::forward;
    const int g_rec = cell.num_recurrent_gates;
    // The problem and the mma shape.
    CHECK(t.head_dim == r.head_dim);
    CHECK(t.num_recurrent_gates == g_rec);
    const MmaShape mma = *limits.mma_shape(r.dtype == DType::fp32 ? MmaInput::tf32 : MmaInput::bf16);
    CHECK(t.mma_m == mma.m);
    CHECK(t.mma_n == mma.n);
    CHECK(t.mma_k == mma.k);
    CHECK(t.rows == (forward ? g_rec : 1) * r.head_dim);
    CHECK(t.k_length == (forward ? 1 : g_rec) * r.head_dim);
    // Heads, batch, rows and k are covered, with no empty part.
    CHECK(r.heads % t.heads_per_launch == 0);
    CHECK(t.launches * t.heads_per_launch == r.heads);
    // The batch: batch_blocks x batch_chunks parts (chunks run one after the other in a block).
    const std::int64_t batch_parts = std::int64_t(t.batch_blocks) * t.batch_chunks;
    CHECK(t.batch_chunks >= 1);
    const int chunk_rows = t.batch_rows_per_block;
    if (chunk_rows == t.batch_tiles_per_block * t.mma_n) {
        CHECK(batch_parts * (t.batch_tiles_per_block - 1) < ceil_div(r.batch, t.mma_n));
    } else { // narrow blocks: independent blocks of one tile, fewer rows, at most one per SM
        CHECK(chunk_rows >= 1);
        CHECK(chunk_rows < t.mma_n);
        CHECK(t.batch_tiles_per_block == 1);
        CHECK(t.batch_chunks == 1);
        CHECK(!t.cooperative);
        CHECK(std::int64_t(t.heads_per_launch) * t.batch_blocks * t.row_blocks <= limits.sm_count);
        CHECK(batch_parts * (chunk_rows - 1) < r.batch);
    }
    CHECK(batch_parts * chunk_rows >= r.batch);
    CHECK((batch_parts - 1) * chunk_rows < r.batch);
    CHECK(t.row_blocks * t.units_per_block == r.head_dim);
    const int rows_per_block = t.rows_per_unit * t.units_per_block;
    CHECK(t.row_tiles_per_block == ceil_div(rows_per_block, t.mma_m));
    if (t.row_blocks > 1) CHECK(rows_per_block % t.mma_m == 0);
    CHECK(t.k_blocks * t.k_tiles_per_block == ceil_div(t.k_length, t.mma_k));
    // The k split: its blocks exchanging after a barrier, one chunk per step, whole k tiles.
    if (t.k_blocks > 1) {
        CHECK(t.cooperative);
        CHECK(!t.chunks_in_step);
        CHECK(!t.tagged_exchange);
        CHECK(!t.multicast_gather);
        CHECK(!t.cluster_exchange);
        CHECK(t.k_length % t.mma_k == 0);
    }
    CHECK(t.row_warps * t.row_tiles_per_warp >= t.row_tiles_per_block);
    CHECK(t.row_warps * (t.row_tiles_per_warp - 1) < t.row_tiles_per_block);
    CHECK(t.k_warps * t.k_tiles_per_warp >= t.k_tiles_per_block);
    CHECK(t.k_warps * (t.k_tiles_per_warp - 1) < t.k_tiles_per_block);
    CHECK(t.k_tiles_in_registers >= 0);
    CHECK(t.k_tiles_in_shared_memory >= 0);
    CHECK(t.k_tiles_in_registers + t.k_tiles_in_shared_memory == t.k_tiles_per_warp);
    // Threads.
    CHECK(t.threads_per_block == t.row_warps * t.k_warps * limits.warp_size);
    CHECK(t.threads_per_block <= std::min(r.max_threads_per_block, limits.max_threads_per_block));
    // Registers: R's A fragments (4 per tile), 4 per accumulator tile, 2 for a B fragment, overhead.
    // ... and the pointwise items' inputs loaded a step ahead (forward: gate inputs; backward: gates,
    // states before and after, upstream gradients).
    // A row block's items are shared by its k blocks.
    const int block_items = chunk_rows * t.units_per_block;
    const int share = (block_items + t.k_blocks - 1) / t.k_blocks;
    const int items = (share + t.threads_per_block - 1) / t.threads_per_block;
    // Forward above B = 32 each item past the first also costs 9 (its indices and addresses); chunks
    // inside each step 32.
    const int item_registers = forward ? cell.num_input_gates : cell.num_gates + 3 * cell.num_states;
    const int further_item_registers = forward && r.batch > 32 ? 9 : 0;
    const int registers = 4 * t.row_tiles_per_warp * t.k_tiles_in_registers + 4 * t.batch_tiles_per_block +
                          2 + item_registers * items + further_item_registers * (items - 1) +
                          (t.chunks_in_step ? 32 : 0) + r.overhead_registers_per_thread;
    CHECK(t.r_registers_per_thread == 4 * t.row_tiles_per_warp * t.k_tiles_in_registers);
    CHECK(t.registers_per_thread == registers);
    CHECK(registers <= limits.max_registers_per_thread);
    const int allocated = (registers + 7) / 8 * 8;
    CHECK(std::int64_t(allocated) * t.threads_per_block <= limits.max_registers_per_block);
    // Shared memory, as the kernel lays it out: operand rows padded by 16 bytes (4 fp32 or 8 16-bit
    // elements), the partial products' rows by 4 floats, every part rounded up to 16 bytes.
    const auto round_up_16 = [](std::int64_t bytes) { return (bytes + 15) / 16 * 16; };
    const std::int64_t tile_bytes = std::int64_t(t.mma_m) * t.mma_k * t.element_bytes;
    const std::int64_t batch_rows = std::int64_t(t.mma_n) * t.batch_tiles_per_block;
    const std::int64_t r_shared =
        tile_bytes * t.row_warps * t.k_warps * t.row_tiles_per_warp * t.k_tiles_in_shared_memory;
    const std::int64_t padding = 16 / t.element_bytes;
    // The fp32 states of every chunk when the chunks run inside each step (exchanged through the barrier).
    const std::int64_t chunks_on_chip = t.chunks_in_step ? t.batch_chunks : 1;
    if (t.chunks_in_step) {
        CHECK(t.batch_chunks >= 2);
        CHECK(!t.tagged_exchange);
    }
    const std::int64_t shared =
        round_up_16(r_shared) +
        round_up_16((std::int64_t(t.mma_k) * t.k_tiles_per_block + padding) * batch_rows * t.element_bytes *
                    (1 + (t.cluster_exchange ? 1 : 0) + (t.prefetch_operand ? 1 : 0))) +
        round_up_16(4 * std::int64_t(t.k_warps) * (t.mma_m * t.row_tiles_per_block + 4) * batch_rows) +
        round_up_16(4 * std::int64_t(cell.num_states) * t.units_per_block * batch_rows * chunks_on_chip) +
        round_up_16(forward ? 4 * std::int64_t(cell.num_gates) * t.units_per_block : 0);
    CHECK(t.r_shared_memory_bytes == r_shared);
    CHECK(t.shared_memory_bytes == shared);
    CHECK(shared <= limits.shared_memory_per_block_optin);
    CHECK(shared + limits.reserved_shared_memory_per_block <= limits.shared_memory_per_sm);
    // R of the block is held in its registers and shared memory.
    const std::int64_t r_tiles_of_block = std::int64_t(t.row_tiles_per_block) * t.k_tiles_per_block;
    const std::int64_t r_tile_slots =
        std::int64_t(t.row_warps) * t.k_warps * t.row_tiles_per_warp * t.k_tiles_per_warp;
    CHECK(r_tile_slots >= r_tiles_of_block);
    // Grid: a cooperative launch exactly when a head spans blocks, and then all blocks resident.
    const int blocks_per_head = t.row_blocks * t.k_blocks;
    CHECK(t.cooperative == (blocks_per_head > 1));
    if (t.cooperative)
        CHECK(std::int64_t(t.heads_per_launch) * t.batch_blocks * blocks_per_head <= limits.sm_count);
    // The cluster exchange: a group is one cluster (forward, one chunk per step), never tagged too.
    if (t.cluster_exchange) {
        CHECK(forward);
        CHECK(t.cooperative);
        CHECK(!t.chunks_in_step);
        CHECK(!t.tagged_exchange);
        CHECK(blocks_per_head <= limits.max_cluster_blocks);
    }
}

constexpr std::array<DType, 3> kDTypes{DType::fp32, DType::bf16, DType::fp16};

// The largest head dimension (a multiple of 16) with a configuration, for one head and batch 16:
// scanned down from what the chip could hold at all, since feasibility is not monotone.
// What a failing check of a grid names: preset, pass, cell, dtype and the head shape.
std::string grid_point(std::string_view preset, FusedPass pass, Cell cell, DType dtype, int heads,
                       int head_dim) {
    return std::string(preset) + " " + std::string(to_string(pass)) + " " +
           std::string(cell_info(cell).name) + " " + std::string(to_string(dtype)) + " NH " +
           std::to_string(heads) + " DH " + std::to_string(head_dim);
}

int largest_head_dim(const DeviceLimits& limits, Cell cell, DType dtype, bool with_backward) {
    const int g_rec = cell_info(cell).num_recurrent_gates;
    const double chip_bytes = double(limits.sm_count) * (double(limits.registers_per_sm) * 4 +
                                                         double(limits.shared_memory_per_block_optin));
    for (int dh = int(std::sqrt(chip_bytes / (g_rec * bytes_of(dtype)))) / 16 * 16; dh >= 16; dh -= 16) {
        if (!fused_tiling_exists(limits, request_of(FusedPass::forward, cell, dtype, 1, dh, 16))) continue;
        if (!with_backward ||
            fused_tiling_exists(limits, request_of(FusedPass::backward, cell, dtype, 1, dh, 16)))
            return dh;
    }
    return 0;
}

std::string largest_head_dim_table() {
    std::string text = "| cell | dtype |";
    std::string rule = "| --- | --- |";
    for (std::string_view name : preset_names()) {
        text += " `" + std::string(name) + "` |";
        rule += " --- |";
    }
    text += "\n" + rule + "\n";
    for (Cell cell : all_cells)
        for (DType dtype : kDTypes) {
            text += "| " + std::string(cell_info(cell).name) + " | " + std::string(to_string(dtype)) + " |";
            for (std::string_view name : preset_names()) {
                const DeviceLimits limits = preset(name);
                text += " " + std::to_string(largest_head_dim(limits, cell, dtype, false)) + " / " +
                        std::to_string(largest_head_dim(limits, cell, dtype, true)) + " |";
            }
            text += "\n";
        }
    return text;
}

} // namespace

TEST_CASE("fused tiling: every preset, cell, dtype and pass over a grid of sizes fits every limit") {
    int solved = 0, refused = 0;
    for (std::string_view name : preset_names()) {
        const DeviceLimits limits = preset(name);
        for (Cell cell : all_cells)
            for (DType dtype : kDTypes)
                for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                    for (int heads : {1, 12})
                        for (int head_dim : {16, 24, 64, 768})
                            for (int batch : {1, 3, 64}) {
                                const FusedTilingRequest r =
                                    request_of(pass, cell, dtype, heads, head_dim, batch);
                                const std::string point =
                                    grid_point(name, pass, cell, dtype, heads, head_dim);
                                INFO(point);
                                CAPTURE(batch);
                                try {
                                    check_fits(limits, r, choose_fused_tiling(limits, r).traits);
                                    ++solved;
                                } catch (const TilingError& e) {
                                    // Only the largest head may not fit (fp32 with a large batch on
                                    // the smaller GPUs: the state operands outgrow shared memory).
                                    CHECK(head_dim == 768);
                                    CHECK(std::string(e.what()).find("cannot hold together") !=
                                          std::string::npos);
                                    // conflicts() holds the same limits, each a line of what().
                                    REQUIRE(!e.conflicts().empty());
                                    for (const std::string& limit : e.conflicts())
                                        CHECK(std::string(e.what()).find("\n  - " + limit) !=
                                              std::string::npos);
                                    ++refused;
                                }
                            }
    }
    CHECK(solved + refused == 6 * 4 * 3 * 2 * 2 * 4 * 3);
    MESSAGE(solved << " configurations checked, " << refused << " sizes refused with an explanation");
    CHECK(refused * 20 < solved);
}

TEST_CASE("fused tiling: every batch from 1 to 1024 at every head size admitted at batch 16 (batch chunks)") {
    // The model sees the batch as mma_n-wide tiles: every B of a tile count has the configuration
    // of the largest B of that count (checked on one shape below, B = 1..64); the grid spans 1..1024.
    for (std::string_view name : {"h100_sxm", "l4"}) {
        const DeviceLimits limits = preset(name);
        for (Cell cell : all_cells)
            for (DType dtype : kDTypes)
                for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                    for (const std::pair<int, int>& shape : {std::pair{1, 768}, {12, 64}, {1, 24}}) {
                        const auto [heads, head_dim] = shape;
                        const std::string point = grid_point(name, pass, cell, dtype, heads, head_dim);
                        INFO(point);
                        if (!fused_tiling_exists(limits, request_of(pass, cell, dtype, heads, head_dim, 16)))
                            continue;
                        for (int batch : {1, 2, 3, 17, 64, 100, 256, 513, 1024}) {
                            CAPTURE(batch);
                            const FusedTilingRequest r =
                                request_of(pass, cell, dtype, heads, head_dim, batch);
                            const FusedKernelTraits t = choose_fused_tiling(limits, r).traits;
                            check_fits(limits, r, t);
                        }
                    }
    }
    const DeviceLimits h100 = preset("h100_sxm");
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
        for (int batch = 1; batch <= 64; ++batch) {
            CAPTURE(batch);
            const FusedTilingRequest r = request_of(pass, Cell::lstm, DType::bf16, 1, 768, batch);
            FusedKernelTraits t = choose_fused_tiling(h100, r).traits;
            check_fits(h100, r, t);
            FusedKernelTraits largest = choose_fused_tiling(h100, request_of(pass, Cell::lstm, DType::bf16, 1,
                                                                             768, (batch + 7) / 8 * 8))
                                            .traits;
            largest.batch = t.batch;
            CHECK(t == largest);
            if (batch <= 32) CHECK(t.batch_chunks == 1); // the configurations measured before chunks
        }
    // Chunks run inside each step where every chunk's states fit beside R: LSTM bf16 backward at
    // (1, 768) runs B = 128 and 256 in 2 and 4 chunks of one launch, not in 2 and 4 launches.
    for (int batch : {128, 256}) {
        CAPTURE(batch);
        const FusedTilingRequest r = request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, batch);
        const FusedKernelTraits t = choose_fused_tiling(h100, r).traits;
        check_fits(h100, r, t);
        CHECK(t.batch_chunks == batch / 64);
        CHECK(t.chunks_in_step);
        CHECK(t.cooperative);
        CHECK(!t.tagged_exchange);
    }
}

TEST_CASE("fused tiling: a batch of millions of rows is solved in a few hundred search nodes") {
    // The batch's block and chunk counts are searched by halving their ranges: counted one value at a
    // time, (24, 28) at B 40967 took 35854 nodes (the fuzzer's hang under ASan) and the split head
    // (2, 800) at B 16025816 on the RTX 3090 stopped at the node limit without an answer.
    struct Case {
        const char* gpu;
        Cell cell;
        DType dtype;
        int heads, head_dim, batch;
    };
    const Case cases[] = {{"h100_sxm", Cell::lstm, DType::bf16, 24, 28, 40967},
                          {"h100_sxm", Cell::lstm, DType::bf16, 1, 768, 1000000},
                          {"rtx3090", Cell::slstm, DType::fp16, 2, 800, 16025816}};
    for (const Case& c : cases) {
        const DeviceLimits limits = preset(c.gpu);
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            const FusedTilingRequest r = request_of(pass, c.cell, c.dtype, c.heads, c.head_dim, c.batch);
            INFO(c.gpu << " " << to_string(pass) << " (" << c.heads << ", " << c.head_dim << ") B "
                       << c.batch);
            const FusedTilingResult result = choose_fused_tiling(limits, r);
            check_fits(limits, r, result.traits);
            CHECK(result.search_nodes < 1000);
        }
    }
}

TEST_CASE("fused tiling: a head in one block at a batch of many rows is one at a smaller batch") {
    // What the model's shortcut assumes (one_block_head, fused_tiling.cpp): above (mma_n - 1) x SMs
    // rows, where narrow blocks cannot cover the batch, a head that one block holds at some batch is
    // held at any smaller batch also above that: refusing it at the smaller batch removes no solution.
    for (std::string_view name : {"h100_sxm", "l4"}) {
        const DeviceLimits limits = preset(name);
        const int smaller = 7 * limits.sm_count + 1;
        for (Cell cell : all_cells)
            for (DType dtype : {DType::bf16, DType::fp32})
                for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                    for (int head_dim : {64, 156, 300})
                        for (int batch : {smaller + 1, 3001, 100000}) {
                            FusedTilingRequest r = request_of(pass, cell, dtype, 1, head_dim, batch);
                            r.max_blocks_per_head = 1;
                            if (!fused_tiling_exists(limits, r)) continue;
                            INFO(grid_point(name, pass, cell, dtype, 1, head_dim) << " B " << batch);
                            r.batch = smaller;
                            CHECK(fused_tiling_exists(limits, r));
                        }
    }
}

TEST_CASE("fused tiling: narrow batch blocks fill the SMs where whole tiles leave them idle") {
    const DeviceLimits h100 = preset("h100");
    const auto traits = [&](FusedPass pass, int heads, int head_dim, int batch) {
        return choose_fused_tiling(h100, request_of(pass, Cell::lstm, DType::bf16, heads, head_dim, batch))
            .traits;
    };
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
        CAPTURE(pass);
        // (batch, batch blocks, rows per block) at (12, 64): as many blocks as the 132 SMs take, each
        // with as few rows as that allows; B = 1 keeps its one whole tile, B = 128 its 16 (192 blocks).
        const int grid[][3] = {{1, 1, 8},   {4, 4, 1},   {5, 5, 1},   {16, 8, 2},
                               {32, 11, 3}, {64, 11, 6}, {128, 16, 8}};
        for (const auto& row : grid) {
            // Named copies: clang 14 cannot capture a structured binding (in CAPTURE's lambda).
            const int batch = row[0], blocks = row[1], rows = row[2];
            CAPTURE(batch);
            const FusedKernelTraits t = traits(pass, 12, 64, batch);
            CHECK(t.batch_blocks == blocks);
            CHECK(t.batch_rows_per_block == rows);
            CHECK(t.batch_tiles_per_block == 1);
            const bool named_narrow = describe(t).find("narrow") != std::string::npos;
            CHECK(named_narrow == (rows < 8));
        }
        // A split head keeps whole tiles (its blocks exchange whole tiles each step).
        const FusedKernelTraits split = traits(pass, 1, 768, 16);
        CHECK(split.cooperative);
        CHECK(split.batch_rows_per_block == split.batch_tiles_per_block * split.mma_n);
    }
}

TEST_CASE(
    "fused tiling: App. D's preferences (heads in one launch, one block per small head, R in registers)") {
    const DeviceLimits h100 = preset("h100");
    SUBCASE("12 heads of 64: each head is one independent block, R entirely in registers") {
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            const auto t =
                choose_fused_tiling(h100, request_of(pass, Cell::lstm, DType::bf16, 12, 64, 16)).traits;
            CHECK(t.launches == 1);
            CHECK(!t.cooperative);
            CHECK(t.row_blocks == 1);
            CHECK(t.k_blocks == 1);
            CHECK(t.k_tiles_in_shared_memory == 0);
            CHECK(t.threads_per_block == 512);
        }
    }
    SUBCASE("one head of 768: spread over blocks along the parallel dimension, none along k") {
        const auto f =
            choose_fused_tiling(h100, request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 768, 16));
        CHECK(f.traits.cooperative);
        CHECK(f.traits.k_blocks == 1);
        CHECK(f.traits.row_blocks >= 48);
        CHECK(f.solve_seconds < 1.0);
        const auto b =
            choose_fused_tiling(h100, request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, 16));
        CHECK(b.traits.k_blocks == 1);
        CHECK(b.traits.rows == 768);
        CHECK(b.traits.k_length == 4 * 768);
    }
    SUBCASE("the paper's head-dimension sweep at hidden 768: a long one-block step on idle SMs is split") {
        // (NH, DH) -> blocks per head at B = 16: small heads stay in one block, (6, 128) (256 mma tiles
        // per one-block step on 12 of 132 SMs) and the heads too large for one block are split into
        // 16-unit blocks, 96 blocks in all. Batch blocks: 2 of one tile each, or narrow blocks of 4 and 2
        // rows where the heads in one block leave SMs for them (96 blocks).
        struct Split {
            int heads, blocks_per_head, batch_blocks;
        };
        const Split split[] = {{48, 1, 2}, {24, 1, 4}, {12, 1, 8}, {6, 8, 2}, {3, 16, 2}, {1, 48, 2}};
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
            for (auto [heads, blocks_per_head, batch_blocks] : split) {
                const int head_dim = 768 / heads;
                CAPTURE(head_dim);
                const auto t =
                    choose_fused_tiling(h100, request_of(pass, Cell::lstm, DType::bf16, heads, head_dim, 16))
                        .traits;
                CHECK(t.launches == 1);
                CHECK(t.batch_blocks == batch_blocks);
                CHECK(t.batch_rows_per_block == 16 / batch_blocks);
                CHECK(t.row_blocks == blocks_per_head);
                CHECK(t.cooperative == (blocks_per_head > 1));
                CHECK(t.row_tiles_per_block * t.k_tiles_per_block * t.batch_tiles_per_block <= 192);
            }
        // B = 128: every split of (6, 128) that fits the 132 SMs keeps 256 tiles per block, so the head
        // stays in one block; B = 256: 6 heads x 32 batch blocks already fill the chip.
        for (int batch : {128, 256}) {
            CAPTURE(batch);
            CHECK(!choose_fused_tiling(h100,
                                       request_of(FusedPass::forward, Cell::lstm, DType::bf16, 6, 128, batch))
                       .traits.cooperative);
        }
        // A head that must be split keeps wide blocks at B = 1 (a narrower split would shorten its step).
        CHECK(choose_fused_tiling(h100, request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 768, 1))
                  .traits.units_per_block == 16);
    }
    SUBCASE("fp32 uses tf32 m16n8k8, 16-bit types m16n8k16") {
        const auto fp32 =
            choose_fused_tiling(h100, request_of(FusedPass::forward, Cell::gru, DType::fp32, 2, 48, 3));
        CHECK(fp32.traits.mma_k == 8);
        CHECK(fp32.traits.element_bytes == 4);
        const auto fp16 =
            choose_fused_tiling(h100, request_of(FusedPass::forward, Cell::gru, DType::fp16, 2, 48, 3));
        CHECK(fp16.traits.mma_k == 16);
        CHECK(fp16.traits.rows == 3 * 48); // GRU: 3 blocks of R (its 4th gate has none)
    }
}

TEST_CASE("fused tiling: the cluster exchange on Hopper presets, asked for; none before sm_90") {
    const DeviceLimits h100 = preset("h100"), a100 = preset("a100");
    CHECK(h100.max_cluster_blocks == 16);
    CHECK(a100.max_cluster_blocks == 0);
    auto cluster_request = [](FusedPass pass, int heads, int head_dim, FusedCluster cluster) {
        FusedTilingRequest r = request_of(pass, Cell::lstm, DType::bf16, heads, head_dim, 16);
        r.cluster = cluster;
        return r;
    };
    SUBCASE("asked for: the forward splits each head over one cluster; the backward keeps its exchange") {
        // (1, 768): 16 blocks of 48 units (the non-portable cluster size) per batch block, R of 288 KiB
        // per block in registers and shared memory; (12, 64): 4 blocks of 16 units.
        for (auto [heads, head_dim, blocks] : {std::tuple{1, 768, 16}, {12, 64, 4}, {3, 256, 16}}) {
            const int dim = head_dim; // clang 14 does not capture a structured binding
            CAPTURE(dim);
            const FusedTilingRequest r =
                cluster_request(FusedPass::forward, heads, head_dim, FusedCluster::always);
            const FusedKernelTraits t = choose_fused_tiling(h100, r).traits;
            CHECK(t.cluster_exchange);
            CHECK(t.row_blocks == blocks);
            check_fits(h100, r, t);
            CHECK(describe(t).find("a cluster of " + std::to_string(blocks) + " blocks") !=
                  std::string::npos);
            CHECK(!choose_fused_tiling(
                       h100, cluster_request(FusedPass::backward, heads, head_dim, FusedCluster::always))
                       .traits.cluster_exchange);
            // No clusters on the A100: the same request keeps today's exchange.
            CHECK(!choose_fused_tiling(
                       a100, cluster_request(FusedPass::forward, heads, head_dim, FusedCluster::always))
                       .traits.cluster_exchange);
        }
    }
    SUBCASE("automatic: where the split the model makes anyway fits one cluster, forward only") {
        // (NH, DH) at B = 16 -> blocks per head: (6, 128) and (3, 256) take clusters of 8 and 16; the
        // heads in one block are not split for a cluster, (1, 768) keeps its 48 blocks.
        const std::pair<int, int> split[] = {{48, 1}, {24, 1}, {12, 1}, {6, 8}, {3, 16}, {1, 48}};
        for (auto [heads, blocks] : split) {
            const int head_dim = 768 / heads;
            CAPTURE(head_dim);
            const FusedTilingRequest r =
                cluster_request(FusedPass::forward, heads, head_dim, FusedCluster::automatic);
            const FusedKernelTraits t = choose_fused_tiling(h100, r).traits;
            CHECK(t.row_blocks == blocks);
            CHECK(t.cluster_exchange == (blocks == 8 || blocks == 16));
            CHECK(!choose_fused_tiling(a100, r).traits.cluster_exchange);
            CHECK(!choose_fused_tiling(
                       h100, cluster_request(FusedPass::backward, heads, head_dim, FusedCluster::automatic))
                       .traits.cluster_exchange);
        }
    }
    SUBCASE("a launch with more clusters than are resident at once takes the split without clusters") {
        // (1, 768) forward at B = 64: the model's first choice is 8 batch blocks of one cluster of 16
        // row blocks each; on the H200 fewer than 8 such clusters were resident at once (docs/kernels.md,
        // "cluster exchange": 6.78 ms against 3.98 without clusters).
        FusedTilingRequest r = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 768, 64);
        const FusedKernelTraits t = choose_fused_tiling(h100, r).traits;
        REQUIRE(t.cluster_exchange);
        CHECK(t.row_blocks == 16);
        CHECK(clusters_per_launch(t) == 8);
        CHECK_FALSE(cluster_residency_problem(t, 8, FusedCluster::automatic).has_value());
        const std::optional<std::string> waves = cluster_residency_problem(t, 7, FusedCluster::automatic);
        REQUIRE(waves.has_value());
        CHECK(waves->find("8 clusters in the launch, but only 7") != std::string::npos);
        CHECK(waves->find("waves") != std::string::npos);
        CHECK_FALSE(cluster_residency_problem(t, 7, FusedCluster::always).has_value()); // the user's choice
        const std::optional<std::string> none = cluster_residency_problem(t, 0, FusedCluster::always);
        REQUIRE(none.has_value());
        CHECK(none->find("no cluster of 16 blocks") != std::string::npos);
        // The compile loop's next request: the same problem without clusters, the head still split.
        const FusedTilingRequest next = after_register_shortage(r, t, 128, 0);
        CHECK(next.cluster == FusedCluster::never);
        const FusedKernelTraits split = choose_fused_tiling(h100, next).traits;
        CHECK_FALSE(split.cluster_exchange);
        CHECK(split.cooperative);
        CHECK(split.batch_blocks == t.batch_blocks);
        CHECK(split.row_blocks == t.row_blocks);
        check_fits(h100, next, split);
    }
    SUBCASE("never: no cluster whatever the model would prefer") {
        for (auto [heads, head_dim] : {std::pair{1, 768}, {12, 64}, {6, 128}, {3, 256}})
            CHECK(!choose_fused_tiling(
                       h100, cluster_request(FusedPass::forward, heads, head_dim, FusedCluster::never))
                       .traits.cluster_exchange);
    }
}

TEST_CASE("fused tiling: the multicast gather with the barrier exchange on Hopper, 16-bit types only") {
    const DeviceLimits h100 = preset("h100"), a100 = preset("a100");
    auto chosen = [](const DeviceLimits& limits, FusedPass pass, DType dtype, int batch,
                     FusedCluster cluster) {
        FusedTilingRequest r = request_of(pass, Cell::lstm, dtype, 1, 768, batch);
        r.cluster = cluster;
        return choose_fused_tiling(limits, r).traits;
    };
    // (1, 768) on the H100: the backward exchanges through the barrier from B = 16 (96 KiB of tagged
    // words per block), the forward from B = 32; both then share the gather.
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
        const bool forward = pass == FusedPass::forward;
        CAPTURE(forward);
        for (int batch : {16, 32, 64, 256}) {
            CAPTURE(batch);
            const FusedKernelTraits t = chosen(h100, pass, DType::bf16, batch, FusedCluster::automatic);
            const bool barrier = t.cooperative && !t.tagged_exchange && !t.cluster_exchange;
            CHECK(t.multicast_gather == barrier);
            // The model's choices on the H100: the backward from B = 32 (at B = 256 in 4 chunks inside
            // each step), the forward at B = 256 (at B = 64 it takes the cluster exchange).
            if ((!forward && batch >= 32) || (forward && batch == 256)) CHECK(t.multicast_gather);
            if (t.multicast_gather) CHECK(describe(t).find("gather shared by clusters") != std::string::npos);
            // None without clusters (the A100, or clusters turned off) nor for fp32 (rounded to tf32).
            CHECK(!chosen(a100, pass, DType::bf16, batch, FusedCluster::automatic).multicast_gather);
            CHECK(!chosen(h100, pass, DType::bf16, batch, FusedCluster::never).multicast_gather);
            CHECK(!chosen(h100, pass, DType::fp32, batch, FusedCluster::automatic).multicast_gather);
        }
        // B = 16 forward: tagged words (24 KiB per block), no gather to share.
        if (forward) CHECK(!chosen(h100, pass, DType::bf16, 16, FusedCluster::automatic).multicast_gather);
    }
}

TEST_CASE("fused tiling: impossible sizes explain which limit fails, with numbers") {
    const DeviceLimits h100 = preset("h100");
    SUBCASE("R larger than the chip") {
        CHECK_THROWS_WITH_AS(
            choose_fused_tiling(h100, request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 4096, 16)),
            doctest::Contains(
                "R needs 128.0 MiB of registers and shared memory on this head (4 x 4096 x 4096 x 2 B)"),
            TilingError);
        CHECK_THROWS_WITH_AS(
            choose_fused_tiling(h100, request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 4096, 16)),
            doctest::Contains("132 SMs x 483.0 KiB allow 62.3 MiB"), TilingError);
    }
    SUBCASE("the message names the problem and the GPU") {
        try {
            choose_fused_tiling(preset("l4"),
                                request_of(FusedPass::forward, Cell::slstm, DType::fp32, 1, 2048, 1));
            FAIL("expected no configuration");
        } catch (const TilingError& e) {
            const std::string what = e.what();
            CHECK(what.find("forward slstm fp32, NH 1, DH 2048, B 1 on l4") != std::string::npos);
            CHECK(what.find("58 SMs") != std::string::npos);
        }
    }
    SUBCASE("malformed requests") {
        CHECK_THROWS_AS(
            choose_fused_tiling(h100, request_of(FusedPass::forward, Cell::lstm, DType::bf16, 0, 64, 1)),
            ShapeError);
        DeviceLimits turing = h100;
        turing.compute_capability_major = 7;
        turing.compute_capability_minor = 5;
        CHECK_THROWS_WITH_AS(
            choose_fused_tiling(turing, request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 64, 1)),
            doctest::Contains("has no mma.sync for bf16"), UnsupportedError);
        FusedTilingRequest negative = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 64, 1);
        negative.max_row_warps = -1;
        CHECK_THROWS_WITH_AS(choose_fused_tiling(h100, negative),
                             doctest::Contains("max_row_warps -1 is negative"), ShapeError);
    }
}

TEST_CASE("fused tiling: at most max_row_warps row warps, the block's other warps along k") {
    // (1, 768) at B 256, the shape whose 8 row warps each read the whole operand from shared memory
    // every step; and (12, 64) at B 16. The model's first answer has more row warps than each limit.
    const DeviceLimits h100 = preset("h100");
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
        for (const auto& shape : {std::tuple{1, 768, 256}, std::tuple{12, 64, 16}}) {
            // named again: clang 14 does not capture a structured binding (INFO is a lambda)
            const int heads = std::get<0>(shape), head_dim = std::get<1>(shape), batch = std::get<2>(shape);
            FusedTilingRequest r = request_of(pass, Cell::lstm, DType::bf16, heads, head_dim, batch);
            const FusedKernelTraits free = choose_fused_tiling(h100, r).traits;
            for (int most : {1, 2, 4}) {
                INFO(to_string(pass) << " (" << heads << ", " << head_dim << ") B " << batch << ", at most "
                                     << most << " row warps (" << free.row_warps << " unlimited)");
                r.max_row_warps = most;
                const FusedKernelTraits t = choose_fused_tiling(h100, r).traits;
                CHECK(t.row_warps <= most);
                CHECK(t.row_warps * t.k_warps * t.warp_size == t.threads_per_block);
                if (free.row_warps <= most) CHECK(t == free); // a limit that binds nothing changes nothing
            }
        }
    FusedTilingRequest r = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 768, 256);
    CHECK(choose_fused_tiling(h100, r).traits.row_warps == 8);
    r.max_row_warps = 2;
    const FusedKernelTraits two = choose_fused_tiling(h100, r).traits;
    CHECK(two.row_warps == 2);
    CHECK(two.k_warps >= 2);
}

TEST_CASE("fused tiling: the k split, asked for with min_k_blocks") {
    const DeviceLimits h200 = preset("h200");
    SUBCASE("(1, 768): every k blocks asked for, or more, each limit holding, both passes") {
        for (const auto& [cell, dtype, batch] :
             {std::tuple{Cell::lstm, DType::bf16, 16}, std::tuple{Cell::lstm, DType::bf16, 256},
              std::tuple{Cell::gru, DType::fp32, 37}, std::tuple{Cell::elman, DType::fp16, 3}}) {
            const Cell c = cell; // named again: clang 14 does not capture a structured binding
            const DType d = dtype;
            const int b = batch;
            for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
                FusedTilingRequest r = request_of(pass, c, d, 1, 768, b);
                CHECK(choose_fused_tiling(h200, r).traits.k_blocks == 1); // none unless asked for (768 fits)
                for (int least : {2, 3, 4}) {
                    INFO(to_string(pass) << " " << cell_info(c).name << " " << to_string(d) << " B " << b
                                         << ", at least " << least << " k blocks");
                    r.min_k_blocks = least;
                    const FusedKernelTraits t = choose_fused_tiling(h200, r).traits;
                    CHECK(t.k_blocks >= least);
                    check_fits(h200, r, t);
                    CHECK(describe(t).find(std::to_string(t.k_blocks) + " k blocks") != std::string::npos);
                }
            }
        }
    }
    SUBCASE("k tiles that are not whole are refused with the reason") {
        // The forward at DH 100: 100 state units are not whole 16-column tiles.
        FusedTilingRequest forward = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 100, 16);
        forward.min_k_blocks = 2;
        CHECK_THROWS_WITH_AS(
            choose_fused_tiling(h200, forward),
            doctest::Contains("the forward splits its 100 state units over blocks only on whole"),
            TilingError);
        // GRU's backward: 3 x 100 = 300 gate columns, not whole 16-column tiles.
        FusedTilingRequest ragged = request_of(FusedPass::backward, Cell::gru, DType::bf16, 1, 100, 16);
        CHECK(choose_fused_tiling(h200, ragged).traits.k_blocks == 1);
        ragged.min_k_blocks = 2;
        CHECK_THROWS_WITH_AS(choose_fused_tiling(h200, ragged),
                             doctest::Contains("only on whole 16-column tiles"), TilingError);
        FusedTilingRequest negative = request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 64, 1);
        negative.min_k_blocks = -1;
        CHECK_THROWS_WITH_AS(choose_fused_tiling(h200, negative),
                             doctest::Contains("min_k_blocks -1 is negative"), ShapeError);
        negative.min_k_blocks = 0;
        negative.max_k_blocks = -1;
        CHECK_THROWS_WITH_AS(choose_fused_tiling(h200, negative),
                             doctest::Contains("max_k_blocks -1 is negative"), ShapeError);
    }
    SUBCASE("where only a split fits, max_k_blocks 1 refuses and names the limit") {
        // LSTM fp32 at 1584: the backward's largest head only with the split.
        FusedTilingRequest large = request_of(FusedPass::backward, Cell::lstm, DType::fp32, 1, 1584, 16);
        CHECK(choose_fused_tiling(h200, large).traits.k_blocks > 1);
        large.max_k_blocks = 1;
        CHECK_THROWS_WITH_AS(choose_fused_tiling(h200, large),
                             doctest::Contains("at most 1 block along the accumulated dimension"),
                             TilingError);
        large.min_k_blocks = 2;
        CHECK_THROWS_AS(choose_fused_tiling(h200, large), TilingError); // at least 2 and at most 1
    }
}

TEST_CASE("fused tiling: with_more_k_blocks starts over with one k block more than any that spilled") {
    const DeviceLimits h200 = preset("h200");
    const FusedTilingRequest first = request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, 16);
    FusedKernelTraits spilled = choose_fused_tiling(h200, first).traits;
    CHECK_FALSE(with_more_k_blocks(first, first).has_value()); // no feedback: nothing
    FusedTilingRequest fed = first;
    fed.feedback.push_back(shared_memory_feedback(spilled, 1000)); // not a spill: nothing
    CHECK_FALSE(with_more_k_blocks(first, fed).has_value());
    spilled.k_blocks = 3;
    fed = with_feedback(fed, {spilled, 255, 8});
    spilled.k_blocks = 2;
    fed = with_feedback(fed, {spilled, 255, 8});
    const std::optional<FusedTilingRequest> more = with_more_k_blocks(first, fed);
    REQUIRE(more.has_value());
    CHECK(more->min_k_blocks == 4);
    CHECK(more->feedback.empty()); // the reports are not carried over
    FusedTilingRequest asked = first;
    asked.min_k_blocks = 6;
    const std::optional<FusedTilingRequest> as_asked = with_more_k_blocks(asked, fed);
    REQUIRE(as_asked.has_value());
    CHECK(as_asked->min_k_blocks == 6); // never fewer than asked
    asked.min_k_blocks = 0;
    asked.max_k_blocks = 3;
    CHECK_FALSE(with_more_k_blocks(asked, fed).has_value()); // not past max_k_blocks
}

TEST_CASE(
    "fused tiling: compiler feedback excludes a spilling configuration and lowers the register budget") {
    const DeviceLimits h100 = preset("h100");
    FusedTilingRequest request = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 1536, 16);
    request.max_threads_per_block = 256; // near the 255-register cap, where the feedback matters most
    const FusedKernelTraits first = choose_fused_tiling(h100, request).traits;
    REQUIRE(first.r_registers_per_thread > 100);

    SUBCASE("a spill: less of R in registers next time, the rest in shared memory") {
        const FusedTilingRequest tightened = with_feedback(request, {first, 255, 96});
        CHECK(tightened.feedback.size() == 1);
        // It needed at least the 255 registers it used: the overhead beyond R, the accumulators and
        // one operand fragment is recalibrated to that.
        CHECK(tightened.overhead_registers_per_thread ==
              255 - (first.registers_per_thread - request.overhead_registers_per_thread));
        const FusedKernelTraits next = choose_fused_tiling(h100, tightened).traits;
        CHECK(next.key() != first.key());
        CHECK(next.r_registers_per_thread < first.r_registers_per_thread);
        check_fits(h100, tightened, next);
        // The loop converges: each further spill report lowers the budget again.
        FusedTilingRequest again = tightened;
        FusedKernelTraits last = next;
        for (int round = 0; round < 3; ++round) {
            again = with_feedback(again, {last, 255, 8});
            const FusedKernelTraits t = choose_fused_tiling(h100, again).traits;
            CHECK(t.r_registers_per_thread < last.r_registers_per_thread);
            last = t;
        }
    }
    SUBCASE("a spill excludes only blocks whose threads may have as few registers") {
        // ptxas spills when a thread needs more than its block lets it have (128 registers at 512
        // threads, 168 at 384, 255 at 256): blocks of fewer threads are left to the raised estimate.
        // The LSTM bf16 backward at DH 1536, B 3 on the H100 spilled at 512 threads (72 bytes at 128
        // registers, ptxas for sm_90); every R of as many registers was refused at every block size
        // until this, and the request with it after 15 compiles.
        const FusedTilingRequest backward =
            request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 1536, 3);
        const FusedKernelTraits spilled = choose_fused_tiling(h100, backward).traits;
        REQUIRE(spilled.threads_per_block == 512);
        FusedTilingRequest fed = with_feedback(backward, {spilled, 128 + 72 / 4, 72});
        fed.spills_exclude_every_block_size = false; // as after_refusal asks
        const FusedKernelTraits same_size = choose_fused_tiling(h100, fed).traits;
        CHECK(same_size.threads_per_block == 512);
        CHECK(same_size.r_registers_per_thread < spilled.r_registers_per_thread);
        FusedTilingRequest fewer_threads = fed;
        fewer_threads.max_threads_per_block = 384;
        const FusedKernelTraits larger_cap = choose_fused_tiling(h100, fewer_threads).traits;
        CHECK(larger_cap.threads_per_block == 384);
        CHECK(larger_cap.r_registers_per_thread >= spilled.r_registers_per_thread);
        check_fits(h100, fewer_threads, larger_cap);
        // The estimate carries the spill: the 384-thread block's threads are estimated at what the
        // spilled one needed (128 used + 18 spilled) with its R and more.
        CHECK(larger_cap.registers_per_thread >= 128 + 72 / 4);
        // The default (the compile loop's first rule) excludes as much of R at every block size.
        FusedTilingRequest strict = fewer_threads;
        strict.spills_exclude_every_block_size = true;
        const FusedKernelTraits strict_384 = choose_fused_tiling(h100, strict).traits;
        CHECK(strict_384.r_registers_per_thread < spilled.r_registers_per_thread);
        // A spill at 256 threads (255 registers, the most a thread has) excludes as much of R at every
        // block size: 128 threads too, whose threads have the same 255.
        FusedTilingRequest at_128 = request;
        at_128.max_threads_per_block = 128;
        FusedTilingRequest fed_128 = with_feedback(at_128, {first, 255, 96});
        fed_128.spills_exclude_every_block_size = false;
        REQUIRE(fused_tiling_exists(h100, fed_128));
        const FusedKernelTraits small_block = choose_fused_tiling(h100, fed_128).traits;
        CHECK(small_block.threads_per_block == 128);
        CHECK(small_block.r_registers_per_thread < first.r_registers_per_thread);
    }
    SUBCASE("no spill, more registers than estimated: the overhead is recalibrated") {
        const FusedTilingRequest calibrated =
            with_feedback(request, {first, first.registers_per_thread + 10, 0});
        CHECK(calibrated.overhead_registers_per_thread == request.overhead_registers_per_thread + 10);
        const FusedKernelTraits next = choose_fused_tiling(h100, calibrated).traits;
        check_fits(h100, calibrated, next);
    }
    SUBCASE("spilling with nothing of R in registers leaves no configuration, and says why") {
        FusedTilingRequest small = request_of(FusedPass::forward, Cell::elman, DType::bf16, 1, 64, 16);
        FusedKernelTraits t = choose_fused_tiling(h100, small).traits;
        t.r_registers_per_thread = 0;
        CHECK_THROWS_WITH_AS(
            choose_fused_tiling(h100, with_feedback(small, {t, 255, 4})),
            doctest::Contains("the compiler spilled 4 bytes with 0 registers of R per thread"), TilingError);
    }
}

TEST_CASE("fused tiling: feedback tightens the resource that failed: shared memory or registers, not the "
          "other") {
    const DeviceLimits h100 = preset("h100");
    SUBCASE("a shared-memory report excludes every configuration with as much shared memory, no other") {
        const FusedTilingRequest request = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 64, 16);
        const FusedKernelTraits first = choose_fused_tiling(h100, request).traits;
        // Each report excludes the answer's shared memory and more; the answers shrink until none is
        // left. The registers are not tightened: the overhead stays, and a later answer holds as many
        // registers of R as the first (a spill report would have excluded it).
        FusedTilingRequest tightened = request;
        FusedKernelTraits last = first;
        int most_r_registers_later = 0;
        for (int round = 0; round < 20 && fused_tiling_exists(h100, tightened); ++round) {
            const FusedKernelTraits t = choose_fused_tiling(h100, tightened).traits;
            for (const KernelFeedback& f : tightened.feedback)
                CHECK(t.shared_memory_bytes < f.shared_memory_bytes);
            check_fits(h100, tightened, t);
            if (round > 0)
                most_r_registers_later = std::max(most_r_registers_later, t.r_registers_per_thread);
            last = t;
            tightened = with_feedback(tightened, shared_memory_feedback(t, t.shared_memory_bytes));
            CHECK(tightened.feedback.back().resource == FusedResource::shared_memory);
            CHECK(tightened.overhead_registers_per_thread == request.overhead_registers_per_thread);
        }
        REQUIRE(!fused_tiling_exists(h100, tightened));
        CHECK(last.shared_memory_bytes < first.shared_memory_bytes);
        CHECK(most_r_registers_later >= first.r_registers_per_thread);
        // The last answer has the least shared memory of any configuration: a report of exactly that
        // many bytes leaves none, one more byte leaves it.
        const std::string least_message =
            "the driver could not give a block " + std::to_string(last.shared_memory_bytes) + " bytes";
        CHECK_THROWS_WITH_AS(
            choose_fused_tiling(
                h100, with_feedback(request, shared_memory_feedback(last, last.shared_memory_bytes))),
            doctest::Contains(least_message.c_str()), TilingError);
        const FusedKernelTraits least =
            choose_fused_tiling(
                h100, with_feedback(request, shared_memory_feedback(last, last.shared_memory_bytes + 1)))
                .traits;
        CHECK(least.shared_memory_bytes == last.shared_memory_bytes);
    }
    SUBCASE("a spill report moves R out of registers into shared memory: shared memory is not tightened") {
        FusedTilingRequest request = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 1536, 16);
        request.max_threads_per_block = 256;
        const FusedKernelTraits first = choose_fused_tiling(h100, request).traits;
        const FusedTilingRequest tightened = with_feedback(request, {first, 255, 96});
        CHECK(tightened.feedback.back().resource == FusedResource::registers);
        const FusedKernelTraits next = choose_fused_tiling(h100, tightened).traits;
        CHECK(next.r_registers_per_thread < first.r_registers_per_thread);
        CHECK(next.shared_memory_bytes > first.shared_memory_bytes);
        check_fits(h100, tightened, next);
    }
}

TEST_CASE("fused kernel traits: rendered for NVRTC as defines and a struct, and as a cache key") {
    const auto t = choose_fused_tiling(preset("h100"),
                                       request_of(FusedPass::forward, Cell::lstm, DType::bf16, 12, 64, 16))
                       .traits;
    const std::string source = t.to_source();
    CHECK(source.find("#define FLASHRNN_FUSED_HEAD_DIM 64\n") != std::string::npos);
    CHECK(source.find("#define FLASHRNN_FUSED_THREADS_PER_BLOCK 512\n") != std::string::npos);
    CHECK(source.find("#define FLASHRNN_FUSED_TAGGED_EXCHANGE 0\n") !=
          std::string::npos); // one block per head
    CHECK(source.find("struct FusedTraits {") != std::string::npos);
    CHECK(source.find("static constexpr int threads_per_block = FLASHRNN_FUSED_THREADS_PER_BLOCK;") !=
          std::string::npos);
    const auto options = t.compiler_options();
    CHECK(std::find(options.begin(), options.end(), "-DFLASHRNN_FUSED_MMA_K=16") != options.end());
    const auto other = choose_fused_tiling(preset("a100"), request_of(FusedPass::forward, Cell::lstm,
                                                                      DType::bf16, 12, 64, 16))
                           .traits;
    CHECK(t.key() != other.key()); // another architecture
    CHECK(t.key().rfind("forward.lstm.bf16.sm90.", 0) == 0);
    CHECK(describe(t).find("512 threads") != std::string::npos);
}

TEST_CASE("fused tiling: the largest head dimensions in docs/kernels.md are what the model computes") {
    // The repository's root comes from CMake (__FILE__ may be relative under ccache's base dir).
    const std::filesystem::path docs =
        std::filesystem::path(FLASHRNN_REPOSITORY_ROOT) / "docs" / "kernels.md";
    std::ifstream file(docs);
    REQUIRE_MESSAGE(file, "cannot read " << docs.string());
    std::stringstream text;
    text << file.rdbuf();
    const std::string doc = text.str();
    const std::string begin = "<!-- fused-max-head-dim: begin -->\n",
                      end = "<!-- fused-max-head-dim: end -->";
    const auto from = doc.find(begin), to = doc.find(end);
    REQUIRE_MESSAGE((from != std::string::npos && to != std::string::npos),
                    "no table markers in " << docs.string());
    const std::string documented = doc.substr(from + begin.size(), to - from - begin.size());
    const std::string computed = largest_head_dim_table();
    CHECK_MESSAGE(documented == computed, "docs/kernels.md should hold, between its markers:\n" << computed);
}
