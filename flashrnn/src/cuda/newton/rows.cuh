// What every Newton kernel shares (kernels.cuh, fused.cuh): the layout helper Rows, the solver's
// counters, and the warp-aggregated atomics of the statistics. Only inline and constexpr definitions,
// so that several translation units include it.
#pragma once

#include <cstdint>

namespace flashrnn::cuda::newton {

constexpr unsigned kFullWarp = 0xffffffffu;

// Where element (plane, sequence, t) of a [planes, sequences, T] tensor lies.
struct Rows {
    std::int64_t sequences, length, units;
    __device__ __forceinline__ std::int64_t at(int plane, std::int64_t s, std::int64_t t) const {
        return (plane * sequences + s) * length + t;
    }
    __device__ __forceinline__ std::int64_t state_at(int plane, std::int64_t s) const {
        return plane * sequences + s;
    }
    __device__ __forceinline__ std::int64_t parameter_at(int k, std::int64_t s) const {
        return k * units + s % units;
    }
};

// The solver's counters in the workspace (bit patterns of non-negative floats compare as unsigned).
// The fused kernel with a tolerance also counts the most iterations of any tile and whether one missed it.
struct Counters {
    unsigned max_residual_bits;
    unsigned non_finite;
    unsigned most_iterations;
    unsigned unmet;
};

// atomicMax / atomicAdd of each lane's value into its key's target, by one atomic per warp where the
// valid lanes share the key (the common case: a warp covers steps of one sequence), else one per lane.
// Every lane of the warp calls it; invalid lanes (past the end: always the highest ones) add nothing.
__device__ __forceinline__ void atomic_max_by_key(unsigned* target, std::int64_t key, unsigned value,
                                                  bool valid) {
    const std::int64_t first = __shfl_sync(kFullWarp, key, 0);
    if (__all_sync(kFullWarp, !valid || key == first)) {
#pragma unroll
        for (int delta = 16; delta > 0; delta /= 2)
            value = max(value, __shfl_xor_sync(kFullWarp, value, delta));
        if (threadIdx.x % 32 == 0 && valid) atomicMax(target, value); // lane 0 is valid when any lane is
    } else if (valid) {
        atomicMax(target, value);
    }
}

__device__ __forceinline__ void atomic_add_by_key(float* target, std::int64_t key, float value, bool valid) {
    const std::int64_t first = __shfl_sync(kFullWarp, key, 0);
    if (__all_sync(kFullWarp, !valid || key == first)) {
        value = valid ? value : 0.0f;
#pragma unroll
        for (int delta = 16; delta > 0; delta /= 2)
            value += __shfl_xor_sync(kFullWarp, value, delta);
        if (threadIdx.x % 32 == 0 && valid) atomicAdd(target, value);
    } else if (valid) {
        atomicAdd(target, value);
    }
}

} // namespace flashrnn::cuda::newton
