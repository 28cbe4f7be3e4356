#!/usr/bin/python3
"""A compile farm on one machine: network namespaces as hosts, real faults.

Hosts (each a network namespace with one veth on a bridge; the bridge lives
in a namespace of its own, so nothing touches the machine's own network and
all traffic goes only to these addresses in a private test subnet):

    ofarm-front  10.231.0.10  ordo-server (front), /metrics on :9464
    ofarm-w1     10.231.0.11  ordo-worker (/metrics on :9465, as every worker)
    ofarm-w2     10.231.0.12  ordo-worker
    ofarm-fake   10.231.0.13  ordo-fake-worker (answers wrong schedules)
    ofarm-w3     10.231.0.14  ordo-worker, added while a stream runs
    ofarm-redis  10.231.0.20  redis-server
    ofarm-client 10.231.0.30  the request stream (`ordo compile --server`)

The front finds its workers by name: --workers=dns:///ofarm-workers:50052,
the name's addresses coming from /etc/netns/ofarm-front/hosts, which
`ip netns exec` bind-mounts over /etc/hosts for the front (edited in place,
so the front's resolver sees every change). A partition sets the host's
bridge port down: its packets vanish, nobody sends a RST. Packet loss is an
nftables rule in the host's namespace (`numgen random mod 100 < 5 drop`). Each scenario runs a request stream from the client host
before, during and after its fault; every answer is checked by the client
itself (`ordo compile --server` re-simulates the returned schedule and
fails on any mismatch) and against the optimal peak computed once up
front. Figures per scenario: sent, OK, failed by code, wrong, degraded
(worse than optimal), p50/p99 latency per phase, recovery time.

    scripts/farm-test            long run (minutes); the table of docs/farm.md
    scripts/farm-test --short    CI: a few seconds per fault

Needs root and `ip netns`; skips (exit 0, saying why) without them.
Everything is torn down at exit, also on failure or Ctrl-C.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("ORDO_BUILD_DIR", os.path.join(ROOT, "build"))
SERVER = os.path.join(BUILD, "server", "ordo-server")
WORKER = os.path.join(BUILD, "workers", "ordo-worker")
CLI = os.path.join(BUILD, "client", "ordo")
FAKE_WORKER = os.path.join(BUILD, "tests", "farm", "ordo-fake-worker")

SUBNET = "10.231.0"
SWITCH = "ofarm-net"
HOSTS = {"front": 10, "w1": 11, "w2": 12, "fake": 13, "w3": 14, "redis": 20, "client": 30}
FRONT = f"{SUBNET}.10:50051"
# The name the front resolves to find its workers, and the file it reads.
WORKERS_NAME = "ofarm-workers"
FRONT_ETC = "/etc/netns/ofarm-front"
WORKER_METRICS_PORT = 9465


def ns(host):
    return f"ofarm-{host}"


def addr(host):
    return f"{SUBNET}.{HOSTS[host]}"


def run(*argv, check=True):
    return subprocess.run(argv, check=check, capture_output=True, text=True)


class Farm:
    """The namespaces, links and processes; teardown() undoes all of it."""

    def __init__(self):
        self.procs = {}

    def build(self):
        self.teardown()  # leftovers of an interrupted run
        run("ip", "netns", "add", SWITCH)
        run("ip", "-n", SWITCH, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", SWITCH, "link", "set", "br0", "up")
        for host in HOSTS:
            run("ip", "netns", "add", ns(host))
            run("ip", "-n", ns(host), "link", "set", "lo", "up")
            run("ip", "-n", SWITCH, "link", "add", f"p-{host}", "type", "veth",
                "peer", "name", "eth0", "netns", ns(host))
            run("ip", "-n", SWITCH, "link", "set", f"p-{host}", "master", "br0", "up")
            run("ip", "-n", ns(host), "addr", "add", f"{addr(host)}/24", "dev", "eth0")
            run("ip", "-n", ns(host), "link", "set", "eth0", "up")

    def teardown(self):
        for name in list(self.procs):
            self.stop(name)
        for host in HOSTS:
            run("ip", "netns", "del", ns(host), check=False)
        run("ip", "netns", "del", SWITCH, check=False)
        shutil.rmtree(FRONT_ETC, ignore_errors=True)

    def name_workers(self, hosts):
        """Points the front's WORKERS_NAME at `hosts`' addresses (in place:
        the front's bind mount of the file sees the new content)."""
        os.makedirs(FRONT_ETC, exist_ok=True)
        lines = ["127.0.0.1 localhost"] + [f"{addr(h)} {WORKERS_NAME}" for h in hosts]
        with open(os.path.join(FRONT_ETC, "hosts"), "w") as hosts_file:
            hosts_file.write("\n".join(lines) + "\n")

    def lossy(self, host, percent):
        """Drops `percent` % of the host's packets each way (nftables);
        percent 0 removes the rule."""
        run("ip", "netns", "exec", ns(host), "nft", "delete", "table", "inet", "ofarm_loss",
            check=False)
        if percent == 0:
            return
        rules = [f"table inet ofarm_loss {{"]
        for hook in ("input", "output"):
            rules += [f"  chain {hook} {{",
                      f"    type filter hook {hook} priority 0; policy accept;",
                      f"    numgen random mod 100 < {percent} drop",
                      "  }"]
        rules.append("}")
        subprocess.run(["ip", "netns", "exec", ns(host), "nft", "-f", "-"],
                       input="\n".join(rules) + "\n", check=True, capture_output=True,
                       text=True)

    def start(self, name, host, argv):
        log = open(os.path.join(self.logdir, f"{name}.log"), "a")
        self.procs[name] = subprocess.Popen(
            ["ip", "netns", "exec", ns(host)] + argv, stdout=log, stderr=log)

    def stop(self, name, sig=signal.SIGKILL):
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def partition(self, host, cut):
        run("ip", "-n", SWITCH, "link", "set", f"p-{host}", "down" if cut else "up")

    def in_client(self, argv, timeout):
        return subprocess.run(["ip", "netns", "exec", ns("client")] + argv,
                              capture_output=True, text=True, timeout=timeout)

    def metrics(self, host="front", port=9464):
        code = ("import urllib.request;print(urllib.request.urlopen("
                f"'http://{addr(host)}:{port}/metrics',timeout=1).read().decode())")
        try:
            out = self.in_client(["/usr/bin/python3", "-c", code], timeout=5)
        except subprocess.TimeoutExpired:
            return {}
        values = {}
        for line in out.stdout.splitlines():
            if line.startswith("#") or " " not in line:
                continue
            key, value = line.rsplit(" ", 1)
            try:
                values[key] = float(value)
            except ValueError:
                pass
        return values

    def metric(self, prefix, contains="", host="front", port=9464):
        return sum(v for k, v in self.metrics(host, port).items()
                   if k.startswith(prefix) and contains in k)

    def worker_tasks(self, host):
        """Part tasks `host`'s worker has finished, from its own /metrics."""
        return self.metric("ordo_requests_total", "ScheduleSubgraph", host,
                           WORKER_METRICS_PORT)

    def wait_for(self, condition, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.2)
        return False


def netem_available(farm):
    out = run("ip", "netns", "exec", ns("w2"), "tc", "qdisc", "add", "dev", "eth0",
              "root", "netem", "delay", "200ms", "loss", "5%", check=False)
    if out.returncode == 0:
        run("ip", "netns", "exec", ns("w2"), "tc", "qdisc", "del", "dev", "eth0", "root",
            check=False)
        return True, ""
    return False, out.stderr.strip() or out.stdout.strip()


def nftables_available():
    """(True, "") when nft can load a rule in a namespace of its own."""
    if shutil.which("nft") is None:
        return False, "nft not installed (scripts/install-deps installs nftables)"
    run("ip", "netns", "add", "ofarm-nft", check=False)
    try:
        out = subprocess.run(["ip", "netns", "exec", "ofarm-nft", "nft", "-f", "-"],
                             input="table inet t {\n chain c {\n  type filter hook output "
                                   "priority 0;\n  numgen random mod 100 < 5 drop\n }\n}\n",
                             capture_output=True, text=True)
    finally:
        run("ip", "netns", "del", "ofarm-nft", check=False)
    return out.returncode == 0, out.stderr.strip()


class Stream:
    """Requests one after another from the client host, each checked."""

    def __init__(self, farm, model, scheduler, time_limit_s, optimal_peak):
        self.farm, self.model, self.scheduler = farm, model, scheduler
        self.time_limit_s, self.optimal_peak = time_limit_s, optimal_peak
        self.results = []  # (start, latency_s, outcome)
        self.fallback_parts = 0  # parts given a greedy order (no runner answer)
        self.rejected = 0  # worker answers the front refused as wrong
        self.messages = {}  # first message per failure kind
        self.stopping = False
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _one(self):
        start = time.monotonic()
        try:
            out = self.farm.in_client(
                [CLI, "compile", self.model, "--server", FRONT, "--scheduler", self.scheduler,
                 "--time-limit", f"{self.time_limit_s}s", "--json"],
                timeout=self.time_limit_s * 3 + 30)
        except subprocess.TimeoutExpired:
            return start, time.monotonic() - start, "failed:CLIENT_TIMEOUT"
        latency = time.monotonic() - start
        if out.returncode != 0:
            message = out.stderr.strip()
            if "response:" in message:
                # The client's own re-simulation refused the answer.
                self.messages.setdefault("wrong", message)
                return start, latency, "wrong"
            # A refused connection is UNAVAILABLE, whatever gRPC's text says.
            if "failed to connect" in message:
                message = "UNAVAILABLE " + message
            code = next((c for c in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED",
                                     "INTERNAL", "INVALID_ARGUMENT", "CANCELLED")
                         if c in message), "OTHER")
            self.messages.setdefault(code, message)
            return start, latency, f"failed:{code}"
        # A CompileResponse in protobuf's JSON mapping: int64 as strings.
        answer = json.loads(out.stdout)
        stats = answer["stats"]
        self.fallback_parts += int(stats["fallback_parts"])
        self.rejected += int(stats["worker_answers_rejected"])
        peak = int(answer["peak_bytes"])
        if peak < self.optimal_peak:
            return start, latency, "wrong"  # below the optimum: impossible
        if peak > self.optimal_peak or answer["status"] != "SCHEDULE_STATUS_OPTIMAL":
            return start, latency, "degraded"
        return start, latency, "ok"

    def _loop(self):
        while not self.stopping:
            self.results.append(self._one())

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping = True
        self.thread.join()


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summarize(name, stream, marks, recovery_s, note="", extra=None):
    """marks: (fault_start, fault_end) on time.monotonic()."""
    counts = {}
    phases = {"before": [], "during": [], "after": []}
    for start, latency, outcome in stream.results:
        counts[outcome] = counts.get(outcome, 0) + 1
        phase = ("before" if start < marks[0] else "during" if start < marks[1] else "after")
        phases[phase].append(latency)
    failed = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("failed:")}
    row = {
        "scenario": name, "sent": len(stream.results), "ok": counts.get("ok", 0),
        "failed": failed, "wrong": counts.get("wrong", 0),
        "degraded": counts.get("degraded", 0),
        "latency_s": {p: [percentile(v, 50), percentile(v, 99)] for p, v in phases.items()},
        "recovery_s": recovery_s, "note": note,
    }
    if stream.messages:
        row["messages"] = stream.messages
    row.update(extra or {})
    print(json.dumps(row), flush=True)
    return row


