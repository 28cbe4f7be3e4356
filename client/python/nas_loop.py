#!/usr/bin/python3
"""An example neural-architecture-search loop against ordo-server.

A NAS controller proposes a stream of candidate networks and needs, for each,
the lowest peak activation memory it can run in (does it fit the device?).
The candidates are built from a few cells, so most of each candidate was
already seen: the server splits every model at its single-tensor waists
(hourglass cuts), keys each part by its structure (insensitive to names and
to a common scale of its sizes, so the same cell at another width or
resolution is the same part) and serves repeated parts from its cache. This
loop shows that: per candidate it prints the model order's peak, ordo's peak,
the status, the parts and the cache hits; at the end the per-part hit rate.

Search space (NASNet-like, after Zoph et al. 2018, simplified to one cell
input so that every cell boundary is a cut):
  - a cell has NODES nodes; node i adds two ops, each applied to the cell
    input or an earlier node: conv3x3, conv5x5 (ReLU-conv), sep_conv3x3
    (ReLU, depthwise 3x3, pointwise 1x1), max_pool3x3, avg_pool3x3 or
    identity; the nodes nobody reads are concatenated and a 1x1 conv brings
    the channels back; the last node always reads the cell input with a
    real op, so the only cut inside a cell is at its end (one part per
    cell); a cell's nodes are written breadth first (every branch's first
    op, then every second op, ...), a common exporter order that keeps
    many tensors live, so ordo's order beats the file's;
  - a pool of --cells cell genotypes is drawn once (from --seed); a candidate
    is a stem, 2-3 stages of 1-3 cells drawn from the pool, a ReLU + stride-2
    conv doubling the channels between stages, and a pooling classifier;
    its width is one of 8, 16, 32 channels.

Models are ONNX (opset 13, float32) written with onnx.helper; weights are
initializers with dims but no data (as in ../shared/models), because
schedules depend only on shapes.

By default the cache is warmed first: one small model per cell of the pool is
compiled before the stream, as a NAS system would after drawing its search
space, so the candidates' cells are served from the cache. --no-cache-warm
skips that and shows the hit rate grow as cells repeat.

Usage (start a server first, e.g. build/server/ordo-server):
  /usr/bin/python3 client/python/nas_loop.py --server localhost:50051 \
      --candidates 20 --seed 1
Flags: --server, --candidates, --seed, --cells, --resolution, --scheduler,
--time-limit, --timeout, --mode both|compile|estimate, --concurrency N
(candidates in flight on one CompileMany stream, default 4; rows print in
the order candidates finish), --stream (one at a time through
CompileStream instead), --no-cache-warm, --save-dir DIR (write the candidates),
--json (one JSON object per line instead of the table).

Columns: cells (one letter per pool cell, stages separated by "|"), width
(stem channels), ops, model-order (peak of the file's order), peak (ordo's),
lower-bnd, status, parts, hits and misses (the part cache, for this compile),
ms (the candidate's calls, measured by the client from its proposal to its
result, so with --concurrency above 1 it includes waiting for a slot). Exit status 0, 1 when a
candidate failed, 2 when the server cannot be reached.
"""

import argparse
import json
import os
import random
import sys
import time

from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ordo_client import OrdoClient, OrdoError, status_name  # noqa: E402

OPSET = 13
OPS = ("conv3x3", "conv5x5", "sep_conv3x3", "max_pool3x3", "avg_pool3x3", "identity")
# ONNX nodes each op adds.
OP_NODES = {"conv3x3": 2, "conv5x5": 2, "sep_conv3x3": 3, "max_pool3x3": 1,
            "avg_pool3x3": 1, "identity": 0}
NODES = 5
# The server merges consecutive parts while they total at most 16 ops
# (HourglassPartitioner::Options::merge_up_to_ops). A cell of at least 17
# ops is therefore always a part of its own, whatever its neighbours are, so
# its cache key does not depend on the candidate it is in.
MIN_CELL_OPS = 17
WIDTHS = (8, 16, 32)


def cell_ops(genotype):
    """ONNX nodes of a cell up to its cut: ops, adds, and the concat when
    more than one node is left unread (else the last add is the cut)."""
    count = sum(OP_NODES[op_a] + OP_NODES[op_b] + 1 for op_a, _, op_b, _ in genotype)
    return count + (1 if len(loose_ends(genotype)) > 1 else 0)


def loose_ends(genotype):
    """Nodes (1-based, 0 is the cell input) no other node reads."""
    read = {src for _, in_a, _, in_b in genotype for src in (in_a, in_b)}
    return [i + 1 for i in range(len(genotype)) if i + 1 not in read]


