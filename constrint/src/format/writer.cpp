// The `.cint` writer: models, constraints and terms as text that parse_cint reads back.
#include "constrint/error.hpp"
#include "constrint/format.hpp"
#include "format/lexer.hpp"

#include <sstream>

namespace constrint {

namespace {

// Binding strength of a printed term; an operand weaker than its context gets parentheses.
enum Level : int { kSum = 1, kProduct = 2, kUnary = 3, kPower = 4, kAtom = 5 };

// The words the reader gives a meaning in some position; as variable names they are quoted so that
// `var` == 1 never reads as a declaration.
bool is_keyword(const std::string& name) {
    static const char* const words[] = {"var", "in",  "step", "search", "prefer",    "maximize",  "minimize",
                                        "min", "max", "abs",  "mod",    "split_low", "split_high"};
    for (const char* w : words) {
        if (name == w) return true;
    }
    return false;
}

std::string name_text(const std::string& name) {
    if (format::is_plain_name(name) && !is_keyword(name)) return name;
    if (name.empty() || name.find_first_of("`\n\r") != std::string::npos) {
        throw ModelError("variable name '" + name + "' cannot be written in the .cint format");
    }
    return "`" + name + "`";
}

Level level_of(const TermNode& n) {
    switch (n.kind) {
    case TermKind::Constant:
        return n.constant < 0 ? kUnary : kAtom;
    case TermKind::Add:
    case TermKind::Sub:
        return kSum;
    case TermKind::Mul:
    case TermKind::Div:
        return kProduct;
    case TermKind::Neg:
        return kUnary;
    case TermKind::Pow:
        return kPower;
    default:
        return kAtom; // variables and function calls
    }
}

// Whether a term written in this context starts with '-' (after a unary minus it needs a space:
// "- -x", since "--x" is not read as two minus signs by every reader of the text).
bool starts_with_minus(const TermNode* n, Level context) {
    while (n && level_of(*n) >= context) {
        switch (n->kind) {
        case TermKind::Constant:
            return n->constant < 0;
        case TermKind::Neg:
            return true;
        case TermKind::Add:
        case TermKind::Sub:
            context = kSum;
            break;
        case TermKind::Mul:
        case TermKind::Div:
            context = kProduct;
            break;
        case TermKind::Pow:
            context = kAtom;
            break;
        default:
            return false;
        }
        n = n->a.get();
    }
    return false;
}

const char* function_name(TermKind kind) {
    switch (kind) {
    case TermKind::Mod:
        return "mod";
    case TermKind::Abs:
        return "abs";
    case TermKind::Min:
        return "min";
    default:
        return "max";
    }
}

// Writes a term with an explicit stack of what is still to write (terms nest as deep as the input
// is long): a term in its context, or a piece of text.
void write_term(std::string& out, const TermNode& root, Level root_context) {
    struct Pending {
        const TermNode* term; // nullptr: write `text`
        Level context;
        std::string text;
    };
    std::vector<Pending> stack;
    stack.push_back({&root, root_context, {}});
    const auto term = [&](const TermPtr& p, Level context) {
        if (!p) throw ModelError("a term is missing an operand");
        stack.push_back({p.get(), context, {}});
    };
    const auto text = [&](std::string t) { stack.push_back({nullptr, kAtom, std::move(t)}); };
    while (!stack.empty()) {
        Pending next = std::move(stack.back());
        stack.pop_back();
        if (!next.term) {
            out += next.text;
            continue;
        }
        const TermNode& n = *next.term;
        const bool parens = level_of(n) < next.context;
        if (parens) {
            out += '(';
            text(")");
        }
        // The pieces after the first are pushed in reverse order.
        switch (n.kind) {
        case TermKind::Constant:
            out += to_string(n.constant);
            break;
        case TermKind::Variable:
            out += name_text(n.name);
            break;
        case TermKind::Add:
        case TermKind::Sub:
            term(n.b, kProduct); // a - (b - c) keeps its parentheses
            text(n.kind == TermKind::Add ? " + " : " - ");
            term(n.a, kSum);
            break;
        case TermKind::Mul:
        case TermKind::Div:
            term(n.b, kUnary);
            text(n.kind == TermKind::Mul ? " * " : " / ");
            term(n.a, kProduct);
            break;
        case TermKind::Neg:
            out += '-';
            if (n.a && n.a->kind == TermKind::Constant && n.a->constant <= 0) {
                // "-(-3)" and "-(0)": "- -3" and "-0" would read back as the constants 3 and 0.
                out += '(' + to_string(n.a->constant) + ')';
                break;
            }
            if (n.a && n.a->kind == TermKind::Neg && n.a->a && n.a->a->kind == TermKind::Constant &&
                n.a->a->constant > 0) {
                // -(-(3)) as "-(-3)": "- -3" reads back as -(-3) with the constant -3, written
                // "-(-3)", so the text would change on the second round (found by fuzz_cint).
                out += "(-" + to_string(n.a->a->constant) + ')';
                break;
            }
            if (starts_with_minus(n.a.get(), kUnary)) out += ' '; // "- -x", not "--x"
            term(n.a, kUnary);
            break;
        case TermKind::Pow:
            text('^' + std::to_string(n.exponent));
            term(n.a, kAtom); // (x^2)^3 and (-2)^2 keep their parentheses
            break;
        case TermKind::Mod:
        case TermKind::Abs:
        case TermKind::Min:
        case TermKind::Max:
            out += function_name(n.kind);
            out += '(';
            text(")");
            if (n.kind != TermKind::Abs) {
                term(n.b, kSum);
                text(", ");
            }
            term(n.a, kSum);
            break;
        }
    }
}

// A domain as a set: lo..hi, [a, b, c..d], with ` step m` for a congruence. The canonical form
// puts every interval bound on the congruence, so `step` (values congruent to the minimum) reads
// back the same set.
std::string set_text(const Domain& domain) {
    std::string out;
    const auto& intervals = domain.intervals();
    if (intervals.empty()) {
        out += "[]"; // no value: see docs/model-format.md (an empty domain does not read back)
    } else if (intervals.size() == 1 && intervals[0].lo != intervals[0].hi) {
        out += to_string(intervals[0].lo);
        out += "..";
        out += to_string(intervals[0].hi);
    } else {
        out += "[";
        for (std::size_t i = 0; i < intervals.size(); ++i) {
            if (i) out += ", ";
            out += to_string(intervals[i].lo);
            if (intervals[i].hi != intervals[i].lo) {
                out += "..";
                out += to_string(intervals[i].hi);
            }
        }
        out += "]";
    }
    if (domain.modulus() > 1) {
        out += " step ";
        out += to_string(domain.modulus());
    }
    return out;
}

const char* relation_text(Relation r) {
    switch (r) {
    case Relation::Eq:
        return " == ";
    case Relation::Ne:
        return " != ";
    case Relation::Le:
        return " <= ";
    case Relation::Lt:
        return " < ";
    case Relation::Ge:
        return " >= ";
    case Relation::Gt:
        return " > ";
    default:
        return " ? ";
    }
}

const Expr& side(const std::optional<Expr>& e) {
    if (!e) throw ModelError("a constraint is missing a side");
    return *e;
}

void write_constraint(std::string& out, const Constraint& c, bool nested) {
    const ConstraintNode& n = c.node();
    switch (n.relation) {
    case Relation::Divides: { // divides(divisor, dividend) is `dividend % divisor == 0`
        out += to_cint(side(n.rhs));
        out += " % ";
        // `HD % X * Y == 0` already means divisibility by X * Y; the parentheses are for readers.
        const bool compound = level_of(side(n.lhs).node()) < kAtom;
        if (compound) out += '(';
        out += to_cint(side(n.lhs));
        if (compound) out += ')';
        out += " == 0";
        return;
    }
    case Relation::In:
        out += to_cint(side(n.lhs));
        out += " in ";
        out += set_text(n.set);
        return;
    case Relation::Or:
    case Relation::And: {
        if (n.parts.empty()) throw ModelError("an empty disjunction or conjunction cannot be written");
        if (nested) out += '(';
        for (std::size_t i = 0; i < n.parts.size(); ++i) {
            if (i) out += n.relation == Relation::Or ? " | " : " & ";
            const bool compound =
                n.parts[i].relation() == Relation::Or || n.parts[i].relation() == Relation::And;
            write_constraint(out, n.parts[i], compound);
        }
        if (nested) out += ')';
        return;
    }
    default:
        out += to_cint(side(n.lhs));
        out += relation_text(n.relation);
        out += to_cint(side(n.rhs));
        return;
    }
}

// A comment line: no line breaks may escape it.
std::string comment(const std::string& text) {
    std::string out = "# ";
    for (char c : text)
        out += (c == '\n' || c == '\r') ? ' ' : c;
    return out;
}

} // namespace

std::string to_cint(const Expr& term) {
    std::string out;
    write_term(out, term.node(), kSum);
    return out;
}

std::string to_cint(const Constraint& constraint) {
    std::string out;
    write_constraint(out, constraint, false);
    return out;
}

std::string write_cint(const Model& model) {
    std::ostringstream out;
    const auto& variables = model.variables();
    for (const VariableInfo& v : variables) {
        out << "var " << name_text(v.name) << " in " << set_text(v.domain) << ";";
        if (v.domain.empty()) out << "  # empty domain: the model has no solution";
        out << "\n";
    }
    if (!model.constraints().empty()) out << "\n";
    for (const ConstraintInfo& c : model.constraints()) {
        if (c.origin.file.empty() && !c.origin.text.empty()) out << comment(c.origin.text) << "\n";
        out << to_cint(c.constraint) << ";\n";
    }
    bool first_search_line = true;
    if (!model.search_order().empty()) {
        out << "\nsearch ";
        first_search_line = false;
        for (std::size_t i = 0; i < model.search_order().size(); ++i) {
            if (i) out << ", ";
            out << name_text(variables.at(static_cast<std::size_t>(model.search_order()[i])).name);
        }
        out << ";\n";
    }
    for (const VariableInfo& v : variables) {
        if (!v.prefer_given) continue; // a given `min` is written too: it keeps objectives from choosing
        if (first_search_line) out << "\n";
        first_search_line = false;
        out << "prefer " << name_text(v.name) << " " << to_string(v.prefer) << ";\n";
    }
    if (!model.objectives().empty()) out << "\n";
    for (const Objective& o : model.objectives()) {
        out << (o.sense == Sense::Maximize ? "maximize " : "minimize ") << to_cint(o.term) << ";\n";
    }
    return out.str();
}

} // namespace constrint
