// libFuzzer target: the .cint reader, the writer's round trip and the solver under small limits.
// Any input must give a ParseError/ModelError or an answer within the limits: an uncaught exception,
// a sanitizer report, a round trip that is not a fixed point or a hang is a finding.
#include <constrint/constrint.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz_cint: %s\n%s\n", what, detail.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace constrint;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Model model;
    try {
        model = parse_cint(text, "fuzz.cint");
    } catch (const Error&) {
        return 0; // refused with a located message
    }
    // The writer and the reader round-trip: write(read(write(m))) == write(m).
    const std::string written = write_cint(model);
    try {
        const std::string again = write_cint(parse_cint(written, "written.cint"));
        if (again != written) finding("write(read(write(m))) != write(m)", written + "\n----\n" + again);
    } catch (const Error& e) {
        finding("the reader refuses what the writer wrote", written + "\n----\n" + e.what());
    }
    SolveOptions options;
    options.node_limit = 500;
    options.time_limit_seconds = 0.05;
    try {
        Solver solver(model, options);
        for (int i = 0; i < 3 && solver.next(); ++i) {
        }
        if (solver.status() == Status::Unsatisfiable && model.constraints().size() <= 16) {
            SolveOptions per_check = options;
            per_check.node_limit = 100;
            per_check.time_limit_seconds = 0.01;
            explain_conflict(model, per_check);
        }
    } catch (const Error&) {
        // a model error found when the model is compiled (division by zero, a term too large)
    }
    return 0;
}