def random_cell(rng):
    """A genotype: NODES tuples (op_a, input_a, op_b, input_b)."""
    while True:
        genotype = []
        for i in range(NODES):
            last = i == NODES - 1
            # The last node's first op reads the cell input and is not
            # identity: that op is neither before nor after any other node
            # of the cell, so no op inside the cell is a cut.
            op_a = rng.choice(OPS[:-1] if last else OPS)
            in_a = 0 if last else rng.randint(0, i)
            genotype.append((op_a, in_a, rng.choice(OPS), rng.randint(0, i)))
        if cell_ops(genotype) >= MIN_CELL_OPS:
            return tuple(genotype)


def breadth_first(nodes):
    """`nodes` (topologically ordered) sorted by depth, stably: the
    layer-by-layer order graph exporters often write, which runs every
    branch's first op before any branch's second and so keeps many tensors
    live (the order ordo improves on)."""
    depth = {}
    for node in nodes:
        depth[node.output[0]] = 1 + max((depth.get(t, 0) for t in node.input), default=0)
    return sorted(nodes, key=lambda node: depth[node.output[0]])


def external_weight(name, dims):
    """A float32 initializer with dims and no data (its data would be in a
    file that is not shipped): schedules need shapes only."""
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "weights-not-shipped.bin"
    return tensor


