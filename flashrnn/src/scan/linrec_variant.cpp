#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/linrec.hpp"

namespace flashrnn::linrec {

std::string_view to_string(Variant variant) {
    switch (variant) {
    case Variant::automatic:
        return "automatic";
    case Variant::ref:
        return "ref";
    case Variant::tile:
        return "tile";
    case Variant::pipe:
        return "pipe";
    }
    throw ShapeError("flashrnn: invalid linrec::Variant " + std::to_string(static_cast<int>(variant)));
}

Variant parse_variant(std::string_view name) {
    for (Variant v : {Variant::automatic, Variant::ref, Variant::tile, Variant::pipe})
        if (to_string(v) == name) return v;
    throw UnsupportedError("flashrnn: unknown linrec variant '" + std::string(name) +
                           "' (automatic, ref, tile or pipe)");
}

} // namespace flashrnn::linrec
