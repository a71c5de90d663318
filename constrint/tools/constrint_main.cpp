// The `constrint` command: solves `.cint` models (docs/cli.md).
#include <constrint/constrint.hpp>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace {

using namespace constrint;

// There is no generated version header; keep this in step with project(VERSION) in CMakeLists.txt.
constexpr const char* kVersion = "0.1.0";

// Exit statuses (docs/cli.md).
constexpr int kExitSolution = 0;
constexpr int kExitUnsatisfiable = 1;
constexpr int kExitUsage = 2;
constexpr int kExitStopped = 3;

constexpr const char* kUsage = "usage: constrint solve FILE [options]   (constrint --help for details)";

constexpr const char* kHelp = R"(constrint - solve integer constraint models written in the .cint format

usage:
  constrint solve FILE [options]   solve the model in FILE ('-' reads standard input)
  constrint format FILE            print the model as the writer normalises it
  constrint --help                 this text
  constrint --version              the version

options of solve (anywhere after 'solve'; '--opt=value' works too):
  --all               every solution (without objectives), each once, in search order
  --limit N           at most N solutions (implies --all); with objectives at most N improving ones
  --timeout SECONDS   stop after this much wall-clock time (a decimal number > 0), reading the
                      model included; the program returns within SECONDS + 1 on any input
  --memory-limit MIB  fail cleanly (exit 3) when the program would use more than MIB mebibytes
                      of memory
  --order ORDER       decision variable order: declaration (default; the answer is the
                      lexicographically first solution under 'search' and 'prefer'),
                      smallest (fewest values left first) or most-constrained
  --threads N         search with N threads (default 1): the same first answer, enumeration
                      and optimal values as one thread; the optimum printed last is the first
                      solution in search order with the optimal values
  --json              print one JSON object instead of text
  --stats             print search statistics after the answer ('% nodes: 123' lines)
  --count             print the number of solutions only ('count = N'; --json: "count"),
                      exact at any size; independent parts are counted apart and multiplied
  --no-split          search the model whole instead of its independent parts one by one
                      (docs/solver.md, "Independent parts"); for comparisons
  --explain           for an unsatisfiable model, print a small set of constraints that
                      cannot hold together, as FILE:LINE: text (and whether it is minimal);
                      of a model of independent parts, those of the part without solutions

output (text):
  each solution as 'name = value' lines, every variable in declaration order, then '----------';
  with objectives each improving solution as it is found; '==========' when the last one is
  proven optimal or when every solution was printed; 'UNSATISFIABLE' when there is no solution;
  'UNKNOWN' when a limit or Ctrl-C stopped the search before any solution.

output (--json):
  {"status": "SATISFIABLE" | "OPTIMAL" | "ALL_SOLUTIONS" | "UNSATISFIABLE" | "UNKNOWN",
   "solutions": [{"x": 12, ...}, ...],
   "stats": {"nodes": .., "failures": .., "propagations": .., "solutions": .., "max_depth": ..,
             "seconds": ..}}
  (with --explain on an unsatisfiable model also "conflict": {"minimal": .., "checks": ..,
   "constraints": [..]}, checks: the sub-problems solved to find it)

exit status:
  0  a solution was found        1  proven unsatisfiable
  2  bad usage or a bad model    3  stopped by a limit (or Ctrl-C) before any solution

Ctrl-C stops the search cleanly: what was found so far is reported. The format is described in
docs/model-format.md, this command in docs/cli.md.
)";

// Set by SIGINT; the solver polls it through SolveOptions::cancel.
std::atomic<bool> g_cancel{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the SIGINT handler stores to this flag");

extern "C" void on_interrupt(int) {
    g_cancel.store(true);
    std::signal(SIGINT, SIG_DFL); // a second Ctrl-C ends the program at once
}

struct UsageError {
    std::string message;
};

struct Options {
    std::string command;
    std::string file;
    bool all = false;
    std::optional<std::uint64_t> limit;
    std::optional<double> timeout;
    std::optional<std::uint64_t> memory_limit_mib;
    VarOrder order = VarOrder::Declaration;
    int threads = 1;
    bool json = false;
    bool stats = false;
    bool explain = false;
    bool count = false;      // print the number of solutions only
    bool split_parts = true; // --no-split: search the model whole
};

std::uint64_t parse_limit(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value == 0) {
        throw UsageError{"--limit needs a positive integer, got '" + std::string(text) + "'"};
    }
    return value;
}

