"""Prints `ordo compile --json` reports as one table (used by scripts/demo)."""
import json
import sys

COLUMNS = ["model", "ops", "model order", "kahn", "rpo", "best", "lower bound",
           "status", "by", "time ms"]


def row(report):
    baselines = report["baselines"]
    return [report["model"].split("/")[-1].removesuffix(".onnx"), report["ops"],
            baselines["model_order"]["peak_bytes"], baselines["kahn"]["peak_bytes"],
            baselines["rpo"]["peak_bytes"], report["peak_bytes"],
            report["lower_bound_bytes"], report["status"], report["algorithm"],
            f'{report["time_ms"]:.1f}']


def main(paths):
    rows = [COLUMNS] + [[str(c) for c in row(json.load(open(p)))] for p in paths]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    for i, r in enumerate(rows):
        print("  ".join(c.rjust(w) if j else c.ljust(w)
                        for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\npeaks in bytes (spec defaults: in-place on, weights not counted)")


if __name__ == "__main__":
    main(sys.argv[1:])
