// FlatZinc: ConstrINT as a MiniZinc solver (the `fzn-constrint` program; docs/flatzinc.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace constrint {

// The standard flags of a FlatZinc solver.
struct FlatZincOptions {
    bool all_solutions = false; // -a: every solution (satisfaction), every improvement (optimisation)
    std::optional<std::uint64_t> solution_limit; // -n N: stop after N solutions (satisfaction)
    bool statistics = false;                     // -s: `%%%mzn-stat: ` lines after the answer
    std::optional<double> time_limit_seconds;    // -t (milliseconds on the command line)
    bool free_search = false;                    // -f: ignore the search annotations
    int threads = 1;                             // -p N: threads of the search (SolveOptions::threads)
    // Each independent part searched alone for a first solution before the search (--no-split: not;
    // docs/flatzinc.md, "Independent parts").
    bool split_parts = true;
};

// Reads the FlatZinc model `source` (named `file` in messages), solves it and writes the answer in
// the FlatZinc output format to `out`: each solution's output variables followed by `----------`,
// then `==========` when the search is complete, or `=====UNSATISFIABLE=====` / `=====UNKNOWN=====`.
// Throws ParseError (file:line:column) for malformed or unsupported input (float and set
// variables, unknown constraints).
void solve_flatzinc(std::string_view source, const std::string& file, const FlatZincOptions& options,
                    std::ostream& out);

} // namespace constrint
