// Solving a model: depth-first search with propagation, all solutions, optimisation, limits.
#pragma once

#include "constrint/model.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace constrint {

// How the next decision variable is chosen. With Declaration the search order is static and the
// first solution is the lexicographically first one (in the model's search order and each
// variable's preferred direction): answers are reproducible.
enum class VarOrder : std::uint8_t {
    Declaration,     // the model's search order, then declaration order
    SmallestDomain,  // fewest values left first (ties: declaration order)
    MostConstrained, // most constraints first (ties: smallest domain, then declaration order)
};

const char* to_string(VarOrder order);

constexpr int kMaxThreads = 1024; // SolveOptions::threads

struct SolveOptions {
    VarOrder order = VarOrder::Declaration;
    std::optional<std::uint64_t> node_limit;    // search nodes (choice points visited)
    std::optional<std::uint64_t> failure_limit; // failed nodes
    std::optional<double> time_limit_seconds;   // wall clock, checked during propagation too
    const std::atomic<bool>* cancel = nullptr;  // set to true from any thread to stop
    // Polled at every 32nd check of the limits (at nodes and every 16 propagations); true stops the search
    // ("interrupted"). For hosts that must look for signals themselves (Python's Ctrl-C).
    std::function<bool()> interrupt;
    // Threads of the search (docs/solver.md, "Parallel search"): 1 searches in the caller's thread.
    // With more, solutions still come in search order (the same first answer and enumeration) and
    // optima have the same values; statistics sum the threads' and the limits count all of them.
    int threads = 1;
    // With threads > 1, a satisfaction search does not look past the first this many solutions in
    // search order (solve() sets 1, solve_all() its limit). It does not limit next() otherwise.
    std::optional<std::uint64_t> solution_limit;
    // With threads > 1, a satisfaction search returns solutions in the order the threads find them,
    // not in search order: the first answer is whichever thread's comes first, and the others stop
    // once the caller has the solutions it asked for. The solution set and counts are unchanged.
    // Off by default (a `search`/`prefer` first answer stays one thread's); FlatZinc -p N sets it, as
    // MiniZinc accepts any solution of a satisfaction problem. Optimisation ignores it.
    bool any_first_answer = false;
    // Search the model's independent parts one by one and combine their answers (docs/solver.md,
    // "Independent parts"): the same first answer, solution set and optima as the whole search.
    bool split_parts = true;
};

enum class Status : std::uint8_t {
    Satisfiable,   // a solution (or several), search not complete
    Optimal,       // the last solution is proven optimal
    AllSolutions,  // every solution was produced
    Unsatisfiable, // proven: no solution
    Unknown,       // a limit or cancellation stopped the search before any answer
};

const char* to_string(Status status);

struct Stats {
    std::uint64_t nodes = 0;        // choice points
    std::uint64_t failures = 0;     // failed nodes
    std::uint64_t propagations = 0; // propagator runs
    std::uint64_t solutions = 0;
    std::uint64_t max_depth = 0;
    double seconds = 0;
};

// Values of all model variables (by variable index).
class Solution {
  public:
    Solution(std::vector<Integer> values, std::shared_ptr<const Model> model)
        : values_(std::move(values)), model_(std::move(model)) {}
    const Integer& operator[](const Var& x) const;
    const Integer& operator[](std::string_view name) const;
    const std::vector<Integer>& values() const { return values_; }
    // The value of any term of the model (objectives, expressions) under this solution.
    Integer evaluate(const Expr& term) const;

  private:
    std::vector<Integer> values_;
    std::shared_ptr<const Model> model_;
};

class SearchEngine; // the engine (sequential or parallel), defined in the implementation

// Solutions one at a time. The model is copied: later changes to it do not affect the solver.
// Without objectives next() returns each solution once, in search order. With objectives next()
// returns each improving solution; when it returns nothing, status() tells whether the last one
// is Optimal.
class Solver {
  public:
    explicit Solver(const Model& model, SolveOptions options = {});
    ~Solver();
    Solver(Solver&&) noexcept;
    Solver& operator=(Solver&&) noexcept;

    std::optional<Solution> next();
    Status status() const;
    const Stats& stats() const;
    // Why the search stopped early ("node limit 1000 reached", "cancelled", ...); empty otherwise.
    const std::string& stop_reason() const;

  private:
    std::unique_ptr<SearchEngine> search_;
};

struct Result {
    Status status = Status::Unknown;
    std::vector<Solution> solutions; // with objectives: each improving one, the best last
    Stats stats;
    std::string stop_reason;
};

// The first solution, or the optimum when the model has objectives.
Result solve(const Model& model, SolveOptions options = {});
// Every solution (at most `limit` when given), in search order.
Result solve_all(const Model& model, std::optional<std::uint64_t> limit = std::nullopt,
                 SolveOptions options = {});

struct CountResult {
    Status status = Status::Unknown; // AllSolutions (the count is exact), Unsatisfiable, or Unknown
    std::optional<Integer> count;    // nothing when a limit stopped the count
    Stats stats;
    std::string stop_reason;
};

// The number of solutions of a model without objectives, exact at any size. Independent parts are
// counted one by one and their counts multiplied: their product is not enumerated.
CountResult count_solutions(const Model& model, SolveOptions options = {});

} // namespace constrint
