// solve_flatzinc: parse, build, search, and report in the FlatZinc output format.
#include "constrint/flatzinc.hpp"

#include "engine/search.hpp"
#include "flatzinc/builder.hpp"
#include "flatzinc/output.hpp"
#include "flatzinc/parser.hpp"

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

} // namespace

void solve_flatzinc(std::string_view source, const std::string& file, const FlatZincOptions& options,
                    std::ostream& out) {
    const auto start = std::chrono::steady_clock::now();
    flatzinc::Deadline deadline(start, options.time_limit_seconds);
    flatzinc::Program program;
    try {
        const flatzinc::Ast ast = flatzinc::parse(source, file, deadline);
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
    Search search(program.model, std::move(program.compiled), solve_options, std::move(program.phases));

    // Satisfaction stops after one solution unless -a or -n asks for more; optimisation prints every
    // improving solution (the last one is the best).
    const std::uint64_t wanted = options.all_solutions ? UINT64_MAX : options.solution_limit.value_or(1);
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
    if (options.statistics)
        write_statistics(out, search.stats(), program.model->variables().size(), propagators, init_seconds,
                         objective);
    out.flush();
}

} // namespace constrint
