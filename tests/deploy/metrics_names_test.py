"""Every metric name the Grafana dashboard and the Prometheus configs use is
one the real binaries export: compose's topology runs on loopback
(scripts/cluster-up), models compile through it (twice, so cache hits and
worker tasks have samples), and the names are looked up in the front's and
the workers' /metrics. Labels used in selectors and `by (...)` must exist on
the metric too; the dashboard's job variables must name Prometheus jobs."""

import glob
import json
import os
import re
import tempfile
import unittest

import yaml

from deploy_testing import EXAMPLE_MODEL, REPO, Cluster, compile_through, scrape

DASHBOARD = os.path.join(REPO, "deploy", "grafana", "ordo-dashboard.json")
# Labels Prometheus adds to every series, and histogram buckets' le.
TARGET_LABELS = {"job", "instance", "le", "namespace", "pod"}


def used_metrics():
    """{metric name: set of label names used with it} over the dashboard's
    expressions and every ordo_ name in deploy/prometheus/*.yml."""
    used = {}
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    expressions = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    for path in glob.glob(os.path.join(REPO, "deploy", "prometheus", "*.yml")):
        with open(path) as f:
            expressions += re.findall(r"ordo_\w+(?:\{[^}]*\})?", f.read())
    for expression in expressions:
        by_labels = set()
        for group in re.findall(r"by \(([^)]*)\)", expression):
            by_labels |= {l.strip() for l in group.split(",")}
        for name, selector in re.findall(r"(ordo_\w+)(\{[^}]*\})?", expression):
            labels = set(re.findall(r"(\w+)\s*[=!]~?", selector or ""))
            used.setdefault(name, set()).update(labels | by_labels)
    return used, dashboard


class MetricsNamesTest(unittest.TestCase):
    def test_dashboard_and_prometheus_use_only_exported_metrics(self):
        used, dashboard = used_metrics()
        self.assertGreaterEqual(len(used), 6, used)
        with tempfile.TemporaryDirectory() as directory, Cluster(directory) as cluster:
            for _ in range(2):  # the second compile hits the cache
                compile_through(cluster.state["server"], EXAMPLE_MODEL)
            exported = {}
            addresses = [cluster.state["server_metrics"]] + [
                f"127.0.0.1:{cluster.port('ordo-worker', r, 9465)}" for r in range(2)]
            for address in addresses:
                for name, label_sets in scrape(address).items():
                    for labels in label_sets:
                        exported.setdefault(name, set()).update(labels)
        missing = sorted(set(used) - set(exported))
        self.assertEqual(missing, [], f"exported: {sorted(n for n in exported if 'ordo' in n)}")
        for name, labels in used.items():
            with self.subTest(metric=name):
                # A `by (...)` clause in an expression with several metrics
                # applies to all of them; labels absent from a metric would
                # silently aggregate to one series.
                self.assertEqual(labels - TARGET_LABELS - exported[name], set(), name)

    def test_dashboard_job_variables_name_prometheus_jobs(self):
        _, dashboard = used_metrics()
        with open(os.path.join(REPO, "deploy", "prometheus", "prometheus.yml")) as f:
            jobs = {j["job_name"] for j in yaml.safe_load(f)["scrape_configs"]}
        variables = {v["name"]: v for v in dashboard["templating"]["list"]}
        self.assertEqual({variables["front_job"]["query"], variables["worker_job"]["query"]}, jobs)


if __name__ == "__main__":
    unittest.main()
