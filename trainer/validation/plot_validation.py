#!/usr/bin/env python3
"""Plots of a validation run, from its validation_report.json (trainer/validation/report_json.h).

    plot_validation.py --report=RUN_DIR/validation_report.json --out_dir=RUN_DIR

Writes, for the tests that trained more than one step:
  loss.png               training loss per step (mean over the step's micro-batches)
  tokens_per_second.png  tokens/sec per step, the warm-up steps shaded
  memory.png             peak RSS per step (MiB)

Run by //trainer:validate with Debian's python3 and python3-matplotlib. Exit status 3: matplotlib
is missing (the message says how to install it); 2: bad arguments or report.
"""
import argparse
import json
import os
import sys

EXIT_NO_MATPLOTLIB = 3

PLOTS = [
    ("loss.png", "Training loss per step", "loss (mean over the step's micro-batches)"),
    ("tokens_per_second.png", "Tokens/sec per step", "tokens/sec (positions, every rank)"),
    ("memory.png", "Peak memory (RSS) per step", "peak RSS of rank 0 (MiB)"),
]


def step_loss(record):
    return record["loss_mean"] if record.get("loss_mean") is not None else record["loss"]


def series(test, name):
    steps = [r["step"] for r in test["steps"]]
    if name == "loss.png":
        values = [step_loss(r) for r in test["steps"]]
    elif name == "tokens_per_second.png":
        values = [r["tokens_per_second"] for r in test["steps"]]
    else:
        values = [r["peak_rss_bytes"] / 2**20 for r in test["steps"]]
    return steps, values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", required=True)
    parser.add_argument("--out_dir", required=True)
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"plot_validation.py: matplotlib is missing ({e}); install Debian's python3-matplotlib "
              "(listed in third_party/debian_packages.lock; ./bazelw installs it)", file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    try:
        with open(args.report) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_validation.py: cannot read {args.report}: {e}", file=sys.stderr)
        return 2
    tests = [t for t in report["tests"] if len(t["steps"]) > 1]
    warmup = report["config"]["warmup_steps"]
    for name, title, ylabel in PLOTS:
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
        for test in tests:
            steps, values = series(test, name)
            ax.plot(steps, values, marker="o", markersize=2.5, linewidth=1.2, label=test["title"])
        if name != "loss.png" and warmup > 0:
            ax.axvspan(-0.5, warmup - 0.5, color="0.9", label=f"warm-up (steps 0-{warmup - 1}, not timed)")
        ax.set_title(title)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if tests:
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out_dir, name))
        plt.close(fig)
        print(json.dumps({"title": title, "file": name}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
