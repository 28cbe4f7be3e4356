"""Shared pieces of tests/deploy: paths, YAML loading, processes, /metrics.

Run the tests with /usr/bin/python3 (Debian's python3-yaml, python3-grpcio);
ctest sets ORDO_BUILD_DIR to the build tree whose binaries are checked.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "deploy", "local"))

import grpc_probe  # noqa: E402
import loopback  # noqa: E402

EXAMPLE_MODEL = os.path.join(REPO, "examples", "models", "tiny_cell.onnx")
K8S_BASE = os.path.join(REPO, "deploy", "k8s", "base")
K8S_OVERLAY = os.path.join(REPO, "deploy", "k8s", "overlays", "example")


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def compose():
    return load_yaml(os.path.join(REPO, "docker-compose.yml"))


def render_kustomize(path):
    """kubectl kustomize PATH as a list of objects, or None without kubectl."""
    kubectl = shutil.which("kubectl")
    if not kubectl:
        return None
    result = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {path}: {result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def k8s_base_objects():
    """The base's objects: rendered by kustomize when kubectl exists, else
    read from the files (ConfigMap built from configMapGenerator's files)."""
    rendered = render_kustomize(K8S_BASE)
    if rendered is not None:
        return rendered
    kustomization = load_yaml(os.path.join(K8S_BASE, "kustomization.yaml"))
    objects = []
    for resource in kustomization["resources"]:
        with open(os.path.join(K8S_BASE, resource)) as f:
            objects += [doc for doc in yaml.safe_load_all(f) if doc]
    for generator in kustomization.get("configMapGenerator", []):
        data = {}
        for name in generator["files"]:
            with open(os.path.join(K8S_BASE, name)) as f:
                data[name] = f.read()
        objects.append({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": generator["name"]}, "data": data})
    return objects


def by_kind(objects, kind):
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


class Processes:
    """Processes a test started; stop() ends exactly those."""

    def __init__(self, directory):
        self.directory = directory
        self.started = []

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.directory, f"{name}.log"), "w")
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, cwd=self.directory,
                                   env=dict(os.environ, **(env or {})))
        self.started.append((name, process, log))
        return process

    def log(self, name):
        with open(os.path.join(self.directory, f"{name}.log")) as f:
            return f.read()

    def stop(self):
        for _, process, _ in reversed(self.started):
            if process.poll() is None:
                process.terminate()
        for _, process, log in reversed(self.started):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()
        self.started = []


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def scrape(address):
    """Sample names -> list of label dicts, from http://ADDRESS/metrics."""
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s", line)
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(3) or ""))
        samples.setdefault(match.group(1), []).append(labels)
    return samples


def compile_through(server, model_path):
    """Compiles through the front: `ordo compile --server` once the CLI has
    its remote mode, the Compile RPC from Python until then. Returns
    (peak_bytes, how)."""
    result = subprocess.run([loopback.BINARIES["ordo"], "compile", model_path,
                             "--server", server, "--json"],
                            capture_output=True, text=True, timeout=60)
    if result.returncode == 0:
        return int(json.loads(result.stdout)["peak_bytes"]), "ordo compile --server"
    if "unknown flag --server" not in result.stderr:
        raise AssertionError(f"ordo compile --server failed: {result.stderr}")
    with open(model_path, "rb") as f:
        response = grpc_probe.compile_onnx(server, f.read())
    return int(response["peak_bytes"]), "Compile RPC (python3-grpcio)"


class Cluster:
    """scripts/cluster-up ... scripts/cluster-down around a block, in its own
    state directory; `state` is cluster.json."""

    def __init__(self, directory):
        # Every part to the workers: the test checks that parts reach them
        # (the example model's are otherwise proved in the front's thread).
        self.env = dict(os.environ, ORDO_CLUSTER_DIR=os.path.join(directory, "cluster"),
                        ORDO_CLUSTER_FRONT_FLAGS="--in-server-part-budget=0")
        self.state = None

    def __enter__(self):
        result = subprocess.run([os.path.join(REPO, "scripts", "cluster-up")], env=self.env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise AssertionError(f"cluster-up failed:\n{result.stdout}{result.stderr}")
        with open(os.path.join(self.env["ORDO_CLUSTER_DIR"], "cluster.json")) as f:
            self.state = json.load(f)
        return self

    def down(self):
        return subprocess.run([os.path.join(REPO, "scripts", "cluster-down")], env=self.env,
                              capture_output=True, text=True, timeout=30)

    def __exit__(self, *exc):
        if os.path.exists(os.path.join(self.env["ORDO_CLUSTER_DIR"], "cluster.json")):
            self.down()

    def port(self, service, replica, container_port):
        return self.state["ports"][f"{service}/{replica}/{container_port}"]


def prometheus_query(url, query):
    """Value of an instant vector query summed over its series (0.0 if empty)."""
    with urllib.request.urlopen(
            f"{url}/api/v1/query?query={urllib.parse.quote(query)}", timeout=5) as response:
        result = json.load(response)["data"]["result"]
    return sum(float(series["value"][1]) for series in result)


def prometheus_targets(url):
    """[(job, scrape url, health)] of the active targets."""
    with urllib.request.urlopen(f"{url}/api/v1/targets", timeout=5) as response:
        targets = json.load(response)["data"]["activeTargets"]
    return [(t["labels"]["job"], t["scrapeUrl"], t["health"]) for t in targets]
