"""deploy/docker/Dockerfile against the repository, without a container engine:
the build stage installs exactly scripts/install-deps' packages (by running
it), the runtime stage's packages are exactly those owning the shared
libraries of the real binaries (ldd -> dpkg -S), the default command starts
and serves health, and the HEALTHCHECK command is `ordo health`."""

import json
import os
import re
import shlex
import subprocess
import tempfile
import unittest

from deploy_testing import REPO, Processes, loopback, wait_until

DOCKERFILE = os.path.join(REPO, "deploy", "docker", "Dockerfile")
# Essential in every Debian image (debian:bookworm-slim has them).
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}


def instructions():
    """[(stage name, INSTRUCTION, arguments)] with continuation lines joined."""
    with open(DOCKERFILE) as f:
        text = re.sub(r"\\\n", " ", f.read())
    result, stage = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            stage = rest.split(" AS ")[-1].strip() if " AS " in rest else rest
        result.append((stage, instruction, rest.strip()))
    return result


def install_deps_packages():
    with open(os.path.join(REPO, "scripts", "install-deps")) as f:
        body = re.search(r"packages=\((.*?)\n\)", f.read(), re.S).group(1)
    words = []
    for line in body.splitlines():
        words += line.split("#")[0].split()
    return set(words)


def apt_installed(arguments):
    """Packages of the `apt-get install` in a RUN line."""
    words = shlex.split(arguments)
    packages, collecting = set(), False
    for word in words:
        if word == "install":
            collecting = True
        elif collecting and word in ("&&", ";"):
            collecting = False
        elif collecting and not word.startswith("-"):
            packages.add(word)
    return packages


def runtime_packages_of_binaries():
    """Debian packages owning the shared libraries ldd resolves for the three
    binaries. One dpkg -S for all of them (it is slow per call); each library
    is asked under /usr and without it because of Debian 12's merged /usr."""
    libraries = set()
    for name in ("ordo-server", "ordo-worker", "ordo"):
        ldd = subprocess.run(["ldd", loopback.BINARIES[name]], capture_output=True, text=True,
                             check=True).stdout
        libraries |= {os.path.realpath(l) for l in re.findall(r"=> (/\S+)", ldd)}
    variants = {}
    for library in libraries:
        bare = re.sub(r"^/usr", "", library)
        variants[bare] = variants["/usr" + bare] = library
    result = subprocess.run(["dpkg", "-S"] + sorted(variants), capture_output=True, text=True)
    owner = {}
    for line in result.stdout.splitlines():
        package, _, path = line.partition(": ")
        owner[variants[path]] = package.split(":")[0]
    unowned = libraries - set(owner)
    if unowned:
        raise AssertionError(f"no Debian package owns {sorted(unowned)}")
    return set(owner.values())


