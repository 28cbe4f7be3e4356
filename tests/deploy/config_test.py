"""Static checks of the deployment files: every YAML and JSON file parses,
Prometheus accepts its config, kustomize renders base and overlay, and the
compose file and manifests are wired together (dependencies, probes, ports,
selectors, security). What the binaries accept is checked by running them
(k8s_run_test.py, cluster_test.py)."""

import glob
import json
import os
import shutil
import subprocess
import unittest

import yaml

from deploy_testing import (K8S_BASE, K8S_OVERLAY, REPO, by_kind, compose, k8s_base_objects,
                            load_yaml, render_kustomize)


def yaml_files():
    files = [os.path.join(REPO, "docker-compose.yml")]
    for pattern in ("*.yml", "*.yaml"):
        files += glob.glob(os.path.join(REPO, "deploy", "**", pattern), recursive=True)
    return sorted(files)


def flag_file(text):
    """An absl flag file -> {name with underscores: value}."""
    flags = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line[2:].partition("=")
        flags[name] = value
    return flags


class YamlAndJsonTest(unittest.TestCase):
    def test_every_yaml_file_parses(self):
        files = yaml_files()
        self.assertGreaterEqual(len(files), 10, files)
        for path in files:
            with self.subTest(path=os.path.relpath(path, REPO)), open(path) as f:
                documents = [d for d in yaml.safe_load_all(f) if d is not None]
                self.assertTrue(documents, "empty")
                for document in documents:
                    self.assertIsInstance(document, dict)

    def test_dashboard_parses_and_every_panel_queries_prometheus(self):
        with open(os.path.join(REPO, "deploy", "grafana", "ordo-dashboard.json")) as f:
            dashboard = json.load(f)
        self.assertTrue(dashboard["panels"])
        for panel in dashboard["panels"]:
            with self.subTest(panel=panel["title"]):
                self.assertTrue(panel["targets"])
                for target in panel["targets"]:
                    self.assertIn("ordo_", target["expr"])

    def test_promtool_accepts_the_compose_prometheus_config(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool not installed (Debian package prometheus)")
        result = subprocess.run(
            [promtool, "check", "config", os.path.join(REPO, "deploy/prometheus/prometheus.yml")],
            capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        # prometheus-kubernetes.yml is YAML-checked only: Debian's Prometheus is
        # built without kubernetes_sd_configs.


class KustomizeTest(unittest.TestCase):
    def test_base_and_overlay_render(self):
        if not shutil.which("kubectl"):
            self.skipTest("kubectl not installed; the base is read file by file instead")
        for path in (K8S_BASE, K8S_OVERLAY):
            objects = render_kustomize(path)
            kinds = sorted(o["kind"] for o in objects)
            self.assertEqual(kinds.count("Deployment"), 3, path)
            self.assertEqual(kinds.count("Service"), 4, path)
            self.assertIn("HorizontalPodAutoscaler", kinds)
            self.assertIn("PodDisruptionBudget", kinds)
            self.assertIn("ConfigMap", kinds)

    def test_overlay_changes_namespace_image_and_autoscaling(self):
        objects = render_kustomize(K8S_OVERLAY)
        if objects is None:
            self.skipTest("kubectl not installed")
        for o in objects:
            if o["kind"] != "Namespace":
                self.assertEqual(o["metadata"].get("namespace"), "ordo", o["metadata"]["name"])
        deployments = by_kind(objects, "Deployment")
        self.assertEqual(deployments["ordo-server"]["spec"]["template"]["spec"]["containers"][0]
                         ["image"], "registry.example.com/ordo:0.1.0")
        self.assertEqual(by_kind(objects, "HorizontalPodAutoscaler")["ordo-worker"]["spec"]
                         ["minReplicas"], 3)


class ComposeWiringTest(unittest.TestCase):
    def setUp(self):
        self.services = compose()["services"]

    def test_topology(self):
        self.assertEqual(set(self.services), {"redis", "ordo-server", "ordo-worker", "prometheus"})
        self.assertEqual(self.services["ordo-worker"]["deploy"]["replicas"], 2)

    def test_every_service_has_a_healthcheck_and_dependencies_wait_for_it(self):
        for name, service in self.services.items():
            with self.subTest(service=name):
                self.assertEqual(service["healthcheck"]["test"][0], "CMD")
                for dependency, condition in (service.get("depends_on") or {}).items():
                    self.assertIn(dependency, self.services)
                    self.assertEqual(condition["condition"], "service_healthy")
        self.assertEqual(set(self.services["ordo-server"]["depends_on"]), {"redis", "ordo-worker"})
        self.assertIn("ordo-server", self.services["prometheus"]["depends_on"])

    def test_ordo_healthchecks_use_ordo_health_on_the_listen_port(self):
        for name in ("ordo-server", "ordo-worker"):
            with self.subTest(service=name):
                service = self.services[name]
                listen = next(a for a in service["command"] if a.startswith("--listen="))
                port = listen.rsplit(":", 1)[1]
                self.assertEqual(service["healthcheck"]["test"],
                                 ["CMD", "ordo", "health", "--server", f"127.0.0.1:{port}"])

    def test_redis_is_a_bounded_lru_cache(self):
        command = self.services["redis"]["command"]
        self.assertIn("--maxmemory", command)
        self.assertEqual(command[command.index("--maxmemory-policy") + 1], "allkeys-lru")
        maxmemory = int(command[command.index("--maxmemory") + 1].rstrip("mb"))
        mem_limit = int(self.services["redis"]["mem_limit"].rstrip("m"))
        self.assertLess(maxmemory, mem_limit, "leave room for fragmentation and buffers")

    def test_front_uses_the_workers_and_redis_services(self):
        command = self.services["ordo-server"]["command"]
        worker_listen = next(a for a in self.services["ordo-worker"]["command"]
                             if a.startswith("--listen="))
        worker_port = worker_listen.rsplit(":", 1)[1]
        self.assertIn(f"--workers=dns:///ordo-worker:{worker_port}", command)
        self.assertTrue(any(a.startswith("--redis=redis://redis:6379") for a in command))

    def test_prometheus_scrapes_the_metrics_ports_the_commands_open(self):
        volume = self.services["prometheus"]["volumes"][0]
        source, target = volume.split(":")[:2]
        self.assertTrue(os.path.exists(os.path.join(REPO, source)), source)
        self.assertIn(f"--config.file={target}", self.services["prometheus"]["command"])
        config = load_yaml(os.path.join(REPO, source))
        jobs = {job["job_name"]: job for job in config["scrape_configs"]}
        server_port = next(a for a in self.services["ordo-server"]["command"]
                           if a.startswith("--metrics-port=")).split("=")[1]
        worker_port = next(a for a in self.services["ordo-worker"]["command"]
                           if a.startswith("--metrics-port=")).split("=")[1]
        self.assertEqual(jobs["ordo-server"]["static_configs"][0]["targets"],
                         [f"ordo-server:{server_port}"])
        self.assertEqual(jobs["ordo-worker"]["dns_sd_configs"][0],
                         {"names": ["ordo-worker"], "type": "A", "port": int(worker_port)})

    def test_the_image_is_built_from_the_dockerfile(self):
        for name in ("ordo-server", "ordo-worker"):
            build = self.services[name]["build"]
            self.assertTrue(os.path.exists(os.path.join(REPO, build["context"], build["dockerfile"])))


class ManifestWiringTest(unittest.TestCase):
    def setUp(self):
        self.objects = k8s_base_objects()
        self.deployments = by_kind(self.objects, "Deployment")
        self.services = by_kind(self.objects, "Service")
        self.flags = {}
        for config_map in by_kind(self.objects, "ConfigMap").values():
            for key, text in config_map["data"].items():
                self.flags[key] = flag_file(text)

    def containers(self):
        for name, deployment in self.deployments.items():
            for container in deployment["spec"]["template"]["spec"]["containers"]:
                yield name, deployment, container

    def test_clients_can_reach_every_front_by_one_name(self):
        # A headless Service over the front pods' gRPC port, beside the
        # ClusterIP one: dns:///ordo-server-headless:50051 resolves to
        # every ready front, which the shipped clients go round-robin over.
        headless = self.services["ordo-server-headless"]
        self.assertEqual(headless["spec"]["clusterIP"], "None")
        self.assertEqual(headless["spec"]["selector"],
                         self.deployments["ordo-server"]["spec"]["selector"]["matchLabels"])
        self.assertEqual([(p["port"], p["targetPort"]) for p in headless["spec"]["ports"]],
                         [(50051, "grpc")])

    def test_security_context(self):
        for name, deployment, container in self.containers():
            with self.subTest(deployment=name):
                pod = deployment["spec"]["template"]["spec"]
                self.assertTrue(pod["securityContext"]["runAsNonRoot"])
                self.assertGreater(pod["securityContext"]["runAsUser"], 0)
                self.assertFalse(pod.get("automountServiceAccountToken", True))
                security = container["securityContext"]
                self.assertTrue(security["readOnlyRootFilesystem"])
                self.assertFalse(security["allowPrivilegeEscalation"])
                self.assertEqual(security["capabilities"]["drop"], ["ALL"])

    def test_resources_have_requests_and_memory_limits(self):
        for name, _, container in self.containers():
            with self.subTest(deployment=name):
                self.assertIn("cpu", container["resources"]["requests"])
                self.assertIn("memory", container["resources"]["requests"])
                self.assertIn("memory", container["resources"]["limits"])

    def test_ordo_probes_are_native_grpc_on_the_port_the_flags_listen_on(self):
        for name in ("ordo-server", "ordo-worker"):
            with self.subTest(deployment=name):
                container = self.deployments[name]["spec"]["template"]["spec"]["containers"][0]
                flagfile = next(a for a in container["command"] if a.startswith("--flagfile="))
                flags = self.flags[os.path.basename(flagfile.split("=", 1)[1])]
                port = int(flags["listen"].rsplit(":", 1)[1])
                self.assertEqual(flags["listen"].rsplit(":", 1)[0], "0.0.0.0")
                ports = {p["containerPort"] for p in container["ports"]}
                self.assertIn(port, ports)
                for probe in ("readinessProbe", "livenessProbe"):
                    self.assertEqual(container[probe]["grpc"]["port"], port)

    def test_scrape_annotations_name_the_metrics_port_the_flags_open(self):
        for name in ("ordo-server", "ordo-worker"):
            with self.subTest(deployment=name):
                template = self.deployments[name]["spec"]["template"]
                annotations = template["metadata"]["annotations"]
                container = template["spec"]["containers"][0]
                flagfile = next(a for a in container["command"] if a.startswith("--flagfile="))
                flags = self.flags[os.path.basename(flagfile.split("=", 1)[1])]
                self.assertEqual(annotations["prometheus.io/scrape"], "true")
                self.assertEqual(annotations["prometheus.io/port"], flags["metrics_port"])
                self.assertIn(int(flags["metrics_port"]),
                              {p["containerPort"] for p in container["ports"]})

    def test_flag_files_are_mounted_where_the_command_reads_them(self):
        for name in ("ordo-server", "ordo-worker"):
            spec = self.deployments[name]["spec"]["template"]["spec"]
            container = spec["containers"][0]
            flagfile = next(a for a in container["command"] if a.startswith("--flagfile="))
            path = flagfile.split("=", 1)[1]
            mount = next(m for m in container["volumeMounts"]
                         if path.startswith(m["mountPath"] + "/"))
            volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
            config_map = by_kind(self.objects, "ConfigMap")[volume["configMap"]["name"]]
            self.assertIn(os.path.basename(path), config_map["data"])

    def test_services_select_pods_and_name_their_ports(self):
        for name, service in self.services.items():
            with self.subTest(service=name):
                # By its pods' name label (ordo-server-headless selects
                # ordo-server's pods).
                deployment = self.deployments[service["spec"]["selector"]["app.kubernetes.io/name"]]
                labels = deployment["spec"]["template"]["metadata"]["labels"]
                for key, value in service["spec"]["selector"].items():
                    self.assertEqual(labels.get(key), value)
                port_names = {p["name"] for c in deployment["spec"]["template"]["spec"]["containers"]
                              for p in c["ports"]}
                for port in service["spec"]["ports"]:
                    self.assertIn(port["targetPort"], port_names)

    def test_front_reaches_workers_through_the_headless_service_and_redis_by_name(self):
        workers = self.services["ordo-worker"]
        self.assertEqual(workers["spec"]["clusterIP"], "None")
        grpc_port = next(p["port"] for p in workers["spec"]["ports"] if p["name"] == "grpc")
        server = self.flags["ordo-server.flags"]
        self.assertEqual(server["workers"], f"dns:///ordo-worker:{grpc_port}")
        redis_port = self.services["redis"]["spec"]["ports"][0]["port"]
        self.assertTrue(server["redis"].startswith(f"redis://redis:{redis_port}/"))

    def test_redis_is_a_bounded_lru_cache_within_its_limit(self):
        container = self.deployments["redis"]["spec"]["template"]["spec"]["containers"][0]
        command = container["command"]
        self.assertEqual(command[command.index("--maxmemory-policy") + 1], "allkeys-lru")
        maxmemory_mb = int(command[command.index("--maxmemory") + 1].rstrip("mb"))
        limit_mi = int(container["resources"]["limits"]["memory"].rstrip("Mi"))
        self.assertLess(maxmemory_mb, limit_mi)

    def test_autoscaler_and_disruption_budgets_point_at_the_deployments(self):
        hpa = by_kind(self.objects, "HorizontalPodAutoscaler")["ordo-worker"]
        self.assertEqual(hpa["spec"]["scaleTargetRef"]["name"], "ordo-worker")
        self.assertEqual(hpa["spec"]["metrics"][0]["resource"]["name"], "cpu")
        worker = self.deployments["ordo-worker"]["spec"]["template"]["spec"]["containers"][0]
        self.assertIn("cpu", worker["resources"]["requests"], "CPU utilisation needs a request")
        for name, pdb in by_kind(self.objects, "PodDisruptionBudget").items():
            labels = self.deployments[name]["spec"]["template"]["metadata"]["labels"]
            for key, value in pdb["spec"]["selector"]["matchLabels"].items():
                self.assertEqual(labels.get(key), value)
            self.assertLess(pdb["spec"]["minAvailable"], self.deployments[name]["spec"]["replicas"])


if __name__ == "__main__":
    unittest.main()
