#include "flashrnn/rnn/backend.hpp"

#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/rnn/fused.hpp"
#include "rnn/backends.hpp"

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

namespace {

// The cost rule of the automatic choice: a fused pass that runs its batch in chunks runs the whole
// sequence once per chunk. Measured on the H100 at (NH, DH) = (1, 768), LSTM bf16, T = 1024
// (docs/benchmarks.md): up to B = 64 the fused backend was faster than the alternating one or within
// 5%; at B = 128 and 256, where the model runs the backward in 2 and 4 chunks, it was 1.67x and 2.73x
// slower forward+backward. So the automatic choice takes the fused backend only when neither pass is
// chunked; `Backend::fused` still runs every batch.
bool runs_in_one_chunk(const Problem& problem) {
    return fused::traits(problem, FusedPass::forward).batch_chunks == 1 &&
           fused::traits(problem, FusedPass::backward).batch_chunks == 1;
}

} // namespace

Backend resolve_backend(const Problem& problem, Backend requested) {
    if (requested != Backend::automatic) {
        to_string(requested); // an invalid value throws
        return requested;
    }
    validate(problem.shape);
    return fused::fits(problem) && runs_in_one_chunk(problem) ? Backend::fused : Backend::alternating;
}

} // namespace flashrnn::rnn
