// The `constrint._core` extension: the C++ API with Python operators and Python ints.
#include "integer_caster.hpp"

#include <constrint/constrint.hpp>
#include <pybind11/functional.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace constrint;

namespace {

Prefer prefer_from(const std::string& name) {
    if (name == "min") return Prefer::Min;
    if (name == "max") return Prefer::Max;
    if (name == "split_low") return Prefer::SplitLow;
    if (name == "split_high") return Prefer::SplitHigh;
    throw py::value_error("prefer must be 'min', 'max', 'split_low' or 'split_high', got '" + name + "'");
}

VarOrder order_from(const std::string& name) {
    if (name == "declaration") return VarOrder::Declaration;
    if (name == "smallest") return VarOrder::SmallestDomain;
    if (name == "most_constrained") return VarOrder::MostConstrained;
    throw py::value_error("order must be 'declaration', 'smallest' or 'most_constrained', got '" + name +
                          "'");
}

// Ctrl-C during a solve: the search polls this; it takes the GIL at most every 50 ms to let Python
// look for signals, and remembers a KeyboardInterrupt to raise once the solver has returned.
struct InterruptCheck {
    std::shared_ptr<bool> interrupted = std::make_shared<bool>(false);
    std::shared_ptr<std::chrono::steady_clock::time_point> last =
        std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());

    bool operator()() const {
        const auto now = std::chrono::steady_clock::now();
        if (now - *last < std::chrono::milliseconds(50)) return *interrupted;
        *last = now;
        py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
            PyErr_Clear();
            *interrupted = true;
        }
        return *interrupted;
    }
    void raise_if_interrupted() const {
        if (*interrupted) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
            throw py::error_already_set();
        }
    }
};

// Runs `search` on a copy of the model, taken with the GIL (another thread may change the original),
// with the GIL released; then raises KeyboardInterrupt if Ctrl-C stopped it.
template <typename Search>
auto search_released(const Model& shared_model, const InterruptCheck& check, Search search) {
    const Model model = shared_model;
    decltype(search(model)) result;
    {
        py::gil_scoped_release release;
        result = search(model);
    }
    check.raise_if_interrupted();
    return result;
}

SolveOptions options_from(std::optional<double> timeout, std::optional<std::uint64_t> nodes,
                          const std::string& order, const InterruptCheck& check, int threads = 1,
                          bool split_parts = true) {
    SolveOptions options;
    options.split_parts = split_parts;
    if (threads < 1 || threads > kMaxThreads)
        throw py::value_error("threads must be between 1 and " + std::to_string(kMaxThreads) + ", got " +
                              std::to_string(threads));
    options.threads = threads;
    options.interrupt = check;
    options.order = order_from(order);
    if (timeout) {
        if (!(*timeout > 0)) throw py::value_error("timeout must be a positive number of seconds");
        options.time_limit_seconds = timeout;
    }
    options.node_limit = nodes;
    return options;
}

std::optional<std::vector<std::string>> explain_texts(const Model& shared_model,
                                                      std::optional<double> timeout,
                                                      std::optional<std::uint64_t> nodes, bool split_parts) {
    const Model model = shared_model; // taken with the GIL held: another thread may change the original
    const InterruptCheck check;       // Ctrl-C stops every check of the deletion filter
    SolveOptions per_check =
        options_from(timeout, nodes, "declaration", check, 1, split_parts); // checks the values
    per_check.time_limit_seconds.reset(); // the timeout is one deadline for all the checks
    std::optional<Conflict> conflict;
    {
        py::gil_scoped_release release;
        conflict = explain_conflict(model, per_check, timeout);
    }
    check.raise_if_interrupted();
    if (!conflict) return std::nullopt;
    std::vector<std::string> texts;
    for (std::size_t i : conflict->constraints) {
        const ConstraintInfo& c = model.constraints()[i];
        texts.push_back(c.origin.text.empty() ? to_cint(c.constraint) : c.origin.text);
    }
    return texts;
}

// Model.solutions(): solutions one at a time from an incremental Solver.
// Threads may share one iterator: the solver runs without the GIL, so `busy` lets one at a time in.
struct SolutionIterator {
    std::shared_ptr<Solver> solver;
    InterruptCheck check;
    std::optional<std::uint64_t> limit;
    std::uint64_t produced;
    std::shared_ptr<std::mutex> busy = std::make_shared<std::mutex>();

