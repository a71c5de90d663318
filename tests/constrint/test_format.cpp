// The `.cint` reader and writer (docs/model-format.md): every construct, precedence, the
// divisibility binding, every error with its position, round trips and a fuzz test.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <fstream>
#include <iomanip>
#include <random>
#include <set>
#include <sstream>

using namespace constrint;

namespace {

const char* const kFile = "t.cint";

// The term on the right of the model's last constraint `_ == TERM`.
Expr term_of(const std::string& text, Model* keep = nullptr) {
    Model m = parse_cint(
        "var a in -20..20; var b in -20..20; var c in -20..20; var x in 1..9;\n_ == " + text + ";", kFile);
    Expr rhs = *m.constraints().back().constraint.node().rhs;
    if (keep) *keep = m;
    return rhs;
}

// The value of a term with a = 7, b = -3, c = 2, x = 5.
Integer value_of(const std::string& text) {
    Model m;
    Expr t = term_of(text, &m);
    std::vector<Integer> values(m.variables().size(), 0);
    values[0] = 7;
    values[1] = -3;
    values[2] = 2;
    values[3] = 5;
    return evaluate(t, values);
}

struct Failure {
    int line = 0;
    int column = 0;
    std::string message = "<no error>";
    std::string what;
};

Failure failure(std::string_view text) {
    try {
        (void)parse_cint(text, kFile);
    } catch (const ParseError& e) {
        return {e.line(), e.column(), e.message(), e.what()};
    }
    return {};
}

void check_error(std::string_view text, int line, int column, const std::string& message) {
    const Failure f = failure(text);
    INFO("input: " << text);
    INFO("error: " << f.what);
    CHECK(f.line == line);
    CHECK(f.column == column);
    CHECK(f.message.find(message) != std::string::npos);
}

std::vector<std::vector<Integer>> all_solutions(const Model& m) {
    const Result r = solve_all(m);
    REQUIRE(r.status != Status::Unknown);
    std::vector<std::vector<Integer>> out;
    for (const Solution& s : r.solutions)
        out.push_back(s.values());
    return out;
}

std::string without_comments(const std::string& text) {
    std::istringstream in(text);
    std::string out, line;
    while (std::getline(in, line)) {
        if (line.rfind("#", 0) != 0) out += line + "\n";
    }
    return out;
}

// write -> parse gives the same variables, domains, preferences, search order, objectives and
// constraint count, and writing again gives the same text.
Model check_round_trip(const Model& m) {
    const std::string text = write_cint(m);
    INFO("written:\n" << text);
    Model back = parse_cint(text, "written.cint");
    REQUIRE(back.variables().size() == m.variables().size());
    for (std::size_t i = 0; i < m.variables().size(); ++i) {
        CHECK(back.variables()[i].name == m.variables()[i].name);
        CHECK(back.variables()[i].domain == m.variables()[i].domain);
        CHECK(back.variables()[i].prefer == m.variables()[i].prefer);
    }
    CHECK(back.constraints().size() == m.constraints().size());
    CHECK(back.search_order() == m.search_order());
    REQUIRE(back.objectives().size() == m.objectives().size());
    for (std::size_t i = 0; i < m.objectives().size(); ++i) {
        CHECK(back.objectives()[i].sense == m.objectives()[i].sense);
        CHECK(to_cint(back.objectives()[i].term) == to_cint(m.objectives()[i].term));
    }
    for (std::size_t i = 0; i < m.constraints().size() && i < back.constraints().size(); ++i) {
        CHECK(to_cint(back.constraints()[i].constraint) == to_cint(m.constraints()[i].constraint));
    }
    CHECK(without_comments(write_cint(back)) == without_comments(text)); // labels become origins
    return back;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

TEST_CASE("format: undeclared variables are positive integers created at first use") {
    Model m = parse_cint("y == x + 1;  # y first\nx <= 10;\n", kFile);
    REQUIRE(m.variables().size() == 2);
    CHECK(m.variables()[0].name == "y");
    CHECK(m.variables()[1].name == "x");
    CHECK(m.variables()[0].domain == Domain::range(1, default_upper_bound()));
    CHECK(m.constraints().size() == 2);
}

TEST_CASE("format: declarations") {
    Model m = parse_cint(R"(
        var x in 1..1024;
        var t in [8, 16, 32];
        var big in 2^40..2^40 + 5;
        var neg in -5..-1;
        var p, q in 0..9;
        var r in [1..3, 7, 10..12];
        var s in 0..100 step 16;
        var u in [3, 5..9] step 2;
        var d;
    )",
                         kFile);
    REQUIRE(m.variables().size() == 10);
    CHECK(m.variables()[0].domain == Domain::range(1, 1024));
    CHECK(m.variables()[1].domain == Domain::values({8, 16, 32}));
    CHECK(m.variables()[2].domain == Domain::range(power(2, 40), power(2, 40) + 5));
    CHECK(m.variables()[3].domain == Domain::range(-5, -1));
    CHECK(m.variables()[4].name == "p");
    CHECK(m.variables()[5].domain == Domain::range(0, 9));
    CHECK(m.variables()[6].domain == Domain::values({1, 2, 3, 7, 10, 11, 12}));
    CHECK(m.variables()[7].domain == Domain::values({0, 16, 32, 48, 64, 80, 96}));
    CHECK(m.variables()[8].domain == Domain::values({3, 5, 7, 9}));
    CHECK(m.variables()[9].domain == Domain::range(1, default_upper_bound()));
    CHECK(m.constraints().empty());
}

TEST_CASE("format: a declaration after the first use sets the domain and keeps the order") {
    Model m = parse_cint("a + b == 10;\nvar b in 2..3;\nvar c in 1..2;\n", kFile);
    REQUIRE(m.variables().size() == 3);
    CHECK(m.variables()[1].name == "b");
    CHECK(m.variables()[1].domain == Domain::range(2, 3));
    CHECK(m.variables()[0].domain == Domain::range(1, default_upper_bound()));
}

TEST_CASE("format: relations, membership, disjunction, conjunction") {
    Model m = parse_cint(R"(
        a == b; a != b; a <= b; a < b; a >= b; a > b;
        A == [1, 2];
        [3, 4] == B;
        a in 1..5;
        a + b in [1, 3..4] step 1;
        a == 1 | b == 2 | a == b;
        a == 1 & b == 2 | a == 3;
        (a == 1 | b == 2) & a <= 3;
        ((a == 1));
    )",
                         kFile);
    const auto& c = m.constraints();
    REQUIRE(c.size() == 14);
    const Relation expected[] = {Relation::Eq, Relation::Ne, Relation::Le,  Relation::Lt, Relation::Ge,
                                 Relation::Gt, Relation::In, Relation::In,  Relation::In, Relation::In,
                                 Relation::Or, Relation::Or, Relation::And, Relation::Eq};
    for (std::size_t i = 0; i < c.size(); ++i)
        CHECK(c[i].constraint.relation() == expected[i]);
    CHECK(c[6].constraint.node().set == Domain::values({1, 2}));
    CHECK(to_cint(*c[7].constraint.node().lhs) == "B");
    CHECK(c[10].constraint.node().parts.size() == 3); // flattened
    CHECK(c[11].constraint.node().parts[0].relation() == Relation::And);
    CHECK(c[12].constraint.node().parts[0].relation() == Relation::Or);
}

