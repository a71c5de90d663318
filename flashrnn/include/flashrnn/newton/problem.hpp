// The Newton solvers of nonlinear diagonal RNNs (FlashGRU, FlashLSTM): the problem, its tensors and
// the options, in the calling convention of every FlashRNN family (docs/kernels.md, "Newton solvers").
//
// B sequences of T steps, each of D independent units; a unit's recurrence h_t = f(h_{t-1}, x_t) has
// S states (cell_info(cell).num_states). Every tensor is dense row-major with the time axis
// contiguous, so that one (batch row, unit) of a gate or a state is one row of T values (the scans'
// row layout, scan/rows.hpp), sequence s = b * D + d:
//
//   inputs          [G, B, D, T]  the precomputed input projections B_g x_t + b_g, per gate row g
//   parameters      [P, D]        fp32, the diagonal parameters (a_*, c_*), one row each
//   initial_state   [S, B, D]     fp32, optional (absent: zero, as in the paper)
//   states          [S, B, D, T]  out, h_1 .. h_T (time index t holds h_{t+1}; the initial state is not
//   repeated) last_state      [S, B, D]     out, fp32, optional: h_T, so that a sequence can go on in the
//   next call
//
// inputs, states and their gradients are in the problem's dtype (fp32 or bf16; the arithmetic is
// fp32); parameters and the states' [S, B, D] tensors are fp32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/newton/cells.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::newton {

struct Shape {
    std::int64_t time_steps = 0; // T, 1 .. kMaxScanLength
    std::int64_t batch = 0;      // B
    std::int64_t units = 0;      // D
    std::int64_t sequences() const { return batch * units; }
};

// "T=7, B=3, D=24"
std::string to_string(const Shape& shape);

// Throws ShapeError naming `call` unless T is in [1, kMaxScanLength], B, D are at least 1 and every
// tensor of the problem has at most kMaxTensorElements elements (core/tensor_size.hpp).
void validate(std::string_view call, const Shape& shape);

struct Problem {
    Cell cell = Cell::flash_gru;
    DType dtype = DType::fp32;
    Shape shape;
};

// "flash_gru fp32, T=7, B=3, D=24"
std::string to_string(const Problem& problem);

// The expected shapes, with the dimension names of the error messages.
NamedShape inputs_shape(const CellInfo& cell, const Shape& shape);         // [G, B, D, T]
NamedShape parameters_shape(const CellInfo& cell, const Shape& shape);     // [P, D]
NamedShape state_shape(const CellInfo& cell, const Shape& shape);          // [S, B, D]
NamedShape state_sequence_shape(const CellInfo& cell, const Shape& shape); // [S, B, D, T]

// Stop when max_t |r_t| <= absolute + relative * max_t |h_t|, per sequence (r_t = f(h_{t-1}, x_t) - h_t,
// the residual of the current iterate, max over the states of a unit).
struct Tolerance {
    double absolute = 0;
    double relative = 0;
};

// Which GPU implementation runs newton::forward / newton::backward (newton/passes.hpp).
enum class Backend {
    automatic,  // the faster by the cost model of newton/passes.hpp (resolve_backend)
    newton,     // Newton's method, each iteration a parallel reduction over the sequence
    sequential, // one thread per (batch row, unit), looping over time: the baseline
    fused,      // Newton's method in one kernel, a tile of each sequence on chip (iterations and the
                // tolerance per tile: newton/passes.hpp says what it computes for long sequences)
};

std::string_view to_string(Backend backend);
Backend parse_backend(std::string_view name); // throws UnsupportedError naming the valid ones

struct Options {
    // Without a tolerance: exactly this many Newton iterations (the paper's N_its = 3). With one: at
    // most this many; each sequence stops as soon as its residual meets the tolerance.
    int max_iterations = 3;
    std::optional<Tolerance> tolerance;
    Backend backend = Backend::automatic; // the GPU entry points' choice (the references ignore it)
    // The fused backend's block configuration, forced (one of kNewtonFusedDomains, else ShapeError at the
    // call); absent: the scan launch model's choice (newton::fused_config). For benchmarks and tests.
    std::optional<ScanConfig> fused_config = std::nullopt;
};

// Throws ShapeError naming `call` for max_iterations < 1 and a tolerance with a negative or
// non-finite part or none positive.
void validate(std::string_view call, const Options& options);

// What a solve did: the most iterations any sequence took, the largest residual max_t |r_t| of the
// returned states (over every sequence and state), and whether every sequence met the tolerance
// (false when there is none).
struct Statistics {
    int iterations = 0;
    double max_residual = 0;
    bool tolerance_met = false;
};

// The statistics as the GPU writes them, fp32 [kStatisticsElements], so that a caller can read them
// when it likes (no host synchronisation): the slots below; `non_finite` is 1 when a residual was
// not finite (the solve diverged or an input was not finite), else 0.
enum StatisticsSlot : int {
    iterations_slot = 0,
    max_residual_slot = 1,
    tolerance_met_slot = 2,
    non_finite_slot = 3
};
inline constexpr std::int64_t kStatisticsElements = 4;

struct ForwardArgs {
    ConstTensorView inputs;        // [G, B, D, T], the problem's dtype
    ConstTensorView parameters;    // fp32 [P, D]
    ConstTensorView initial_state; // fp32 [S, B, D]; optional (absent: zero)
    TensorView states;             // out [S, B, D, T], the problem's dtype
    TensorView last_state;         // out, fp32 [S, B, D]; optional
    TensorView statistics;         // out, fp32 [kStatisticsElements]; optional
    Workspace workspace;           // forward_workspace_bytes(problem, options) bytes (newton/passes.hpp)
};

// The backward (paper eq. 6): one reverse linear recurrence with the transposed Jacobians at the
// forward's states, then the gradients of the inputs, the parameters and the initial state.
struct BackwardArgs {
    ConstTensorView inputs;        // the forward's inputs [G, B, D, T]
    ConstTensorView parameters;    // fp32 [P, D]
    ConstTensorView initial_state; // as in the forward (optional)
    ConstTensorView states;        // the forward's states [S, B, D, T]
    ConstTensorView d_states;      // gradient of the loss w.r.t. states [S, B, D, T]; optional (zero)
    ConstTensorView d_last_state;  // w.r.t. last_state, fp32 [S, B, D]; optional (zero)
    TensorView d_inputs;           // out [G, B, D, T]
    TensorView d_parameters;       // out, fp32 [P, D], overwritten
    TensorView d_initial_state;    // out, fp32 [S, B, D]; optional
    Workspace workspace;           // backward_workspace_bytes(problem, options) bytes (newton/passes.hpp)
};

// The boundary checks of the Newton entry points, testable without a GPU: the shape (validate), the
// dtype (fp32 or bf16, else UnsupportedError) and every tensor against its expected shape and dtype,
// dense, aligned to its element size (ShapeError naming `call` and the tensor).
void check_forward_args(std::string_view call, const Problem& problem, const ForwardArgs& args);
void check_backward_args(std::string_view call, const Problem& problem, const BackwardArgs& args);

// ShapeError naming `call` unless the workspace holds `needed` bytes and is 16-byte aligned.
void check_workspace(std::string_view call, const Workspace& workspace, std::size_t needed);

} // namespace flashrnn::newton
