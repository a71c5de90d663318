// Index helpers and checks of the Newton references: the tensors of newton/problem.hpp are rows of
// T values per (tensor row, sequence), sequence s = b * D + d, and a unit's parameters are column d.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor.hpp"

namespace flashrnn::reference::detail {

// Throws NumericalError naming the tensor and the position ([i, j, ...] in `shape`) of the first
// value that is not finite.
inline void check_finite(std::string_view call, std::string_view tensor, std::span<const double> values,
                         const NamedShape& shape) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (std::isfinite(values[i])) continue;
        std::string position;
        std::size_t rest = i;
        const auto extents = shape.extents();
        std::array<std::int64_t, kMaxTensorRank> index{};
        for (std::size_t k = extents.size(); k-- > 0;) {
            const auto size = static_cast<std::size_t>(extents[k].size);
            index[k] = static_cast<std::int64_t>(rest % size);
            rest /= size;
        }
        for (std::size_t k = 0; k < extents.size(); ++k)
            position += (k ? ", " : "") + std::string(extents[k].name) + "=" + std::to_string(index[k]);
        throw NumericalError("flashrnn::" + std::string(call) + ": " + std::string(tensor) +
                             " has a non-finite value (" + std::to_string(values[i]) + ") at [" + position +
                             "]");
    }
}

// Offsets into the dense tensors of one problem.
struct SequenceLayout {
    std::size_t sequences, units, length;

    // [rows, sequences, L]: row `row`, sequence s, time t.
    std::size_t row_offset(std::size_t row, std::size_t s, std::size_t t) const {
        return (row * sequences + s) * length + t;
    }
    // [rows, sequences]: a state per sequence.
    std::size_t state_offset(std::size_t row, std::size_t s) const { return row * sequences + s; }
    // [rows, D]: the parameters of sequence s's unit.
    std::size_t parameter_offset(std::size_t row, std::size_t s) const { return row * units + s % units; }
};

} // namespace flashrnn::reference::detail
