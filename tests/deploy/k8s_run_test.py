"""Runs the Kubernetes base's containers as real processes on loopback.

Each Deployment's container starts with exactly its command and environment
from the rendered manifests, the ConfigMap's flag files written out where the
command reads them; only addresses are adapted (Service names and 0.0.0.0 ->
127.0.0.1, each container port -> a free port, the worker headless Service ->
dns:///127.0.0.1:PORT so the dns resolver and round_robin still run). Ready
means what the manifests' probes say: the gRPC health service on the probe
port, `redis-cli ping` for Redis. Then a model compiles through the front,
reaching the worker and filling Redis."""

import os
import subprocess
import tempfile
import unittest

from deploy_testing import (EXAMPLE_MODEL, Processes, by_kind, compile_through, grpc_probe,
                            k8s_base_objects, loopback, scrape, wait_until)

# Start order: what a container's flags point at starts first.
ORDER = ["redis", "ordo-worker", "ordo-server"]


class K8sRunTest(unittest.TestCase):
    """Starts the base's three Deployments once (setUpClass); each test
    looks at the running processes."""

    @classmethod
    def setUpClass(cls):
        cls.objects = k8s_base_objects()
        cls.deployments = by_kind(cls.objects, "Deployment")
        cls.config_maps = by_kind(cls.objects, "ConfigMap")
        cls.directory = tempfile.TemporaryDirectory()
        cls.processes = Processes(cls.directory.name)
        # One replica each on loopback; Service name == Deployment name.
        cls.loopback = loopback.Loopback({name: 1 for name in cls.deployments})
        try:
            assert set(cls.deployments) == set(ORDER), sorted(cls.deployments)
            for name in ORDER:
                cls.wait_ready(name, cls.start(name))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.processes.stop()
        cls.directory.cleanup()

    @classmethod
    def materialize_volumes(cls, name, spec, container):
        """ConfigMap volumes -> files under the temp dir; mount path -> dir."""
        mounts = {}
        for mount in container.get("volumeMounts", []):
            volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
            local = os.path.join(cls.directory.name, name, mount["name"])
            os.makedirs(local, exist_ok=True)
            if "configMap" in volume:
                data = cls.config_maps[volume["configMap"]["name"]]["data"]
                for key, text in data.items():
                    # Flag files hold addresses too: adapt them like arguments.
                    lines = [cls.loopback.rewrite(l, name, 0) for l in text.splitlines()]
                    with open(os.path.join(local, key), "w") as f:
                        f.write("\n".join(lines) + "\n")
            mounts[mount["mountPath"]] = local
        return mounts

    @classmethod
    def start(cls, name):
        spec = cls.deployments[name]["spec"]["template"]["spec"]
        container = spec["containers"][0]
        mounts = cls.materialize_volumes(name, spec, container)
        argv = list(container.get("command", [])) + list(container.get("args", []))
        if name == "ordo-server":
            # Every part to the worker: the test checks that parts reach it
            # (the example model's are otherwise proved in the front's thread).
            argv.append("--in-server-part-budget=0")
        for mount_path, local in mounts.items():
            argv = [a.replace(mount_path + "/", local + "/") for a in argv]
        workdir = os.path.join(cls.directory.name, name)
        os.makedirs(workdir, exist_ok=True)
        env = {e["name"]: e["value"] for e in container.get("env", [])}
        cls.processes.start(name, cls.loopback.command(argv, name, 0, workdir), env)
        return container

    @classmethod
    def wait_ready(cls, name, container):
        probe = container["readinessProbe"]
        if "grpc" in probe:
            address = f"127.0.0.1:{cls.loopback.port(name, 0, probe['grpc']['port'])}"
            ready = lambda: grpc_probe.is_serving(address)
        else:
            argv = cls.loopback.command(probe["exec"]["command"], name, 0, ".")
            ready = lambda: subprocess.run(argv, capture_output=True).returncode == 0
        wait_until(ready, 20, f"{name} ready:\n{cls.processes.log(name)}")

    def test_a_model_compiles_through_the_front_the_worker_and_redis(self):
        front = f"127.0.0.1:{self.loopback.port('ordo-server', 0, 50051)}"
        peak, how = compile_through(front, EXAMPLE_MODEL)
        self.assertGreater(peak, 0)
        print(f"compiled through the front with {how}")
        # The part went to the worker (its request counter moved) and into Redis.
        worker = scrape(f"127.0.0.1:{self.loopback.port('ordo-worker', 0, 9465)}")
        self.assertTrue(any(l.get("method") == "ScheduleSubgraph"
                            for l in worker["ordo_requests_total"]), worker.keys())
        redis_port = self.loopback.port("redis", 0, 6379)
        keys = subprocess.run(["redis-cli", "-p", str(redis_port), "dbsize"],
                              capture_output=True, text=True, check=True).stdout
        self.assertGreater(int(keys), 0)

    # Prometheus scrapes pods from another address. 127.0.0.2 is loopback
    # too, but a socket bound to 127.0.0.1 does not accept it, one bound to
    # all interfaces does: so it tells the two apart without leaving the host.
    def test_front_metrics_accept_connections_from_other_addresses(self):
        scrape(f"127.0.0.2:{self.loopback.port('ordo-server', 0, 9464)}")

    def test_worker_metrics_accept_connections_from_other_addresses(self):
        # Prometheus in another container or pod scrapes workers too.
        scrape(f"127.0.0.2:{self.loopback.port('ordo-worker', 0, 9465)}")


if __name__ == "__main__":
    unittest.main()
