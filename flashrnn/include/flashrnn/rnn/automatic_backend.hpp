// The automatic backend's cost model, one pass at a time (docs/kernels.md, "Backends"): a pass runs
// on the fused backend when its fused kernel runs the whole batch in one chunk and each SM's share of
// a step's product is at most kFusedStepTilesPerSm mma tiles; else on the alternating backend. The two
// passes choose independently: a forward's gate cache feeds a backward of either backend
// (passes.hpp), so a training step may run a fused forward and an alternating backward.
//
// Why, measured on the H100 (LSTM bf16, (NH, DH) = (1, 768), T = 1024, docs/benchmarks.md): a fused
// pass in chunks runs the sequence once per chunk (or every chunk's product in each step): at B = 64
// the backward in 2 chunks took 12.6 ms against the alternating 8.4. In one chunk a fused step costs
// its latency (about 2 us) or about 6 ns per mma tile of each SM's share of the product, whichever is
// more (forward: 6.4, 6.3 and 5.8 ns per tile at B = 64, 128 and 256), while an alternating step
// (cuBLAS and a pointwise kernel) took 6.7 to 9.4 us at those B: at 1152 tiles (B = 128) the fused
// forward was 1.08x faster (7.44 ms against 8.03), at 2688 (B = 256) 1.67x slower (15.96 against 9.58).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flashrnn/rnn/backend.hpp"
#include "flashrnn/tiling/device_limits.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"

namespace flashrnn::rnn {

// Above this many mma tiles per SM and step the alternating backend's step is the shorter (the
// crossover of the measurements above lies near 1500).
inline constexpr std::int64_t kFusedStepTilesPerSm = 1536;

struct AutomaticChoice {
    Backend backend = Backend::alternating; // fused or alternating
    std::string reason;                     // why, in words: the fused kernel's chunks or its refusal
};

// The mma tiles one SM multiplies per time step with the kernel `t` on a GPU of `sm_count` SMs: a
// block's tiles, times its chunks, the launches, and the blocks that share an SM.
std::int64_t step_tiles_per_sm(const FusedKernelTraits& t, int sm_count);

// The rule itself, on the fused kernel the pass of a batch of `batch` would run on a GPU of
// `sm_count` SMs: its traits, or none when the tiling has no configuration for the pass (`refusal`:
// why, the TilingError's text).
AutomaticChoice automatic_choice(FusedPass pass, std::int64_t batch, int sm_count,
                                 const std::optional<FusedKernelTraits>& fused,
                                 std::string_view refusal = {});

// The rule on the tiling model's configuration for the GPU `limits` describes (a preset: no GPU
// needed; what `flashrnn tune --backend automatic` prints). On a GPU the backend applies the rule to
// the kernel it compiled, which the compiler's feedback may have tiled into more chunks than the
// model's first answer (resolve_backend).
AutomaticChoice automatic_choice(const DeviceLimits& limits, const Problem& problem, FusedPass pass);

// The rule on the current GPU: on the fused kernel compiled and loaded for the pass (remembered per
// problem, pass and device). Throws UnsupportedError in a build without CUDA.
AutomaticChoice automatic_choice(const Problem& problem, FusedPass pass);

} // namespace flashrnn::rnn
