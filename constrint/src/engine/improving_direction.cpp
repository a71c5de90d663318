#include "engine/improving_direction.hpp"

#include <set>
#include <utility>

namespace constrint::engine {

namespace {

// The sign a factor has for every value of its variables: +1 (>= 0), -1 (<= 0) or 0 (unknown).
int sign_of_factor(const Model& model, const TermNode& t) {
    switch (t.kind) {
    case TermKind::Constant:
        return t.constant >= 0 ? 1 : -1;
    case TermKind::Variable: {
        const Domain& d = model.variables()[static_cast<std::size_t>(t.variable)].domain;
        if (d.empty()) return 0;
        return d.min() >= 0 ? 1 : d.max() <= 0 ? -1 : 0;
    }
    case TermKind::Abs:
        return 1;
    case TermKind::Pow:
        return t.exponent % 2 == 0 ? 1 : sign_of_factor(model, *t.a);
    default:
        return 0;
    }
}

} // namespace

std::vector<std::optional<Prefer>> improving_directions(const Model& model, const Objective& objective) {
    // Per variable: 2 when not met yet, else the sign of the term's slope in it (0: not monotone).
    std::vector<int> slope(model.variables().size(), 2);
    // (node, slope of the objective in the node's value); each pair once, so a shared sub-term
    // (terms may be DAGs) costs at most three visits. No recursion: terms may be very deep.
    std::vector<std::pair<const TermNode*, int>> stack{{&objective.term.node(), 1}};
    std::set<std::pair<const TermNode*, int>> seen;
    while (!stack.empty()) {
        const auto [node, s] = stack.back();
        stack.pop_back();
        if (!seen.insert({node, s}).second) continue;
        const TermNode& t = *node;
        const auto operands = [&](int sa, int sb) {
            if (t.a) stack.push_back({t.a.get(), sa});
            if (t.b) stack.push_back({t.b.get(), sb});
        };
        switch (t.kind) {
        case TermKind::Constant:
            break;
        case TermKind::Variable: {
            int& known = slope[static_cast<std::size_t>(t.variable)];
            known = known == 2 || known == s ? s : 0;
            break;
        }
        case TermKind::Add:
        case TermKind::Min:
        case TermKind::Max:
            operands(s, s);
            break;
        case TermKind::Sub:
            operands(s, -s);
            break;
        case TermKind::Neg:
            operands(-s, -s);
            break;
        case TermKind::Mul: // a * b grows with a where b >= 0
            operands(s * sign_of_factor(model, *t.b), s * sign_of_factor(model, *t.a));
            break;
        case TermKind::Pow: {
            const int base = t.exponent % 2 == 1 ? 1 : t.exponent == 0 ? 0 : sign_of_factor(model, *t.a);
            operands(s * base, 0);
            break;
        }
        case TermKind::Div: // floor(a / c) grows with a for a constant c > 0
            operands(t.b->kind == TermKind::Constant ? s * sign_of_factor(model, *t.b) : 0, 0);
            break;
        case TermKind::Mod:
        case TermKind::Abs:
            operands(0, 0);
            break;
        }
    }
    const int sense = objective.sense == Sense::Maximize ? 1 : -1;
    std::vector<std::optional<Prefer>> directions(slope.size());
    for (std::size_t v = 0; v < slope.size(); ++v) {
        if (slope[v] == 1 || slope[v] == -1) directions[v] = slope[v] * sense > 0 ? Prefer::Max : Prefer::Min;
    }
    return directions;
}

} // namespace constrint::engine
