// The cells of the Newton solvers: nonlinear recurrences whose Jacobian with respect to the previous
// state is diagonal (one state per unit) or a 2x2 block of diagonals (two states per unit), so that a
// Newton step is one linear recurrence per unit (paper: Danieli et al., "ParaRNN", sections 2-3).
// The math lives in the cell headers (cells/flash_gru.hpp, cells/flash_lstm.hpp); this is their list.
// Adding a cell: write its header (see DiagonalCell), add it to the enum and to visit_cell.
#pragma once

#include <array>
#include <concepts>
#include <span>
#include <string>
#include <string_view>

#include "flashrnn/cells/flash_gru.hpp"
#include "flashrnn/cells/flash_lstm.hpp"
#include "flashrnn/core/error.hpp"

namespace flashrnn::newton {

// What a cell header provides, per unit: x the cell's input projections (num_gates values), p its
// diagonal parameters (num_parameters values), states num_states values (state 0 is the output h).
//   forward(x, p, s_prev, s_new)                      s_new = f(s_prev, x)
//   step(x, p, s_prev, s_new, jacobian)               and jacobian[i * S + j] = d s_new[i] / d s_prev[j]
//   backward(x, p, s_prev, ds_new, d_x, d_p, ds_prev) the gradients of <ds_new, f(s_prev, x)>
template <class C>
concept DiagonalCell = requires(const double* in, double* out) {
    { C::name } -> std::convertible_to<std::string_view>;
    requires C::num_states == 1 || C::num_states == 2;
    requires C::num_gates >= 1 && C::num_parameters >= 1;
    C::forward(in, in, in, out);
    C::step(in, in, in, out, out);
    C::backward(in, in, in, in, out, out, out);
};

static_assert(DiagonalCell<cells::FlashGru> && DiagonalCell<cells::FlashLstm>);

enum class Cell { flash_gru, flash_lstm };

inline constexpr std::array<Cell, 2> all_cells{Cell::flash_gru, Cell::flash_lstm};

// Calls visitor(CellType{}) for the cell type behind the enum.
template <class Visitor> decltype(auto) visit_cell(Cell cell, Visitor&& visitor) {
    switch (cell) {
    case Cell::flash_gru:
        return visitor(cells::FlashGru{});
    case Cell::flash_lstm:
        return visitor(cells::FlashLstm{});
    }
    throw ShapeError("flashrnn::newton: invalid Cell value " + std::to_string(static_cast<int>(cell)));
}

struct CellInfo {
    std::string_view name;
    int num_states;     // S: 1 (diagonal Jacobian) or 2 (2x2 blocks of diagonals)
    int num_gates;      // G: rows of the input projections
    int num_parameters; // P: rows of the diagonal parameters
    std::span<const std::string_view> state_names;
    std::span<const std::string_view> gate_names;
    std::span<const std::string_view> parameter_names;
};

inline CellInfo cell_info(Cell cell) {
    return visit_cell(cell, []<class C>(C) {
        return CellInfo{C::name,        C::num_states, C::num_gates,      C::num_parameters,
                        C::state_names, C::gate_names, C::parameter_names};
    });
}

inline std::string_view to_string(Cell cell) {
    return cell_info(cell).name;
}

// Throws UnsupportedError naming the valid cells.
Cell parse_cell(std::string_view name);

} // namespace flashrnn::newton
