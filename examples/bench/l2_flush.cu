#include "l2_flush.hpp"

#include <algorithm>

#include "gpu_bench.hpp"

namespace bench {
namespace {

// Reads every word; the one store depends on all of them (and never happens on the zeroed buffer),
// so that the loads are not removed.
__global__ void read_everything(const uint4* data, std::size_t packets, unsigned* sink) {
    unsigned folded = 0;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < packets;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const uint4 v = data[i];
        folded ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (folded == 0x9e3779b9u) *sink = folded;
}

} // namespace

L2Flush::L2Flush(int device) {
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(prop.l2CacheSize), 1 << 20);
    cuda_ok(cudaMalloc(&buffer_, bytes_), "cudaMalloc (L2 flush)");
    cuda_ok(cudaMalloc(&sink_, sizeof(unsigned)), "cudaMalloc (L2 flush)");
    cuda_ok(cudaMemset(buffer_, 0, bytes_), "cudaMemset (L2 flush)");
}

L2Flush::~L2Flush() {
    cudaFree(buffer_);
    cudaFree(sink_);
}

void L2Flush::operator()(cudaStream_t stream) const {
    const std::size_t packets = bytes_ / sizeof(uint4);
    read_everything<<<1024, 256, 0, stream>>>(static_cast<const uint4*>(buffer_), packets, sink_);
    cuda_ok(cudaGetLastError(), "L2 flush launch");
}

} // namespace bench
