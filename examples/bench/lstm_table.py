"""Merges the CSV files of alternating_bench and torch_lstm_bench.py into the markdown table of
docs/benchmarks.md (bf16, LSTM, T=1024), with the FlashRNN paper's H100 figures for its alternating
backend where the paper gives them.

    python3 examples/bench/lstm_table.py alternating_bf16.csv torch_lstm.csv
"""
import csv
import sys

# FlashRNN paper, H100, alternating backend, bf16, B=16, T=1024 (forward, forward+backward) in ms.
PAPER = {(16, 12, 64): (8.19, 20.5), (16, 1, 768): (10.79, 26.49)}


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main():
    ours = rows(sys.argv[1])
    torch = {(int(r["B"]), int(r["hidden"])): r for r in rows(sys.argv[2])} if len(sys.argv) > 2 else {}
    print("| B | NH | DH | fw (eager) | fw (graph) | fw+bw (eager) | fw+bw (graph) | paper fw / fw+bw "
          "| cuDNN bf16 fw / fw+bw | cuDNN fp16 fw / fw+bw |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in ours:
        b, nh, dh = int(r["B"]), int(r["NH"]), int(r["DH"])
        paper = PAPER.get((b, nh, dh))
        peer = torch.get((b, nh * dh))
        cells = [str(b), str(nh), str(dh), r["forward_ms"], r["forward_graph_ms"], r["fwbw_ms"], r["fwbw_graph_ms"],
                 f"{paper[0]} / {paper[1]}" if paper else "",
                 f"{float(peer['bf16_fw_ms']):.2f} / {float(peer['bf16_fwbw_ms']):.2f}" if peer else "",
                 f"{float(peer['fp16_fw_ms']):.2f} / {float(peer['fp16_fwbw_ms']):.2f}" if peer else ""]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