TEST_CASE("format: functions, objectives, search and preferences") {
    Model m = parse_cint(R"(
        var x in 1..10; var y in 1..10;
        z == min(x, y) + max(x, y, 3) - abs(x - y) + mod(x, 3) + x / 2;
        maximize x * y;
        minimize -y;
        maximize z;
        search y, x;
        prefer x max;
        prefer y split_low;
        prefer z split_high;
    )",
                         kFile);
    REQUIRE(m.objectives().size() == 3);
    CHECK(m.objectives()[0].sense == Sense::Maximize);
    CHECK(to_cint(m.objectives()[0].term) == "x * y");
    CHECK(m.objectives()[1].sense == Sense::Minimize);
    CHECK(to_cint(m.objectives()[1].term) == "-y");
    CHECK(m.search_order() == std::vector<int>{1, 0});
    CHECK(m.variables()[0].prefer == Prefer::Max);
    CHECK(m.variables()[1].prefer == Prefer::SplitLow);
    CHECK(m.variables()[2].prefer == Prefer::SplitHigh);
    CHECK(to_cint(*m.constraints()[0].constraint.node().rhs) ==
          "min(x, y) + max(max(x, y), 3) - abs(x - y) + mod(x, 3) + x / 2");
}

TEST_CASE("format: keywords are contextual") {
    Model m = parse_cint(R"(
        min == 3;              # variables named like keywords and functions
        max + var == search;
        prefer - 1 == in;
        maximize - x <= 4;     # a constraint: maximize is a variable here
        var var in 1..5;       # declares the variable 'var'
        search search, min;
        prefer min max;
        minimize -maximize;
        `two words` == step;
    )",
                         kFile);
    CHECK(m.has("min"));
    CHECK(m.has("max"));
    CHECK(m.has("var"));
    CHECK(m.has("search"));
    CHECK(m.has("prefer"));
    CHECK(m.has("in"));
    CHECK(m.has("maximize"));
    CHECK(m.has("two words"));
    CHECK(m.has("step"));
    CHECK(m.constraints().size() == 5);
    CHECK(m.variables()[m.at("var").index()].domain == Domain::range(1, 5));
    CHECK(m.variables()[m.at("min").index()].prefer == Prefer::Max);
    REQUIRE(m.objectives().size() == 1);
    CHECK(to_cint(m.objectives()[0].term) == "-`maximize`");
}

