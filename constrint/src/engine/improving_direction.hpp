// The value direction that improves an objective, per model variable: branching a maximised
// `w` max-first makes the first solution the best one when propagation allows it, where min-first
// makes it the worst (docs/solver.md, "Optimisation").
#pragma once

#include "constrint/model.hpp"

#include <optional>
#include <vector>

namespace constrint::engine {

// Per model variable: Prefer::Max where the objective grows (for Maximize; shrinks for Minimize)
// with the variable, whatever the other variables' values; Prefer::Min where it moves the other
// way; nothing where the term is not monotone in the variable (abs, mod, a product of factors of
// unknown sign) or the variable is not in the term.
std::vector<std::optional<Prefer>> improving_directions(const Model& model, const Objective& objective);

} // namespace constrint::engine
