// From a Newton problem to its kernels' template arguments and layout, shared by the unfused passes
// (passes.cu) and the fused kernels' launches (fused.cu, fused_backward.cu).
#pragma once

#include <cuda_bf16.h>

#include "cuda/newton/rows.cuh"
#include "flashrnn/newton/cells.hpp"
#include "flashrnn/newton/problem.hpp"

namespace flashrnn::cuda::newton {

inline Rows rows_of(const flashrnn::newton::Problem& problem) {
    return {problem.shape.sequences(), problem.shape.time_steps, problem.shape.units};
}

// Calls f.template operator()<Cell, T>() for the problem's cell and storage type.
template <class F> void visit_problem(const flashrnn::newton::Problem& problem, F&& f) {
    flashrnn::newton::visit_cell(problem.cell, [&]<class C>(C) {
        if (problem.dtype == DType::bf16)
            f.template operator()<C, __nv_bfloat16>();
        else
            f.template operator()<C, float>();
    });
}

} // namespace flashrnn::cuda::newton