TEST_CASE("format: precedence and associativity") {
    CHECK(value_of("-2^2") == -4);
    CHECK(value_of("(-2)^2") == 4);
    CHECK(value_of("-x^2") == -25);
    CHECK(value_of("2^3^2") == 512); // right-associative
    CHECK(value_of("(2^3)^2") == 64);
    CHECK(value_of("2 + 3 * 4") == 14);
    CHECK(value_of("2 * 3 + 4 * 5") == 26);
    CHECK(value_of("10 - 4 - 3") == 3); // left-associative
    CHECK(value_of("100 / 10 / 5") == 2);
    CHECK(value_of("-7 / 2") == -4); // (-7) / 2, floor
    CHECK(value_of("-(7 / 2)") == -3);
    CHECK(value_of("7 / -2") == -4);
    CHECK(value_of("mod(-7, 2)") == 1); // the sign of the divisor
    CHECK(value_of("mod(7, -2)") == -1);
    CHECK(value_of("a - b * c") == 13);
    CHECK(value_of("(a - b) * c") == 20);
    CHECK(value_of("a * -b") == 21);
    CHECK(value_of("- -a") == 7);
    CHECK(value_of("2 * x^2") == 50);
    CHECK(value_of("x^2^0") == 5);
    CHECK(value_of("2^(1 + 1)") == 4);
    CHECK(value_of("min(a, b) * max(a, b)") == -21);
    CHECK(value_of("abs(b) ^ 2") == 9);
    CHECK(value_of("123456789012345678901234567890 - 123456789012345678901234567889") == 1);
}

