#include "flashrnn/core/tensor.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "flashrnn/core/error.hpp"

namespace flashrnn {
namespace {

std::string rank_error(std::size_t rank) {
    return "flashrnn: a tensor has at most " + std::to_string(kMaxTensorRank) + " dimensions, got " +
           std::to_string(rank);
}

// "[4, 12, 64, 32] bf16" or, with strides that are not dense, "[4, 12] bf16 with strides [40, 1]".
std::string describe_view(const ConstTensorView& view) {
    std::string text = to_string(view.sizes) + " " + std::string(to_string(view.dtype));
    if (!view.is_dense()) text += " with strides " + to_string(view.strides);
    return text;
}

} // namespace

Extents::Extents(std::initializer_list<std::int64_t> values)
    : Extents(std::span<const std::int64_t>(values.begin(), values.size())) {}

Extents::Extents(std::span<const std::int64_t> values) {
    if (values.size() > kMaxTensorRank) throw ShapeError(rank_error(values.size()));
    for (std::int64_t v : values)
        values_[static_cast<std::size_t>(rank_++)] = v;
}

std::int64_t Extents::product() const {
    std::int64_t p = 1;
    for (std::int64_t v : values())
        p *= v;
    return p;
}

std::string to_string(const Extents& extents) {
    std::string text = "[";
    for (int i = 0; i < extents.rank(); ++i)
        text += (i ? ", " : "") + std::to_string(extents[i]);
    return text + "]";
}

Extents dense_strides(const Extents& sizes) {
    std::array<std::int64_t, kMaxTensorRank> strides{};
    std::int64_t stride = 1;
    for (int i = sizes.rank() - 1; i >= 0; --i) {
        strides[static_cast<std::size_t>(i)] = stride;
        stride *= sizes[i];
    }
    return Extents(std::span<const std::int64_t>(strides.data(), static_cast<std::size_t>(sizes.rank())));
}

NamedShape::NamedShape(std::initializer_list<NamedExtent> extents) {
    if (extents.size() > kMaxTensorRank) throw ShapeError(rank_error(extents.size()));
    for (const NamedExtent& e : extents)
        extents_[static_cast<std::size_t>(rank_++)] = e;
}

Extents NamedShape::sizes() const {
    std::array<std::int64_t, kMaxTensorRank> sizes{};
    for (int i = 0; i < rank_; ++i)
        sizes[static_cast<std::size_t>(i)] = extents_[static_cast<std::size_t>(i)].size;
    return Extents(std::span<const std::int64_t>(sizes.data(), static_cast<std::size_t>(rank_)));
}

std::string to_string(const NamedShape& shape) {
    std::string text = "[";
    bool first = true;
    for (const NamedExtent& e : shape.extents()) {
        text += (first ? "" : ", ") + std::string(e.name) + "=" + std::to_string(e.size);
        first = false;
    }
    return text + "]";
}

void check_optional_tensor(std::string_view call, std::string_view tensor, const ConstTensorView& view,
                           const TensorRequirement& requirement) {
    if (!view.present()) return;
    check_tensor(call, tensor, view, requirement);
}

void check_tensor(std::string_view call, std::string_view tensor, const ConstTensorView& view,
                  const TensorRequirement& requirement) {
    const std::string name = std::string(call) + ": " + std::string(tensor);
    if (!view.present()) throw ShapeError(name + " is null (a required tensor)");
    if (view.sizes != requirement.shape.sizes() || view.dtype != requirement.dtype)
        throw ShapeError(name + ": expected " + to_string(requirement.shape) + " " +
                         std::string(to_string(requirement.dtype)) + ", got " + describe_view(view));
    if (!view.strides.empty() && view.strides.rank() != view.sizes.rank())
        throw ShapeError(name + " has " + std::to_string(view.strides.rank()) + " strides for " +
                         std::to_string(view.sizes.rank()) + " dimensions");
    if (requirement.strides == TensorRequirement::Strides::dense) {
        if (!view.is_dense())
            throw ShapeError(name + " must be dense row-major (strides " +
                             to_string(dense_strides(view.sizes)) + "), got strides " +
                             to_string(view.strides));
    } else {
        // Rows: the first dimension may be strided (a view of a wider tensor), the rest dense.
        const Extents strides = view.strides_or_dense();
        const Extents dense = dense_strides(view.sizes);
        for (int i = 1; i < view.sizes.rank(); ++i)
            if (strides[i] != dense[i])
                throw ShapeError(name + " must be dense in every dimension but the first, got strides " +
                                 to_string(strides));
        if (view.sizes.rank() > 0 && strides[0] < dense[0])
            throw ShapeError(name + " has row stride " + std::to_string(strides[0]) +
                             ", smaller than a row (" + std::to_string(dense[0]) + " elements)");
        // The last element's byte offset must fit a signed 64-bit integer: (rows - 1) * stride + row
        // <= INT64_MAX / bytes, tested without overflowing.
        const std::int64_t max_elements = std::numeric_limits<std::int64_t>::max() / bytes_of(view.dtype);
        if (view.sizes.rank() > 0 && view.sizes[0] > 1 && strides[0] > 0 &&
            view.sizes[0] - 1 > (max_elements - dense[0]) / strides[0])
            throw ShapeError(name + ": " + std::to_string(view.sizes[0]) + " rows of stride " +
                             std::to_string(strides[0]) + " exceed 2^63 bytes");
    }
    const auto alignment = static_cast<std::uintptr_t>(std::max(requirement.alignment, bytes_of(view.dtype)));
    if (reinterpret_cast<std::uintptr_t>(view.data) % alignment != 0)
        throw ShapeError(name + " must be " + std::to_string(alignment) +
                         "-byte aligned (cudaMalloc gives 256)");
}

} // namespace flashrnn
