// Turns a model into a propagation store: one variable per model variable (same index), one
// auxiliary variable per compound term, one propagator (or a few) per term and constraint.
#pragma once

#include "constrint/model.hpp"
#include "engine/store.hpp"

#include <map>
#include <memory>

namespace constrint::engine {

struct Compiled {
    Store store;
    int user_vars = 0;             // store variables [0, user_vars) are the model's variables
    std::vector<int> degree;       // per model variable: the number of constraints using it
    std::vector<VarId> objectives; // the objectives' variables, in order
    bool failed = false;           // a domain was empty while posting
};

// Posts the constraints whose `active` flag is set (all when `active` is empty). Throws ModelError
// for what cannot be posted (division by a variable whose domain is only 0, ...).
std::unique_ptr<Compiled> compile(const Model& model, const std::vector<bool>& active = {},
                                  bool with_objectives = true);

} // namespace constrint::engine
