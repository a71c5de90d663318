// Explanations of infeasibility: a small set of the model's constraints that cannot hold together.
#pragma once

#include "constrint/solver.hpp"

#include <optional>
#include <vector>

namespace constrint {

struct Conflict {
    std::vector<std::size_t> constraints; // indices into model.constraints(), increasing
    bool minimal = false;                 // true when every single constraint was proven necessary
    std::size_t checks = 0;               // sub-problems solved to find it
    std::uint64_t nodes = 0;              // search nodes of all the checks together
};

// Runs the deletion filter over the model's constraints (variable domains are kept as given).
// Each sub-problem is solved under `per_check` limits; a constraint whose removal cannot be
// decided within them stays in the set, so the result is always unsatisfiable but then not
// proven minimal. Returns nothing when the model has a solution or the first check hit a limit.
// `total_seconds` is one deadline for all checks together: each check gets at most what is left of
// it, and once it has passed the constraints not yet checked stay in the set.
// With `per_check.split_parts` (the default) a model of independent parts (docs/solver.md,
// "Independent parts") is checked part by part, and the filter runs over the constraints of the
// first part without solutions only: the set names that part's constraints.
std::optional<Conflict> explain_conflict(const Model& model, SolveOptions per_check = {},
                                         std::optional<double> total_seconds = std::nullopt);

} // namespace constrint
