// The forward scan of a one-warp tile whose entering state is known before the scan (the fused Newton
// forward's tiles), from each thread's inclusive prefixes (the caller composes them as it makes the
// elements): lane 0 has applied its first element to the entering state, so that its first element, and
// with it every prefix of lane 0, is a constant map (A = 0). Every lane's prefix that reaches back to
// lane 0 is then constant too, and composing a constant map after anything leaves it as it is: the
// Hillis-Steele levels need no test of whether a lane has an earlier one (the lanes below delta compose
// with their own, complete, value), the state entering a lane is the constant value of the lane
// before's prefix (a State's words shuffled, not a map's), and lane 0's own prefixes ignore the state
// they are applied to (no case of its own after the levels). block_scan (block_scan.cuh) serves tiles of
// many warps and the scan pipes, whose carries are applied last. Elements must provide
// image_of_zero() (affine_map.cuh).
#pragma once

#include "cuda/scan/warp_shuffle.cuh"

namespace flashrnn::cuda::scan {

// `prefixes` (memory order): the thread's inclusive prefixes, lane 0's constant; `states` receives the
// state after each element. Every lane of the warp must call it.
template <int E, class Map>
__device__ __forceinline__ void warp_scan_from(const Map (&prefixes)[E], typename Map::State (&states)[E]) {
    Map inclusive = prefixes[E - 1];
#pragma unroll
    for (int delta = 1; delta < kWarpSize; delta *= 2)
        inclusive = then(shuffle_up(inclusive, delta), inclusive);
    // Lane 0 gets its own total's value, which its constant prefixes ignore.
    const typename Map::State entering = shuffle_up(inclusive.image_of_zero(), 1);
#pragma unroll
    for (int e = 0; e < E; ++e)
        states[e] = prefixes[e].apply(entering);
}

} // namespace flashrnn::cuda::scan
