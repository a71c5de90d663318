// Depth-first search with backtracking over a compiled model: the engine behind Solver.
#pragma once

#include "constrint/solver.hpp"
#include "engine/branching.hpp"
#include "engine/compile.hpp"
#include "engine/shared_search.hpp"
#include "propagators/objective_bound.hpp"

#include <chrono>

namespace constrint {

// What Solver and the FlatZinc front end drive: the sequential Search or the ParallelSearch.
class SearchEngine {
  public:
    virtual ~SearchEngine() = default;
    virtual std::optional<Solution> next() = 0;
    virtual Status status() const = 0;
    virtual const Stats& stats() const = 0;
    virtual const std::string& stop_reason() const = 0;
};

class Search final : public SearchEngine {
  public:
    // One branch of a choice point: var == value, var != value, var <= value or var >= value.
    struct Decision {
        enum class Kind : std::uint8_t { Equal, NotEqual, AtMost, AtLeast } kind;
        engine::VarId var;
        Integer value;
    };

    // `active` selects the constraints to post (all when empty); explanations use it.
    Search(const Model& model, SolveOptions options, const std::vector<bool>& active = {},
           bool with_objectives = true);
    // A model whose store was built elsewhere: the FlatZinc front end posts its propagators straight
    // into `compiled` (whose first variables are the model's). The phases are branched on first, in
    // order; then every variable left, in the default order.
    Search(std::shared_ptr<const Model> model, std::unique_ptr<engine::Compiled> compiled,
           SolveOptions options, std::vector<engine::Phase> phases);

    std::optional<Solution> next() override;
    Status status() const override { return status_; }
    const Stats& stats() const override { return stats_; }
    const std::string& stop_reason() const override { return stop_reason_; }

    // ---- for the parallel search (engine/parallel_search.hpp) ----
    // Limits count the threads' totals, the stop flag ends every thread, and the best objective
    // values found by any thread bound this one's search. `abandon` ends this thread's subtree.
    void share(engine::SharedSearch& shared, const std::atomic<bool>& abandon);
    static constexpr std::string_view kAbandoned = "subtree abandoned"; // the stop reason `abandon` gives
    // Starts over below the node that `path` reaches from the root: next() then searches only that
    // subtree, under the shared best. With `fixed_objectives` the objectives are fixed to these
    // values and next() returns the subtree's solutions in search order (no optimisation).
    void restart_at(const std::vector<Decision>& path,
                    const std::vector<Integer>* fixed_objectives = nullptr);
    // The node that `path` reaches: failed, a solution, or a choice point and its two branches.
    struct Expansion {
        enum class Kind : std::uint8_t { Failed, Solution, Split } kind;
        std::optional<Decision> left, right;
    };
    Expansion expand(const std::vector<Decision>& path, const std::vector<Integer>* fixed_objectives);
    // The objectives' values in the solution next() returned last.
    const std::vector<Integer>& objective_values() const { return objective_values_; }

  private:
    struct Choice {
        engine::VarId var;
        Prefer prefer;
    };

    void initialise();
    bool apply(const Decision& d);
    // The bound search of a single objective (docs/solver.md, "Optimisation"): each probe restarts
    // from the root and asks for an objective value of at least `target` (in the improving
    // direction), under a node budget; see start_probe and the probe_* members below.
    // Returns to the root, keeps `proven_limit` (no solution has a gain above it) there and starts
    // the next probe: halfway between the best so far and the best still possible, or, after an
    // inconclusive probe, halfway back to the best so far with twice the budget. False when the
    // root fails (the best so far is optimal; probing_ is then off) or the probe fails at once.
    bool start_probe(std::optional<Integer> proven_limit, bool inconclusive);
    Integer gain(const Integer& objective_value) const; // the value, negated when minimising
    std::optional<Choice> select_in_phases() const;
    std::optional<engine::VarId> select_variable();
    std::pair<Decision, Decision> branches(const Choice& choice) const;
    bool backtrack(); // to the next open branch; false when the tree is exhausted
    bool limit_reached();
    bool import_shared_best(); // true when the shared best changed and the bound must propagate
    std::optional<Choice> next_choice();
    void finish(bool exhausted);
    double elapsed() const;

    std::shared_ptr<const Model> model_;
    SolveOptions options_;
    std::uint64_t interrupt_polls_ = 0; // the host's interrupt callback is asked every 32nd time
    std::unique_ptr<engine::Compiled> compiled_;
    engine::ObjectiveBound* bound_ = nullptr;
    int bound_id_ = -1;
    std::vector<engine::Phase> phases_;
    std::vector<Prefer> value_choice_; // per model variable: its `prefer`, or the improving direction
    // Probing (one objective only; lexicographic objectives use plain branch and bound).
    bool probing_ = false;
    Integer probe_target_;           // in gain units: the probe asks for gain(objective) >= this
    Integer probe_floor_;            // gain units: any solution of the probe beats the best so far
    std::uint64_t probe_budget_ = 0; // nodes for the current probe; 0: unlimited
    std::uint64_t probe_start_nodes_ = 0;
    std::vector<engine::VarId> order_; // the static decision order
    std::vector<Decision> open_;       // per depth: the branch still to try
    // Declaration order: order_[i] is fixed for every i < first_open_ at this node, so that choosing
    // the next variable is not a scan from the start at every node (quadratic in the variables).
    // Fixed stays fixed below a node; backtracking restores the value saved per depth.
    std::size_t first_open_ = 0;
    std::vector<std::size_t> saved_first_open_;
    std::chrono::steady_clock::time_point start_;

    // Parallel search: the subtree's root level (0: the whole tree) and what the threads share.
    std::size_t root_depth_ = 0;
    bool at_subtree_root_ = false; // restart_at() left the search at a node not yet searched
    bool optimise_ = true;         // false while the objectives are fixed (restart_at)
    engine::SharedSearch* shared_ = nullptr;
    const std::atomic<bool>* abandon_ = nullptr;
    std::uint64_t shared_nodes_ = 0, shared_failures_ = 0; // this thread's counts already added
    std::uint64_t shared_best_seen_ = 0;
    std::vector<Integer> objective_values_;

    bool started_ = false;
    bool done_ = false;
    bool have_solution_ = false;
    Status status_ = Status::Unknown;
    Stats stats_;
    std::string stop_reason_;
};

} // namespace constrint