TEST_CASE("format: to_cint prints minimal parentheses and reads back the same") {
    const char* cases[] = {"a + b + c",   "a + (b + c)",   "a - (b - c)", "a - b - c",   "(a + b) * c",
                           "a * (b + c)", "a * b * c",     "a * (b * c)", "a / (b / c)", "a / b / c",
                           "-a",          "- -a",          "-(a + b)",    "-a * b",      "a * -b",
                           "-a^2",        "(-a)^2",        "a^2^3",       "(a^2)^3",     "(a + b)^2",
                           "-5",          "a - -5",        "(-5)^2",      "a^0",         "min(a + b, c * 2)",
                           "abs(-a)",     "mod(a, b) * 2", "2^62",        "a / 2 * 3",   "a * (b / 2)",
                           "-(a * b)",    "x - (-a)^2"};
    for (const char* text : cases) {
        const std::string written = to_cint(term_of(text));
        INFO(text << " -> " << written);
        CHECK(to_cint(term_of(written)) == written);
    }
    CHECK(to_cint(term_of("((a)) + ((b * c))")) == "a + b * c");
    CHECK(to_cint(term_of("a + (b + c)")) == "a + (b + c)");
    CHECK(to_cint(term_of("(a - b) - c")) == "a - b - c");
    CHECK(to_cint(term_of("-(a^2)")) == "-a^2");
    CHECK(to_cint(term_of("(-a)^2")) == "(-a)^2");
    CHECK(to_cint(term_of("(a^2)^3")) == "(a^2)^3");
    CHECK(to_cint(term_of("a * (-b)")) == "a * -b");
    CHECK(to_cint(term_of("- (-a)")) == "- -a");
    CHECK(to_cint(term_of("(-5)^2")) == "(-5)^2");
    CHECK(to_cint(Expr(-3)) == "-3");
}

TEST_CASE("format: '%' is divisibility with whole terms on both sides") {
    Model m = parse_cint(R"(
        HD % X * Y == 0;
        G * HD % (A * B) == 0;
        0 == A % B + 1;
        mod(A, B) == 0;
        A + B % C == 0 | A == 1;
    )",
                         kFile);
    const auto& c = m.constraints();
    REQUIRE(c.size() == 5);
    for (std::size_t i = 0; i < 4; ++i)
        CHECK(c[i].constraint.relation() == Relation::Divides);
    // divides(divisor, dividend): lhs is the divisor
    CHECK(to_cint(*c[0].constraint.node().lhs) == "X * Y");
    CHECK(to_cint(*c[0].constraint.node().rhs) == "HD");
    CHECK(to_cint(*c[1].constraint.node().lhs) == "A * B");
    CHECK(to_cint(*c[1].constraint.node().rhs) == "G * HD");
    CHECK(to_cint(*c[2].constraint.node().lhs) == "B + 1");
    CHECK(to_cint(*c[2].constraint.node().rhs) == "A");
    CHECK(to_cint(*c[3].constraint.node().lhs) == "B");
    CHECK(to_cint(*c[3].constraint.node().rhs) == "A");
    CHECK(to_cint(c[4].constraint.node().parts[0]) == "A + B % C == 0");
    CHECK(to_cint(c[0].constraint) == "HD % (X * Y) == 0");

    // The meaning, by solving: HD = 12, X * Y divides it.
    Model d = parse_cint("var HD in [12]; var X in 1..12; var Y in 2..2; HD % X * Y == 0;", kFile);
    std::set<Integer> xs;
    for (const auto& s : all_solutions(d))
        xs.insert(s[1]);
    CHECK(xs == std::set<Integer>{1, 2, 3, 6});
}

TEST_CASE("format: Windows line ends and a byte order mark are read") {
    Model m = parse_cint("\xEF\xBB\xBFvar x in 1..3;\r\nx >= 2;\r\n", kFile);
    CHECK(m.variables()[0].domain == Domain::range(1, 3));
    REQUIRE(m.constraints().size() == 1);
    CHECK(m.constraints()[0].origin.line == 2);
    CHECK(m.constraints()[0].origin.text == "x >= 2");
    check_error("\xEF\xBB\xBFx = 1;", 1, 3, "did you mean '=='?");
}

