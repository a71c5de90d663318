// fzn-constrint: ConstrINT as a FlatZinc solver, the executable MiniZinc runs (constrint.msc).
#include <constrint/constrint.hpp>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

namespace {

// Exit statuses (docs/flatzinc.md): 0 an answer was printed (solutions, UNSATISFIABLE, UNKNOWN),
// 1 a bad or unsupported model, 2 bad usage, 3 out of memory (a limit, as in `constrint solve`).
constexpr int kExitBadModel = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 3;

constexpr const char* kUsage =
    "usage: fzn-constrint [options] model.fzn\n"
    "  -a          all solutions (satisfaction), every improving solution (optimisation)\n"
    "  -n N        stop after N solutions\n"
    "  -s          print statistics (%%%mzn-stat: lines)\n"
    "  -t MS       time limit in milliseconds\n"
    "  -f          free search: ignore the search annotations\n"
    "  -p N        threads of the search (default 1; optima as one thread, any solution first)\n"
    "  -r SEED     random seed (accepted; the search is deterministic)\n"
    "  --no-split  no search of the independent parts alone before the search\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::cerr << "fzn-constrint: " << message << "\n" << kUsage;
    std::exit(kExitUsage);
}

unsigned long long number_argument(int argc, char** argv, int& i, const std::string& flag) {
    if (i + 1 >= argc) usage_error(flag + " expects a number");
    const std::string text = argv[++i];
    std::size_t used = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || text[0] == '-')
        usage_error(flag + " expects a non-negative number, got '" + text + "'");
    return value;
}

} // namespace

int main(int argc, char** argv) {
    constrint::FlatZincOptions options;
    std::string file;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-a" || arg == "--all-solutions") {
            options.all_solutions = true;
        } else if (arg == "-n" || arg == "--num-solutions") {
            options.solution_limit = number_argument(argc, argv, i, arg);
        } else if (arg == "-s" || arg == "--statistics") {
            options.statistics = true;
        } else if (arg == "-t" || arg == "--time-limit") {
            options.time_limit_seconds = static_cast<double>(number_argument(argc, argv, i, arg)) / 1000.0;
        } else if (arg == "-f" || arg == "--free-search") {
            options.free_search = true;
        } else if (arg == "-p" || arg == "--parallel") {
            const unsigned long long threads = number_argument(argc, argv, i, arg);
            if (threads < 1 || threads > static_cast<unsigned long long>(constrint::kMaxThreads))
                usage_error(arg + " expects a number of threads from 1 to " +
                            std::to_string(constrint::kMaxThreads));
            options.threads = static_cast<int>(threads);
        } else if (arg == "--no-split") {
            options.split_parts = false;
        } else if (arg == "-r" || arg == "--random-seed") {
            number_argument(argc, argv, i, arg); // accepted and checked; the search is deterministic
        } else if (arg == "-h" || arg == "--help") {
            std::cout << kUsage;
            return 0;
        } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
            usage_error("unknown option '" + arg + "'");
        } else if (!file.empty()) {
            usage_error("more than one model file");
        } else {
            file = arg;
        }
    }
    if (file.empty()) usage_error("no model file");

    try {
        std::string text;
        if (file == "-") {
            std::stringstream in;
            in << std::cin.rdbuf();
            text = in.str();
        } else {
            text = constrint::read_model_file(file);
        }
        constrint::solve_flatzinc(text, file == "-" ? "<stdin>" : file, options, std::cout);
    } catch (const constrint::FileError& e) {
        std::cerr << "fzn-constrint: " << e.what() << "\n";
        return kExitBadModel;
    } catch (const constrint::Error& e) {
        std::cout.flush();
        std::cerr << e.what() << "\n";
        return kExitBadModel;
    } catch (const std::bad_alloc&) {
        // A limit, as for `constrint solve`: the solutions printed so far stand.
        std::cout.flush();
        std::cerr << "fzn-constrint: stopped: out of memory\n";
        return kExitOutOfMemory;
    } catch (const std::exception& e) {
        std::cout.flush();
        std::cerr << "fzn-constrint: internal error: " << e.what() << "\n";
        return kExitBadModel;
    }
    return 0;
}
