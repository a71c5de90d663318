#include "constrint/solver.hpp"

#include "constrint/error.hpp"
#include "engine/parallel_search.hpp"
#include "engine/parts_search.hpp"

namespace constrint {

const char* to_string(VarOrder order) {
    switch (order) {
    case VarOrder::Declaration:
        return "declaration";
    case VarOrder::SmallestDomain:
        return "smallest";
    case VarOrder::MostConstrained:
        return "most-constrained";
    }
    return "?";
}

const char* to_string(Status status) {
    switch (status) {
    case Status::Satisfiable:
        return "SATISFIABLE";
    case Status::Optimal:
        return "OPTIMAL";
    case Status::AllSolutions:
        return "ALL_SOLUTIONS";
    case Status::Unsatisfiable:
        return "UNSATISFIABLE";
    case Status::Unknown:
        return "UNKNOWN";
    }
    return "?";
}

const Integer& Solution::operator[](const Var& x) const {
    model_->check_owned(x);
    return values_.at(x.index());
}

const Integer& Solution::operator[](std::string_view name) const {
    return values_.at(model_->at(name).index());
}

Integer Solution::evaluate(const Expr& term) const {
    model_->check_owned(term);
    return constrint::evaluate(term, values_);
}

namespace {

std::unique_ptr<SearchEngine> make_engine(const Model& model, const SolveOptions& options) {
    check_threads(options.threads);
    if (auto parts = PartsSearch::split(model, options)) return parts;
    if (options.threads == 1) return std::make_unique<Search>(model, options);
    auto shared_model = std::make_shared<const Model>(model);
    return std::make_unique<ParallelSearch>(shared_model, options, [shared_model](const SolveOptions& o) {
        return std::make_unique<Search>(*shared_model, o);
    });
}

} // namespace

Solver::Solver(const Model& model, SolveOptions options) : search_(make_engine(model, options)) {}
Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

std::optional<Solution> Solver::next() {
    return search_->next();
}
Status Solver::status() const {
    return search_->status();
}
const Stats& Solver::stats() const {
    return search_->stats();
}
const std::string& Solver::stop_reason() const {
    return search_->stop_reason();
}

namespace {

Result collect(Solver& solver, std::optional<std::uint64_t> limit) {
    Result result;
    while (!limit || result.solutions.size() < *limit) {
        auto solution = solver.next();
        if (!solution) break;
        result.solutions.push_back(std::move(*solution));
    }
    result.status = solver.status();
    // Stopped by the solution limit (the search itself did not finish).
    if (limit && result.solutions.size() >= *limit && result.status == Status::Unknown) {
        result.status = Status::Satisfiable;
    }
    result.stats = solver.stats();
    result.stop_reason = solver.stop_reason();
    return result;
}

} // namespace

Result solve(const Model& model, SolveOptions options) {
    const bool optimise = !model.objectives().empty();
    if (!optimise) options.solution_limit = 1;
    Solver solver(model, options);
    return collect(solver, optimise ? std::nullopt : std::optional<std::uint64_t>(1));
}

Result solve_all(const Model& model, std::optional<std::uint64_t> limit, SolveOptions options) {
    if (!model.objectives().empty()) {
        throw ModelError("solve_all enumerates solutions of models without objectives; use solve()");
    }
    if (limit) options.solution_limit = limit;
    Solver solver(model, options);
    return collect(solver, limit);
}

CountResult count_solutions(const Model& model, SolveOptions options) {
    if (!model.objectives().empty()) {
        throw ModelError("count_solutions counts solutions of models without objectives; use solve()");
    }
    check_threads(options.threads);
    CountResult result;
    if (auto parts = PartsSearch::split(model, options)) {
        result.count = parts->count();
        result.status = parts->status();
        result.stats = parts->stats();
        result.stop_reason = parts->stop_reason();
    } else {
        Solver solver(model, options);
        Integer count = 0;
        while (solver.next())
            ++count;
        result.status = solver.status();
        if (result.status == Status::AllSolutions || result.status == Status::Unsatisfiable)
            result.count = count;
        result.stats = solver.stats();
        result.stop_reason = solver.stop_reason();
    }
    if (!result.count) result.status = Status::Unknown; // stopped after some solutions: the count is unknown
    return result;
}

} // namespace constrint
