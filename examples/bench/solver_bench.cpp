// ConstrINT on the classic benchmark problems and the FlashRNN tiling models: prints a table of
// status, time (median of several runs) and search statistics, and writes it as CSV.
// Usage: solver_bench [CSV_PATH]   (gecode_compare.sh runs Gecode on the same problems)
#include "models/classic_models.hpp"
#include <constrint/constrint.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace constrint;
using constrint::examples::pigeonhole;
using constrint::examples::queens;

namespace {

// Tiles of a 4096 x 4096 x 4096 GEMM: block tile, K step, warp grid and pipeline depth.
Model gemm_tiling() {
    Model m;
    Var bm = m.var("BM", 16, 512), bn = m.var("BN", 16, 512), bk = m.var("BK", 16, 256);
    Var wm = m.var("WM", 1, 8), wn = m.var("WN", 1, 8), stages = m.var("STAGES", 1, 6);
    m.add(bm % 16 == 0);
    m.add(bn % 16 == 0);
    m.add(bk % 16 == 0);
    m.add(Expr(4096) % bm == 0);
    m.add(Expr(4096) % bn == 0);
    m.add(Expr(4096) % bk == 0);
    m.add(bm % (wm * 16) == 0);
    m.add(bn % (wn * 8) == 0);
    m.add(wm * wn * 32 <= 1024);
    m.add(stages * (bm + bn) * bk * 2 <= 227 * 1024);
    m.add(bm * bn / (wm * wn * 32) <= 128);
    return m;
}

struct Case {
    std::string name;
    std::function<Result()> run;
};

} // namespace

int main(int argc, char** argv) {
    const std::string csv_path = argc > 1 ? argv[1] : "solver_bench.csv";
    const std::string models = std::string(CONSTRINT_SOURCE_DIR) + "/examples/models/";
    SolveOptions first_fail;
    first_fail.order = VarOrder::SmallestDomain;
    std::vector<Case> cases{
        {"queens 50, first solution (smallest domain)", [&] { return solve(queens(50), first_fail); }},
        {"queens 12, all solutions", [] { return solve_all(queens(12)); }},
        {"pigeonhole 10 into 9 (unsat)", [] { return solve(pigeonhole(10, 9)); }},
        {"GEMM tiling, all solutions", [] { return solve_all(gemm_tiling()); }},
        {"x*y*z == 2^80 * 3^7, x,y,z in [1, 2^70]",
         [&] { return solve(load_cint(models + "big_numbers.cint")); }},
    };
    // The FlashRNN tiling models, then optimisation over huge ranges (objective-directed search).
    for (const auto& [folder, label] :
         {std::pair{"flashrnn", "tiling "}, std::pair{"optimisation", "optimise "}}) {
        std::vector<std::string> paths;
        for (const auto& entry : std::filesystem::directory_iterator(models + folder)) {
            if (entry.path().extension() == ".cint") paths.push_back(entry.path().string());
        }
        std::sort(paths.begin(), paths.end());
        for (const std::string& path : paths) {
            cases.push_back({label + std::filesystem::path(path).stem().string(),
                             [path] { return solve(load_cint(path)); }});
        }
    }

    std::ofstream csv(csv_path);
    csv << "case,status,solutions,median_seconds,nodes,failures,propagations\n";
    std::printf("%-58s %-14s %9s %12s %10s %10s\n", "case", "status", "solutions", "median ms", "nodes",
                "failures");
    for (const Case& c : cases) {
        std::vector<double> seconds;
        Result r;
        for (int run = 0; run < 5; ++run) {
            r = c.run(); // includes loading and compiling the model
            seconds.push_back(r.stats.seconds);
            if (r.stats.seconds > 2.0) break; // slow cases: one run is enough
        }
        std::sort(seconds.begin(), seconds.end());
        const double median = seconds[seconds.size() / 2];
        std::printf("%-58s %-14s %9zu %12.3f %10llu %10llu\n", c.name.c_str(), to_string(r.status),
                    r.solutions.size(), median * 1e3, static_cast<unsigned long long>(r.stats.nodes),
                    static_cast<unsigned long long>(r.stats.failures));
        csv << '"' << c.name << "\"," << to_string(r.status) << ',' << r.solutions.size() << ',' << median
            << ',' << r.stats.nodes << ',' << r.stats.failures << ',' << r.stats.propagations << '\n';
    }
    std::printf("(time: one solve, compiling the model into propagators included, reading .cint text "
                "excluded; CSV: %s)\n",
                csv_path.c_str());
    return 0;
}
