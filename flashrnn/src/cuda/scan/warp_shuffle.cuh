// Warp shuffles of any trivially copyable value made of 32-bit words (a scalar affine map, a 2x2 block
// map), so that the scan is written once for every element type. Every lane of the warp must call them.
#pragma once

#include <cstring>
#include <type_traits>

namespace flashrnn::cuda::scan {

inline constexpr unsigned kFullWarp = 0xffffffffu;
inline constexpr int kWarpSize = 32;

namespace detail {

template <class Value, class Shuffle>
__device__ __forceinline__ Value shuffle_words(const Value& value, Shuffle shuffle) {
    static_assert(std::is_trivially_copyable_v<Value> && sizeof(Value) % 4 == 0,
                  "a shuffled value must be made of 32-bit words");
    constexpr int kWords = sizeof(Value) / 4;
    unsigned words[kWords];
    std::memcpy(words, &value, sizeof(Value));
#pragma unroll
    for (int w = 0; w < kWords; ++w)
        words[w] = shuffle(words[w]);
    Value result;
    std::memcpy(&result, words, sizeof(Value));
    return result;
}

} // namespace detail

// The value of lane - delta (lanes below delta get their own value back).
template <class Value> __device__ __forceinline__ Value shuffle_up(const Value& value, unsigned delta) {
    return detail::shuffle_words(value, [delta](unsigned w) { return __shfl_up_sync(kFullWarp, w, delta); });
}

// The value of lane + delta (lanes from 32 - delta get their own value back).
template <class Value> __device__ __forceinline__ Value shuffle_down(const Value& value, unsigned delta) {
    return detail::shuffle_words(value,
                                 [delta](unsigned w) { return __shfl_down_sync(kFullWarp, w, delta); });
}

template <class Value> __device__ __forceinline__ Value shuffle_from(const Value& value, int lane) {
    return detail::shuffle_words(value, [lane](unsigned w) { return __shfl_sync(kFullWarp, w, lane); });
}

} // namespace flashrnn::cuda::scan
