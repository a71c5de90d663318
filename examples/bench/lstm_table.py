"""Merges the CSV files of alternating_bench (both backends) and torch_lstm_bench.py into the markdown
table of docs/benchmarks.md (bf16, LSTM, T=1024): per shape the alternating and the fused backend side
by side, the fused backend's speed-up over the alternating one (graph replays), the FlashRNN paper's H100
figures for its alternating backend where the paper gives them, and cuDNN.

    python3 examples/bench/lstm_table.py lstm_bf16.csv torch_lstm.csv

A CSV without a backend column (from before the fused backend) counts as the alternating backend's.
"""
import csv
import sys

# FlashRNN paper, H100, alternating backend, bf16, B=16, T=1024 (forward, forward+backward) in ms.
PAPER = {(16, 12, 64): (8.19, 20.5), (16, 1, 768): (10.79, 26.49)}
BACKENDS = ("alternating", "fused")


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def eager_and_graph(r, pass_):
    """'eager / graph' milliseconds of one pass ('forward' or 'fwbw'), or '' without a measurement."""
    if r is None:
        return ""
    return f"{float(r[pass_ + '_ms']):.2f} / {float(r[pass_ + '_graph_ms']):.2f}"


def speedup(alternating, fused):
    if alternating is None or fused is None:
        return ""
    return " / ".join(f"{float(alternating[p + '_graph_ms']) / float(fused[p + '_graph_ms']):.2f}x"
                      for p in ("forward", "fwbw"))


def main():
    by_shape = {}  # (B, NH, DH) -> {backend: row}, in the order of the benchmark
    for r in rows(sys.argv[1]):
        shape = (int(r["B"]), int(r["NH"]), int(r["DH"]))
        by_shape.setdefault(shape, {})[r.get("backend") or "alternating"] = r
    torch = {(int(r["B"]), int(r["hidden"])): r for r in rows(sys.argv[2])} if len(sys.argv) > 2 else {}
    print("| B | NH | DH | alternating fw (eager / graph) | alternating fw+bw (eager / graph) "
          "| fused fw (eager / graph) | fused fw+bw (eager / graph) | fused speed-up fw / fw+bw (graph) "
          "| paper fw / fw+bw | cuDNN bf16 fw / fw+bw | cuDNN fp16 fw / fw+bw |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (b, nh, dh), measured in by_shape.items():
        alternating, fused = (measured.get(name) for name in BACKENDS)
        paper = PAPER.get((b, nh, dh))
        peer = torch.get((b, nh * dh))
        cells = [str(b), str(nh), str(dh),
                 eager_and_graph(alternating, "forward"), eager_and_graph(alternating, "fwbw"),
                 eager_and_graph(fused, "forward"), eager_and_graph(fused, "fwbw"),
                 speedup(alternating, fused),
                 f"{paper[0]} / {paper[1]}" if paper else "",
                 f"{float(peer['bf16_fw_ms']):.2f} / {float(peer['bf16_fwbw_ms']):.2f}" if peer else "",
                 f"{float(peer['fp16_fw_ms']):.2f} / {float(peer['fp16_fwbw_ms']):.2f}" if peer else ""]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
