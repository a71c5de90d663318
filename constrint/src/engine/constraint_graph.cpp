#include "engine/constraint_graph.hpp"

#include "constrint/solver.hpp"
#include "engine/compile.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_set>

namespace constrint::engine {

namespace {

// Walks a term without recursion (terms may be as deep as memory allows) and visits each shared
// subterm once (a term built by repeated squaring is a DAG of exponential tree size).
void collect_variables(const Expr& term, std::unordered_set<const TermNode*>& seen, std::vector<int>& out) {
    std::vector<const TermNode*> stack{&term.node()};
    while (!stack.empty()) {
        const TermNode* node = stack.back();
        stack.pop_back();
        if (!seen.insert(node).second) continue;
        if (node->kind == TermKind::Variable) out.push_back(node->variable);
        if (node->a) stack.push_back(node->a.get());
        if (node->b) stack.push_back(node->b.get());
    }
}

} // namespace

std::vector<int> variables_of(const Expr& term) {
    std::unordered_set<const TermNode*> seen;
    std::vector<int> out;
    collect_variables(term, seen, out);
    return out;
}

std::vector<int> variables_of(const Constraint& constraint) {
    std::unordered_set<const TermNode*> seen;
    std::vector<int> out;
    std::vector<const ConstraintNode*> stack{&constraint.node()};
    while (!stack.empty()) {
        const ConstraintNode* node = stack.back();
        stack.pop_back();
        if (node->lhs) collect_variables(*node->lhs, seen, out);
        if (node->rhs) collect_variables(*node->rhs, seen, out);
        for (const Constraint& part : node->parts)
            stack.push_back(&part.node());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<Part> independent_parts(const Model& model, const std::vector<Domain>& root) {
    // Vertices: the model variables [0, n), then the constraints [n, n + m). A constraint is joined
    // to each variable it mentions that is not fixed at the root.
    const std::size_t n = model.variables().size(), m = model.constraints().size();
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
    Graph graph(n + m);
    std::vector<bool> constrained(n, false);
    for (std::size_t c = 0; c < m; ++c) {
        for (int v : variables_of(model.constraints()[c].constraint)) {
            if (root[v].fixed()) continue;
            boost::add_edge(static_cast<std::size_t>(v), n + c, graph);
            constrained[v] = true;
        }
    }
    // Free variables (in no constraint) and the variables of the objectives join one vertex each:
    // the component of the last free variable, and of each objective's first variable.
    std::optional<std::size_t> last_free;
    for (std::size_t v = 0; v < n; ++v) {
        if (constrained[v] || root[v].fixed()) continue;
        if (last_free) boost::add_edge(*last_free, v, graph);
        last_free = v;
    }
    for (const Objective& objective : model.objectives()) {
        std::optional<std::size_t> first;
        for (int v : variables_of(objective.term)) {
            if (root[v].fixed()) continue;
            if (first)
                boost::add_edge(*first, static_cast<std::size_t>(v), graph);
            else
                first = static_cast<std::size_t>(v);
        }
    }
    std::vector<int> component(n + m);
    boost::connected_components(graph, component.data());

    std::map<int, Part> by_component; // keyed by component number: parts in order of first vertex
    for (std::size_t v = 0; v < n; ++v) {
        if (!root[v].fixed()) by_component[component[v]].variables.push_back(static_cast<int>(v));
    }
    for (std::size_t c = 0; c < m; ++c)
        by_component[component[n + c]].constraints.push_back(c);
    std::vector<Part> parts;
    for (auto& [_, part] : by_component)
        parts.push_back(std::move(part));
    return parts;
}

Model with_other_parts_fixed(const Model& model, const Part& part, const std::vector<Domain>& domains) {
    Model fixed = model;
    std::vector<bool> mine(domains.size(), false);
    for (int v : part.variables)
        mine[v] = true;
    for (std::size_t v = 0; v < domains.size(); ++v) {
        if (!mine[v]) fixed.set_domain(model.at(static_cast<int>(v)), Domain::single(domains[v].min()));
    }
    return fixed;
}

std::optional<std::vector<Domain>> root_domains(const Model& model, const SolveOptions& options) {
    auto compiled = compile(model);
    if (compiled->failed) return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    compiled->store.set_stop_check([&] {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return true;
        if (!options.time_limit_seconds) return false;
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
               *options.time_limit_seconds;
    });
    if (!compiled->store.propagate()) return std::nullopt;
    std::vector<Domain> domains;
    for (int v = 0; v < compiled->user_vars; ++v)
        domains.push_back(compiled->store.dom(v));
    return domains;
}

} // namespace constrint::engine
