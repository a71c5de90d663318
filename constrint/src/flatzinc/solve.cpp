// solve_flatzinc: parse, build, search, and report in the FlatZinc output format.
#include "constrint/flatzinc.hpp"

#include "engine/parallel_search.hpp"
#include "flatzinc/builder.hpp"
#include "flatzinc/output.hpp"
#include "flatzinc/parser.hpp"
#include "flatzinc/parts.hpp"

#include <chrono>
#include <ostream>

namespace constrint {

namespace {

void write_statistics(std::ostream& out, const Stats& stats, std::size_t variables, int propagators,
                      double init_seconds, const std::optional<Integer>& objective) {
    const auto stat = [&](const char* name, const auto& value) {
        out << "%%%mzn-stat: " << name << "=" << value << "\n";
    };
    stat("nodes", stats.nodes);
    stat("failures", stats.failures);
    stat("propagations", stats.propagations);
    stat("solutions", stats.solutions);
    stat("peakDepth", stats.max_depth);
    stat("variables", variables);
    stat("propagators", propagators);
    stat("initTime", init_seconds);
    stat("solveTime", stats.seconds);
    if (objective) stat("objective", to_string(*objective));
    out << "%%%mzn-stat-end\n";
}

// One thread searches `program`; more build their own stores from the same syntax tree.
std::unique_ptr<SearchEngine> make_search(const flatzinc::Ast& ast, const std::string& file,
                                          flatzinc::Deadline& deadline, bool free_search,
                                          flatzinc::Program& program, const SolveOptions& options) {
    if (options.threads == 1)
        return std::make_unique<Search>(program.model, std::move(program.compiled), options,
                                        std::move(program.phases));
    bool first = true;
    return std::make_unique<ParallelSearch>(program.model, options, [&](const SolveOptions& per_thread) {
        if (first) {
            first = false;
            return std::make_unique<Search>(program.model, std::move(program.compiled), per_thread,
                                            std::move(program.phases));
        }
        flatzinc::Program own = flatzinc::Builder(ast, file, deadline).build(free_search);
        return std::make_unique<Search>(own.model, std::move(own.compiled), per_thread,
                                        std::move(own.phases));
    });
}

} // namespace

void solve_flatzinc(std::string_view source, const std::string& file, const FlatZincOptions& options,
                    std::ostream& out) {
    const auto start = std::chrono::steady_clock::now();
    flatzinc::Deadline deadline(start, options.time_limit_seconds);
    check_threads(options.threads);
    flatzinc::Ast ast;
    flatzinc::Program program;
    try {
        ast = flatzinc::parse(source, file, deadline);
        program = flatzinc::Builder(ast, file, deadline).build(options.free_search);
    } catch (const flatzinc::TimeLimitReached&) {
        out << "=====UNKNOWN=====\n" << std::flush; // the limit passed before the search could start
        return;
    }
    const double init_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    SolveOptions solve_options;
    if (options.time_limit_seconds)
        solve_options.time_limit_seconds = std::max(0.0, *options.time_limit_seconds - init_seconds);
    const bool optimise = program.goal != flatzinc::SolveItem::Goal::Satisfy;
    const int propagators = program.compiled->store.num_propagators(); // before the search adds its own
    const auto statistics = [&](Stats stats, const std::optional<Integer>& objective) {
        if (!options.statistics) return;
        write_statistics(out, stats, program.model->variables().size(), propagators, init_seconds, objective);
    };

    // A part without solutions: the model has none, and the search need not go through the others.
    Stats parts_stats;
    if (options.split_parts) {
        flatzinc::PartsCheck parts;
        try {
            parts = flatzinc::check_parts(ast, file, deadline, options.free_search, program, solve_options);
        } catch (const flatzinc::TimeLimitReached&) {
            out << "=====UNKNOWN=====\n" << std::flush; // building the parts took the time
            return;
        }
        parts_stats = parts.stats;
        if (parts.unsatisfiable) {
            out << "=====UNSATISFIABLE=====\n";
            statistics(parts_stats, std::nullopt);
            out.flush();
            return;
        }
        if (options.time_limit_seconds) {
            const double spent =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            solve_options.time_limit_seconds = std::max(0.0, *options.time_limit_seconds - spent);
        }
    }

    // Satisfaction stops after one solution unless -a or -n asks for more; optimisation prints every
    // improving solution (the last one is the best).
    const std::uint64_t wanted = options.all_solutions ? UINT64_MAX : options.solution_limit.value_or(1);
    solve_options.threads = options.threads;
    if (!optimise && wanted != UINT64_MAX) solve_options.solution_limit = wanted;
    solve_options.any_first_answer = !optimise; // any solution of a satisfaction problem will do
    std::unique_ptr<SearchEngine> engine;
    try {
        engine = make_search(ast, file, deadline, options.free_search, program, solve_options);
    } catch (const flatzinc::TimeLimitReached&) {
        out << "=====UNKNOWN=====\n" << std::flush; // building the threads' stores took the time
        return;
    }
    SearchEngine& search = *engine;
    std::uint64_t found = 0;
    std::optional<Integer> objective;
    while (optimise || found < wanted) {
        const std::optional<Solution> solution = search.next();
        if (!solution) break;
        ++found;
        if (optimise) objective = solution->evaluate(program.model->objectives().front().term);
        flatzinc::write_solution(out, program.outputs, solution->values());
        out.flush();
    }
    switch (search.status()) {
    case Status::AllSolutions:
    case Status::Optimal:
        out << "==========\n";
        break;
    case Status::Unsatisfiable:
        out << "=====UNSATISFIABLE=====\n";
        break;
    case Status::Unknown:
        if (found == 0) out << "=====UNKNOWN=====\n";
        break;
    case Status::Satisfiable:
        break;
    }
    Stats stats = search.stats(); // the parts' searches included
    stats.nodes += parts_stats.nodes;
    stats.failures += parts_stats.failures;
    stats.propagations += parts_stats.propagations;
    stats.seconds += parts_stats.seconds;
    statistics(stats, objective);
    out.flush();
}

} // namespace constrint
