#include "flashrnn/core/host_tensor.hpp"

#include <string>

namespace flashrnn {
namespace {

std::string format_shape(std::span<const std::int64_t> shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

std::string format_expected(std::span<const NamedExtent> expected) {
    std::string text = "[";
    for (std::size_t i = 0; i < expected.size(); ++i)
        text += (i ? ", " : "") + std::string(expected[i].name) + "=" + std::to_string(expected[i].size);
    return text + "]";
}

} // namespace

void check_shape(std::string_view context, std::string_view tensor, std::span<const std::int64_t> shape,
                 std::size_t buffer_size, std::span<const NamedExtent> expected) {
    bool matches = shape.size() == expected.size();
    for (std::size_t i = 0; matches && i < shape.size(); ++i)
        matches = shape[i] == expected[i].size;
    const std::string prefix =
        std::string(context) + ": " + std::string(tensor) + " has shape " + format_shape(shape);
    if (!matches) throw ShapeError(prefix + ", expected " + format_expected(expected));

    std::int64_t count = 1;
    for (const NamedExtent& extent : expected)
        count *= extent.size;
    if (static_cast<std::int64_t>(buffer_size) != count)
        throw ShapeError(prefix + " (" + std::to_string(count) + " values) but its buffer holds " +
                         std::to_string(buffer_size) + " values");
}

} // namespace flashrnn
