#include "constrint/model.hpp"

#include "constrint/error.hpp"

#include <atomic>

namespace constrint {

namespace {
std::atomic<std::uint64_t> next_model_id{1};
}

const char* to_string(Prefer prefer) {
    switch (prefer) {
    case Prefer::Min:
        return "min";
    case Prefer::Max:
        return "max";
    case Prefer::SplitLow:
        return "split_low";
    case Prefer::SplitHigh:
        return "split_high";
    }
    return "?";
}

Integer default_upper_bound() {
    return Integer(1) << 62;
}

Model::Model() : id_(next_model_id++) {}

Var Model::var(std::string name, const Integer& lo, const Integer& hi) {
    return var(std::move(name), Domain::range(lo, hi));
}

Var Model::var(std::string name, std::vector<Integer> values) {
    return var(std::move(name), Domain::values(std::move(values)));
}

Var Model::var(std::string name, Domain domain) {
    if (name.empty()) throw ModelError("a variable needs a non-empty name");
    if (index_.count(name)) throw ModelError("variable '" + name + "' is declared twice");
    auto node = std::make_shared<TermNode>();
    node->kind = TermKind::Variable;
    node->variable = static_cast<int>(variables_.size());
    node->model = id_;
    node->name = name;
    index_.emplace(name, node->variable);
    variables_.push_back({std::move(name), std::move(domain), Prefer::Min});
    handles_.emplace_back(std::move(node));
    return handles_.back();
}

bool Model::has(std::string_view name) const {
    return index_.find(name) != index_.end();
}

Var Model::at(std::string_view name) const {
    auto it = index_.find(name);
    if (it == index_.end()) throw ModelError("unknown variable '" + std::string(name) + "'");
    return handles_[it->second];
}

Var Model::at(int index) const {
    if (index < 0 || index >= static_cast<int>(handles_.size())) {
        throw ModelError("no variable with index " + std::to_string(index) + " (the model has " +
                         std::to_string(handles_.size()) + ")");
    }
    return handles_[index];
}

void Model::set_domain(const Var& x, Domain domain) {
    check_owned(x);
    variables_[x.index()].domain = std::move(domain);
}

void Model::check_owned(const Expr& term) const {
    const std::uint64_t owner = term.node().model;
    if (owner != 0 && owner != id_) throw ModelError("the term uses variables of another model");
    if (term.kind() == TermKind::Variable && term.node().variable >= static_cast<int>(variables_.size())) {
        throw ModelError("variable '" + term.node().name + "' does not belong to this model");
    }
}

void Model::check_owned(const Constraint& constraint) const {
    const std::uint64_t owner = constraint.node().model;
    if (owner != 0 && owner != id_) throw ModelError("the constraint uses variables of another model");
}

std::size_t Model::add(const Constraint& constraint, Origin origin) {
    check_owned(constraint);
    constraints_.push_back({constraint, std::move(origin)});
    return constraints_.size() - 1;
}

std::size_t Model::add(const Constraint& constraint, std::string label) {
    Origin origin;
    origin.text = std::move(label);
    return add(constraint, std::move(origin));
}

void Model::prefer(const Var& x, Prefer prefer) {
    check_owned(x);
    variables_[x.index()].prefer = prefer;
    variables_[x.index()].prefer_given = true;
}

void Model::search(std::vector<Var> order) {
    search_order_.clear();
    std::vector<bool> listed(variables_.size(), false); // not a scan per variable: lists of 100k
    for (const Var& x : order) {
        check_owned(x);
        if (listed[static_cast<std::size_t>(x.index())])
            throw ModelError("variable '" + x.name() + "' appears twice in the search order");
        listed[static_cast<std::size_t>(x.index())] = true;
        search_order_.push_back(x.index());
    }
}

void Model::maximize(const Expr& term, Origin origin) {
    check_owned(term);
    objectives_.push_back({term, Sense::Maximize, std::move(origin)});
}

void Model::minimize(const Expr& term, Origin origin) {
    check_owned(term);
    objectives_.push_back({term, Sense::Minimize, std::move(origin)});
}

} // namespace constrint