TEST_CASE("format: origins cite the file, the line and the constraint's text") {
    Model m = parse_cint(
        "# header\nvar x in 1..10;\n  x  <=   5 ;  # five\nx +\n  1 # one\n  == 3; x == 1 | x == 2\n",
        "model.cint");
    REQUIRE(m.constraints().size() == 3);
    const Origin& first = m.constraints()[0].origin;
    CHECK(first.file == "model.cint");
    CHECK(first.line == 3);
    CHECK(first.text == "x <= 5");
    CHECK(m.constraints()[1].origin.line == 4);
    CHECK(m.constraints()[1].origin.text == "x + 1 == 3");
    CHECK(m.constraints()[2].origin.line == 6);
    CHECK(m.constraints()[2].origin.text == "x == 1 | x == 2"); // the last ';' may be missing
}

TEST_CASE("format: files in the original ConstrINT format load unchanged") {
    // The original's rules: '#' comments, ';' ends a constraint, '|' for OR (also '||'), '==', '<=',
    // 'A % B == 0', + * ^, [a, b] lists, names of letters and '_'; parentheses were stripped.
    Model m = parse_cint(R"(# tiling rules
WARP_SIZE == 32;
HIDDEN_DIM == 768 ;
BATCH == [8, 16];
HIDDEN_DIM_SQ == HIDDEN_DIM ^ 2 ;
HIDDEN_DIM % TILE_COUNT == 0 ;
GATES * HIDDEN_DIM % (TILE_COUNT * WARP_SIZE) == 0 ;
GATES == 4;
GATES * HIDDEN_DIM * WARPS <= 1024 * TILE_COUNT ;
WARPS == 1 ||
  WARPS == 2;
;;
(TILE_COUNT <= 8)
)",
                         "rules.constrint");
    CHECK(m.constraints().size() == 10);
    const Result r = solve(m);
    REQUIRE(r.status == Status::Satisfiable);
    const Solution& s = r.solutions[0];
    CHECK(s["HIDDEN_DIM_SQ"] == 768 * 768);
    CHECK(s["TILE_COUNT"] == 3); // the lexicographically first solution: 4 * 768 <= 1024 * TILE_COUNT
    CHECK(s["BATCH"] == 8);
    CHECK((s["GATES"] * 768) % (s["TILE_COUNT"] * 32) == 0);
}

