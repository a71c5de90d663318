// Depth-first search with backtracking over a compiled model: the engine behind Solver.
#pragma once

#include "constrint/solver.hpp"
#include "engine/branching.hpp"
#include "engine/compile.hpp"
#include "propagators/objective_bound.hpp"

#include <chrono>

namespace constrint {

class Search {
  public:
    // `active` selects the constraints to post (all when empty); explanations use it.
    Search(const Model& model, SolveOptions options, const std::vector<bool>& active = {},
           bool with_objectives = true);
    // A model whose store was built elsewhere: the FlatZinc front end posts its propagators straight
    // into `compiled` (whose first variables are the model's). The phases are branched on first, in
    // order; then every variable left, in the default order.
    Search(std::shared_ptr<const Model> model, std::unique_ptr<engine::Compiled> compiled,
           SolveOptions options, std::vector<engine::Phase> phases);

    std::optional<Solution> next();
    Status status() const { return status_; }
    const Stats& stats() const { return stats_; }
    const std::string& stop_reason() const { return stop_reason_; }

  private:
    // One branch of a choice point: var == value, var != value, var <= value or var >= value.
    struct Decision {
        enum class Kind : std::uint8_t { Equal, NotEqual, AtMost, AtLeast } kind;
        engine::VarId var;
        Integer value;
    };

    struct Choice {
        engine::VarId var;
        Prefer prefer;
    };

    void initialise();
    bool apply(const Decision& d);
    std::optional<Choice> select_in_phases() const;
    std::optional<engine::VarId> select_variable();
    std::pair<Decision, Decision> branches(const Choice& choice) const;
    bool backtrack(); // to the next open branch; false when the tree is exhausted
    bool limit_reached();
    void finish(bool exhausted);
    double elapsed() const;

    std::shared_ptr<const Model> model_;
    SolveOptions options_;
    std::uint64_t interrupt_polls_ = 0; // the host's interrupt callback is asked every 32nd time
    std::unique_ptr<engine::Compiled> compiled_;
    engine::ObjectiveBound* bound_ = nullptr;
    int bound_id_ = -1;
    std::vector<engine::Phase> phases_;
    std::vector<engine::VarId> order_; // the static decision order
    std::vector<Decision> open_;       // per depth: the branch still to try
    // Declaration order: order_[i] is fixed for every i < first_open_ at this node, so that choosing
    // the next variable is not a scan from the start at every node (quadratic in the variables).
    // Fixed stays fixed below a node; backtracking restores the value saved per depth.
    std::size_t first_open_ = 0;
    std::vector<std::size_t> saved_first_open_;
    std::chrono::steady_clock::time_point start_;

    bool started_ = false;
    bool done_ = false;
    bool have_solution_ = false;
    Status status_ = Status::Unknown;
    Stats stats_;
    std::string stop_reason_;
};

} // namespace constrint
