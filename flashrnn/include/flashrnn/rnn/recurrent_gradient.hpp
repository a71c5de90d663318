// What the backward pass does with the gradient that flows back through the recurrent weights,
// R^T dg, on its way to the previous hidden state (FlashRNN paper, section 4.1).
#pragma once

namespace flashrnn {

struct RecurrentGradient {
    enum class Mode {
        full,    // exact BPTT
        clipped, // each element of R^T dg is clamped to [-clip_value, clip_value] at every step
        cut,     // R^T dg is dropped: no gradient flows back through R (truncated BPTT of length 1
                 // for h; the pointwise paths, e.g. the LSTM cell state, still carry gradient)
    };
    Mode mode = Mode::full;
    double clip_value = 0.0;

    static constexpr RecurrentGradient full() { return {Mode::full, 0.0}; }
    static constexpr RecurrentGradient clipped(double clip_value) { return {Mode::clipped, clip_value}; }
    static constexpr RecurrentGradient cut() { return {Mode::cut, 0.0}; }
};

// Throws ShapeError when a clipped policy has a clip value that is not finite and > 0.
void validate(const RecurrentGradient& policy);

} // namespace flashrnn
