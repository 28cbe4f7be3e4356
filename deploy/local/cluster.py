"""scripts/cluster-up / cluster-down: docker-compose.yml's topology on loopback.

up: reads docker-compose.yml, starts every service (all replicas) in
depends_on order with the compose command rewritten by `Loopback` (hosts and
ports only), waits for each one's compose healthcheck before starting what
depends on it, and writes STATE_DIR/cluster.json: pids, the loopback ports,
the front's address and Prometheus' URL. Prometheus gets
deploy/prometheus/prometheus.yml retargeted to the loopback ports (Docker DNS
discovery of the workers becomes their static list) and, so that a test
sees samples within seconds, a 1 s scrape interval.
ORDO_CLUSTER_FRONT_FLAGS (space separated) are appended to ordo-server's
command: tests that check what reaches the workers pass
--in-server-part-budget=0 (small parts are otherwise proved in the front).
down: SIGTERM to every pid in reverse start order, SIGKILL after a grace
period, then removes STATE_DIR.

STATE_DIR is $ORDO_CLUSTER_DIR or /tmp/ordo-cluster. Every process is bound
to 127.0.0.1. Run with /usr/bin/python3 (python3-yaml, python3-grpcio).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import yaml

from loopback import REPO, Loopback

COMPOSE = os.path.join(REPO, "docker-compose.yml")
PROMETHEUS_CONFIG = os.path.join(REPO, "deploy", "prometheus", "prometheus.yml")
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 8.0


def state_dir():
    return os.environ.get("ORDO_CLUSTER_DIR", "/tmp/ordo-cluster")


def start_order(services):
    """Services sorted so that each comes after what it depends_on."""
    order, seen = [], set()

    def visit(name, path):
        if name in seen:
            return
        if name in path:
            raise ValueError(f"depends_on cycle through {name}")
        for dep in services[name].get("depends_on", {}) or {}:
            visit(dep, path | {name})
        seen.add(name)
        order.append(name)

    for name in services:
        visit(name, set())
    return order


def replica_count(service):
    return int(((service.get("deploy") or {}).get("replicas")) or 1)


def retarget_prometheus(config, loopback):
    """deploy/prometheus/prometheus.yml with loopback targets and 1 s scrapes."""
    config = json.loads(json.dumps(config))  # deep copy
    config.setdefault("global", {})["scrape_interval"] = "1s"
    config["global"]["evaluation_interval"] = "1s"
    for job in config["scrape_configs"]:
        targets = []
        for static in job.pop("static_configs", []) or []:
            for target in static["targets"]:
                targets.append(loopback.rewrite(target, "prometheus", 0))
        for dns in job.pop("dns_sd_configs", []) or []:
            for name in dns["names"]:
                for replica in range(loopback.replicas.get(name, 1)):
                    targets.append(f"127.0.0.1:{loopback.port(name, replica, dns['port'])}")
        job["static_configs"] = [{"targets": targets}]
    return config


def wait_healthy(loopback, name, service, replica, process, log):
    test = (service.get("healthcheck") or {}).get("test")
    if not test:
        raise ValueError(f"{name}: no healthcheck; depends_on conditions need one")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name}[{replica}] exited with {process.returncode}; see {log}")
        if loopback.healthy(test, name, replica):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{name}[{replica}] not healthy after {START_TIMEOUT_S} s; see {log}")


def up():
    directory = state_dir()
    if os.path.exists(os.path.join(directory, "cluster.json")):
        sys.exit(f"cluster-up: {directory}/cluster.json exists; run scripts/cluster-down first")
    os.makedirs(directory, exist_ok=True)
    with open(COMPOSE) as f:
        services = yaml.safe_load(f)["services"]
    loopback = Loopback({name: replica_count(s) for name, s in services.items()})
    state = {"dir": directory, "processes": []}

    def save():
        state["ports"] = {f"{s}/{r}/{p}": v for (s, r, p), v in loopback.ports.items()}
        with open(os.path.join(directory, "cluster.json"), "w") as f:
            json.dump(state, f, indent=2)

    try:
        for name in start_order(services):
            service = services[name]
            for replica in range(replica_count(service)):
                workdir = os.path.join(directory, f"{name}-{replica}")
                os.makedirs(workdir, exist_ok=True)
                command = list(service.get("command") or [])
                if name == "ordo-server":
                    command += os.environ.get("ORDO_CLUSTER_FRONT_FLAGS", "").split()
                if name == "prometheus":
                    with open(PROMETHEUS_CONFIG) as f:
                        config = retarget_prometheus(yaml.safe_load(f), loopback)
                    config_path = os.path.join(workdir, "prometheus.yml")
                    with open(config_path, "w") as f:
                        yaml.safe_dump(config, f)
                    command = [f"--config.file={config_path}" if a.startswith("--config.file=")
                               else a for a in command]
                argv = loopback.command(command, name, replica, workdir)
                log = os.path.join(directory, f"{name}-{replica}.log")
                with open(log, "w") as out:
                    process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, cwd=workdir,
                                               start_new_session=True)
                state["processes"].append({"service": name, "replica": replica,
                                           "pid": process.pid, "argv": argv, "log": log})
                save()
                wait_healthy(loopback, name, service, replica, process, log)
        state["server"] = f"127.0.0.1:{loopback.port('ordo-server', 0, 50051)}"
        state["server_metrics"] = f"127.0.0.1:{loopback.port('ordo-server', 0, 9464)}"
        state["prometheus"] = f"http://127.0.0.1:{loopback.port('prometheus', 0, 9090)}"
        save()
    except Exception as error:  # start-up failed: leave nothing running
        print(f"cluster-up: {error}", file=sys.stderr)
        for entry in state["processes"]:
            print(f"--- {entry['log']}", file=sys.stderr)
            with open(entry["log"]) as f:
                sys.stderr.write(f.read()[-2000:])
        down()
        sys.exit(1)
    print(f"ordo-server {state['server']} (metrics {state['server_metrics']}), "
          f"prometheus {state['prometheus']}, state {directory}/cluster.json")


def down():
    directory = state_dir()
    path = os.path.join(directory, "cluster.json")
    if not os.path.exists(path):
        print(f"cluster-down: nothing running ({path} not found)", file=sys.stderr)
        return
    with open(path) as f:
        processes = json.load(f)["processes"]
    # Only the pids this cluster started, newest first (dependants first).
    alive = []
    for entry in reversed(processes):
        if not _is_ours(entry):
            continue  # exited; its pid may belong to someone else by now
        try:
            os.kill(entry["pid"], signal.SIGTERM)
            alive.append(entry["pid"])
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    for pid in alive:
        while time.monotonic() < deadline and _running(pid):
            time.sleep(0.05)
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(directory, ignore_errors=True)


def _is_ours(entry):
    """The pid still runs the program cluster-up started under it. Compares
    executables, not command lines: redis-server rewrites its title."""
    try:
        executable = os.readlink(f"/proc/{entry['pid']}/exe")
    except (FileNotFoundError, ProcessLookupError):
        return False
    return executable == os.path.realpath(entry["argv"][0])


def _running(pid):
    # The processes are cluster-up's children only until it exits; after that
    # they are reparented, so waitpid may not apply and /proc tells.
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("up", "down"):
        sys.exit("usage: cluster.py up|down")
    up() if sys.argv[1] == "up" else down()
