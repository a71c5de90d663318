// Programmatic dependent launch (sm_90 and newer): a kernel launched this way may be scheduled while
// the kernel before it in the stream is still finishing, which hides its launch latency -- most of
// the cost of a small per-step kernel. The kernel must call wait_for_previous_grid() before it reads
// anything the previous kernel wrote. Elsewhere it is an ordinary launch.
#pragma once

#include <utility>

#include "cuda/common/cuda_check.hpp"
#include "flashrnn/cuda_stream.hpp"

namespace flashrnn::cuda {

__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), unsigned blocks, unsigned threads, Stream stream, bool programmatic,
                      const char* name, Args&&... args) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.stream = stream;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute;
    config.numAttrs = programmatic ? 1 : 0;
    check(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), name);
}

} // namespace flashrnn::cuda