class DockerfileTest(unittest.TestCase):
    def setUp(self):
        self.instructions = instructions()
        self.stages = [rest for _, i, rest in self.instructions if i == "FROM"]

    def stage(self, name):
        return [(i, rest) for s, i, rest in self.instructions if s == name and i != "FROM"]

    def test_two_stages_on_debian_12(self):
        self.assertEqual(self.stages, ["debian:bookworm AS build", "debian:bookworm-slim AS runtime"])

    def test_build_stage_installs_exactly_install_deps_packages_by_running_it(self):
        build = self.stage("build")
        self.assertIn(("COPY", "scripts/install-deps scripts/install-deps"), build)
        runs = [rest for i, rest in build if i == "RUN"]
        self.assertTrue(any(r.startswith("scripts/install-deps") for r in runs), runs)
        for run in runs:
            self.assertNotIn("apt-get install", run, "packages belong in scripts/install-deps")
        self.assertIn("python3-yaml", install_deps_packages())

    def test_build_stage_builds_targets_that_exist(self):
        run = next(rest for i, rest in self.stage("build") if i == "RUN" and "scripts/build" in rest)
        targets = re.search(r"scripts/build ([\w\- ]+?) &&", run).group(1).split()
        self.assertEqual(targets, ["ordo-server", "ordo-worker", "ordo"])
        for target in targets:
            found = subprocess.run(["grep", "-rq", "--include=CMakeLists.txt",
                                    f"add_executable({target} ", REPO])
            self.assertEqual(found.returncode, 0, target)

    def test_runtime_packages_are_exactly_the_binaries_shared_libraries(self):
        runs = [rest for i, rest in self.stage("runtime") if i == "RUN" and "apt-get" in rest]
        self.assertEqual(len(runs), 1)
        listed = apt_installed(runs[0])
        needed = runtime_packages_of_binaries() - BASE_IMAGE_PACKAGES
        self.assertEqual(listed, needed,
                         f"missing: {sorted(needed - listed)}, extra: {sorted(listed - needed)}")

    def test_runtime_runs_the_three_binaries_as_a_non_root_user(self):
        runtime = self.stage("runtime")
        copy = next(rest for i, rest in runtime if i == "COPY")
        for path in ("/src/build/server/ordo-server", "/src/build/workers/ordo-worker",
                     "/src/build/client/ordo"):
            self.assertIn(path, copy)
        self.assertTrue(copy.endswith(" /usr/local/bin/"))
        user = next(rest for i, rest in runtime if i == "USER")
        self.assertRegex(user, r"^[1-9]\d*:[1-9]\d*$", "numeric, so runAsNonRoot can check it")
        self.assertIn(f"--uid {user.split(':')[0]}", next(
            rest for i, rest in runtime if i == "RUN" and "useradd" in rest))

    def test_labels_and_exposed_ports(self):
        runtime = self.stage("runtime")
        labels = " ".join(rest for i, rest in runtime if i == "LABEL")
        for key in ("org.opencontainers.image.title", "org.opencontainers.image.version",
                    "org.opencontainers.image.revision"):
            self.assertIn(key, labels)
        exposed = " ".join(rest for i, rest in runtime if i == "EXPOSE").split()
        self.assertEqual(sorted(exposed), ["50051", "50052", "9464", "9465"])

    def test_default_command_serves_and_healthcheck_is_ordo_health(self):
        runtime = self.stage("runtime")
        healthcheck = next(rest for i, rest in runtime if i == "HEALTHCHECK")
        test = json.loads(healthcheck.split(" CMD ", 1)[1])
        self.assertEqual(test, ["ordo", "health", "--server", "127.0.0.1:50051"])
        command = json.loads(next(rest for i, rest in runtime if i == "CMD"))
        self.assertEqual(command[0], "ordo-server")
        with tempfile.TemporaryDirectory() as directory:
            processes = Processes(directory)
            try:
                lb = loopback.Loopback({"image": 1})
                processes.start("server", lb.command(command, "image", 0, directory))
                wait_until(lambda: lb.healthy(["CMD"] + test, "image", 0), 20,
                           "the image's CMD to serve health: " + processes.log("server"))
            finally:
                processes.stop()

    def test_healthcheck_exit_codes(self):
        if not loopback.ordo_health_available():
            self.skipTest("build/client/ordo has no `health` command yet")
        with tempfile.TemporaryDirectory() as directory:
            processes = Processes(directory)
            try:
                lb = loopback.Loopback({"image": 1})
                argv = lb.command(["ordo-server", "--listen=0.0.0.0:50051", "--metrics-port=0",
                                   "--local-workers=0"], "image", 0, directory)
                processes.start("server", argv)
                health = [loopback.BINARIES["ordo"], "health", "--server",
                          f"127.0.0.1:{lb.port('image', 0, 50051)}"]
                wait_until(lambda: subprocess.run(health).returncode == 0, 20, "ordo health = 0")
            finally:
                processes.stop()
            self.assertEqual(subprocess.run(health, capture_output=True).returncode, 1)
            self.assertEqual(subprocess.run(health[:2], capture_output=True).returncode, 2)


class DockerignoreTest(unittest.TestCase):
    def test_build_trees_and_git_history_stay_out_of_the_context(self):
        with open(os.path.join(REPO, ".dockerignore")) as f:
            patterns = [l.strip() for l in f if l.strip() and not l.startswith("#")]
        for pattern in (".git", "build*"):
            self.assertIn(pattern, patterns)
        # What the build needs must not be ignored.
        for needed in ("scripts", "core", "proto", "CMakeLists.txt"):
            self.assertNotIn(needed, patterns)


if __name__ == "__main__":
    unittest.main()
