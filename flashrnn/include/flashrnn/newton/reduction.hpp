// The reduction of a Newton step (paper Alg. 1b, App. D.2): the solution of the block bi-diagonal
// system (eq. 3) of many independent sequences, i.e. the linear recurrence
//
//   x_l = J_l x_{l-1} + r_l,   x_{-1} = 0          (reverse: x_l = J_l x_{l+1} + r_l,  x_L = 0)
//
// where each J_l is a scalar (diagonal Jacobians, one state per unit) or a 2x2 matrix (2x2 blocks of
// diagonals, two states per unit, e.g. FlashLSTM's [h, c]). It is public so that users can solve the
// systems of their own cells. Tensors are dense, time contiguous (one row of L values per sequence):
//
//   jacobians  [K, sequences, L]   K = 1, or 4 for 2x2 blocks: J[i][j] in row 2 i + j
//   rhs        [N, sequences, L]   N = 1 or 2 (component i of the vector in row i)
//   solution   [N, sequences, L]   out
//
// A backward through a recurrence (paper eq. 6, g_l = J_{l+1}^T g_{l+1} + d_l) is a reverse reduction
// whose Jacobian at l is J_{l+1}^T (the one at L-1 is never read).
//
// On the GPU (newton::reduce) the arithmetic is fp32 whatever the tensors' dtype. Long sequences that
// are too few to fill the GPU are cut into segments solved by separate blocks (the grid level: three
// stream-ordered launches, no host synchronisation, capturable in a CUDA graph); the segments' maps
// and states live in the caller's workspace (reduce_workspace_bytes, zero when one block per sequence
// suffices).
#pragma once

#include <cstddef>
#include <string_view>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/stream.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/shape.hpp"

namespace flashrnn::newton {

enum class JacobianStructure {
    diagonal, // a scalar per unit and step
    block2x2, // a 2x2 matrix per unit and step
};

// 1 or 2: the states per unit; the Jacobian rows are its square.
int block_size(JacobianStructure structure);

struct ReductionProblem {
    DType dtype = DType::fp32; // of every tensor (fp32 or bf16); the arithmetic is fp32
    JacobianStructure structure = JacobianStructure::diagonal;
    ScanShape shape;      // sequences, length L
    bool reverse = false; // from the end of each sequence
};

struct ReductionArgs {
    ConstTensorView jacobians; // [K, sequences, L]
    ConstTensorView rhs;       // [N, sequences, L]
    TensorView solution;       // out [N, sequences, L]; may be rhs itself (in place), else no overlap
    Workspace workspace;       // reduce_workspace_bytes(problem) bytes, 16-byte aligned (none when 0)
};

NamedShape jacobians_shape(const ReductionProblem& problem);
NamedShape rhs_shape(const ReductionProblem& problem); // also the solution's

// The boundary check of the reduction: shape (check_scan_shape), dtype (fp32 or bf16, else
// UnsupportedError), each tensor (ShapeError naming `call` and the tensor).
void check_reduction_args(std::string_view call, const ReductionProblem& problem, const ReductionArgs& args);

// The workspace newton::reduce needs for this problem on the current GPU (0: none).
std::size_t reduce_workspace_bytes(const ReductionProblem& problem);

// Solves the reduction on the GPU, asynchronously on `stream`: ShapeError or UnsupportedError for bad
// arguments (check_reduction_args, then the workspace), before any launch. The launch configuration
// (elements per thread, threads, segments) is the scan launch model's (tiling/scan_launch.hpp,
// choose_reduction_launch).
void reduce(const ReductionProblem& problem, const ReductionArgs& args, Stream stream);

} // namespace flashrnn::newton