std::uint64_t parse_mebibytes(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value == 0 || value > (1ULL << 40)) {
        throw UsageError{"--memory-limit needs a positive number of mebibytes, got '" + std::string(text) +
                         "'"};
    }
    return value;
}

double parse_seconds(std::string_view text) {
    // std::from_chars for double is missing in some standard libraries; strtod with a full-match check.
    const std::string copy(text);
    char* end = nullptr;
    errno = 0;
    const double value = copy.empty() ? 0 : std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || errno != 0 || !std::isfinite(value) ||
        value <= 0) {
        throw UsageError{"--timeout needs a number of seconds > 0, got '" + copy + "'"};
    }
    return value;
}

int parse_threads(std::string_view text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > kMaxThreads) {
        throw UsageError{"--threads needs a number from 1 to " + std::to_string(kMaxThreads) + ", got '" +
                         std::string(text) + "'"};
    }
    return value;
}

VarOrder parse_order(std::string_view text) {
    if (text == "declaration") return VarOrder::Declaration;
    if (text == "smallest") return VarOrder::SmallestDomain;
    if (text == "most-constrained") return VarOrder::MostConstrained;
    throw UsageError{"--order needs declaration, smallest or most-constrained, got '" + std::string(text) +
                     "'"};
}

Options parse_arguments(const std::vector<std::string>& args) {
    Options o;
    if (args.empty()) throw UsageError{"no command given"};
    o.command = args[0];
    if (o.command != "solve" && o.command != "format") {
        throw UsageError{"unknown command '" + o.command + "'"};
    }
    bool only_files = false; // after "--"
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (only_files || arg == "-" || arg.empty() || arg[0] != '-') {
            if (!o.file.empty())
                throw UsageError{"more than one model file given ('" + o.file + "', '" + arg + "')"};
            if (arg.empty()) throw UsageError{"empty file name"};
            o.file = arg;
            continue;
        }
        if (arg == "--") {
            only_files = true;
            continue;
        }
        std::string name = arg;
        std::optional<std::string> value;
        if (const auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
        }
        auto needs_value = [&]() -> std::string {
            if (value) return *value;
            if (i + 1 >= args.size()) throw UsageError{name + " needs a value"};
            return args[++i];
        };
        auto no_value = [&] {
            if (value) throw UsageError{name + " takes no value"};
        };
        const bool solve_option = name == "--all" || name == "--limit" || name == "--timeout" ||
                                  name == "--order" || name == "--json" || name == "--stats" ||
                                  name == "--explain" || name == "--memory-limit" || name == "--threads" ||
                                  name == "--count" || name == "--no-split";
        if (solve_option && o.command != "solve") throw UsageError{name + " is an option of 'solve'"};
        if (name == "--all") {
            no_value();
            o.all = true;
        } else if (name == "--limit") {
            o.limit = parse_limit(needs_value());
        } else if (name == "--timeout") {
            o.timeout = parse_seconds(needs_value());
        } else if (name == "--memory-limit") {
            o.memory_limit_mib = parse_mebibytes(needs_value());
        } else if (name == "--order") {
            o.order = parse_order(needs_value());
        } else if (name == "--threads") {
            o.threads = parse_threads(needs_value());
        } else if (name == "--json") {
            no_value();
            o.json = true;
        } else if (name == "--stats") {
            no_value();
            o.stats = true;
        } else if (name == "--explain") {
            no_value();
            o.explain = true;
        } else if (name == "--count") {
            no_value();
            o.count = true;
        } else if (name == "--no-split") {
            no_value();
            o.split_parts = false;
        } else {
            throw UsageError{"unknown option '" + arg + "'"};
        }
    }
    if (o.file.empty()) throw UsageError{"no model file given"};
    return o;
}

