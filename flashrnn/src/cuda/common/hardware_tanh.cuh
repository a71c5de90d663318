// The special-function unit's tanh (tanh.approx.f32, sm_75 and later): one MUFU instruction, relative
// error up to 2^-11, where exp and a reciprocal take two. Shared by the kernels that trade accuracy for
// it (the RG-LRU's coarse sigmoid, the fused Newton forward's early iterations). Device code only; a
// header that host compilers may include too.
#pragma once

namespace flashrnn::cuda {

#if defined(__CUDACC__) // nvcc (both passes); plain host compilers skip it
__device__ __forceinline__ float hardware_tanh(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#endif

} // namespace flashrnn::cuda