TEST_CASE("format: parse errors name the problem and its position") {
    check_error("x == 1\ny == 2;", 1, 7, "expected ';' after constraint, found 'y'");
    check_error("x == foo(1);", 1, 6, "unknown function 'foo'");
    check_error("x == y^z;", 1, 8, "exponent must be a non-negative integer constant");
    check_error("x == y^-1;", 1, 8, "exponent must be a non-negative integer constant");
    check_error("x == 2^70000;", 1, 8, "exponent 70000 is too large");
    check_error("var a in 1..2;\n\nvar x in 1..3;\nvar x in 1..4;", 4, 5,
                "variable 'x' declared twice (first at line 3)");
    check_error("var t in [];", 1, 10, "empty value list");
    check_error("x == [];", 1, 6, "empty value list");
    check_error("var x in 5..3;", 1, 10, "lower bound 5 is above upper bound 3");
    check_error("var x in [1, 9..2];", 1, 14, "lower bound 9 is above upper bound 2");
    check_error("x = 3;", 1, 3, "'=' is not an operator; did you mean '=='?");
    check_error("x =< 3;", 1, 3, "did you mean '<='?");
    check_error("x ! 3;", 1, 3, "did you mean '!='?");
    check_error("1 <= x <= 5;", 1, 8, "chained relations are not allowed");
    check_error("x == y == z;", 1, 8, "chained relations are not allowed");
    check_error("A % B == 3;", 1, 3, "mod(a, b)");
    check_error("A % B <= 0;", 1, 3, "mod(a, b)");
    check_error("A == B % C;", 1, 8, "mod(a, b)");
    check_error("x == (A % B) + 1;", 1, 9, "mod(a, b)");
    check_error("x == min(A % B, 1);", 1, 12, "mod(a, b)");
    check_error("maximize A % B;", 1, 12, "mod(a, b)");
    check_error("A % B % C == 0;", 1, 7, "'%' may appear only once");
    check_error("x == abs(1, 2);", 1, 6, "function 'abs' takes 1 argument, got 2");
    check_error("x == mod(1);", 1, 6, "function 'mod' takes 2 arguments, got 1");
    check_error("x == min(1);", 1, 6, "function 'min' takes at least 2 arguments, got 1");
    check_error("x + 1;", 1, 6, "expected a relation (==, !=, <=, <, >=, >) or 'in', found ';'");
    check_error("x == ;", 1, 6, "expected a term");
    check_error("x == (1 + 2;", 1, 12, "expected ')' to close '('");
    check_error("(x == 1 | y == 2;", 1, 17, "expected ')' to close the constraint");
    check_error("x == 1.5;", 1, 6, "numbers are integers");
    check_error("x == 12ab;", 1, 6, "a name cannot start with a digit: '12ab'");
    check_error("x == 1 @ 2;", 1, 8, "unexpected character '@'");
    check_error(std::string_view("x == 1\x01;", 8), 1, 7, "unexpected character '\\x01'");
    check_error("var x in 1..y;", 1, 13, "a range bound must be a constant expression");
    check_error("var x in [1, y];", 1, 14, "a listed value must be a constant expression");
    check_error("var x in 1..1/0;", 1, 13, "division by zero in a range bound");
    check_error("var x in 1..10 step 0;", 1, 21, "the step must be positive, got 0");
    check_error("var x == 3;", 1, 7, "a declaration gives a domain with 'in'");
    check_error("var x in 1 .. ;", 1, 15, "expected a term");
    check_error("var x in 7;", 1, 11, "expected '..' in the range lo..hi");
    check_error("x == 1..5;", 1, 7, "a range needs 'in'");
    check_error("prefer x fastest;", 1, 10, "expected min, max, split_low or split_high after 'prefer x'");
    check_error("prefer x max;\nprefer x min;", 2, 8, "preference for 'x' given twice (first at line 1)");
    check_error("search x, y;\nsearch x;", 2, 8,
                "variable 'x' appears twice in the search order (first at line 1)");
    check_error("search x y;", 1, 9, "expected ';' after search order");
    check_error("x + [1, 2] == 3;", 1, 5, "a value list can only follow '==' or 'in'");
    check_error("x <= [1, 2];", 1, 6, "a value list can only follow '==' or 'in'");
    check_error("x == `unterminated;", 1, 6, "unterminated quoted name");
    check_error("x == 1;\n  y == 2 2;", 2, 9, "expected ';' after constraint, found '2'");
    check_error("x == 1 | ;", 1, 10, "expected a term");
    check_error(")", 1, 1, "expected a term");
    check_error("var x in 5..3 @", 1, 10, "lower bound 5 is above upper bound 3"); // the first problem
    check_error("x == 1 @", 1, 8, "unexpected character '@'");
}

