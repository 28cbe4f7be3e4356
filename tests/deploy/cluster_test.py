"""The topology test: scripts/cluster-up starts docker-compose.yml's services
on loopback (Redis, ordo-server, 2 ordo-workers, Debian's Prometheus with
deploy/prometheus/prometheus.yml retargeted), a model compiles through the
front, Prometheus' HTTP API reports every target of both jobs up and
ordo_requests_total increased, and scripts/cluster-down leaves nothing
running. Bounded: ctest's TIMEOUT is 90 s; each wait below is shorter."""

import json
import os
import subprocess
import tempfile
import time
import unittest

from deploy_testing import (EXAMPLE_MODEL, Cluster, compile_through, prometheus_query,
                            loopback, prometheus_targets, wait_until)


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


class ClusterTest(unittest.TestCase):
    def test_compose_topology_on_loopback(self):
        started = time.monotonic()
        with tempfile.TemporaryDirectory() as directory, Cluster(directory) as cluster:
            state = cluster.state
            services = sorted(p["service"] for p in state["processes"])
            self.assertEqual(services, ["ordo-server", "ordo-worker", "ordo-worker",
                                        "prometheus", "redis"])
            for entry in state["processes"]:
                self.assertTrue(all("0.0.0.0" not in a for a in entry["argv"]), entry["argv"])
            prometheus = state["prometheus"]

            def all_up():
                targets = prometheus_targets(prometheus)
                jobs = {job for job, _, health in targets if health == "up"}
                return len(targets) == 3 and all(h == "up" for _, _, h in targets) and \
                    jobs == {"ordo-server", "ordo-worker"}
            wait_until(all_up, 20, f"3 targets up: {prometheus_targets(prometheus)}")

            query = 'sum(ordo_requests_total{job="ordo-server",method="Compile",code="OK"})'
            before = prometheus_query(prometheus, query)
            peak, how = compile_through(state["server"], EXAMPLE_MODEL)
            local = subprocess.run([loopback.BINARIES["ordo"], "compile", EXAMPLE_MODEL, "--json"],
                                   capture_output=True, text=True, check=True).stdout
            self.assertEqual(peak, int(json.loads(local)["peak_bytes"]), "remote == local compile")
            print(f"compiled through the front with {how}")
            wait_until(lambda: prometheus_query(prometheus, query) > before, 20,
                       "Prometheus to see ordo_requests_total increase")
            wait_until(lambda: prometheus_query(
                prometheus, 'sum(ordo_requests_total{job="ordo-worker"})') > 0, 20,
                "Prometheus to see the workers' calls (parts reached them)")

            result = cluster.down()
            self.assertEqual(result.returncode, 0, result.stderr)
            for entry in state["processes"]:
                self.assertFalse(running(entry["pid"]), entry)
            self.assertFalse(os.path.exists(state["dir"]))
        elapsed = time.monotonic() - started
        print(f"cluster up, compile, checks, down: {elapsed:.1f} s")
        self.assertLess(elapsed, 90)


if __name__ == "__main__":
    unittest.main()
