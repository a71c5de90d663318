#include "flashrnn/rnn/backend.hpp"

#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/rnn/automatic_backend.hpp"

namespace flashrnn::rnn {

std::string_view to_string(Backend backend) {
    switch (backend) {
    case Backend::automatic:
        return "automatic";
    case Backend::alternating:
        return "alternating";
    case Backend::fused:
        return "fused";
    }
    throw ShapeError("flashrnn: invalid Backend value " + std::to_string(static_cast<int>(backend)));
}

Backend parse_backend(std::string_view name) {
    for (Backend b : {Backend::automatic, Backend::alternating, Backend::fused})
        if (name == to_string(b)) return b;
    throw UnsupportedError("flashrnn: unknown backend '" + std::string(name) +
                           "' (automatic, alternating or fused)");
}

Backend resolve_backend(const Problem& problem, Backend requested, FusedPass pass) {
    if (requested != Backend::automatic) {
        to_string(requested); // an invalid value throws
        return requested;
    }
    return automatic_choice(problem, pass).backend;
}

} // namespace flashrnn::rnn