// The model text, or a usage error naming the file.
std::string read_model(const std::string& file) {
    if (file == "-") {
        std::ostringstream text;
        text << std::cin.rdbuf();
        return text.str();
    }
    try {
        return read_model_file(file);
    } catch (const FileError& e) {
        throw UsageError{e.what()};
    }
}

// ---- output -----------------------------------------------------------------------------------

// A JSON string: quotes, backslashes and control characters escaped; bytes that are not UTF-8
// become U+FFFD so that the document stays valid.
std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x20 || c == 0x7f) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
            out += buffer;
            ++i;
        } else if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
        } else {
            // Length of a well-formed UTF-8 sequence starting here, or 0.
            std::size_t length = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
            if (c >= 0xf5) length = 0;
            if (length && i + length <= s.size()) {
                for (std::size_t k = 1; k < length; ++k) {
                    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) length = 0;
                }
                // Overlong and surrogate forms.
                const auto c1 = length ? static_cast<unsigned char>(s[i + 1]) : 0;
                if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) ||
                    (c == 0xf4 && c1 >= 0x90)) {
                    length = 0;
                }
            } else {
                length = 0;
            }
            if (length) {
                out.append(s.substr(i, length));
                i += length;
            } else {
                out += "\\ufffd";
                ++i;
            }
        }
    }
    out += '"';
    return out;
}

std::string seconds_text(double seconds) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6f", seconds);
    return buffer;
}

void print_solution_text(const Model& model, const Solution& solution) {
    std::string out;
    const auto& variables = model.variables();
    for (std::size_t i = 0; i < variables.size(); ++i) {
        out += variables[i].name;
        out += " = ";
        out += to_string(solution.values()[i]);
        out += '\n';
    }
    out += "----------\n";
    std::cout << out << std::flush;
}

std::string solution_json(const Model& model, const Solution& solution) {
    std::string out = "{";
    const auto& variables = model.variables();
    for (std::size_t i = 0; i < variables.size(); ++i) {
        if (i) out += ", ";
        out += json_string(variables[i].name);
        out += ": ";
        out += to_string(solution.values()[i]); // JSON integers of any size
    }
    out += "}";
    return out;
}

void print_stats_text(const Stats& s) {
    std::cout << "% nodes: " << s.nodes << "\n"
              << "% failures: " << s.failures << "\n"
              << "% propagations: " << s.propagations << "\n"
              << "% solutions: " << s.solutions << "\n"
              << "% max_depth: " << s.max_depth << "\n"
              << "% seconds: " << seconds_text(s.seconds) << "\n";
}

std::string stats_json(const Stats& s) {
    return "{\"nodes\": " + std::to_string(s.nodes) + ", \"failures\": " + std::to_string(s.failures) +
           ", \"propagations\": " + std::to_string(s.propagations) +
           ", \"solutions\": " + std::to_string(s.solutions) +
           ", \"max_depth\": " + std::to_string(s.max_depth) + ", \"seconds\": " + seconds_text(s.seconds) +
           "}";
}

// "FILE:LINE: text" for a constraint from a file, its label otherwise.
std::string origin_text(const Origin& o) {
    if (o.file.empty()) return o.text;
    return o.file + ":" + std::to_string(o.line) + ": " + o.text;
}

// ---- limits that hold whatever the input ----------------------------------------------------------

const auto g_program_start = std::chrono::steady_clock::now();

double seconds_since_start() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_program_start).count();
}

// What has been printed, shared with the watchdog: every print of a solution and the final report
// hold the mutex, so that the watchdog's last word never interleaves with them.
struct Progress {
    std::mutex mutex;
    std::condition_variable finished_changed;
    bool finished = false; // the final report is being printed (or an error)
    bool json = false;
    std::uint64_t solutions = 0;
    std::vector<std::string> json_solutions;
};
Progress& g_progress = *new Progress; // never destroyed: the watchdog thread may still wait on it at exit

