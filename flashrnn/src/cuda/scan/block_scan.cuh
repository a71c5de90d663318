// The parallel scan of one tile: every thread holds `E` consecutive elements (maps) of a row, in
// memory order; the block's threads hold consecutive chunks. The scan runs in memory order or, with
// `reverse`, against it. Three levels: sequential over the thread's elements (registers), Hillis-Steele
// over the warp's lanes (shuffles), and over the block's warps (their totals in shared memory, scanned
// by every warp). The state entering the tile (`carry`) is applied last, so the same code serves a
// single tile and a pipe of tiles.
#pragma once

#include "cuda/scan/warp_shuffle.cuh"

namespace flashrnn::cuda::scan {

// Inclusive scan over the 32 lanes, in lane order (reverse: from lane 31 down).
template <class Map> __device__ __forceinline__ Map warp_inclusive_scan(Map map, int lane, bool reverse) {
#pragma unroll
    for (int delta = 1; delta < kWarpSize; delta *= 2) {
        const Map earlier = reverse ? shuffle_down(map, delta) : shuffle_up(map, delta);
        const bool has_earlier = reverse ? lane + delta < kWarpSize : lane >= delta;
        if (has_earlier) map = then(earlier, map);
    }
    return map;
}

// The inclusive result of the lane before this one in scan order (identity for the first lane).
template <class Map>
__device__ __forceinline__ Map exclusive_from_inclusive(const Map& inclusive, int lane, bool reverse) {
    const Map earlier = reverse ? shuffle_down(inclusive, 1) : shuffle_up(inclusive, 1);
    const bool first = reverse ? lane == kWarpSize - 1 : lane == 0;
    return first ? Map::identity() : earlier;
}

template <class Map, int kThreads> struct BlockScanStorage {
    static constexpr int kWarps = kThreads / kWarpSize;
    // Two buffers, alternating between tiles: one barrier per tile is then enough (a warp can only
    // overwrite a buffer after every warp has passed the barrier of the tile in between).
    Map warp_totals[2][kWarps];
};

// Scans one tile. `maps` (memory order) are replaced by the thread-level inclusive prefixes; `states`
// receives h at each element; returns the state after the whole tile (the same value in every
// thread). `buffer` alternates between 0 and 1 from one call to the next. Every thread of the block
// must call it.
template <int E, int kThreads, class Map>
__device__ __forceinline__ typename Map::State
block_scan(Map (&maps)[E], typename Map::State carry, bool reverse, BlockScanStorage<Map, kThreads>& storage,
           int buffer, typename Map::State (&states)[E]) {
    static_assert(kThreads % kWarpSize == 0 && kThreads <= 1024, "threads must be whole warps, at most 1024");
    constexpr int kWarps = kThreads / kWarpSize;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    const int warp = static_cast<int>(threadIdx.x) / kWarpSize;

    // Level 1: the thread's own elements.
    if (!reverse) {
#pragma unroll
        for (int e = 1; e < E; ++e)
            maps[e] = then(maps[e - 1], maps[e]);
    } else {
#pragma unroll
        for (int e = E - 2; e >= 0; --e)
            maps[e] = then(maps[e + 1], maps[e]);
    }
    const Map thread_total = reverse ? maps[0] : maps[E - 1];

    // Level 2: across the warp's lanes.
    const Map lane_inclusive = warp_inclusive_scan(thread_total, lane, reverse);
    Map prefix = exclusive_from_inclusive(lane_inclusive, lane, reverse);
    const Map warp_total = shuffle_from(lane_inclusive, reverse ? 0 : kWarpSize - 1);

    // Level 3: across the block's warps.
    Map block_total = warp_total;
    if constexpr (kWarps > 1) {
        if (lane == 0) storage.warp_totals[buffer][warp] = warp_total;
        __syncthreads();
        // Lanes past the last warp hold the identity: harmless in either direction.
        const Map total_of_lane_warp = lane < kWarps ? storage.warp_totals[buffer][lane] : Map::identity();
        const Map warps_inclusive = warp_inclusive_scan(total_of_lane_warp, lane, reverse);
        const Map warps_exclusive = exclusive_from_inclusive(warps_inclusive, lane, reverse);
        prefix = then(shuffle_from(warps_exclusive, warp), prefix);
        block_total = shuffle_from(warps_inclusive, reverse ? 0 : kWarps - 1);
    }

    const typename Map::State entering = prefix.apply(carry);
#pragma unroll
    for (int e = 0; e < E; ++e)
        states[e] = maps[e].apply(entering);
    return block_total.apply(carry);
}

} // namespace flashrnn::cuda::scan
