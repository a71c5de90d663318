// A view of a tensor that lives in device memory (or, for the CPU reference, host memory): its
// address, element type, sizes and strides. Every kernel family takes its tensors as these views and
// checks them at the API boundary against what the problem needs, so that a wrong tensor is named:
//   "flashrnn::rnn::forward(lstm, bf16): recurrent_weights: expected [G_rec=4, NH=12, DH=64, DH=64]
//    bf16, got [4, 12, 64, 32] bf16".
// Nothing here allocates: sizes and strides are held inline (at most kMaxTensorRank dimensions).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "flashrnn/core/dtype.hpp"

namespace flashrnn {

inline constexpr int kMaxTensorRank = 6;

// The sizes (or the strides) of a tensor: up to kMaxTensorRank integers.
class Extents {
  public:
    Extents() = default;
    // Throws ShapeError for more than kMaxTensorRank values.
    Extents(std::initializer_list<std::int64_t> values);
    explicit Extents(std::span<const std::int64_t> values);

    int rank() const { return rank_; }
    bool empty() const { return rank_ == 0; }
    std::int64_t operator[](int i) const { return values_[static_cast<std::size_t>(i)]; }
    std::span<const std::int64_t> values() const { return {values_.data(), static_cast<std::size_t>(rank_)}; }
    // The product of the values (1 for none).
    std::int64_t product() const;

    friend bool operator==(const Extents& a, const Extents& b) {
        return a.rank_ == b.rank_ && a.values_ == b.values_;
    }

  private:
    std::array<std::int64_t, kMaxTensorRank> values_{}; // unused entries stay 0
    int rank_ = 0;
};

// "[4, 12, 64, 64]"
std::string to_string(const Extents& extents);

// The strides of a dense row-major tensor of these sizes (the last dimension contiguous).
Extents dense_strides(const Extents& sizes);

// Pointer: `const void*` for an input, `void*` for an output. Strides count elements; none given
// means dense row-major. A view with a null `data` is an absent (optional) tensor.
template <class Pointer> struct TensorViewOf {
    Pointer data = nullptr;
    DType dtype = DType::fp32;
    Extents sizes;
    Extents strides;

    TensorViewOf() = default;
    TensorViewOf(Pointer data_, DType dtype_, Extents sizes_, Extents strides_ = {})
        : data(data_), dtype(dtype_), sizes(sizes_), strides(strides_) {}
    // An output seen as an input.
    template <class Other>
    requires(!std::is_same_v<Other, Pointer> && std::is_convertible_v<Other, Pointer>)
        TensorViewOf(const TensorViewOf<Other>& other)
        : data(other.data), dtype(other.dtype), sizes(other.sizes), strides(other.strides) {}

    bool present() const { return data != nullptr; }
    std::int64_t elements() const { return sizes.product(); }
    Extents strides_or_dense() const { return strides.empty() ? dense_strides(sizes) : strides; }
    bool is_dense() const { return strides.empty() || strides == dense_strides(sizes); }
};

using ConstTensorView = TensorViewOf<const void*>; // an input
using TensorView = TensorViewOf<void*>;            // an output

// A device buffer the call may use for its intermediate values, of `bytes` bytes (the family's
// workspace_bytes tells how many; 256-byte aligned, as cudaMalloc gives, is enough).
struct Workspace {
    void* data = nullptr;
    std::size_t bytes = 0;
};

// One dimension of an expected shape, named as in the documentation ("T", "NH", "DH", ...).
struct NamedExtent {
    std::string_view name;
    std::int64_t size;
};

// An expected shape: up to kMaxTensorRank named dimensions, without allocation.
class NamedShape {
  public:
    NamedShape() = default;
    NamedShape(std::initializer_list<NamedExtent> extents);

    int rank() const { return rank_; }
    std::span<const NamedExtent> extents() const {
        return {extents_.data(), static_cast<std::size_t>(rank_)};
    }
    operator std::span<const NamedExtent>() const { return extents(); }
    Extents sizes() const;

  private:
    std::array<NamedExtent, kMaxTensorRank> extents_{};
    int rank_ = 0;
};

// "[G_rec=4, NH=12, DH=64, DH=64]"
std::string to_string(const NamedShape& shape);

// What a tensor argument must be.
struct TensorRequirement {
    DType dtype;
    NamedShape shape;
    // Dense row-major, or (scans) rows: any stride for the first dimension (at least the row's
    // extent), the rest dense.
    enum class Strides { dense, rows } strides = Strides::dense;
    // The address is a multiple of this many bytes (at least the element size).
    int alignment = 0;
};

// Throw ShapeError naming the call and the tensor when a present view does not meet the requirement
// (dtype, rank and sizes, strides, alignment, a null pointer with non-empty sizes...); check_tensor
// also throws when the view is absent, check_optional_tensor accepts an absent one.
void check_tensor(std::string_view call, std::string_view tensor, const ConstTensorView& view,
                  const TensorRequirement& requirement);
void check_optional_tensor(std::string_view call, std::string_view tensor, const ConstTensorView& view,
                           const TensorRequirement& requirement);

} // namespace flashrnn