TEST_CASE("format: limits on hostile input are parse errors") {
    CHECK(failure(std::string(5000, '(') + "x").message.find("nesting too deep") != std::string::npos);
    CHECK(failure("x == " + std::string(5000, '-') + "1;").message.find("nesting too deep") !=
          std::string::npos);
    CHECK(failure("x == (2^65536)^65536;").message.find("constant too large") != std::string::npos);
    CHECK(failure("x == 2^655362^65536;").message.find("constant too large") != std::string::npos);
    CHECK(failure("x == y^65536 * y^65536 * y^65536 * y^65536 * y^65536;").message.find("term too large") !=
          std::string::npos);
    std::string long_sum = "x == 1";
    for (int i = 0; i < 12000; ++i)
        long_sum += " + 1";
    CHECK(failure(long_sum + ";").message.find("too deeply nested") != std::string::npos);
    CHECK(failure("x == " + std::string(80000, '9') + ";").message.find("integer literal too long") !=
          std::string::npos);
    // Big but sensible numbers are exact.
    Model m = parse_cint("x == " + std::string(300, '9') + ";", kFile);
    CHECK(evaluate_constant(*m.constraints()[0].constraint.node().rhs) == power(10, 300) - 1);
}

TEST_CASE("format: load_cint reads files and names them in errors") {
    CHECK_THROWS_AS(load_cint("/nonexistent/model.cint"), FileError); // no position: read_model_file
    Model m = load_cint(std::string(CONSTRINT_SOURCE_DIR) + "/examples/models/no_solution.cint");
    CHECK(m.constraints().size() == 5);
    CHECK(m.constraints()[0].origin.file.find("no_solution.cint") != std::string::npos);
}

TEST_CASE("format: write_cint round trips") {
    SUBCASE("a model built through the API") {
        Model m;
        Var x = m.var("x", 1, 1024), t = m.var("t", std::vector<Integer>{8, 16, 32});
        Var odd = m.var("odd", -9, 9);
        Domain congruent = Domain::range(1, power(2, 40));
        congruent.restrict_congruence(16, 0);
        Var c = m.var("c", congruent);
        Var holes = m.var("holes", Domain::values({1, 2, 3, 7, 100}));
        Var keyword = m.var("in", 1, 3);
        Var spaced = m.var("a b", 0, 1);
        Domain odd_values = Domain::range(-9, 9);
        odd_values.restrict_congruence(2, 1);
        m.set_domain(odd, odd_values);
        m.add(x * t <= 65536);
        m.add(x % 16 == 0);
        m.add((x == 64) | (t == 32));
        m.add(((x == 64) & (t == 32)) | (t == 8));
        m.add(((x == 64) | (t == 32)) & (t >= 8), "a labelled constraint");
        m.add(member(x + t, odd_values));
        m.add(member(keyword, Domain::values({1, 3})));
        m.add(divides(c / 16, x * t + 1));
        m.add(pow(-x, 2) - -x == min(abs(odd), max(x, 3)) / 2 + (holes % 3) * spaced);
        m.add(Expr(0) <= keyword);
        m.prefer(x, Prefer::Max);
        m.prefer(c, Prefer::SplitHigh);
        m.search({t, x});
        m.maximize(x * t);
        m.minimize(-x);
        const std::string text = write_cint(m);
        CHECK(text.find("var `in` in [1..3];") == std::string::npos);
        CHECK(text.find("var `in` in 1..3;") != std::string::npos);
        CHECK(text.find("var `a b` in 0..1;") != std::string::npos);
        CHECK(text.find("var c in 16..1099511627776 step 16;") != std::string::npos);
        CHECK(text.find("var odd in -9..9 step 2;") != std::string::npos);
        CHECK(text.find("# a labelled constraint") != std::string::npos);
        check_round_trip(m);
    }
    SUBCASE("the example models") {
        for (const char* name :
             {"big_numbers", "cube_roots", "kernel_tiling", "no_solution", "send_more_money"}) {
            INFO(name);
            const std::string path = std::string(CONSTRINT_SOURCE_DIR) + "/examples/models/" + name + ".cint";
            Model m = parse_cint(read_text(path), path);
            check_round_trip(m);
        }
    }
    SUBCASE("the same solutions") {
        const char* text = R"(
            var a in -6..6; var b in [1, 3, 5..6]; var c in 0..20 step 5;
            a * b + c / 5 == mod(a, 4) + 3 | a == -b;
            a != 0 & b < 6 | c == 20;
            a + 6 % b == 0;
            min(a, b)^2 <= 25;
            abs(a) in [0..2, 4] | c in 10..15;
        )";
        Model m = parse_cint(text, kFile);
        Model back = check_round_trip(m);
        const auto expected = all_solutions(m);
        CHECK(!expected.empty());
        CHECK(all_solutions(back) == expected);
    }
    SUBCASE("an empty domain is written, but as a value list that does not read back") {
        Model m;
        m.var("e", Domain());
        CHECK(write_cint(m) == "var e in [];  # empty domain: the model has no solution\n");
    }
}