// After --timeout the solver stops at its next check (within milliseconds: every value is bounded
// by kMaxTermBits); reading and preparing a model are not interruptible, so a watchdog ends the
// program this long after the limit in any case.
constexpr double kTimeoutSlackSeconds = 0.5;

// The report of a run a limit ended outside the search (the caller holds g_progress.mutex):
// the solutions printed so far stand; returns the exit status.
int report_stopped(const std::string& reason) {
    Progress& p = g_progress;
    if (p.json) {
        std::string out = "{\n  \"status\": ";
        out += p.solutions ? "\"SATISFIABLE\"" : "\"UNKNOWN\"";
        out += ",\n  \"solutions\": [";
        for (std::size_t i = 0; i < p.json_solutions.size(); ++i) {
            out += i ? ",\n    " : "\n    ";
            out += p.json_solutions[i];
        }
        out += p.json_solutions.empty() ? "]" : "\n  ]";
        out += ",\n  \"stats\": {\"nodes\": 0, \"failures\": 0, \"propagations\": 0, \"solutions\": " +
               std::to_string(p.solutions) +
               ", \"max_depth\": 0, \"seconds\": " + seconds_text(seconds_since_start()) + "}";
        out += ",\n  \"stopped\": " + json_string(reason) + "\n}\n";
        std::cout << out;
    } else if (p.solutions == 0) {
        std::cout << "UNKNOWN\n";
    }
    std::cout << std::flush;
    std::cerr << "constrint: stopped: " << reason << std::endl;
    return p.solutions ? kExitSolution : kExitStopped;
}

// Reading and preparing a model poll neither the clock nor the cancel flag, so a watchdog ends the
// program kTimeoutSlackSeconds after the time limit, or after the first Ctrl-C, when the run has not
// finished its report by then (the search itself stops well within that at its next check).
void start_watchdog(std::optional<double> timeout) {
    std::thread([timeout] {
        using Clock = std::chrono::steady_clock;
        const auto slack =
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kTimeoutSlackSeconds));
        std::optional<Clock::time_point> deadline;
        if (timeout)
            deadline = g_program_start +
                       std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*timeout)) +
                       slack;
        std::optional<Clock::time_point> interrupted_deadline;
        std::unique_lock lock(g_progress.mutex);
        while (!g_progress.finished_changed.wait_for(lock, std::chrono::milliseconds(20),
                                                     [] { return g_progress.finished; })) {
            const auto now = Clock::now();
            if (!interrupted_deadline && g_cancel.load()) interrupted_deadline = now + slack;
            if (interrupted_deadline && now >= *interrupted_deadline)
                std::_Exit(report_stopped("interrupted (Ctrl-C)"));
            if (deadline && now >= *deadline)
                std::_Exit(report_stopped("time limit " + std::to_string(*timeout) +
                                          " s reached before the model could be read or prepared"));
        }
    }).detach();
}

void set_memory_limit(std::uint64_t mebibytes) {
    const rlimit limit{mebibytes << 20, mebibytes << 20};
    if (setrlimit(RLIMIT_AS, &limit) != 0)
        throw UsageError{"--memory-limit: cannot set the limit: " + std::string(std::strerror(errno))};
}

// ---- commands ---------------------------------------------------------------------------------

int run_format(const Options& o) {
    const Model model = parse_cint(read_model(o.file), o.file == "-" ? "<stdin>" : o.file);
    std::cout << write_cint(model);
    return kExitSolution;
}

// --count: the number of solutions, exact at any size (independent parts are not enumerated).
int run_count(const Options& o, const Model& model, const SolveOptions& options) {
    const CountResult result = count_solutions(model, options);
    const std::string count = result.count ? result.count->str() : "";
    if (o.json) {
        std::cout << "{\"status\": \"" << to_string(result.status)
                  << "\", \"count\": " << (result.count ? count : "null") << "}\n";
    } else {
        std::cout << (result.count ? "count = " + count : std::string("UNKNOWN")) << "\n";
    }
    if (o.stats && !o.json) print_stats_text(result.stats);
    return result.count ? kExitSolution : kExitStopped;
}

