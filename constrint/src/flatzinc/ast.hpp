// The syntax tree of a FlatZinc model: what the parser reads, before any name is resolved.
#pragma once

#include "constrint/domain.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace constrint::flatzinc {

struct Position {
    int line = 0;
    int column = 0;
};

// An expression: a literal, a name (possibly indexed), an array, or an annotation call.
struct Node {
    enum class Kind : std::uint8_t { Int, Bool, Float, String, Set, Array, Ident, Access, Call };
    Kind kind = Kind::Int;
    Position pos;
    Integer value;           // Int; Bool (0 or 1); Access: the index
    std::string text;        // Float and String spelling; Ident, Access, Call: the name
    Domain set;              // Set
    std::vector<Node> items; // Array elements; Call arguments
};

enum class BaseType : std::uint8_t { Bool, Int, Float, Set };

struct Type {
    BaseType base = BaseType::Int;
    bool is_var = false;
    bool is_array = false;
    Integer array_size = 0;       // arrays are indexed 1..array_size
    std::optional<Domain> domain; // `var 1..5`, `var {1, 3}`, `set of 1..3`: the declared values
};

// A parameter or variable declaration, `type: name :: annotations = value;`.
struct Declaration {
    Type type;
    std::string name;
    std::vector<Node> annotations;
    std::optional<Node> value;
    Position pos;
};

struct ConstraintItem {
    std::string name;
    std::vector<Node> args;
    std::vector<Node> annotations;
    Position pos;
};

struct SolveItem {
    enum class Goal : std::uint8_t { Satisfy, Minimize, Maximize };
    Goal goal = Goal::Satisfy;
    std::optional<Node> objective;
    std::vector<Node> annotations;
    Position pos;
};

struct Ast {
    std::vector<Declaration> declarations; // in source order
    std::vector<ConstraintItem> constraints;
    std::optional<SolveItem> solve;
};

} // namespace constrint::flatzinc
