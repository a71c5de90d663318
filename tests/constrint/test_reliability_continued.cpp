// Hostile input, continued (issue 23): empty domains in every FlatZinc builtin, model files that
// are not files, division by a constant zero, and limits that hold while a model is read or prepared.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>

using namespace constrint;

namespace {

std::string flatzinc_answer(const std::string& text) {
    std::ostringstream out;
    try {
        solve_flatzinc(text, "m.fzn", {}, out);
    } catch (const Error& e) {
        return std::string("error: ") + e.what();
    }
    return out.str();
}

// One call of every FlatZinc builtin; each `?` is a variable argument.
const char* const kBuiltinCalls[] = {
    "int_eq(?, ?)",
    "int_ne(?, ?)",
    "int_le(?, ?)",
    "int_lt(?, ?)",
    "int_eq_reif(?, ?, ?)",
    "int_le_imp(?, ?, ?)",
    "bool_eq(?, ?)",
    "bool_le(?, ?)",
    "bool_lt_reif(?, ?, ?)",
    "int_lin_eq([1, 2], [?, ?], 3)",
    "int_lin_ne([1, -1], [?, ?], 0)",
    "int_lin_le([2, 3], [?, ?], 7)",
    "int_lin_le_reif([2, 3], [?, ?], 7, ?)",
    "int_lin_eq_imp([1, 1], [?, ?], 2, ?)",
    "bool_lin_eq([1, 1], [?, ?], ?)",
    "bool_lin_le([1, 1], [?, ?], 1)",
    "set_in(?, {1, 3})",
    "set_in(?, 1..2)",
    "set_in_reif(?, {1, 3}, ?)",
    "set_in_imp(?, {1, 3}, ?)",
    "int_plus(?, ?, ?)",
    "int_times(?, ?, ?)",
    "int_div(?, ?, ?)",
    "int_mod(?, ?, ?)",
    "int_abs(?, ?)",
    "int_min(?, ?, ?)",
    "int_max(?, ?, ?)",
    "int_pow(?, 2, ?)",
    "int_pow(?, ?, ?)",
    "array_int_element(?, [1, 2, 3], ?)",
    "array_var_int_element(?, [?, ?], ?)",
    "bool2int(?, ?)",
    "bool_not(?, ?)",
    "bool_and(?, ?, ?)",
    "bool_or(?, ?, ?)",
    "bool_xor(?, ?)",
    "bool_xor(?, ?, ?)",
    "bool_clause([?], [?])",
    "array_bool_and([?, ?], ?)",
    "array_bool_or([?, ?], ?)",
    "array_bool_xor([?, ?])",
    "array_bool_element(?, [true, false], ?)",
    "array_var_bool_element(?, [?, ?], ?)",
    "constrint_all_different_int([?, ?])",
    "constrint_count_eq([?, ?], 1, ?)",
    "constrint_count_eq([?, ?], ?, ?)",
};

// `call` with its `?`s filled by a, b, c, ... and the one at `empty_at` (when any) by `e`.
std::string filled(std::string call, int empty_at) {
    const char* names[] = {"a", "b", "c", "d"};
    int index = 0;
    for (std::size_t at = call.find('?'); at != std::string::npos; at = call.find('?'), ++index)
        call.replace(at, 1, index == empty_at ? "e" : names[index]);
    return call;
}

} // namespace

TEST_CASE("reliability: an empty domain in any argument of any FlatZinc builtin is unsatisfiable") {
    const std::string declarations = "var 0..1: a;\nvar 0..1: b;\nvar 0..1: c;\nvar 0..1: d;\nvar 5..1: e;\n";
    for (const char* call : kBuiltinCalls) {
        CAPTURE(call);
        // The call as written is a model that reads (the template itself is right) ...
        CHECK(flatzinc_answer(declarations.substr(0, declarations.rfind("var 5")) + "constraint " +
                              filled(call, -1) + ";\nsolve satisfy;\n")
                  .find("error") == std::string::npos);
        // ... and an empty domain in each of its variable positions makes it unsatisfiable.
        const auto positions = std::count(call, call + std::strlen(call), '?');
        for (int at = 0; at < positions; ++at) {
            const std::string model = declarations + "constraint " + filled(call, at) + ";\nsolve satisfy;\n";
            CAPTURE(model);
            CHECK(flatzinc_answer(model) == "=====UNSATISFIABLE=====\n");
        }
    }
    // An unknown constraint is still an error next to an empty domain.
    CHECK(flatzinc_answer("var 5..1: e;\nconstraint no_such(e);\nsolve satisfy;\n") ==
          "error: m.fzn:2:12: unknown constraint 'no_such'");
}

TEST_CASE("reliability: a directory or a missing file is not a model") {
    const std::string directory = std::filesystem::temp_directory_path().string();
    CHECK_THROWS_WITH_AS(read_model_file(directory),
                         ("cannot read '" + directory + "': it is a directory, not a model file").c_str(),
                         FileError);
    CHECK_THROWS_WITH_AS(load_cint(directory), doctest::Contains("is a directory"), FileError);
    CHECK_THROWS_WITH_AS(load_cint("/no/such/model.cint"),
                         "cannot open '/no/such/model.cint': No such file or directory", FileError);
}

TEST_CASE("reliability: NUL bytes and invalid UTF-8 in a FlatZinc model are escaped in messages") {
    using namespace std::string_literals; // the NUL stays in the text
    CHECK(flatzinc_answer("var 1..3: x;\nconstraint foo\0bar(x);\nsolve satisfy;\n"s) ==
          "error: m.fzn:2:15: unexpected character '\\x00'");
    CHECK(flatzinc_answer("var 1..3: x;\nconstraint fo\xff\xfeo(x);\nsolve satisfy;\n") ==
          "error: m.fzn:2:14: unexpected character '\\xff'");
}
