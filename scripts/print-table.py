"""Prints `ordo compile --json` reports as one table (used by scripts/demo).

Arguments are first-pass reports NAME.first.json; a NAME.second.json beside
one (the same compile again through the service) adds its cache hits.
The reports are CompileResponse messages in protobuf's JSON mapping
(docs/cli.md).
"""
import json
import os
import sys

COLUMNS = ["model", "ops", "model order", "kahn", "rpo", "best", "lower bound",
           "status", "by", "time ms", "2nd: cached parts", "2nd: ms"]


def second_pass(path):
    other = path.replace(".first.json", ".second.json")
    if other == path or not os.path.exists(other):
        return None
    return json.load(open(other))


def milliseconds(duration):
    """A google.protobuf.Duration in the JSON mapping ("0.012s") in ms."""
    return 1e3 * float(duration.removesuffix("s"))


def row(report, again):
    # The proto's JSON mapping: int64 as strings, enums by name, lists.
    baselines = {b["name"]: int(b["peak_bytes"]) for b in report["baselines"]}
    cached, again_ms = "-", "-"
    if again is not None:
        stats = again["stats"]
        cached = f'{stats["cache_hits"]}/{stats["parts"]}'
        again_ms = f'{milliseconds(stats["time"]):.1f}'
    status = report["status"].removeprefix("SCHEDULE_STATUS_").lower()
    return [report["model_path"].split("/")[-1].removesuffix(".onnx"), report["ops"],
            baselines["model_order"], baselines["kahn"], baselines["rpo"],
            report["peak_bytes"], report["lower_bound_bytes"], status, report["algorithm"],
            f'{milliseconds(report["stats"]["time"]):.1f}', cached, again_ms]


def main(paths):
    rows = [COLUMNS] + [[str(c) for c in row(json.load(open(p)), second_pass(p))]
                        for p in paths]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    for i, r in enumerate(rows):
        print("  ".join(c.rjust(w) if j else c.ljust(w)
                        for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\npeaks in bytes (spec defaults: in-place on, weights not counted);"
          " time ms = the server's time for the compile")


if __name__ == "__main__":
    main(sys.argv[1:])