    Solution next() {
        std::optional<Solution> s;
        {
            py::gil_scoped_release release; // before the lock: a thread waiting on it holds no GIL
            const std::lock_guard lock(*busy);
            if (limit && produced >= *limit) throw py::stop_iteration();
            s = solver->next();
            if (s) ++produced;
        }
        check.raise_if_interrupted();
        if (!s) throw py::stop_iteration();
        return *s;
    }
};

} // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "ConstrINT: an integer constraint solver with exact integers of any size.";
    // The base first: pybind11 tries the translators registered last first.
    const auto error = py::register_exception<Error>(m, "Error", PyExc_ValueError);
    py::register_exception<ModelError>(m, "ModelError", error.ptr());
    py::register_exception<FileError>(m, "FileError", error.ptr());
    // ParseError carries file, line and column as attributes besides its message.
    static py::exception<ParseError> parse_error(m, "ParseError", error.ptr());
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const ParseError& e) {
            py::object instance = py::reinterpret_borrow<py::object>(parse_error.ptr())(e.what());
            instance.attr("file") = e.file();
            instance.attr("line") = e.line();
            instance.attr("column") = e.column();
            PyErr_SetObject(parse_error.ptr(), instance.ptr());
        }
    });

    py::class_<Expr>(m, "Expr", "A term of a model: build it with + - * // % ** abs min max.")
        .def(py::init<const Integer&>(), py::arg("constant"))
        .def(
            "__add__", [](const Expr& a, const Expr& b) { return a + b; }, py::is_operator())
        .def(
            "__radd__", [](const Expr& a, const Expr& b) { return b + a; }, py::is_operator())
        .def(
            "__sub__", [](const Expr& a, const Expr& b) { return a - b; }, py::is_operator())
        .def(
            "__rsub__", [](const Expr& a, const Expr& b) { return b - a; }, py::is_operator())
        .def(
            "__mul__", [](const Expr& a, const Expr& b) { return a * b; }, py::is_operator())
        .def(
            "__rmul__", [](const Expr& a, const Expr& b) { return b * a; }, py::is_operator())
        .def(
            "__floordiv__", [](const Expr& a, const Expr& b) { return a / b; }, py::is_operator())
        .def(
            "__rfloordiv__", [](const Expr& a, const Expr& b) { return b / a; }, py::is_operator())
        .def(
            "__mod__", [](const Expr& a, const Expr& b) { return a % b; }, py::is_operator())
        .def(
            "__rmod__", [](const Expr& a, const Expr& b) { return b % a; }, py::is_operator())
        .def(
            "__pow__", [](const Expr& a, long long k) { return pow(a, k); }, py::is_operator())
        .def("__neg__", [](const Expr& a) { return -a; })
        .def("__abs__", [](const Expr& a) { return abs(a); })
        .def(
            "__eq__", [](const Expr& a, const Expr& b) { return a == b; }, py::is_operator())
        .def(
            "__ne__", [](const Expr& a, const Expr& b) { return a != b; }, py::is_operator())
        .def(
            "__le__", [](const Expr& a, const Expr& b) { return a <= b; }, py::is_operator())
        .def(
            "__lt__", [](const Expr& a, const Expr& b) { return a < b; }, py::is_operator())
        .def(
            "__ge__", [](const Expr& a, const Expr& b) { return a >= b; }, py::is_operator())
        .def(
            "__gt__", [](const Expr& a, const Expr& b) { return a > b; }, py::is_operator())
        .def("__bool__",
             [](const Expr&) -> bool {
                 throw py::type_error("a ConstrINT term has no truth value; use it in a constraint");
             })
        .def("__repr__", [](const Expr& e) { return to_cint(e); });
    py::implicitly_convertible<Integer, Expr>();

    py::class_<Var, Expr>(m, "Var", "A variable of a model.")
        .def_property_readonly("name", &Var::name)
        .def_property_readonly("index", &Var::index);

    py::class_<Constraint>(m, "Constraint", "A constraint: combine with | (or) and & (and).")
        .def("__or__", [](const Constraint& a, const Constraint& b) { return a | b; })
        .def("__and__", [](const Constraint& a, const Constraint& b) { return a & b; })
        .def("__bool__",
             [](const Constraint&) -> bool {
                 throw py::type_error("a ConstrINT constraint has no truth value; add it to a model");
             })
        .def("__repr__", [](const Constraint& c) { return to_cint(c); });

    m.def("divides", &divides, py::arg("divisor"), py::arg("dividend"),
          "dividend % divisor == 0; divisor != 0 of the whole constraint, inside a disjunction too.");
    m.def(
        "min", [](const Expr& a, const Expr& b) { return min(a, b); }, "The smaller of two terms.");
    m.def(
        "max", [](const Expr& a, const Expr& b) { return max(a, b); }, "The larger of two terms.");
    m.def(
        "member",
        [](const Expr& x, std::vector<Integer> values) {
            return member(x, Domain::values(std::move(values)));
        },
        py::arg("term"), py::arg("values"), "The term takes one of the listed values.");

    py::class_<Stats>(m, "Stats", "Search statistics.")
        .def_readonly("nodes", &Stats::nodes)
        .def_readonly("failures", &Stats::failures)
        .def_readonly("propagations", &Stats::propagations)
        .def_readonly("solutions", &Stats::solutions)
        .def_readonly("seconds", &Stats::seconds)
        .def("__repr__", [](const Stats& s) {
            return "Stats(nodes=" + std::to_string(s.nodes) + ", failures=" + std::to_string(s.failures) +
                   ", propagations=" + std::to_string(s.propagations) +
                   ", seconds=" + std::to_string(s.seconds) + ")";
        });

    py::class_<Model>(m, "Model", "Variables, constraints, preferences and objectives.")
        .def(py::init<>())
        .def("int_var", py::overload_cast<std::string, const Integer&, const Integer&>(&Model::var),
             py::arg("name"), py::arg("lo"), py::arg("hi"),
             "A new variable with values lo..hi (Python ints of any size).")
        .def("int_var", py::overload_cast<std::string, std::vector<Integer>>(&Model::var), py::arg("name"),
             py::arg("values"), "A new variable restricted to the listed values.")
        .def(
            "add",
            [](Model& self, const Constraint& c, const std::string& label) { return self.add(c, label); },
            py::arg("constraint"), py::arg("label") = "", "Adds a constraint; returns its index.")
        .def("__iadd__",
             [](Model& self, const Constraint& c) -> Model& {
                 self.add(c);
                 return self;
             })
        .def(
            "__getitem__", [](const Model& self, const std::string& name) { return self.at(name); },
            "The variable with this name (ModelError when there is none).")
        .def(
            "maximize", [](Model& self, const Expr& term) { self.maximize(term); }, py::arg("term"),
            "Maximise a term (several objectives: lexicographic, in call order).")
        .def(
            "minimize", [](Model& self, const Expr& term) { self.minimize(term); }, py::arg("term"),
            "Minimise a term (several objectives: lexicographic, in call order).")
        .def(
            "prefer",
            [](Model& self, const Var& x, const std::string& how) { self.prefer(x, prefer_from(how)); },
            py::arg("var"), py::arg("prefer"),
            "Value direction during search: 'min', 'max', 'split_low' or 'split_high'.")
        .def("search", &Model::search, py::arg("order"), "Decide these variables first, in this order.")
        .def_property_readonly("variables",
                               [](const Model& self) {
                                   std::vector<Var> all;
                                   for (std::size_t i = 0; i < self.variables().size(); ++i)
                                       all.push_back(self.at(static_cast<int>(i)));
                                   return all;
                               })
        .def(
            "to_cint", [](const Model& self) { return write_cint(self); }, "The model as .cint text.")
        .def(
            "solve",
            [](const Model& self, std::optional<double> timeout, std::optional<std::uint64_t> nodes,
               const std::string& order, int threads, bool split_parts) -> py::object {
                const InterruptCheck check;
                const SolveOptions options = options_from(timeout, nodes, order, check, threads, split_parts);
                const Result result = search_released(
                    self, check, [&](const Model& model) { return constrint::solve(model, options); });
                if (result.solutions.empty()) return py::none();
                py::object best = py::cast(result.solutions.back());
                best.attr("stats") = result.stats;
                best.attr("status") = std::string(to_string(result.status));
                return best;
            },
            py::arg("timeout") = py::none(), py::arg("nodes") = py::none(), py::arg("order") = "declaration",
            py::arg("threads") = 1, py::arg("split_parts") = true,
            "The first solution, or the optimum with objectives (with .stats and .status); None when there "
            "is\n"
            "none or a limit stopped the search first (ci.solve(model) tells which). `threads` > 1 searches\n"
            "in parallel with the same answers (docs/solver.md, \"Parallel search\"); split_parts=False\n"
            "searches the model whole instead of its independent parts one by one (the same answers).")
        .def(
            "solutions",
            [](const Model& self, std::optional<std::uint64_t> limit, std::optional<double> timeout,
               const std::string& order, int threads, bool split_parts) {
                const InterruptCheck check;
                SolveOptions options =
                    options_from(timeout, std::nullopt, order, check, threads, split_parts);
                if (self.objectives().empty()) options.solution_limit = limit;
                return SolutionIterator{std::make_shared<Solver>(self, options), check, limit, 0};
            },
            py::arg("limit") = py::none(), py::arg("timeout") = py::none(), py::arg("order") = "declaration",
            py::arg("threads") = 1, py::arg("split_parts") = true,
            "Iterates over solutions in search order (at most `limit`); with objectives, improving ones.")
        .def(
            "explain", &explain_texts, py::arg("timeout") = py::none(), py::arg("nodes") = py::none(),
            py::arg("split_parts") = true,
            "The constraints of a small conflicting set, or None when the model has a solution or the first\n"
            "check hit a limit. `timeout` (seconds) bounds all the checks together, `nodes` each one; a\n"
            "constraint whose check is cut short stays in the set. Ctrl-C raises KeyboardInterrupt. Of a\n"
            "model of independent parts, the constraints of the part without solutions (split_parts=False:\n"
            "the deletion filter over the whole model).");

    py::class_<SolutionIterator>(m, "SolutionIterator", "Solutions one at a time (Model.solutions).")
        .def("__iter__", [](SolutionIterator& it) -> SolutionIterator& { return it; })
        .def("__next__", &SolutionIterator::next)
        .def_property_readonly(
            "status", [](const SolutionIterator& it) { return std::string(to_string(it.solver->status())); })
        .def_property_readonly("stats", [](const SolutionIterator& it) { return it.solver->stats(); });

    py::class_<Solution>(m, "Solution", py::dynamic_attr(), "Values of every variable of the model.")
        .def("__getitem__", [](const Solution& s, const Var& x) { return s[x]; })
        .def("__getitem__", [](const Solution& s, const std::string& name) { return s[name]; })
        .def("evaluate", &Solution::evaluate, py::arg("term"), "The value of any term of the model here.")
        .def_property_readonly("values", &Solution::values,
                               "The values of all variables, in declaration order.");

    py::class_<Result>(m, "Result", "The outcome of ci.solve / ci.solve_all.")
        .def_property_readonly("status", [](const Result& r) { return std::string(to_string(r.status)); })
        .def_readonly("solutions", &Result::solutions)
        .def_readonly("stats", &Result::stats)
        .def_readonly("stop_reason", &Result::stop_reason);

    m.def(
        "solve",
        [](const Model& shared_model, std::optional<double> timeout, std::optional<std::uint64_t> nodes,
           const std::string& order, int threads, bool split_parts) {
            const InterruptCheck check;
            const SolveOptions options = options_from(timeout, nodes, order, check, threads, split_parts);
            return search_released(shared_model, check,
                                   [&](const Model& model) { return solve(model, options); });
        },
        py::arg("model"), py::arg("timeout") = py::none(), py::arg("nodes") = py::none(),
        py::arg("order") = "declaration", py::arg("threads") = 1, py::arg("split_parts") = true,
        "The first solution, or the proven optimum with objectives, as a Result (status, solutions,\n"
        "stats, stop_reason). Ctrl-C raises KeyboardInterrupt. split_parts=False searches the model\n"
        "whole instead of its independent parts one by one (the same answers).");
    m.def(
        "solve_all",
        [](const Model& shared_model, std::optional<std::uint64_t> limit, std::optional<double> timeout,
           const std::string& order, int threads, bool split_parts) {
            const InterruptCheck check;
            const SolveOptions options =
                options_from(timeout, std::nullopt, order, check, threads, split_parts);
            return search_released(shared_model, check,
                                   [&](const Model& model) { return solve_all(model, limit, options); });
        },
        py::arg("model"), py::arg("limit") = py::none(), py::arg("timeout") = py::none(),
        py::arg("order") = "declaration", py::arg("threads") = 1, py::arg("split_parts") = true,
        "Every solution (at most `limit`) of a model without objectives, in search order, as a Result.");
    py::class_<CountResult>(m, "CountResult", "The outcome of ci.count.")
        .def_property_readonly("status",
                               [](const CountResult& r) { return std::string(to_string(r.status)); })
        .def_readonly("count", &CountResult::count)
        .def_readonly("stats", &CountResult::stats)
        .def_readonly("stop_reason", &CountResult::stop_reason);
    m.def(
        "count",
        [](const Model& shared_model, std::optional<double> timeout, std::optional<std::uint64_t> nodes,
           int threads, bool split_parts) {
            const InterruptCheck check;
            const SolveOptions options =
                options_from(timeout, nodes, "declaration", check, threads, split_parts);
            return search_released(shared_model, check,
                                   [&](const Model& model) { return count_solutions(model, options); });
        },
        py::arg("model"), py::arg("timeout") = py::none(), py::arg("nodes") = py::none(),
        py::arg("threads") = 1, py::arg("split_parts") = true,
        "The number of solutions of a model without objectives, exact at any size, as a CountResult\n"
        "(status, count: None when a limit stopped it, stats, stop_reason). Independent parts are counted\n"
        "one by one and multiplied (split_parts=False counts the whole model by enumeration).");
    m.def("explain", &explain_texts, py::arg("model"), py::arg("timeout") = py::none(),
          py::arg("nodes") = py::none(), py::arg("split_parts") = true,
          "The constraints of a small conflicting set (as Model.explain).");
    m.def("load", &load_cint, py::arg("path"), "Reads a .cint file.");
    m.def("parse", &parse_cint, py::arg("text"), py::arg("file") = "<string>", "Parses .cint text.");
}
