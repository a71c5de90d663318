#include "flashrnn/rnn/automatic_backend.hpp"

#include <string>

#include "flashrnn/core/error.hpp"
#include "rnn/backends.hpp"

namespace flashrnn::rnn {

std::int64_t step_tiles_per_sm(const FusedKernelTraits& t, int sm_count) {
    const std::int64_t blocks = t.blocks_per_launch();
    const std::int64_t blocks_per_sm = (blocks + sm_count - 1) / sm_count;
    return static_cast<std::int64_t>(t.row_tiles_per_block) * t.k_tiles_per_block * t.batch_tiles_per_block *
           t.batch_chunks * t.launches * blocks_per_sm;
}

AutomaticChoice automatic_choice(FusedPass pass, std::int64_t batch, int sm_count,
                                 const std::optional<FusedKernelTraits>& fused, std::string_view refusal) {
    const std::string kernel = "the fused " + std::string(to_string(pass)) + " kernel";
    const std::string of_batch = "the batch of " + std::to_string(batch);
    if (!fused)
        return {Backend::alternating,
                "alternating: " + kernel + " has no configuration (" + std::string(refusal) + ")"};
    if (fused->batch_chunks > 1)
        return {Backend::alternating,
                "alternating: " + kernel + " would run " + of_batch + " in " +
                    std::to_string(fused->batch_chunks) + " chunks" +
                    (fused->chunks_in_step ? " inside each step" : ", one launch each") +
                    ", which costs about the sequence's product once per chunk"};
    const std::int64_t tiles = step_tiles_per_sm(*fused, sm_count);
    const std::string work = std::to_string(tiles) + " mma tiles per SM and step";
    if (tiles > kFusedStepTilesPerSm)
        return {Backend::alternating, "alternating: " + kernel + " runs " + of_batch +
                                          " in one chunk but with " + work + ", more than " +
                                          std::to_string(kFusedStepTilesPerSm) +
                                          " (the alternating backend's step is the shorter)"};
    return {Backend::fused, "fused: " + kernel + " runs " + of_batch + " in one chunk, " + work +
                                " (at most " + std::to_string(kFusedStepTilesPerSm) + ")"};
}

AutomaticChoice automatic_choice(const DeviceLimits& limits, const Problem& problem, FusedPass pass) {
    validate(problem.shape);
    const ProblemShape& p = problem.shape;
    const FusedTilingRequest request = fused_tiling_request(pass, problem.cell, problem.dtype, p);
    try {
        return automatic_choice(pass, p.batch, limits.sm_count, choose_fused_tiling(limits, request).traits);
    } catch (const TilingError& e) {
        return automatic_choice(pass, p.batch, limits.sm_count, std::nullopt, e.what());
    }
}

AutomaticChoice automatic_choice(const Problem& problem, FusedPass pass) {
    validate(problem.shape);
    return fused::automatic_choice(problem, pass);
}

} // namespace flashrnn::rnn
