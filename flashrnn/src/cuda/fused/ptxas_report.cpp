// ptxas -v, as NVRTC writes it into the program log (CUDA 12 and 13):
//   ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
//   ptxas info    : Function properties for _Z1kPf
//   ptxas         .     1200 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
//   ptxas info    : Used 40 registers, used 0 barriers, 1200 bytes cumulative stack size
#include "cuda/fused/fused_compiler.hpp"

#include <regex>
#include <string>

namespace flashrnn {

std::optional<RegisterReport> parse_ptxas_report(std::string_view log, std::string_view lowered_name) {
    const std::string text(log);
    const std::string header = "Compiling entry function '" + std::string(lowered_name) + "'";
    const std::size_t start = text.find(header);
    if (start == std::string::npos) return std::nullopt;
    // This function's lines run up to the next entry's.
    std::size_t end = text.find("Compiling entry function '", start + header.size());
    if (end == std::string::npos) end = text.size();
    const std::string section = text.substr(start, end - start);

    static const std::regex used(R"(Used (\d+) registers)");
    static const std::regex frame(
        R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    std::smatch match;
    if (!std::regex_search(section, match, used)) return std::nullopt;
    RegisterReport report;
    report.registers_per_thread = std::stoi(match[1]);
    if (std::regex_search(section, match, frame)) {
        report.stack_frame_bytes = std::stoll(match[1]);
        report.spill_store_bytes = std::stoll(match[2]);
        report.spill_load_bytes = std::stoll(match[3]);
    }
    return report;
}

} // namespace flashrnn
