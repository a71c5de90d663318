// Constraints: relations between terms, divisibility, membership, and their disjunctions.
#pragma once

#include "constrint/domain.hpp"
#include "constrint/expr.hpp"

#include <memory>
#include <vector>

namespace constrint {

enum class Relation : std::uint8_t {
    Eq,      // lhs == rhs
    Ne,      // lhs != rhs
    Le,      // lhs <= rhs
    Lt,      // lhs < rhs
    Ge,      // lhs >= rhs
    Gt,      // lhs > rhs
    Divides, // rhs is divisible by lhs (lhs != 0, of the whole constraint): `divides(lhs, rhs)`, `rhs % lhs
             // == 0`
    In,      // lhs takes a value of `set`
    Or,      // at least one of `parts`
    And,     // all of `parts`
};

const char* to_string(Relation relation);

struct ConstraintNode;

class Constraint {
  public:
    explicit Constraint(std::shared_ptr<const ConstraintNode> node) : node_(std::move(node)) {}
    const ConstraintNode& node() const { return *node_; }
    Relation relation() const;

  private:
    std::shared_ptr<const ConstraintNode> node_;
};

// Disjunctions and conjunctions nest at most this deep (the parser's limit on parentheses too): the
// propagators of nested constraints call each other.
inline constexpr int kMaxConstraintDepth = 1000;

struct ConstraintNode {
    Relation relation;
    std::optional<Expr> lhs, rhs;  // all but Or / And (rhs unused for In)
    Domain set;                    // In
    std::vector<Constraint> parts; // Or / And, flattened: no Or directly inside an Or
    std::uint64_t model = 0;       // the model whose variables it uses (0: none)
    int depth = 1;                 // 1 for a relation, 1 + the deepest part for Or / And
};

// `a % b == 0` (either side) is the divisibility relation divides(b, a).
Constraint operator==(const Expr& a, const Expr& b);
Constraint operator!=(const Expr& a, const Expr& b);
Constraint operator<=(const Expr& a, const Expr& b);
Constraint operator<(const Expr& a, const Expr& b);
Constraint operator>=(const Expr& a, const Expr& b);
Constraint operator>(const Expr& a, const Expr& b);
Constraint divides(const Expr& divisor, const Expr& dividend);
Constraint member(const Expr& term, const Domain& values);
// Throw ModelError when the result would nest deeper than kMaxConstraintDepth.
Constraint operator|(const Constraint& a, const Constraint& b);
Constraint operator&(const Constraint& a, const Constraint& b);

} // namespace constrint

namespace constrint {

// Whether the constraint holds when variable i has the value values[i]. A division by zero
// anywhere in the constraint makes it false (a / b, mod(a, b) and divides(b, a) imply b != 0).
bool satisfied(const Constraint& constraint, const std::vector<Integer>& values);

} // namespace constrint
