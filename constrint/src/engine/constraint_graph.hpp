// The constraint graph (docs/solver.md, "Independent parts"): model variables joined by the
// constraints they share, split into connected components with Boost.Graph.
#pragma once

#include "constrint/solver.hpp"

#include <optional>
#include <vector>

namespace constrint::engine {

// A connected component: constraints and the model variables they link. Solutions of different
// parts combine freely (the model's solutions are the product of the parts').
struct Part {
    std::vector<int> variables;           // model variable indices, increasing
    std::vector<std::size_t> constraints; // indices into model.constraints(), increasing
};

// The model variables a constraint mentions (once each, in no particular order).
std::vector<int> variables_of(const Constraint& constraint);
std::vector<int> variables_of(const Expr& term);

// The parts of `model` given its domains after root propagation (`root`, one per model variable).
// A fixed variable links nothing: its value is the same in every solution. A constraint whose
// variables are all fixed is a part of its own (it may still have auxiliary variables to search).
// Variables in no constraint form one part together, and so do the parts that an objective's
// variables fall in (an objective over several parts is optimised over their union).
std::vector<Part> independent_parts(const Model& model, const std::vector<Domain>& root);

// The model with the variables of other parts fixed to their least value in `domains`: none of the
// part's constraints mentions them, so they add no decision and no solution to the part's search.
Model with_other_parts_fixed(const Model& model, const Part& part, const std::vector<Domain>& domains);

// The domains of the model's variables after propagation at the root (all constraints posted), or
// nothing when the root fails or the options' limits stop the propagation.
std::optional<std::vector<Domain>> root_domains(const Model& model, const SolveOptions& options);

} // namespace constrint::engine
