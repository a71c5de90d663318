#include <algorithm>

#include "cuda/alternating/step_kernels.cuh"
#include "cuda/alternating/step_launch.hpp"
#include "cuda/common/cuda_check.hpp"

namespace flashrnn::alternating {

void launch_backward_step(Cell cell, DType dtype, const PointwiseLaunch& launch, const BackwardStep& step,
                          Stream stream) {
    visit_cell(cell, [&]<class C>(C) {
        cuda::visit_dtype(dtype, [&]<class T>(T) {
            cuda::visit_vector_width<T>(launch.vector_width, [&]<int V>(std::integral_constant<int, V>) {
                backward_step_kernel<C, T, V>
                    <<<static_cast<unsigned>(launch.blocks), launch.threads_per_block, 0, stream>>>(step);
            });
        });
    });
    cuda::check_launch("backward_step_kernel");
}

int forward_step_kernel_max_threads(Cell cell, DType dtype); // forward_step_launch.cu

int step_kernels_max_threads(Cell cell, DType dtype) {
    int most = forward_step_kernel_max_threads(cell, dtype);
    visit_cell(cell, [&]<class C>(C) {
        cuda::visit_dtype(dtype, [&]<class T>(T) {
            for (int width : {1, 2, 4, 8})
                cuda::visit_vector_width<T>(width, [&]<int V>(std::integral_constant<int, V>) {
                    cudaFuncAttributes attributes{};
                    cuda::check(cudaFuncGetAttributes(&attributes, backward_step_kernel<C, T, V>),
                                "cudaFuncGetAttributes (backward_step_kernel)");
                    most = std::min(most, attributes.maxThreadsPerBlock);
                });
        });
    });
    return most;
}

void launch_initial_states_gradient(DType dtype, const InitialStatesGradient& params, Stream stream) {
    constexpr int threads = 256;
    const std::int64_t total = params.grid.vectors * params.num_states;
    cuda::visit_dtype(dtype, [&]<class T>(T) {
        initial_states_gradient_kernel<T>
            <<<static_cast<unsigned>((total + threads - 1) / threads), threads, 0, stream>>>(params);
    });
    cuda::check_launch("initial_states_gradient_kernel");
}

} // namespace flashrnn::alternating
