// The forward scan of a one-warp tile whose entering state is known before the scan (the fused Newton
// forward's tiles): lane 0 applies its elements to that state first, so that its total is a constant
// map (A = 0). Every lane's prefix that reaches back to lane 0 is then constant too, and composing a
// constant map after anything leaves it as it is: the Hillis-Steele levels need no test of whether a
// lane has an earlier one (the lanes below delta compose with their own, complete, value), and the state
// entering a lane is the constant value of the lane before's prefix (a State's words shuffled, not a
// map's). block_scan (block_scan.cuh) serves tiles of many warps and the scan pipes, whose carries are
// applied last. Elements must provide constant(State) and image_of_zero() (affine_map.cuh).
#pragma once

#include "cuda/scan/warp_shuffle.cuh"

namespace flashrnn::cuda::scan {

// `maps` (memory order) are replaced by the thread-level inclusive prefixes; `states` receives the
// state after each element. Every lane of the warp must call it.
template <int E, class Map>
__device__ __forceinline__ void warp_scan_from(Map (&maps)[E], const typename Map::State& carry,
                                               typename Map::State (&states)[E]) {
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
#pragma unroll
    for (int e = 1; e < E; ++e)
        maps[e] = then(maps[e - 1], maps[e]);
    Map inclusive = maps[E - 1];
    if (lane == 0) inclusive = Map::constant(inclusive.apply(carry));
#pragma unroll
    for (int delta = 1; delta < kWarpSize; delta *= 2)
        inclusive = then(shuffle_up(inclusive, delta), inclusive);
    const typename Map::State before_lane = shuffle_up(inclusive.image_of_zero(), 1);
    const typename Map::State entering = lane == 0 ? carry : before_lane;
#pragma unroll
    for (int e = 0; e < E; ++e)
        states[e] = maps[e].apply(entering);
}

} // namespace flashrnn::cuda::scan
