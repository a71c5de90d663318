// Solving a tiling model: its best configuration, or a TilingError that says which of its labelled
// constraints cannot hold together. Every tiling family (pointwise_launch.cpp, scan_launch.cpp,
// fused_tiling.cpp) solves its model this way.
#pragma once

#include <constrint/constrint.hpp>

#include <string>
#include <utility>

#include "flashrnn/core/error.hpp"

namespace flashrnn::tiling {

struct SolvedModel {
    constrint::Solution solution;
    constrint::Stats stats;
};

// Why `result` has no solution of `model`: `no_configuration`, then the limit that stopped the
// solver before any answer, or the constraints of a conflict that constrint::explain_conflict finds
// (each check under the node limit of `explain_options`, all of them within its time limit), one per
// line of what() and one per entry of conflicts().
TilingError tiling_error_of(const constrint::Model& model, const constrint::Result& result,
                            std::string no_configuration, const constrint::SolveOptions& explain_options);

// The best solution of `model` (the first in search order under preferences, the last improving one
// under objectives). Without one, throws tiling_error_of(...), whose message begins with the text of
// `no_configuration()`, which is called only then.
template <class Describe>
SolvedModel solve_or_explain(const constrint::Model& model, const constrint::SolveOptions& options,
                             const constrint::SolveOptions& explain_options, Describe no_configuration) {
    constrint::Result result = constrint::solve(model, options);
    if (!result.solutions.empty()) return {std::move(result.solutions.back()), result.stats};
    throw tiling_error_of(model, result, no_configuration(), explain_options);
}

} // namespace flashrnn::tiling
