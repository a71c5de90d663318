// Walks over term trees without recursion: terms may be as deep as the input is long (a sum of a
// million terms is a chain of a million nodes), and a recursive walk would overflow the stack.
#pragma once

#include "constrint/expr.hpp"

#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace constrint::detail {

// Folds a term bottom-up: `leaf(node)` may give a node's result without visiting its operands
// (leaves, memoised sub-terms); otherwise the operands are folded first (a, then b) and
// `combine(node, results)` gets their results in that order. Returns the root's result. A
// sub-term shared by several parents is folded once (terms built through the API may be DAGs
// with exponentially many paths).
template <class Result, class Leaf, class Combine>
Result fold_term(const TermNode& root, Leaf&& leaf, Combine&& combine) {
    struct Frame {
        const TermNode* node;
        int next; // 0: not started, 1: a is done, 2: b is done
    };
    std::vector<Frame> stack{{&root, 0}};
    std::vector<Result> results;
    std::unordered_map<const TermNode*, Result> shared;
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next == 0) {
            std::optional<Result> known = leaf(*f.node);
            if (!known) {
                if (auto it = shared.find(f.node); it != shared.end()) known = it->second;
            }
            if (known) {
                results.push_back(std::move(*known));
                stack.pop_back();
                continue;
            }
        }
        const TermNode* operand = f.next == 0 ? f.node->a.get() : f.next == 1 ? f.node->b.get() : nullptr;
        if (f.next < 2) ++f.next;
        if (operand) {
            stack.push_back({operand, 0}); // f is not used after this
            continue;
        }
        if (f.next < 2) continue; // no a: go on to b
        const TermNode& node = *f.node;
        stack.pop_back();
        const std::size_t arity = (node.a ? 1 : 0) + (node.b ? 1 : 0);
        Result r = combine(node, std::span<Result>(results.data() + results.size() - arity, arity));
        results.resize(results.size() - arity);
        if (!stack.empty()) shared.emplace(&node, r);
        results.push_back(std::move(r));
    }
    return std::move(results.back());
}

// Calls visit(node) once for every distinct node reachable from root, parents before operands.
template <class Visit> void for_each_node(const TermNode& root, Visit&& visit) {
    std::vector<const TermNode*> stack{&root};
    std::unordered_set<const TermNode*> seen;
    while (!stack.empty()) {
        const TermNode* n = stack.back();
        stack.pop_back();
        if (!seen.insert(n).second) continue;
        visit(*n);
        if (n->b) stack.push_back(n->b.get());
        if (n->a) stack.push_back(n->a.get());
    }
}

} // namespace constrint::detail
