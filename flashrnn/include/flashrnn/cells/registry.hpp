// The list of cells: the run-time enum Cell, its description (gate and state counts, names) and the
// dispatch from Cell to the compile-time cell type. Adding a cell: write its header (the pointwise
// forward and backward, see PointwiseCell), add it to the enum and to visit_cell.
#pragma once

#include "flashrnn/core/error.hpp"
#include <array>
#include <concepts>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "flashrnn/cells/elman.hpp"
#include "flashrnn/cells/gru.hpp"
#include "flashrnn/cells/lstm.hpp"
#include "flashrnn/cells/slstm.hpp"

namespace flashrnn {

// What a cell header provides. State 0 is always the state that multiplies R (the paper's s^(0)).
// Gate pre-activations: gate g = (Wx row k if gate_of_input_row(k) == g) + (R s0 block k if
// gate_of_recurrent_block(k) == g) + b[g]; every gate has a bias row.
template <class C>
concept PointwiseCell = requires(const double* in, double* out, int k) {
    { C::name } -> std::convertible_to<std::string_view>;
    requires C::num_states >= 1 && C::num_gates >= 1;
    requires C::num_input_gates <= C::num_gates;
    requires C::num_recurrent_gates <= C::num_gates;
    { C::gate_of_input_row(k) } -> std::same_as<int>;
    { C::gate_of_recurrent_block(k) } -> std::same_as<int>;
    C::forward(in, in, out);
    C::backward(in, in, in, in, out, out);
};

static_assert(PointwiseCell<cells::Lstm> && PointwiseCell<cells::Gru> && PointwiseCell<cells::Slstm> &&
              PointwiseCell<cells::Elman>);

enum class Cell { lstm, gru, slstm, elman };

inline constexpr std::array<Cell, 4> all_cells{Cell::lstm, Cell::gru, Cell::slstm, Cell::elman};

// Calls visitor(CellType{}) for the cell type behind the enum.
template <class Visitor> decltype(auto) visit_cell(Cell cell, Visitor&& visitor) {
    switch (cell) {
    case Cell::lstm:
        return visitor(cells::Lstm{});
    case Cell::gru:
        return visitor(cells::Gru{});
    case Cell::slstm:
        return visitor(cells::Slstm{});
    case Cell::elman:
        return visitor(cells::Elman{});
    }
    throw ShapeError("flashrnn: invalid Cell value " + std::to_string(static_cast<int>(cell)));
}

struct CellInfo {
    std::string_view name;
    int num_states;
    int num_gates;           // bias rows
    int num_input_gates;     // Wx rows
    int num_recurrent_gates; // R blocks
    std::span<const std::string_view> state_names;
    std::span<const std::string_view> gate_names;
};

inline CellInfo cell_info(Cell cell) {
    return visit_cell(cell, []<class C>(C) {
        return CellInfo{
            C::name,        C::num_states, C::num_gates, C::num_input_gates, C::num_recurrent_gates,
            C::state_names, C::gate_names};
    });
}

// Throws UnsupportedError naming the valid cells.
Cell parse_cell(std::string_view name);

} // namespace flashrnn
