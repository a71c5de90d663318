#include "flashrnn/rnn/recurrent_gradient.hpp"
#include "flashrnn/core/error.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace flashrnn {

void validate(const RecurrentGradient& policy) {
    if (policy.mode == RecurrentGradient::Mode::clipped &&
        !(std::isfinite(policy.clip_value) && policy.clip_value > 0))
        throw ShapeError("flashrnn: the recurrent gradient clip value must be finite and > 0, got " +
                         std::to_string(policy.clip_value));
}

} // namespace flashrnn
