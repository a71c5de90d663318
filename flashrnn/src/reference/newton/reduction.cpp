// The float64 reference of the public reduction (newton/reduction.hpp).
#include <vector>

#include "flashrnn/newton/reference.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "flashrnn/scan/shape.hpp"
#include "reference/newton/linear_recurrence.hpp"
#include "reference/newton/sequences.hpp"

namespace flashrnn::reference {
namespace {

template <int N>
void reduce(const newton::ReductionProblem& problem, ConstHostView jacobians, ConstHostView rhs,
            Tensor& solution, ReductionMethod method, int chunk_size) {
    const auto L = static_cast<std::size_t>(problem.shape.length);
    const detail::SequenceLayout layout{static_cast<std::size_t>(problem.shape.sequences), 1, L};
    std::vector<detail::Matrix<N>> j(L);
    std::vector<detail::Vector<N>> r(L), x(L);
    for (std::size_t s = 0; s < layout.sequences; ++s) {
        for (std::size_t l = 0; l < L; ++l) {
            for (std::size_t k = 0; k < N * N; ++k)
                j[l][k] = jacobians.values[layout.row_offset(k, s, l)];
            for (std::size_t i = 0; i < N; ++i)
                r[l][i] = rhs.values[layout.row_offset(i, s, l)];
        }
        detail::solve_recurrence<N>(j, r, x, problem.reverse, method, chunk_size);
        for (std::size_t l = 0; l < L; ++l)
            for (std::size_t i = 0; i < N; ++i)
                solution.values[layout.row_offset(i, s, l)] = x[l][i];
    }
}

} // namespace

Tensor newton_reduce(const newton::ReductionProblem& problem, ConstHostView jacobians, ConstHostView rhs,
                     ReductionMethod method, int chunk_size) {
    const char* call = "reference::newton_reduce";
    check_scan_shape(call, problem.shape);
    const std::string context = std::string("flashrnn::") + call;
    const NamedShape jacobians_expected = newton::jacobians_shape(problem);
    const NamedShape rhs_expected = newton::rhs_shape(problem);
    check_shape(context, "jacobians", jacobians, jacobians_expected);
    check_shape(context, "rhs", rhs, rhs_expected);
    detail::check_finite(call, "jacobians", jacobians.values, jacobians_expected);
    detail::check_finite(call, "rhs", rhs.values, rhs_expected);
    Tensor solution{std::vector<double>(rhs.values.size()), sizes_of(rhs_expected)};
    if (newton::block_size(problem.structure) == 2)
        reduce<2>(problem, jacobians, rhs, solution, method, chunk_size);
    else
        reduce<1>(problem, jacobians, rhs, solution, method, chunk_size);
    return solution;
}

} // namespace flashrnn::reference