class NetBuilder:
    """Collects ONNX nodes and weights of one candidate."""

    def __init__(self):
        self.nodes = []
        self.initializers = []

    def node(self, op_type, inputs, name, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def conv(self, name, x, cin, cout, k=1, stride=1, group=1):
        self.initializers.append(external_weight(name + ".weight", [cout, cin // group, k, k]))
        return self.node("Conv", [x, name + ".weight"], name, kernel_shape=[k, k],
                         strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def op(self, kind, name, x, channels):
        """One search-space op; keeps the shape [1, channels, H, W]."""
        if kind == "identity":
            return x
        if kind in ("max_pool3x3", "avg_pool3x3"):
            op_type = "MaxPool" if kind == "max_pool3x3" else "AveragePool"
            return self.node(op_type, [x], name, kernel_shape=[3, 3], pads=[1] * 4)
        relu = self.node("Relu", [x], name + ".relu")
        if kind == "sep_conv3x3":
            depthwise = self.conv(name + ".dw", relu, channels, channels, k=3, group=channels)
            return self.conv(name + ".pw", depthwise, channels, channels)
        return self.conv(name + ".conv", relu, channels, channels, k=int(kind[4]))

    def cell(self, name, genotype, x, channels):
        first = len(self.nodes)
        states = [x]
        for i, (op_a, in_a, op_b, in_b) in enumerate(genotype):
            a = self.op(op_a, f"{name}.n{i}.a", states[in_a], channels)
            b = self.op(op_b, f"{name}.n{i}.b", states[in_b], channels)
            states.append(self.node("Add", [a, b], f"{name}.n{i}"))
        ends = [states[i] for i in loose_ends(genotype)]
        if len(ends) == 1:
            out = ends[0]
        else:
            out = self.node("Concat", ends, f"{name}.concat", axis=1)
        out = self.conv(f"{name}.proj", out, channels * len(ends), channels)
        self.nodes[first:] = breadth_first(self.nodes[first:])
        return out

    def model(self, name, resolution, outputs_to):
        self.initializers += [external_weight("fc.weight", [10, outputs_to]),
                              external_weight("fc.bias", [10])]
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, resolution, resolution])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
            self.initializers)
        model = helper.make_model(graph, producer_name="ordo nas_loop",
                                  opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 7
        return model


def build_network(name, stages, width, resolution, pool):
    """stem -> stages of cells (pool indices) with reductions -> classifier."""
    net = NetBuilder()
    channels = width
    x = net.conv("stem", "x", 3, channels, k=3)
    for s, cells in enumerate(stages):
        if s > 0:
            relu = net.node("Relu", [x], f"reduce{s}.relu")
            x = net.conv(f"reduce{s}", relu, channels, channels * 2, k=3, stride=2)
            channels *= 2
        for c, cell in enumerate(cells):
            x = net.cell(f"s{s}.c{c}", pool[cell], x, channels)
    x = net.node("GlobalAveragePool", [x], "pool")
    x = net.node("Flatten", [x], "flatten", axis=1)
    net.node("Gemm", [x, "fc.weight", "fc.bias"], "y", transB=1)
    return net.model(name, resolution, channels)


def random_candidate(rng, pool_size):
    """(stages as lists of pool indices, width)."""
    stages = [[rng.randrange(pool_size) for _ in range(rng.randint(1, 3))]
              for _ in range(rng.randint(2, 3))]
    return stages, rng.choice(WIDTHS)


def describe(stages):
    """The cells of a candidate, one letter per cell and stages separated
    by bars: "AB|C|DA"."""
    return "|".join("".join(chr(ord("A") + c) for c in cells) for cells in stages)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="localhost:50051", help="ordo-server host:port")
    parser.add_argument("--candidates", type=int, default=20, help="candidates in the stream")
    parser.add_argument("--seed", type=int, default=0, help="seed of cells and candidates")
    parser.add_argument("--cells", type=int, default=4, help="cell genotypes in the pool")
    parser.add_argument("--resolution", type=int, default=32, help="input height and width")
    parser.add_argument("--scheduler", default="best", help="a scheduler from GetInfo")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="search budget per compile, seconds (server default 10)")
    parser.add_argument("--timeout", type=float, default=60.0, help="deadline per call, seconds")
    parser.add_argument("--mode", choices=("both", "compile", "estimate"), default="both",
                        help="Estimate then Compile (both), or only one of them")
    parser.add_argument("--stream", action="store_true",
                        help="compile one candidate at a time with CompileStream")
    parser.add_argument("--concurrency", type=int, default=4,
                        help="candidates in flight on the CompileMany stream")
    parser.add_argument("--no-cache-warm", action="store_true",
                        help="do not compile the pool's cells before the stream")
    parser.add_argument("--save-dir", help="write each candidate's ONNX here")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    return parser.parse_args(argv)


def compile_candidate(client, args, data):
    """CompileResponse of `data`, through CompileStream when --stream."""
    if not args.stream:
        return client.compile(data, scheduler=args.scheduler, time_limit_s=args.time_limit)
    response = None
    for message in client.compile_stream(data, scheduler=args.scheduler,
                                         time_limit_s=args.time_limit):
        response = message  # Progress events first; the result is last.
    return response


def add_estimate(row, estimate):
    """Puts an EstimateResponse's figures into a candidate's row."""
    row.update(ops=estimate.ops, model_order_peak_bytes=estimate.model_order_peak_bytes,
               lower_bound_bytes=estimate.lower_bound_bytes, parts=estimate.parts,
               cached_parts=estimate.cached_parts)
    if estimate.HasField("cached_peak_bytes"):
        row["cached_peak_bytes"] = estimate.cached_peak_bytes


def add_compile(row, response):
    """Puts a CompileResponse's figures into a candidate's row."""
    row.update(ops=response.ops, peak_bytes=response.peak_bytes,
               lower_bound_bytes=response.lower_bound_bytes,
               status=status_name(response.status), parts=response.stats.parts,
               hits=response.stats.cache_hits, misses=response.stats.cache_misses)
    for baseline in response.baselines:
        if baseline.name == "model_order":
            row["model_order_peak_bytes"] = baseline.peak_bytes


def print_row(row, out, as_json):
    if as_json:
        print(json.dumps(row), file=out)
    else:
        print(f"{row['index']:>3} {row['cells']:<11} {row['width']:>5} {row['ops']:>4} "
              f"{row.get('model_order_peak_bytes', '-'):>11} "
              f"{row.get('peak_bytes') or '-':>9} {row.get('lower_bound_bytes', '-'):>9} "
              f"{row['status']:<9} {row['parts']:>5} {row['hits']:>4} "
              f"{row['misses']:>6} {row['ms']:>7.1f}", file=out)
        if "error" in row:
            print(f"    {row['error']}", file=out)
    out.flush()


def warm_cache(client, args, pool):
    """Compiles each cell of the pool once, alone between a stem and a
    classifier, so that the stream's cells are cache hits."""
    for index in range(len(pool)):
        model = build_network(f"warm{index}", [[index]], WIDTHS[0], args.resolution, pool)
        compile_candidate(client, args, model.SerializeToString())


def run(args):
    rng = random.Random(args.seed)
    pool = [random_cell(rng) for _ in range(args.cells)]
    out = sys.stdout
    header = (f"{'#':>3} {'cells':<11} {'width':>5} {'ops':>4} {'model-order':>11} "
              f"{'peak':>9} {'lower-bnd':>9} {'status':<9} {'parts':>5} {'hits':>4} "
              f"{'misses':>6} {'ms':>7}")
    with OrdoClient(args.server, timeout_s=args.timeout) as client:
        start = time.monotonic()
        # Estimate only reads the cache, so there is nothing to warm for it.
        warm = not args.no_cache_warm and args.mode != "estimate"
        try:
            info = client.info()
            if warm:
                warm_cache(client, args, pool)
        except OrdoError as error:
            print(f"nas_loop: server {args.server}: {error}", file=sys.stderr)
            return 2
        warm_s = time.monotonic() - start
        if args.json:
            print(json.dumps({"event": "start", "server": args.server,
                              "version": info.version, "cache": info.cache,
                              "workers": len(info.workers),
                              "cells": [list(map(list, g)) for g in pool],
                              "warm_seconds": round(warm_s, 3) if warm else None}), file=out)
        else:
            print(f"server {args.server} (ordo {info.version}, {info.cache} cache, workers: "
                  f"{len(info.workers)}): {args.candidates} candidates from "
                  f"{len(pool)} cells (seed {args.seed}); cache warm-up "
                  f"{f'{warm_s:.2f} s' if warm else 'skipped'}", file=out)
            print(header, file=out)
        totals = {"parts": 0, "hits": 0, "misses": 0, "failed": 0}
        rows = {}

        def proposals():
            """The candidates' ONNX bytes, one at a time; their rows (with
            the Estimate figures in mode both) go into `rows` by index."""
            for index in range(args.candidates):
                stages, width = random_candidate(rng, len(pool))
                model = build_network(f"candidate{index}", stages, width, args.resolution, pool)
                data = model.SerializeToString()
                if args.save_dir:
                    os.makedirs(args.save_dir, exist_ok=True)
                    with open(os.path.join(args.save_dir, f"candidate{index}.onnx"), "wb") as f:
                        f.write(data)
                row = {"event": "candidate", "index": index, "cells": describe(stages),
                       "width": width, "ops": len(model.graph.node), "_start": time.monotonic()}
                rows[index] = row
                if args.mode in ("both", "estimate"):
                    try:
                        add_estimate(row, client.estimate(data, scheduler=args.scheduler))
                    except OrdoError as error:
                        row["error"] = str(error)
                yield data

        def finish(index, response=None, error=None):
            row = rows.pop(index)
            row["ms"] = round((time.monotonic() - row.pop("_start")) * 1000, 1)
            if error is not None or "error" in row:
                row.update(status="error", error=row.get("error", str(error)), parts=0, hits=0,
                           misses=0)
                totals["failed"] += 1
            elif response is not None:
                add_compile(row, response)
            else:
                row.update(hits=row["cached_parts"], misses=row["parts"] - row["cached_parts"],
                           peak_bytes=row.get("cached_peak_bytes"), status="estimate")
            for key in ("parts", "hits", "misses"):
                totals[key] += row[key]
            print_row(row, out, args.json)

        loop_start = time.monotonic()
        if args.mode == "estimate":
            for index, _ in enumerate(proposals()):
                finish(index)
        elif args.stream:
            for index, data in enumerate(proposals()):
                try:
                    finish(index, response=compile_candidate(client, args, data))
                except OrdoError as error:
                    finish(index, error=error)
        else:
            # One CompileMany stream, several candidates in flight; results
            # arrive in the order they finish.
            try:
                for result in client.compile_many(proposals(), concurrency=args.concurrency,
                                                  scheduler=args.scheduler,
                                                  time_limit_s=args.time_limit):
                    finish(result.index, response=result.response, error=result.error)
            except OrdoError as error:
                for index in list(rows):
                    finish(index, error=error)
        loop_s = time.monotonic() - loop_start
        lookups = totals["hits"] + totals["misses"]
        hit_rate = totals["hits"] / lookups if lookups else 0.0
        summary = {"event": "summary", "candidates": args.candidates, **totals,
                   "hit_rate": round(hit_rate, 4), "loop_seconds": round(loop_s, 3),
                   "total_seconds": round(time.monotonic() - start, 3)}
        if args.json:
            print(json.dumps(summary), file=out)
        else:
            print(f"parts {totals['parts']}, cache hits {totals['hits']}, misses "
                  f"{totals['misses']}: per-part hit rate {100 * hit_rate:.1f}%; "
                  f"{args.candidates} candidates in {loop_s:.2f} s "
                  f"({summary['total_seconds']:.2f} s in all)"
                  + (f"; {totals['failed']} failed" if totals["failed"] else ""), file=out)
    return 1 if totals["failed"] else 0


def main(argv=None):
    return run(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
