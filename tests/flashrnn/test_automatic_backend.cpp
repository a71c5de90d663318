// The automatic backend's cost model without a GPU: the rule on traits built by hand (chunks, the
// tile threshold, blocks sharing an SM, a refusal), and the choices the tiling model leads to on the
// H100 preset at the benchmark's shapes, with the reason that names what decided.
#include "flashrnn/rnn/automatic_backend.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>

using namespace flashrnn;
using rnn::AutomaticChoice;
using rnn::Backend;

namespace {

bool says(const AutomaticChoice& choice, const std::string& text) {
    return choice.reason.find(text) != std::string::npos;
}

// One block of 4 x 6 x 2 mma tiles in one launch and one chunk, on `blocks` blocks.
FusedKernelTraits traits_of(int blocks) {
    FusedKernelTraits t;
    t.heads_per_launch = 1;
    t.launches = 1;
    t.batch_blocks = blocks;
    t.row_blocks = 1;
    t.k_blocks = 1;
    t.batch_chunks = 1;
    t.row_tiles_per_block = 4;
    t.k_tiles_per_block = 6;
    t.batch_tiles_per_block = 2;
    return t;
}

rnn::Problem lstm_bf16(std::int64_t batch, std::int64_t heads, std::int64_t head_dim) {
    return {Cell::lstm, DType::bf16, ProblemShape{1024, batch, heads, head_dim}};
}

} // namespace

TEST_CASE("automatic backend: the rule counts each SM's tiles per step and refuses chunks") {
    const FusedKernelTraits small = traits_of(100);
    CHECK(rnn::step_tiles_per_sm(small, 132) == 48);
    // Blocks beyond the SMs share them, launches and chunks run one after the other.
    CHECK(rnn::step_tiles_per_sm(traits_of(133), 132) == 96);
    FusedKernelTraits heavy = small;
    heavy.launches = 2;
    heavy.batch_chunks = 3;
    CHECK(rnn::step_tiles_per_sm(heavy, 132) == 48 * 6);

    const AutomaticChoice fused = rnn::automatic_choice(FusedPass::forward, 16, 132, small);
    CHECK(fused.backend == Backend::fused);
    CHECK(says(fused, "the fused forward kernel runs the batch of 16 in one chunk, 48 mma tiles per SM"));

    FusedKernelTraits chunked = small;
    chunked.batch_chunks = 2;
    chunked.chunks_in_step = true;
    const AutomaticChoice in_chunks = rnn::automatic_choice(FusedPass::backward, 64, 132, chunked);
    CHECK(in_chunks.backend == Backend::alternating);
    CHECK(
        says(in_chunks, "the fused backward kernel would run the batch of 64 in 2 chunks inside each step"));

    // The threshold itself is fused, one tile more is not.
    FusedKernelTraits at_limit = small;
    at_limit.k_tiles_per_block = static_cast<int>(rnn::kFusedStepTilesPerSm / 8);
    CHECK(rnn::step_tiles_per_sm(at_limit, 132) == rnn::kFusedStepTilesPerSm);
    CHECK(rnn::automatic_choice(FusedPass::forward, 8, 132, at_limit).backend == Backend::fused);
    const AutomaticChoice over =
        rnn::automatic_choice(FusedPass::forward, 8, 66, at_limit); // 2 blocks per SM
    CHECK(over.backend == Backend::alternating);
    CHECK(says(over, "more than " + std::to_string(rnn::kFusedStepTilesPerSm)));

    const AutomaticChoice refused =
        rnn::automatic_choice(FusedPass::forward, 16, 132, std::nullopt, "R needs 128.0 MiB");
    CHECK(refused.backend == Backend::alternating);
    CHECK(says(refused, "has no configuration (R needs 128.0 MiB)"));
}

TEST_CASE("automatic backend: the H100 preset's choices at (1, 768) and (12, 64), pass by pass") {
    const DeviceLimits h100 = preset("h100_sxm");
    // (1, 768): both passes fused up to B = 64 in the model (the compiled B = 64 backward needs 2
    // chunks on the H100: the GPU test checks the device's choice); from B = 128 the backward runs in
    // chunks; at B = 256 the forward's one chunk has too many tiles per SM.
    for (std::int64_t batch : {2, 4, 8, 16, 32, 64}) {
        CAPTURE(batch);
        CHECK(rnn::automatic_choice(h100, lstm_bf16(batch, 1, 768), FusedPass::forward).backend ==
              Backend::fused);
        CHECK(rnn::automatic_choice(h100, lstm_bf16(batch, 1, 768), FusedPass::backward).backend ==
              Backend::fused);
    }
    const AutomaticChoice forward_128 =
        rnn::automatic_choice(h100, lstm_bf16(128, 1, 768), FusedPass::forward);
    CHECK(forward_128.backend == Backend::fused);
    CHECK(says(forward_128, "in one chunk, 1152 mma tiles per SM and step"));
    for (std::int64_t batch : {128, 256}) {
        const AutomaticChoice backward =
            rnn::automatic_choice(h100, lstm_bf16(batch, 1, 768), FusedPass::backward);
        CHECK(backward.backend == Backend::alternating);
        CHECK(says(backward, "chunks inside each step"));
    }
    const AutomaticChoice forward_256 =
        rnn::automatic_choice(h100, lstm_bf16(256, 1, 768), FusedPass::forward);
    CHECK(forward_256.backend == Backend::alternating);
    CHECK(says(forward_256, "in one chunk but with 2688 mma tiles per SM and step, more than 1536"));
    // (12, 64): small blocks, fused in both passes at every batch of the benchmark.
    for (std::int64_t batch : {2, 16, 64, 128, 256})
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
            CHECK(rnn::automatic_choice(h100, lstm_bf16(batch, 12, 64), pass).backend == Backend::fused);
    // A head no GPU holds: alternating, with the tiling's explanation.
    const AutomaticChoice too_large =
        rnn::automatic_choice(h100, lstm_bf16(16, 1, 4096), FusedPass::backward);
    CHECK(too_large.backend == Backend::alternating);
    CHECK(says(too_large, "has no configuration (fused tiling: no configuration for the backward"));
}
