// Storage types of the kernels and their conversion to and from the fp32 arithmetic: scalar and
// vector (V consecutive elements in one aligned access, 16 bytes at most) loads and stores.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <utility>

#include "flashrnn/core/dtype.hpp"

namespace flashrnn::cuda {

template <class T> __device__ __forceinline__ float to_float(T value) {
    return static_cast<float>(value);
}
template <> __device__ __forceinline__ float to_float(__nv_bfloat16 value) {
    return __bfloat162float(value);
}
template <> __device__ __forceinline__ float to_float(__half value) {
    return __half2float(value);
}

template <class T> __device__ __forceinline__ T from_float(float value) {
    return static_cast<T>(value);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float(float value) {
    return __float2bfloat16_rn(value);
}
template <> __device__ __forceinline__ __half from_float(float value) {
    return __float2half_rn(value);
}

// V elements of T in one access (two for 32-byte packets of fp32); the address must be aligned to
// the packet's size or to 16 bytes, whichever is smaller.
template <class T, int V> struct alignas(sizeof(T) * V < 16 ? sizeof(T) * V : 16) Packet { T values[V]; };

template <class T, int V> __device__ __forceinline__ void load(const T* source, float (&out)[V]) {
    const Packet<T, V> packet = *reinterpret_cast<const Packet<T, V>*>(source);
#pragma unroll
    for (int l = 0; l < V; ++l)
        out[l] = to_float(packet.values[l]);
}

// Adds V loaded elements to `sum`.
template <class T, int V> __device__ __forceinline__ void load_add(const T* source, float (&sum)[V]) {
    float values[V];
    load<T, V>(source, values);
#pragma unroll
    for (int l = 0; l < V; ++l)
        sum[l] += values[l];
}

template <class T, int V> __device__ __forceinline__ void store(T* target, const float (&in)[V]) {
    Packet<T, V> packet;
#pragma unroll
    for (int l = 0; l < V; ++l)
        packet.values[l] = from_float<T>(in[l]);
    *reinterpret_cast<Packet<T, V>*>(target) = packet;
}

// Calls visitor(T{}) with the storage type of a DType (float, __nv_bfloat16, __half).
template <class Visitor> decltype(auto) visit_dtype(DType dtype, Visitor&& visitor) {
    switch (dtype) {
    case DType::bf16:
        return visitor(__nv_bfloat16{});
    case DType::fp16:
        return visitor(__half{});
    case DType::fp32:
        break;
    }
    return visitor(float{});
}

// Calls visitor(std::integral_constant<int, V>{}) for a vector width V in {1, 2, 4, 8}, restricted
// to packets of at most 16 bytes of T.
template <class T, class Visitor> decltype(auto) visit_vector_width(int width, Visitor&& visitor) {
    if constexpr (sizeof(T) <= 2)
        if (width == 8) return visitor(std::integral_constant<int, 8>{});
    if (width == 4) return visitor(std::integral_constant<int, 4>{});
    if (width == 2) return visitor(std::integral_constant<int, 2>{});
    return visitor(std::integral_constant<int, 1>{});
}

} // namespace flashrnn::cuda