TEST_CASE("format: names that cannot be written are refused with a message") {
    Model m;
    m.var("back`tick", 1, 2);
    CHECK_THROWS_AS(write_cint(m), ModelError);
}

TEST_CASE("format: fuzzing the reader only ever gives ParseError") {
    std::mt19937 random(20240611);
    const std::vector<std::string> vocabulary = {"x",
                                                 "y",
                                                 "_z9",
                                                 "var",
                                                 "in",
                                                 "step",
                                                 "search",
                                                 "prefer",
                                                 "maximize",
                                                 "minimize",
                                                 "min",
                                                 "max",
                                                 "abs",
                                                 "mod",
                                                 "split_low",
                                                 "0",
                                                 "1",
                                                 "7",
                                                 "12345678901234567890123",
                                                 "+",
                                                 "-",
                                                 "*",
                                                 "/",
                                                 "^",
                                                 "%",
                                                 "(",
                                                 ")",
                                                 "[",
                                                 "]",
                                                 ",",
                                                 ";",
                                                 "..",
                                                 "|",
                                                 "&",
                                                 "==",
                                                 "!=",
                                                 "<=",
                                                 "<",
                                                 ">=",
                                                 ">",
                                                 "=",
                                                 "!",
                                                 "#c\n",
                                                 "\n",
                                                 " ",
                                                 "`q q`",
                                                 "`",
                                                 "2^65536",
                                                 "@",
                                                 ".",
                                                 "\xff"};
    auto attempt = [](const std::string& input) {
        try {
            Model m = parse_cint(input, "fuzz.cint");
            const std::string written = write_cint(m); // what reads must also write and read back
            Model back = parse_cint(written, "fuzz-written.cint");
            if (back.constraints().size() != m.constraints().size()) {
                FAIL_CHECK("round trip changed the constraint count: " << input);
            }
        } catch (const ParseError&) {
        } catch (const std::exception& e) {
            FAIL_CHECK("input " << std::quoted(input) << " threw " << e.what());
        }
    };
    for (int i = 0; i < 3000; ++i) { // random bytes
        std::string input(random() % 48, '\0');
        for (char& ch : input)
            ch = static_cast<char>(random() % 256);
        attempt(input);
    }
    for (int i = 0; i < 6000; ++i) { // token soup
        std::string input;
        const int n = static_cast<int>(random() % 24);
        for (int k = 0; k < n; ++k) {
            input += vocabulary[random() % vocabulary.size()];
            if (random() % 2) input += ' ';
        }
        attempt(input);
    }
    const std::string base =
        read_text(std::string(CONSTRINT_SOURCE_DIR) + "/examples/models/kernel_tiling.cint");
    REQUIRE(!base.empty());
    for (int i = 0; i < 1500; ++i) { // mutations of a real model
        std::string input = base;
        const int edits = 1 + static_cast<int>(random() % 4);
        for (int k = 0; k < edits; ++k) {
            const std::size_t at = random() % input.size();
            switch (random() % 3) {
            case 0:
                input.erase(at, 1 + random() % 3);
                break;
            case 1:
                input.insert(at, vocabulary[random() % vocabulary.size()]);
                break;
            default:
                input[at] = static_cast<char>(random() % 128);
                break;
            }
            if (input.empty()) input = "x";
        }
        attempt(input);
    }
}
