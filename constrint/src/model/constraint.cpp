#include "constrint/constraint.hpp"

#include "constrint/error.hpp"

#include <algorithm>

namespace constrint {

const char* to_string(Relation relation) {
    switch (relation) {
    case Relation::Eq:
        return "==";
    case Relation::Ne:
        return "!=";
    case Relation::Le:
        return "<=";
    case Relation::Lt:
        return "<";
    case Relation::Ge:
        return ">=";
    case Relation::Gt:
        return ">";
    case Relation::Divides:
        return "divides";
    case Relation::In:
        return "in";
    case Relation::Or:
        return "|";
    case Relation::And:
        return "&";
    }
    return "?";
}

Relation Constraint::relation() const {
    return node_->relation;
}

namespace {

Constraint relate(Relation relation, const Expr& a, const Expr& b) {
    auto node = std::make_shared<ConstraintNode>();
    node->relation = relation;
    node->model = model_of(a, b);
    node->lhs = a;
    node->rhs = b;
    return Constraint(std::move(node));
}

bool is_zero(const Expr& e) {
    return e.is_constant() && e.node().constant == 0;
}

Constraint combine(Relation relation, const Constraint& a, const Constraint& b) {
    auto node = std::make_shared<ConstraintNode>();
    node->relation = relation;
    if (a.node().model != 0 && b.node().model != 0 && a.node().model != b.node().model) {
        throw ModelError("a constraint mixes variables of two different models");
    }
    node->model = a.node().model != 0 ? a.node().model : b.node().model;
    for (const Constraint* c : {&a, &b}) {
        if (c->relation() == relation) { // flatten (a | b) | c into one disjunction
            node->parts.insert(node->parts.end(), c->node().parts.begin(), c->node().parts.end());
        } else {
            node->parts.push_back(*c);
        }
    }
    for (const Constraint& part : node->parts)
        node->depth = std::max(node->depth, part.node().depth + 1);
    if (node->depth > kMaxConstraintDepth) {
        throw ModelError("constraint nested too deeply (more than " + std::to_string(kMaxConstraintDepth) +
                         " levels of | and &)");
    }
    return Constraint(std::move(node));
}

} // namespace

Constraint operator==(const Expr& a, const Expr& b) {
    if (a.kind() == TermKind::Mod && is_zero(b)) return divides(Expr(a.node().b), Expr(a.node().a));
    if (b.kind() == TermKind::Mod && is_zero(a)) return divides(Expr(b.node().b), Expr(b.node().a));
    return relate(Relation::Eq, a, b);
}
Constraint operator!=(const Expr& a, const Expr& b) {
    return relate(Relation::Ne, a, b);
}
Constraint operator<=(const Expr& a, const Expr& b) {
    return relate(Relation::Le, a, b);
}
Constraint operator<(const Expr& a, const Expr& b) {
    return relate(Relation::Lt, a, b);
}
Constraint operator>=(const Expr& a, const Expr& b) {
    return relate(Relation::Ge, a, b);
}
Constraint operator>(const Expr& a, const Expr& b) {
    return relate(Relation::Gt, a, b);
}
Constraint divides(const Expr& divisor, const Expr& dividend) {
    return relate(Relation::Divides, divisor, dividend);
}

Constraint member(const Expr& term, const Domain& values) {
    auto node = std::make_shared<ConstraintNode>();
    node->relation = Relation::In;
    node->model = term.node().model;
    node->lhs = term;
    node->set = values;
    return Constraint(std::move(node));
}

Constraint operator|(const Constraint& a, const Constraint& b) {
    return combine(Relation::Or, a, b);
}
Constraint operator&(const Constraint& a, const Constraint& b) {
    return combine(Relation::And, a, b);
}

} // namespace constrint
