#include "engine/parts_search.hpp"

#include "engine/parallel_search.hpp"

#include <algorithm>
#include <limits>

namespace constrint {

namespace {

// Parts beyond this many join the last one (always sound: a union of independent parts is
// independent of the rest), so that a model of thousands of tiny parts does not compile thousands
// of copies of itself.
constexpr std::size_t kMaxParts = 64;
// A part's solutions are kept for the next round of the enumeration up to this many; a part with
// more is searched again from its start instead.
constexpr std::size_t kMaxCachedSolutions = 4096;

std::vector<Sense> senses_of(const Model& model) {
    std::vector<Sense> senses;
    for (const Objective& o : model.objectives())
        senses.push_back(o.sense);
    return senses;
}

// Position of each model variable in the static decision order (search order, then declaration).
std::vector<std::size_t> decision_rank(const Model& model) {
    const std::size_t n = model.variables().size();
    std::vector<std::size_t> rank(n, std::numeric_limits<std::size_t>::max());
    std::size_t next = 0;
    for (int v : model.search_order())
        rank[v] = next++;
    for (std::size_t v = 0; v < n; ++v) {
        if (rank[v] == std::numeric_limits<std::size_t>::max()) rank[v] = next++;
    }
    return rank;
}

} // namespace

std::unique_ptr<PartsSearch> PartsSearch::split(const Model& model, const SolveOptions& options) {
    // A dynamic variable order may pick a different first answer per part than over the whole.
    if (!options.split_parts || options.order != VarOrder::Declaration) return nullptr;
    if (model.constraints().size() < 2) return nullptr;
    const auto start = std::chrono::steady_clock::now(); // the time limit counts the root's propagation
    std::optional<std::vector<Domain>> root;
    try {
        root = engine::root_domains(model, options);
    } catch (const engine::Interrupted&) {
        return nullptr;
    }
    if (!root) return nullptr;
    std::vector<engine::Part> parts = engine::independent_parts(model, *root);
    if (parts.size() < 2) return nullptr;
    // Parts in decision order (parts without variables first), so that when every part's variables
    // come together in that order, the enumeration is the unsplit search's, solution for solution.
    const std::vector<std::size_t> rank = decision_rank(model);
    const auto key = [&](const engine::Part& p) {
        std::size_t k = 0; // 0: no variables
        for (int v : p.variables)
            k = k == 0 ? rank[v] + 1 : std::min(k, rank[v] + 1);
        return k;
    };
    std::stable_sort(parts.begin(), parts.end(),
                     [&](const engine::Part& a, const engine::Part& b) { return key(a) < key(b); });
    while (parts.size() > kMaxParts) {
        engine::Part last = std::move(parts.back());
        parts.pop_back();
        engine::Part& into = parts.back();
        into.variables.insert(into.variables.end(), last.variables.begin(), last.variables.end());
        into.constraints.insert(into.constraints.end(), last.constraints.begin(), last.constraints.end());
        std::sort(into.variables.begin(), into.variables.end());
        std::sort(into.constraints.begin(), into.constraints.end());
    }
    return std::unique_ptr<PartsSearch>(new PartsSearch(std::make_shared<const Model>(model), options,
                                                        std::move(*root), std::move(parts), start));
}

PartsSearch::PartsSearch(std::shared_ptr<const Model> model, SolveOptions options, std::vector<Domain> root,
                         std::vector<engine::Part> parts, std::chrono::steady_clock::time_point start)
    : model_(std::move(model)), options_(std::move(options)), root_(std::move(root)),
      shared_(senses_of(*model_), start) {
    // The objectives go with the part of their variables (independent_parts put them in one), or
    // with the first part when they are constant at the root.
    std::size_t objective_part = 0;
    for (std::size_t p = 0; p < parts.size(); ++p) {
        for (const Objective& o : model_->objectives()) {
            for (int v : engine::variables_of(o.term))
                if (std::binary_search(parts[p].variables.begin(), parts[p].variables.end(), v))
                    objective_part = p;
        }
    }
    for (std::size_t p = 0; p < parts.size(); ++p) {
        PartRun run;
        run.part = std::move(parts[p]);
        run.optimise = !model_->objectives().empty() && p == objective_part;
        Model part_model = engine::with_other_parts_fixed(*model_, run.part, root_);
        if (!run.optimise) part_model.clear_objectives();
        run.model = std::make_shared<const Model>(std::move(part_model));
        parts_.push_back(std::move(run));
    }
}

std::unique_ptr<SearchEngine> PartsSearch::make_engine(const PartRun& run) {
    std::vector<bool> active(model_->constraints().size(), false);
    for (std::size_t c : run.part.constraints)
        active[c] = true;
    SolveOptions options = options_;
    if (run.optimise || options_.solution_limit != std::optional<std::uint64_t>(1))
        options.solution_limit.reset();
    // The optimum's answer combines every part's first solution in search order (one thread's).
    if (!model_->objectives().empty()) options.any_first_answer = false;
    if (options.threads == 1) {
        auto search = std::make_unique<Search>(*run.model, options, active);
        search->share(shared_, never_abandoned_); // the limits count every part's nodes, one clock
        return search;
    }
    // Threads: the parts' parallel searches share one budget too (their limits count all parts).
    return std::make_unique<ParallelSearch>(
        run.model, options,
        [model = run.model, active](const SolveOptions& o) {
            return std::make_unique<Search>(*model, o, active);
        },
        &shared_);
}

bool PartsSearch::advance(PartRun& run) {
    if (run.cache_complete) {
        if (++run.position >= run.cache.size()) return false;
        run.current = run.cache[run.position];
        return true;
    }
    std::optional<Solution> solution = run.engine->next();
    if (!solution) {
        const Status status = run.engine->status();
        if (status == Status::AllSolutions || status == Status::Unsatisfiable) {
            run.cache_complete = !run.cache_full;
            run.position = run.cache.size();
        } else {
            stop_at(run); // a limit
        }
        return false;
    }
    run.current.clear();
    for (int v : run.part.variables)
        run.current.push_back(solution->values()[v]);
    if (!run.cache_full) {
        if (run.cache.size() < kMaxCachedSolutions) {
            run.cache.push_back(run.current);
        } else {
            run.cache = {};
            run.cache_full = true;
        }
    }
    return true;
}

bool PartsSearch::restart(PartRun& run) {
    if (run.cache_complete) {
        run.position = 0;
        run.current = run.cache.at(0);
        return true;
    }
    const Stats& old = run.engine->stats();
    run.finished.nodes += old.nodes;
    run.finished.failures += old.failures;
    run.finished.propagations += old.propagations;
    run.finished.max_depth = std::max(run.finished.max_depth, old.max_depth);
    run.engine = make_engine(run);
    return advance(run);
}

bool PartsSearch::first_solutions() {
    for (PartRun& run : parts_) {
        run.engine = make_engine(run);
        if (run.optimise) continue;
        if (!advance(run)) {
            if (!done_) stop_at(run);
            return false;
        }
    }
    return true;
}

void PartsSearch::stop_at(const PartRun& run) {
    done_ = true;
    stop_reason_ = run.engine->stop_reason();
    status_ = run.engine->status();
    if (status_ == Status::AllSolutions) status_ = Status::Unsatisfiable; // a part without solutions
    if (stats_.solutions > 0 && (status_ == Status::Unknown || status_ == Status::Unsatisfiable))
        status_ = Status::Satisfiable; // stopped by a limit after some solutions
    update_stats();
}

Solution PartsSearch::combine() const {
    std::vector<Integer> values;
    for (const Domain& d : root_)
        values.push_back(d.min());
    for (const PartRun& run : parts_) {
        for (std::size_t k = 0; k < run.part.variables.size(); ++k)
            values[run.part.variables[k]] = run.current[k];
    }
    return Solution(std::move(values), model_);
}

void PartsSearch::update_stats() {
    Stats total;
    total.solutions = stats_.solutions;
    for (const PartRun& run : parts_) {
        Stats part = run.finished;
        if (run.engine) {
            const Stats& s = run.engine->stats();
            part.nodes += s.nodes;
            part.failures += s.failures;
            part.propagations += s.propagations;
            part.max_depth = std::max(part.max_depth, s.max_depth);
        }
        total.nodes += part.nodes;
        total.failures += part.failures;
        total.propagations += part.propagations;
        total.max_depth = std::max(total.max_depth, part.max_depth);
    }
    total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - shared_.start()).count();
    stats_ = total;
}

