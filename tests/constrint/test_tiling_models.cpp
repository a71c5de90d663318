// The original FlashRNN fused-kernel tiling models (examples/models/flashrnn/) with the answers and
// solution counts known from independent brute-force enumeration.
#include <constrint/constrint.hpp>
#include <doctest/doctest.h>

#include <map>
#include <string>

using namespace constrint;

namespace {

struct Expected {
    const char* variant;
    std::map<std::string, int> forward, backward; // searched values that are not 1
    std::size_t forward_count, backward_count;
};

// The tiling counts of each pass; those not named in Expected are 1.
const char* kForwardCounts[] = {"FMTC",  "FRTCG", "FRTCH", "FBTCB", "FWLCB",
                                "FWLCG", "FWTCH", "FWTCB", "FWRCH"};
const char* kBackwardCounts[] = {"BMTC",  "BRTCH", "BRTCG", "BBTCB", "BWLCB",
                                 "BWLCH", "BWTCG", "BWTCB", "BWRCG"};

const Expected kExpected[] = {
    {"slstm_bf16_hidden1024_nh4_b8_h100",
     {{"FWTDB", 8}, {"FWTDG", 32}, {"FMTC", 4}, {"FRTCG", 32}, {"FWTCH", 8}, {"FWRCH", 2}},
     {{"BWTDB", 8}, {"BWTDH", 32}, {"BMTC", 4}, {"BRTCH", 8}, {"BWTCG", 8}, {"BWRCG", 8}},
     1831,
     4276},
    {"lstm_fp32_hidden512_nh1_b16_h100",
     {{"FWTDB", 16}, {"FWTDG", 16}, {"FWTDH", 8}, {"FRTCG", 128}, {"FWTCH", 8}, {"FWRCH", 8}},
     {{"BWTDB", 16}, {"BWTDH", 16}, {"BWTDG", 8}, {"BRTCH", 32}, {"BWTCG", 8}, {"BWRCG", 32}},
     1825,
     4066},
    {"lstm_bf16_hidden1024_nh1_b8_a100",
     {{"FWTDB", 8}, {"FWTDG", 32}, {"FRTCG", 64}, {"FWTCH", 4}, {"FWRCH", 16}},
     {{"BWTDB", 8}, {"BWTDH", 32}, {"BRTCH", 32}, {"BWTCG", 8}, {"BWRCG", 30}},
     655,
     1386},
    {"elman_bf16_hidden2048_nh1_b32_h100",
     {{"FWTDB", 32}, {"FWTDG", 8}, {"FRTCG", 128}, {"FWTCH", 4}, {"FWRCH", 32}},
     {{"BWTDB", 32}, {"BWTDH", 8}, {"BRTCH", 128}, {"BWTCG", 4}, {"BWRCG", 32}},
     25121,
     25121},
    {"lstm_bf16_hidden768_nh12_b16_h100",
     {{"FWTDB", 16}, {"FWTDG", 16}, {"FMTC", 12}, {"FRTCG", 8}, {"FWTCH", 4}, {"FWRCH", 1}},
     {{"BWTDB", 16}, {"BWTDH", 16}, {"BMTC", 12}, {"BRTCH", 4}, {"BWTCG", 8}, {"BWRCG", 2}},
     3177,
     5724},
};

std::string model_path(const std::string& variant, const char* pass) {
    return std::string(CONSTRINT_SOURCE_DIR) + "/examples/models/flashrnn/" + variant + "." + pass + ".cint";
}

void check_answer(const std::string& path, const std::map<std::string, int>& expected,
                  const char* const* counts, std::size_t count_size, std::size_t solutions) {
    CAPTURE(path);
    const Model m = load_cint(path);
    const Result first = solve(m);
    REQUIRE(first.status == Status::Satisfiable);
    const Solution& s = first.solutions[0];
    for (const auto& entry : expected) { // no structured binding: Clang 14 cannot capture one (CAPTURE)
        const auto& name = entry.first;
        CAPTURE(name);
        CHECK(s[name] == entry.second);
    }
    for (std::size_t i = 0; i < count_size; ++i) {
        if (!expected.count(counts[i])) {
            CAPTURE(counts[i]);
            CHECK(s[counts[i]] == 1);
        }
    }
    // Every constraint holds for the answer, checked by plain evaluation.
    for (const ConstraintInfo& c : m.constraints())
        CHECK(satisfied(c.constraint, s.values()));
    const Result all = solve_all(m);
    CHECK(all.status == Status::AllSolutions);
    CHECK(all.solutions.size() == solutions);
}

} // namespace

TEST_CASE("FlashRNN tiling models: the lexicographically first answer and the solution counts") {
    for (const Expected& e : kExpected) {
        check_answer(model_path(e.variant, "forward"), e.forward, kForwardCounts, std::size(kForwardCounts),
                     e.forward_count);
        check_answer(model_path(e.variant, "backward"), e.backward, kBackwardCounts,
                     std::size(kBackwardCounts), e.backward_count);
    }
}

TEST_CASE("FlashRNN tiling models: LSTM bf16 with hidden size 4096 (one head) on an H100 has no tiling") {
    const Result forward = solve(load_cint(model_path("lstm_bf16_hidden4096_nh1_b16_h100", "forward")));
    const Result backward = solve(load_cint(model_path("lstm_bf16_hidden4096_nh1_b16_h100", "backward")));
    CHECK(forward.status != Status::Unknown);
    CHECK(backward.status != Status::Unknown);
    CHECK((forward.status == Status::Unsatisfiable || backward.status == Status::Unsatisfiable));
}
