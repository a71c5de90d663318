// Independent parts (docs/solver.md, "Independent parts"): a model whose constraint graph splits
// into several parts is searched one part at a time and the parts' answers are combined, so that a
// part without solutions is found without enumerating the other parts' solutions.
#pragma once

#include "engine/constraint_graph.hpp"
#include "engine/search.hpp"

namespace constrint {

class PartsSearch final : public SearchEngine {
  public:
    // Nothing when splitting is off or does not apply (one part, a dynamic variable order, a root
    // that fails or is stopped by a limit): the caller searches the model whole.
    static std::unique_ptr<PartsSearch> split(const Model& model, const SolveOptions& options);

    std::optional<Solution> next() override;
    Status status() const override { return status_; }
    const Stats& stats() const override { return stats_; }
    const std::string& stop_reason() const override { return stop_reason_; }

    // The number of solutions: the exact product of the parts' counts (each part enumerated once).
    // Nothing when a limit stopped a part. Call it instead of next(), not after.
    std::optional<Integer> count();

  private:
    struct PartRun {
        engine::Part part;
        std::shared_ptr<const Model> model; // the model, other parts' variables fixed
        bool optimise = false;              // the part with the objectives
        std::unique_ptr<SearchEngine> engine;
        Stats finished;                          // of engines replaced to enumerate again
        std::vector<std::vector<Integer>> cache; // the part's solutions (its variables' values)
        bool cache_complete = false, cache_full = false;
        std::size_t position = 0;     // in cache, when complete
        std::vector<Integer> current; // the part's values in the current combination
    };

    PartsSearch(std::shared_ptr<const Model> model, SolveOptions options, std::vector<Domain> root,
                std::vector<engine::Part> parts, std::chrono::steady_clock::time_point start);
    std::unique_ptr<SearchEngine> make_engine(const PartRun& run);
    // The part's next solution into run.current; false when it has no more or a limit stopped it.
    bool advance(PartRun& run);
    bool restart(PartRun& run);       // back to the part's first solution
    bool first_solutions();           // every part's first solution (the objective part's skipped)
    void stop_at(const PartRun& run); // ends the search with the part's status and reason
    Solution combine() const;
    void update_stats();

    std::shared_ptr<const Model> model_;
    SolveOptions options_;
    std::vector<Domain> root_;
    // One budget: the limits count all parts' nodes, threads included. Before parts_, so that it
    // outlives the parts' engines, whose threads read it until they are joined.
    engine::SharedSearch shared_;
    std::atomic<bool> never_abandoned_{false};
    std::vector<PartRun> parts_;
    bool started_ = false, done_ = false;
    Status status_ = Status::Unknown;
    Stats stats_;
    std::string stop_reason_;
};

} // namespace constrint