int run_solve(const Options& o) {
    const std::string file = o.file == "-" ? "<stdin>" : o.file;
    const Model model = parse_cint(read_model(o.file), file);

    SolveOptions options;
    options.order = o.order;
    // The time limit counts from the start of the program: reading the model is part of it.
    if (o.timeout) options.time_limit_seconds = std::max(1e-3, *o.timeout - seconds_since_start());
    options.cancel = &g_cancel;
    options.threads = o.threads;
    options.split_parts = o.split_parts;
    if (o.count) return run_count(o, model, options);

    const bool optimise = !model.objectives().empty();
    const bool enumerate = o.all || o.limit.has_value();
    if (!optimise) options.solution_limit = enumerate ? o.limit : std::optional<std::uint64_t>(1);
    Solver solver(model, options);
    std::vector<std::string> json_solutions;
    std::uint64_t count = 0;
    bool stopped_by_count = false;
    while (true) {
        std::optional<Solution> solution = solver.next();
        if (!solution) break;
        ++count;
        {
            const std::lock_guard lock(g_progress.mutex);
            ++g_progress.solutions;
            if (o.json) {
                json_solutions.push_back(solution_json(model, *solution));
                g_progress.json_solutions.push_back(json_solutions.back());
            } else {
                print_solution_text(model, *solution);
            }
        }
        if (o.limit && count >= *o.limit) {
            stopped_by_count = true;
            break;
        }
        if (!optimise && !enumerate) {
            stopped_by_count = true;
            break;
        }
    }
    Status status = solver.status();
    if (stopped_by_count && count > 0 && status == Status::Unknown) status = Status::Satisfiable;
    if (count > 0 && status == Status::Unsatisfiable) status = Status::Satisfiable; // defensive
    // Without --all the answer is one solution, even when the search happens to be complete.
    if (!optimise && !enumerate && status == Status::AllSolutions) status = Status::Satisfiable;

    // An explanation of infeasibility: each check runs under the run's limits and the cancel flag.
    std::optional<Conflict> conflict;
    bool explained = false;
    if (o.explain && status == Status::Unsatisfiable) {
        SolveOptions per_check;
        per_check.order = o.order;
        per_check.cancel = &g_cancel;
        per_check.split_parts = o.split_parts; // the failing part's constraints only
        per_check.node_limit = 1000000;        // a check undecided within this keeps its constraint
        std::optional<double> left;            // one deadline for all the checks: the run's
        if (o.timeout) left = std::max(1e-3, *o.timeout - seconds_since_start());
        conflict = explain_conflict(model, per_check, left);
        explained = true;
    }

    const std::lock_guard lock(g_progress.mutex);
    g_progress.finished = true;
    g_progress.finished_changed.notify_all();
    const std::string& reason = solver.stop_reason();
    if (o.json) {
        std::string out = "{\n  \"status\": ";
        out += json_string(to_string(status));
        out += ",\n  \"solutions\": [";
        for (std::size_t i = 0; i < json_solutions.size(); ++i) {
            out += i ? ",\n    " : "\n    ";
            out += json_solutions[i];
        }
        out += json_solutions.empty() ? "]" : "\n  ]";
        out += ",\n  \"stats\": " + stats_json(solver.stats());
        if (!reason.empty() && status != Status::Optimal && status != Status::AllSolutions &&
            status != Status::Unsatisfiable) {
            out += ",\n  \"stopped\": " + json_string(reason);
        }
        if (explained) {
            out += ",\n  \"conflict\": ";
            if (!conflict) {
                out += "null";
            } else {
                out += "{\"minimal\": ";
                out += conflict->minimal ? "true" : "false";
                out += ", \"checks\": " + std::to_string(conflict->checks);
                out += ", \"constraints\": [";
                for (std::size_t i = 0; i < conflict->constraints.size(); ++i) {
                    const Origin& origin = model.constraints()[conflict->constraints[i]].origin;
                    out += i ? ",\n    " : "\n    ";
                    out += "{\"file\": " + json_string(origin.file) +
                           ", \"line\": " + std::to_string(origin.line) +
                           ", \"text\": " + json_string(origin.text) + "}";
                }
                out += conflict->constraints.empty() ? "]}" : "\n  ]}";
            }
        }
        out += "\n}\n";
        std::cout << out << std::flush;
    } else {
        if (status == Status::Optimal || status == Status::AllSolutions) std::cout << "==========\n";
        if (status == Status::Unsatisfiable) std::cout << "UNSATISFIABLE\n";
        if (status == Status::Unknown && count == 0) std::cout << "UNKNOWN\n";
        if (explained) {
            if (!conflict) {
                std::cout << "% no explanation: the first check did not finish within its limits\n";
            } else if (conflict->constraints.empty()) {
                std::cout << "% the variable domains alone admit no solution\n";
            } else {
                const std::size_t n = conflict->constraints.size();
                std::cout << "% "
                          << (n == 1 ? "this constraint cannot hold"
                                     : "these " + std::to_string(n) + " constraints cannot hold together")
                          << (conflict->minimal
                                  ? " (a minimal set: without any one of them the rest has a solution):\n"
                                  : " (not proven minimal: some checks hit their limits):\n");
                for (std::size_t index : conflict->constraints) {
                    std::cout << origin_text(model.constraints()[index].origin) << "\n";
                }
            }
        }
        if (o.stats) print_stats_text(solver.stats());
        std::cout << std::flush;
    }
    if (!reason.empty() && (status == Status::Unknown || status == Status::Satisfiable) &&
        !stopped_by_count) {
        std::cerr << "constrint: search stopped: " << reason << "\n";
    }

    if (count > 0) return kExitSolution;
    if (status == Status::Unsatisfiable) return kExitUnsatisfiable;
    return kExitStopped;
}

} // namespace

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    std::vector<std::string> args(argv + 1, argv + argc);
    for (const std::string& arg : args) {
        if (arg == "--") break;
        if (arg == "--help" || arg == "-h") {
            std::cout << kHelp;
            return kExitSolution;
        }
        if (arg == "--version") {
            std::cout << "constrint " << kVersion << "\n";
            return kExitSolution;
        }
    }
    // Errors are reported under the watchdog's lock (it may not print its report after them).
    const auto finish = [] {
        g_progress.finished = true;
        g_progress.finished_changed.notify_all();
    };
    std::optional<std::uint64_t> memory_limit;
    try {
        const Options options = parse_arguments(args);
        g_progress.json = options.json;
        memory_limit = options.memory_limit_mib;
        if (options.command != "format") { // Ctrl-C from here on is reported as a stop (docs/cli.md)
            std::signal(SIGINT, on_interrupt);
            start_watchdog(options.timeout);
        }
        if (options.memory_limit_mib) set_memory_limit(*options.memory_limit_mib);
        return options.command == "format" ? run_format(options) : run_solve(options);
    } catch (const UsageError& e) {
        const std::lock_guard lock(g_progress.mutex);
        finish();
        std::cerr << "constrint: " << e.message << "\n" << kUsage << "\n";
    } catch (const ParseError& e) {
        const std::lock_guard lock(g_progress.mutex);
        finish();
        std::cerr << e.what() << "\n";
    } catch (const LocatedModelError& e) {
        const std::lock_guard lock(g_progress.mutex);
        finish();
        std::cerr << e.what() << "\n";
    } catch (const Error& e) {
        const std::lock_guard lock(g_progress.mutex);
        finish();
        std::cerr << "constrint: " << e.what() << "\n";
    } catch (const std::bad_alloc&) {
        const std::lock_guard lock(g_progress.mutex);
        finish();
        return report_stopped(memory_limit
                                  ? "memory limit of " + std::to_string(*memory_limit) + " MiB reached"
                                  : "out of memory");
    } catch (const std::exception& e) {
        const std::lock_guard lock(g_progress.mutex);
        finish();
        std::cerr << "constrint: internal error: " << e.what() << "\n";
    }
    return kExitUsage;
}