def markdown(rows, skipped):
    """The figures as the table docs/farm.md shows."""
    def ms(pair):
        return "/".join("-" if v is None else f"{v * 1000:.0f}" for v in pair)
    lines = ["| Scenario | Sent | OK | Failed (code) | Wrong | Degraded | p50/p99 ms before | "
             "during | after | Recovery s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        failed = ", ".join(f"{v} {k}" for k, v in r["failed"].items()) or "0"
        lat = r["latency_s"]
        lines.append(f"| {r['scenario']} | {r['sent']} | {r['ok']} | {failed} | {r['wrong']} | "
                     f"{r['degraded']} | {ms(lat['before'])} | {ms(lat['during'])} | "
                     f"{ms(lat['after'])} | {'-' if r['recovery_s'] is None else r['recovery_s']} |")
    for name, reason in skipped:
        lines.append(f"| {name} | skipped: {reason} | | | | | | | | |")
    return "\n".join(lines)


def start_front(farm, extra, workers=("w1", "w2")):
    """The front, finding `workers` by name (WORKERS_NAME in its hosts file)."""
    farm.name_workers(workers)
    # Every part to the workers: the faults here are the workers' and their
    # links' (small parts are otherwise proved in the front's own thread).
    farm.start("front", "front", [
        SERVER, f"--listen={FRONT}", "--metrics-port=9464", "--log-level=warning",
        "--in-server-part-budget=0", f"--workers=dns:///{WORKERS_NAME}:50052"] + extra)
    return farm.wait_for(lambda: farm.metric("ordo_workers_healthy") == len(workers), 30)


def start_worker(farm, host):
    farm.start(host, host, [WORKER, f"--listen={addr(host)}:50052", "--log-level=warning",
                            f"--metrics-port={WORKER_METRICS_PORT}"])


def start_workers(farm):
    for host in ("w1", "w2"):
        start_worker(farm, host)


def scenario_worker_partition(farm, args, optimal):
    """w1 cut off mid-stream (100% loss, no RST), then healed."""
    with Stream(farm, args.model, "dp", args.time_limit, optimal) as stream:
        time.sleep(args.phase)
        fault = time.monotonic()
        farm.partition("w1", True)
        time.sleep(args.fault)
        farm.partition("w1", False)
        healed = time.monotonic()
        recovered = farm.wait_for(lambda: farm.metric("ordo_workers_healthy") == 2, 30)
        recovery = round(time.monotonic() - healed, 2) if recovered else None
        time.sleep(args.phase)
    return summarize("worker partitioned, healed", stream, (fault, healed), recovery,
                     "recovery: w1 probed healthy again (ordo_workers_healthy == 2)")


def scenario_redis_partition(farm, args, optimal):
    """The Redis host cut off; answers keep coming, computed without the cache."""
    with Stream(farm, args.model, "dp", args.time_limit, optimal) as stream:
        time.sleep(args.phase)
        fault = time.monotonic()
        farm.partition("redis", True)
        time.sleep(args.redis_fault)
        farm.partition("redis", False)
        healed = time.monotonic()
        hits = farm.metric("ordo_cache_lookups_total", 'result="hit"')
        recovered = farm.wait_for(
            lambda: farm.metric("ordo_cache_lookups_total", 'result="hit"') > hits, 30)
        recovery = round(time.monotonic() - healed, 2) if recovered else None
        time.sleep(args.phase)
    return summarize("redis partitioned, healed", stream, (fault, healed), recovery,
                     "recovery: first Redis cache hit after healing")


def scenario_front_restart(farm, args, optimal):
    """The front stopped (SIGTERM) and started again; clients retry UNAVAILABLE."""
    with Stream(farm, args.model, "dp", args.time_limit, optimal) as stream:
        time.sleep(args.phase)
        fault = time.monotonic()
        farm.stop("front", signal.SIGTERM)
        ready = start_front(farm, ["--cache-mb=0"])
        healed = time.monotonic()
        recovery = round(healed - fault, 2) if ready else None
        time.sleep(args.phase)
    return summarize("front restarted", stream, (fault, healed), recovery,
                     "recovery: new front serving with both workers healthy")


def scenario_fake_worker(farm, args, optimal):
    """A third worker answers every part with a wrong schedule."""
    farm.stop("front", signal.SIGTERM)
    farm.start("fake", "fake", [FAKE_WORKER, f"--listen={addr('fake')}:50052"])
    if not start_front(farm, ["--cache-mb=0"], workers=("w1", "w2", "fake")):
        raise RuntimeError("front did not see its three workers")
    with Stream(farm, args.model, "dp", args.time_limit, optimal) as stream:
        fault = time.monotonic()
        time.sleep(args.phase + args.fault)
        end = time.monotonic()
    farm.stop("fake")
    return summarize("fake worker (wrong schedules)", stream, (fault, end), None,
                     f"all requests during the fault; {stream.rejected} worker answers "
                     f"rejected (each re-dispatched at once, the liar quarantined 60 s), "
                     f"{stream.fallback_parts} parts given a greedy order",
                     {"rejected": stream.rejected})


def scenario_workers_added_removed(farm, args, optimal):
    """w3 added to the workers' name, then w2 removed from it, while the
    stream runs. Measures how soon w3 gets its first task and how soon the
    front stops sending tasks to w2 (whose process keeps running)."""
    start_worker(farm, "w3")
    if not farm.wait_for(lambda: bool(farm.metrics("w3", WORKER_METRICS_PORT)), 30):
        raise RuntimeError("w3 did not start")
    note = []
    with Stream(farm, args.model, "dp", args.time_limit, optimal) as stream:
        time.sleep(args.phase)
        fault = time.monotonic()
        farm.name_workers(("w1", "w2", "w3"))
        listed = farm.wait_for(lambda: farm.metric("ordo_workers_healthy") == 3, 30)
        listed_s = time.monotonic() - fault
        got_task = farm.wait_for(lambda: farm.worker_tasks("w3") > 0, 60)
        first_task_s = time.monotonic() - fault
        note.append(f"w3 added: probed healthy after {listed_s:.2f} s, "
                    f"first task finished after {first_task_s:.2f} s" if listed and got_task
                    else "w3 added: never used")
        time.sleep(args.fault)
        removed = time.monotonic()
        farm.name_workers(("w1", "w3"))
        dropped = farm.wait_for(lambda: farm.metric("ordo_workers_healthy") == 2, 30)
        dropped_s = time.monotonic() - removed
        # Tasks already on w2 finish; none may start after it was dropped.
        farm.wait_for(lambda: farm.metric("ordo_inflight_requests", "", "w2",
                                          WORKER_METRICS_PORT) == 0, args.time_limit + 5)
        settled = farm.worker_tasks("w2")
        healed = time.monotonic()
        time.sleep(args.phase)
        late = farm.worker_tasks("w2") - settled
        note.append(f"w2 removed: dropped by the front after {dropped_s:.2f} s, "
                    f"{late:.0f} tasks on it after its last task in flight finished"
                    if dropped else "w2 removed: still listed")
    farm.stop("w3")
    extra = {"membership": {"added_first_task_s": round(first_task_s, 2) if got_task else None,
                            "removed_dropped_s": round(dropped_s, 2) if dropped else None,
                            "removed_late_tasks": late}}
    if not (listed and got_task and dropped) or late:
        extra["missed"] = "membership change not followed"
    return summarize("worker added, another removed (dns:/// name)", stream, (fault, healed),
                     round(first_task_s, 2) if got_task else None, "; ".join(note), extra)


def scenario_lossy_link(farm, args, optimal):
    """5 % of w2's packets dropped each way (nftables) while the stream runs."""
    with Stream(farm, args.model, "dp", args.time_limit, optimal) as stream:
        time.sleep(args.phase)
        fault = time.monotonic()
        farm.lossy("w2", 5)
        time.sleep(args.fault)
        farm.lossy("w2", 0)
        healed = time.monotonic()
        time.sleep(args.phase)
    return summarize("worker link 5% loss (nftables)", stream, (fault, healed), None,
                     "loss both ways on w2's link; 200 ms delay not applied (no netem)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="CI: a few seconds per fault")
    parser.add_argument("--model", help="default: randwire1 (the issue's), "
                        "small_resnet with --short")
    parser.add_argument("--logdir", default="/tmp/ordo-farm")
    args = parser.parse_args()
    args.phase, args.fault, args.redis_fault = (3, 4, 4) if args.short else (20, 10, 30)
    args.time_limit = 10
    if os.geteuid() != 0:
        print("farm-test: skipped: needs root (network namespaces)")
        return 0
    randwire1 = os.path.join(ROOT, "..", "shared", "models", "randwire1.onnx")
    if args.model is None:
        args.model = (randwire1 if os.path.exists(randwire1) and not args.short else
                      os.path.join(ROOT, "examples", "models", "small_resnet.onnx"))
    for binary in (SERVER, WORKER, CLI, FAKE_WORKER):
        if not os.access(binary, os.X_OK):
            print(f"farm-test: {binary} missing: build first (scripts/build)")
            return 1
    os.makedirs(args.logdir, exist_ok=True)
    farm = Farm()
    farm.logdir = args.logdir
    probe = run("ip", "netns", "add", "ofarm-probe", check=False)
    if probe.returncode != 0:
        print(f"farm-test: skipped: ip netns unavailable: {probe.stderr.strip()}")
        return 0
    run("ip", "netns", "del", "ofarm-probe", check=False)
    rows, skipped = [], []
    try:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
        farm.build()
        # The optimum, computed locally once: the reference of every answer.
        reference = json.loads(run(CLI, "compile", args.model, "--scheduler", "dp",
                                   "--time-limit", "60s", "--json").stdout)
        optimal = int(reference["peak_bytes"])
        print(f"farm-test: model {os.path.basename(args.model)}, dp optimum {optimal} B "
              f"({reference['status']}), logs in {args.logdir}", flush=True)
        farm.start("redis", "redis", ["/usr/bin/redis-server", "--bind", addr("redis"),
                                      "--port", "6379", "--save", "", "--appendonly", "no",
                                      "--protected-mode", "no", "--loglevel", "warning"])
        start_workers(farm)
        if not start_front(farm, ["--cache-mb=0"]):
            raise RuntimeError("front did not see its two workers")
        rows.append(scenario_worker_partition(farm, args, optimal))
        ok, reason = netem_available(farm)
        if not ok:
            skipped.append(("worker link 200 ms delay",
                            f"tc netem unavailable in this kernel ({reason}); "
                            "nftables can drop packets but not delay them"))
            print(json.dumps({"scenario": skipped[-1][0], "skipped": skipped[-1][1]}))
        ok, reason = nftables_available()
        if ok:
            rows.append(scenario_lossy_link(farm, args, optimal))
        else:
            skipped.append(("worker link 5% loss", f"nftables unavailable ({reason})"))
            print(json.dumps({"scenario": skipped[-1][0], "skipped": skipped[-1][1]}))
        rows.append(scenario_front_restart(farm, args, optimal))
        rows.append(scenario_workers_added_removed(farm, args, optimal))
        farm.stop("front", signal.SIGTERM)
        if not start_front(farm, ["--cache-mb=0", f"--redis=redis://{addr('redis')}:6379"]):
            raise RuntimeError("front with Redis did not start")
        rows.append(scenario_redis_partition(farm, args, optimal))
        rows.append(scenario_fake_worker(farm, args, optimal))
    finally:
        farm.teardown()
    print(markdown(rows, skipped))
    # Targets: never a wrong or degraded answer; no failure seen by the
    # caller in any scenario (a front restart's UNAVAILABLE is absorbed by
    # the clients' retry policy); membership changes followed; the fake
    # worker actually consulted (and refused).
    bad = [r for r in rows if r["wrong"] or r["degraded"] or r["failed"] or r.get("missed") or
           r.get("rejected") == 0]
    print(f"farm-test: {len(rows)} scenarios, {len(bad)} missed their targets")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
