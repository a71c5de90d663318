// The pipe: one block per row, the row cut into tiles of kThreads * E elements, each tile scanned by
// block_scan and the state carried to the next. Tiles are aligned to the row's start (so vector
// accesses stay aligned) and visited from the last one when the scan runs against memory order. The
// next tile's loads are issued as soon as the current tile is unpacked (software pipelining: one set
// of registers for the raw loads), so a block keeps memory requests in flight while it computes. A
// single-tile row is the paper's "tile" kernel. (Two tiles in flight, a ring of two register sets,
// was measured on the H100 and gained nothing; persistent blocks that take several rows and load
// the next row's first tile early were slower: docs/benchmarks.md.)
//
// A client describes one kernel (linrec forward, backward, RG-LRU...):
//   Element                         the storage type of the tensors (float, __nv_bfloat16, __half)
//   Params                          kernel arguments (sequences, length, tensors)
//   Map                             the scan's element type (ScalarAffine)
//   Fetched, Unpacked, Shared       raw loaded registers, per-tile values kept for consume, shared memory
//   static scan_reverse(params)     the scan direction
//   Client(params, row, shared)     per-row setup
//   initial_state(), fetch(start, fetched), unpack(start, fetched, unpacked, maps, staging),
//   consume(start, unpacked, states, staging), finish(final_state)
// (`start`: the thread's chunk's first element). unpack() is the last use of a Fetched: its registers
// are refilled right after. finish() is called by every thread of the block, once per row.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/common/cuda_check.hpp"
#include "cuda/scan/block_scan.cuh"
#include "cuda/scan/chunk_io.cuh"

namespace flashrnn::cuda::scan {

// Blocks per SM the compiler must leave registers for: a client may ask for at least
// `kMinWarpsPerSM` resident warps (its registers then capped to fit them), else 0: no cap.
template <class Client, int kThreads> constexpr int min_blocks_per_sm() {
    if constexpr (requires { Client::kMinWarpsPerSM; })
        return Client::kMinWarpsPerSM > 0 ? std::max(1, Client::kMinWarpsPerSM / (kThreads / kWarpSize)) : 0;
    else
        return 0;
}

template <class Client, int E, int kThreads, ScanAccess A>
__device__ __forceinline__ void scan_pipe(const typename Client::Params& params) {
    using Map = typename Client::Map;
    using State = typename Map::State;
    using T = typename Client::Element;
    __shared__ BlockScanStorage<Map, kThreads> scan_storage;
    __shared__ StagingStorage<kStaged<T, E, A>, E, kThreads> staging_storage;
    __shared__ typename Client::Shared client_shared;

    constexpr std::int64_t kTile = static_cast<std::int64_t>(kThreads) * E;
    const std::int64_t length = params.length;
    const std::int64_t tiles = (length + kTile - 1) / kTile;
    const bool reverse = Client::scan_reverse(params);
    float* staging = staging_storage.warp_words(static_cast<int>(threadIdx.x) / kWarpSize);
    const std::int64_t thread_offset = static_cast<std::int64_t>(threadIdx.x) * E;
    auto chunk_start = [&](std::int64_t k) { return (reverse ? tiles - 1 - k : k) * kTile + thread_offset; };

    int buffer = 0;
    for (std::int64_t row = blockIdx.x; row < params.sequences; row += gridDim.x) {
        Client client(params, row, client_shared);
        State carry = client.initial_state();
        typename Client::Fetched fetched; // the loads of the next tile to scan
        client.fetch(chunk_start(0), fetched);
        for (std::int64_t k = 0; k < tiles; ++k) {
            const std::int64_t start = chunk_start(k);
            Map maps[E];
            typename Client::Unpacked unpacked;
            client.unpack(start, fetched, unpacked, maps, staging);
            if (k + 1 < tiles) client.fetch(chunk_start(k + 1), fetched);
            State states[E];
            carry = block_scan<E, kThreads>(maps, carry, reverse, scan_storage, buffer, states);
            buffer ^= 1;
            client.consume(start, unpacked, states, staging);
        }
        client.finish(carry);
    }
}

// Two kernels with the same body: an explicit minimum of blocks per SM changes ptxas' register
// allocation even when it is 1 (linrec's backward took 10-20 more registers and lost up to 15% on
// the H100), so only clients that ask for a cap get one.
template <class Client, int E, int kThreads, ScanAccess A>
__global__ void __launch_bounds__(kThreads) scan_pipe_kernel(const typename Client::Params params) {
    scan_pipe<Client, E, kThreads, A>(params);
}
template <class Client, int E, int kThreads, ScanAccess A>
__global__ void __launch_bounds__(kThreads, std::max(1, min_blocks_per_sm<Client, kThreads>()))
    scan_pipe_kernel_capped(const typename Client::Params params) {
    scan_pipe<Client, E, kThreads, A>(params);
}

// One block per row (rows beyond the grid's limit are taken in turn by the blocks).
template <class Client, int E, int kThreads, ScanAccess A>
void launch_pipe(const typename Client::Params& params, cudaStream_t stream, const char* name) {
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(params.sequences, 2147483647));
    if constexpr (min_blocks_per_sm<Client, kThreads>() > 0)
        scan_pipe_kernel_capped<Client, E, kThreads, A><<<blocks, kThreads, 0, stream>>>(params);
    else
        scan_pipe_kernel<Client, E, kThreads, A><<<blocks, kThreads, 0, stream>>>(params);
    check_launch(name);
}

} // namespace flashrnn::cuda::scan
