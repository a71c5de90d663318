// Independent parts of a FlatZinc model (docs/flatzinc.md, "Independent parts"): before the search,
// each part of the propagator graph is searched alone for a first solution, so that a part without
// solutions makes the model unsatisfiable without the search going through the other parts'
// solutions first. The search that follows is the whole model's: its answers do not change.
#pragma once

#include "constrint/solver.hpp"
#include "flatzinc/ast.hpp"
#include "flatzinc/builder.hpp"
#include "flatzinc/deadline.hpp"

namespace constrint::flatzinc {

struct PartsCheck {
    bool unsatisfiable = false; // a part has no solution: neither has the model
    Stats stats;                // of the parts' searches together
};

// Nothing is searched when the model is one part. `program` is the whole model, built and not yet
// searched; `options` limits each part's search (one thread). Throws TimeLimitReached from a build.
PartsCheck check_parts(const Ast& ast, const std::string& file, Deadline& deadline, bool free_search,
                       const Program& program, const SolveOptions& options);

} // namespace constrint::flatzinc
