#include "flashrnn/newton/reduction.hpp"

#include <string>

#include "flashrnn/core/error.hpp"

namespace flashrnn::newton {

int block_size(JacobianStructure structure) {
    return structure == JacobianStructure::block2x2 ? 2 : 1;
}

NamedShape jacobians_shape(const ReductionProblem& problem) {
    const int n = block_size(problem.structure);
    return {{"K", n * n}, {"sequences", problem.shape.sequences}, {"L", problem.shape.length}};
}

NamedShape rhs_shape(const ReductionProblem& problem) {
    return {{"N", block_size(problem.structure)},
            {"sequences", problem.shape.sequences},
            {"L", problem.shape.length}};
}

void check_reduction_args(std::string_view call, const ReductionProblem& problem, const ReductionArgs& args) {
    const std::string named = std::string(call) + "(" +
                              (problem.structure == JacobianStructure::block2x2 ? "2x2" : "diagonal") + ", " +
                              std::string(to_string(problem.dtype)) + ")";
    check_scan_shape(named, problem.shape);
    if (problem.dtype != DType::fp32 && problem.dtype != DType::bf16)
        throw UnsupportedError("flashrnn::" + named + ": the reduction takes fp32 or bf16 tensors");
    const std::string full = "flashrnn::" + named;
    const auto dense = [&](NamedShape shape) {
        return TensorRequirement{problem.dtype, shape, TensorRequirement::Strides::dense};
    };
    check_tensor(full, "jacobians", args.jacobians, dense(jacobians_shape(problem)));
    check_tensor(full, "rhs", args.rhs, dense(rhs_shape(problem)));
    check_tensor(full, "solution", args.solution, dense(rhs_shape(problem)));
}

} // namespace flashrnn::newton
