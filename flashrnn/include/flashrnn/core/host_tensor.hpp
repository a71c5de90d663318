// A non-owning view of a dense row-major float64 tensor in host memory (the CPU reference's; the last
// dimension contiguous) with its shape, and the check of a shape against the expected named extents.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor.hpp"

namespace flashrnn {

template <class Scalar> struct HostView {
    std::span<Scalar> values;
    std::vector<std::int64_t> shape;

    HostView() = default;
    HostView(std::span<Scalar> values_, std::vector<std::int64_t> shape_)
        : values(values_), shape(std::move(shape_)) {}
    template <class Other>
    requires std::is_convertible_v<Other (*)[], Scalar (*)[]> HostView(const HostView<Other>& other)
        : values(other.values), shape(other.shape) {}
};

using ConstHostView = HostView<const double>;
using MutableHostView = HostView<double>;

// Throws ShapeError naming the tensor, its shape and the expected one, e.g.
//   "lstm forward: recurrent_weights has shape [4, 2, 8, 4], expected [G=4, NH=2, DH=8, DH=8]"
// or, when the shape matches but the buffer does not,
//   "... recurrent_weights has shape [4, 2, 8, 8] (512 values) but its buffer holds 500 values".
void check_shape(std::string_view context, std::string_view tensor, std::span<const std::int64_t> shape,
                 std::size_t buffer_size, std::span<const NamedExtent> expected);

template <class Scalar>
void check_shape(std::string_view context, std::string_view tensor, const HostView<Scalar>& view,
                 std::span<const NamedExtent> expected) {
    check_shape(context, tensor, view.shape, view.values.size(), expected);
}

} // namespace flashrnn
