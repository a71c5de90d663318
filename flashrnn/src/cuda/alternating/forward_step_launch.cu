#include <algorithm>

#include "cuda/alternating/step_kernels.cuh"
#include "cuda/alternating/step_launch.hpp"
#include "cuda/common/cuda_check.hpp"

namespace flashrnn::alternating {

void launch_forward_step(Cell cell, DType dtype, const PointwiseLaunch& launch, const ForwardStep& step,
                         Stream stream) {
    visit_cell(cell, [&]<class C>(C) {
        cuda::visit_dtype(dtype, [&]<class T>(T) {
            cuda::visit_vector_width<T>(launch.vector_width, [&]<int V>(std::integral_constant<int, V>) {
                forward_step_kernel<C, T, V>
                    <<<static_cast<unsigned>(launch.blocks), launch.threads_per_block, 0, stream>>>(step);
            });
        });
    });
    cuda::check_launch("forward_step_kernel");
}

int forward_step_kernel_max_threads(Cell cell, DType dtype) {
    int most = 1 << 30;
    visit_cell(cell, [&]<class C>(C) {
        cuda::visit_dtype(dtype, [&]<class T>(T) {
            for (int width : {1, 2, 4, 8})
                cuda::visit_vector_width<T>(width, [&]<int V>(std::integral_constant<int, V>) {
                    cudaFuncAttributes attributes{};
                    cuda::check(cudaFuncGetAttributes(&attributes, forward_step_kernel<C, T, V>),
                                "cudaFuncGetAttributes (forward_step_kernel)");
                    most = std::min(most, attributes.maxThreadsPerBlock);
                });
        });
    });
    return most;
}

} // namespace flashrnn::alternating
