// Parallel search (docs/solver.md, "Parallel search"): the search tree is split into subtrees, each
// the node that a path of decisions reaches from the root, listed in search order; threads take
// them in that order, each with its own Search and store. Solutions are returned in search order,
// so the first answer and the enumeration are those of one thread; optimisation shares the best
// objective values between the threads, then looks for the first solution with the optimal values.
#pragma once

#include "engine/search.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace constrint {

// Throws ModelError unless 1 <= threads <= kMaxThreads.
void check_threads(int threads);

class ParallelSearch final : public SearchEngine {
  public:
    // A new Search over the model (its own store) with these options, for one thread.
    using WorkerFactory = std::function<std::unique_ptr<Search>(const SolveOptions&)>;
    // options.threads workers. options.solution_limit, when given, lets the threads leave the
    // subtrees after the first that many solutions of a satisfaction search. `budget`, when given,
    // is shared with the other searches of one solve (the independent parts): its node and failure
    // totals, clock and stop flag make one budget for all of them; otherwise the search has its own.
    ParallelSearch(std::shared_ptr<const Model> model, const SolveOptions& options,
                   const WorkerFactory& make_worker, engine::SharedSearch* budget = nullptr);
    ~ParallelSearch() override;

    std::optional<Solution> next() override;
    Status status() const override { return status_; }
    const Stats& stats() const override;
    const std::string& stop_reason() const override { return stop_reason_; }

  private:
    using Path = std::vector<Search::Decision>;
    struct Subtree {
        Path path;
        std::deque<Solution> solutions; // found, not yet returned
        std::uint64_t found = 0;
        bool finished = false; // searched to the end
        bool stopped = false;  // a limit, cancellation or abandonment ended it first
    };
    // Enumerate: solutions in search order. Optimise: each improvement any thread finds. Canonical:
    // the first solution, in search order, whose objectives have the optimal values.
    enum class Phase : std::uint8_t { NotStarted, Enumerate, Optimise, Canonical };

    void start_phase(Phase phase);
    std::vector<Subtree> decompose(const std::vector<Integer>* fixed_objectives);
    void run_worker(std::size_t w);
    std::vector<std::size_t> take_order(std::size_t subtrees) const; // phase_ set
    bool needed(std::size_t index, bool including_itself) const;     // mutex_ held
    void abandon_unneeded();                                         // mutex_ held
    void stop_workers();
    void finish(Status status);
    std::optional<Solution> take_in_order(std::unique_lock<std::mutex>& lock, bool& finished);
    std::optional<Solution> take_any(std::unique_lock<std::mutex>& lock, bool& finished);
    bool any_order() const { return phase_ == Phase::Enumerate && options_.any_first_answer; }

    std::shared_ptr<const Model> model_;
    SolveOptions options_;
    std::uint64_t solution_limit_ = UINT64_MAX;        // Enumerate: the caller reads at most this many
    std::unique_ptr<engine::SharedSearch> own_shared_; // when no budget is given
    engine::SharedSearch& shared_;
    std::vector<std::unique_ptr<Search>> workers_;
    std::unique_ptr<std::atomic<bool>[]> abandon_; // per worker: leave the current subtree
    std::vector<std::size_t> working_on_;          // per worker: its subtree, or kNone
    std::vector<Stats> worker_stats_;
    std::vector<std::thread> threads_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    Phase phase_ = Phase::NotStarted;
    std::vector<Subtree> subtrees_;
    std::vector<std::size_t> take_order_; // the order in which the threads take the subtrees
    std::size_t next_subtree_ = 0;        // the next one a thread takes, in take_order_
    std::size_t running_ = 0;             // threads not yet out of their loop
    bool quitting_ = false;
    std::size_t cursor_ = 0;            // Enumerate, Canonical: the subtree the caller reads from
    std::deque<Solution> improvements_; // Optimise: found, not yet returned
    std::vector<Integer> optimum_;      // Canonical: the objectives' optimal values
    std::optional<std::vector<Integer>> last_returned_; // Optimise: the last improvement's values

    bool done_ = false;
    std::uint64_t returned_ = 0;
    Status status_ = Status::Unknown;
    std::string stop_reason_;
    std::optional<double> seconds_; // the run's time, once it is over
    mutable Stats stats_;
};

} // namespace constrint