std::optional<Solution> PartsSearch::next() {
    if (done_) return std::nullopt;
    PartRun* objective = nullptr;
    for (PartRun& run : parts_) {
        if (run.optimise) objective = &run;
    }
    if (!started_) {
        started_ = true;
        if (!first_solutions()) return std::nullopt;
        if (!objective) {
            ++stats_.solutions;
            update_stats();
            return combine();
        }
    }
    if (objective) { // the other parts keep their first solution
        std::optional<Solution> improved = objective->engine->next();
        if (!improved) {
            stop_at(*objective);
            if (status_ == Status::Satisfiable && objective->engine->status() == Status::Optimal)
                status_ = Status::Optimal;
            return std::nullopt;
        }
        objective->current.clear();
        for (int v : objective->part.variables)
            objective->current.push_back(improved->values()[v]);
        ++stats_.solutions;
        update_stats();
        return combine();
    }
    // The next combination: the last part varies fastest; parts after the one advanced start over.
    for (std::size_t i = parts_.size(); i-- > 0;) {
        if (!advance(parts_[i])) {
            if (done_) return std::nullopt;
            continue;
        }
        for (std::size_t j = i + 1; j < parts_.size(); ++j) {
            if (!restart(parts_[j])) {
                if (!done_) stop_at(parts_[j]);
                return std::nullopt;
            }
        }
        ++stats_.solutions;
        update_stats();
        return combine();
    }
    done_ = true;
    status_ = Status::AllSolutions;
    update_stats();
    return std::nullopt;
}

std::optional<Integer> PartsSearch::count() {
    started_ = true;
    Integer total = 1;
    for (PartRun& run : parts_) {
        run.engine = make_engine(run);
        Integer part_count = 0;
        while (run.engine->next())
            ++part_count;
        const Status status = run.engine->status();
        if (status != Status::AllSolutions && status != Status::Unsatisfiable) {
            stop_at(run);
            return std::nullopt;
        }
        if (part_count == 0) {
            stop_at(run);
            return Integer(0);
        }
        total *= part_count;
    }
    done_ = true;
    status_ = Status::AllSolutions;
    update_stats();
    return total;
}

} // namespace constrint
