#include <stdexcept>
#include <string>

#include "flashrnn/linrec.hpp"

namespace flashrnn {

std::string_view to_string(LinrecVariant variant) {
    switch (variant) {
    case LinrecVariant::automatic:
        return "automatic";
    case LinrecVariant::ref:
        return "ref";
    case LinrecVariant::tile:
        return "tile";
    case LinrecVariant::pipe:
        return "pipe";
    }
    throw std::invalid_argument("flashrnn: invalid LinrecVariant " +
                                std::to_string(static_cast<int>(variant)));
}

LinrecVariant parse_linrec_variant(std::string_view name) {
    for (LinrecVariant v :
         {LinrecVariant::automatic, LinrecVariant::ref, LinrecVariant::tile, LinrecVariant::pipe})
        if (to_string(v) == name) return v;
    throw std::invalid_argument("flashrnn: unknown linrec variant '" + std::string(name) +
                                "' (automatic, ref, tile or pipe)");
}

} // namespace flashrnn
