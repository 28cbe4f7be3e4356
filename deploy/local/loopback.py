"""Runs the commands of docker-compose.yml and deploy/k8s on loopback.

`Loopback` rewrites a container command for this machine and nothing else:
service names and 0.0.0.0 become 127.0.0.1, every (service, replica,
container port) gets a free loopback port, image binaries become the built
ones (build/...) or Debian's (/usr/bin/redis-server, /usr/bin/prometheus).
Flags, flag values other than addresses, and flag files pass through
unchanged, so a flag or binary that does not exist fails here as it would in
the container. Used by scripts/cluster-up and tests/deploy.

Not guaranteed: a free port found now may be taken before the process binds
it (it then fails to start, loudly).
"""

import os
import re
import shutil
import socket
import subprocess

from grpc_probe import is_serving

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ORDO_BUILD_DIR", os.path.join(REPO, "build"))

# Binaries named by the image's commands, and where they are here.
BINARIES = {
    "ordo-server": os.path.join(BUILD, "server", "ordo-server"),
    "ordo-worker": os.path.join(BUILD, "workers", "ordo-worker"),
    "ordo": os.path.join(BUILD, "client", "ordo"),
    "redis-server": "/usr/bin/redis-server",
    "redis-cli": "/usr/bin/redis-cli",
    "prometheus": "/usr/bin/prometheus",
    "wget": "/usr/bin/wget",
}

# Ports a program listens on without saying so in its arguments.
DEFAULT_PORTS = {"redis-server": 6379, "prometheus": 9090}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Loopback:
    """Port map and rewriting rules shared by every service of one topology.

    `replicas` maps service name -> replica count; it decides what a
    dns:///service:port target becomes (one replica: dns:///127.0.0.1:P, so
    the dns resolver and round_robin are still exercised; several: the
    host:port,... list, because loopback has one address per name)."""

    def __init__(self, replicas):
        self.replicas = dict(replicas)
        self.ports = {}  # (service, replica, container port) -> loopback port

    def port(self, service, replica, container_port):
        key = (service, replica, int(container_port))
        if key not in self.ports:
            self.ports[key] = free_port()
        return self.ports[key]

    def _address_re(self):
        names = sorted(self.replicas, key=len, reverse=True)
        hosts = ["0\\.0\\.0\\.0", "127\\.0\\.0\\.1", "localhost"] + [re.escape(n) for n in names]
        # One pass, so a replacement is never rewritten again.
        return re.compile(r"dns:///([\w.-]+):(\d+)|(?<![\w.-])(" + "|".join(hosts) + r"):(\d+)")

    def rewrite(self, arg, service, replica):
        """One argument of `service`'s replica `replica`, for loopback."""
        def address(match):
            if match.group(1) is not None:  # dns:///target:port
                target, port = match.group(1), match.group(2)
                count = self.replicas.get(target, 1)
                if count == 1:
                    return f"dns:///127.0.0.1:{self.port(target, 0, port)}"
                return ",".join(f"127.0.0.1:{self.port(target, r, port)}" for r in range(count))
            host, port = match.group(3), match.group(4)
            if host in self.replicas:
                return f"127.0.0.1:{self.port(host, 0, port)}"
            return f"127.0.0.1:{self.port(service, replica, port)}"  # itself

        arg = self._address_re().sub(address, arg)
        metrics = re.match(r"^(--metrics[-_]port=)(\d+)$", arg)
        if metrics and metrics.group(2) != "0":
            arg = metrics.group(1) + str(self.port(service, replica, metrics.group(2)))
        return arg

    def command(self, argv, service, replica, workdir):
        """A container command -> a loopback argv (list)."""
        argv = list(argv)
        program = os.path.basename(argv[0]) if argv and not argv[0].startswith("-") else None
        if program is None:  # an image whose entrypoint is its program (prom/prometheus)
            program = "prometheus"
            argv = ["prometheus"] + argv
        if program not in BINARIES:
            raise ValueError(f"{service}: no local binary for {argv[0]!r}")
        out = [BINARIES[program]]
        args = argv[1:]
        i = 0
        while i < len(args):
            arg = args[i]
            if program == "redis-cli" and arg == "-p" and i + 1 < len(args):
                out += ["-p", str(self.port(service, replica, args[i + 1]))]
                i += 2
                continue
            out.append(self.rewrite(arg, service, replica))
            i += 1
        if program == "redis-server":
            out += ["--port", str(self.port(service, replica, DEFAULT_PORTS["redis-server"])),
                    "--bind", "127.0.0.1", "--dir", workdir, "--daemonize", "no"]
        if program == "prometheus":
            out = [a for a in out if not a.startswith("--storage.tsdb.path=")]
            out += [f"--storage.tsdb.path={os.path.join(workdir, 'tsdb')}",
                    "--web.listen-address=127.0.0.1:" +
                    str(self.port(service, replica, DEFAULT_PORTS["prometheus"]))]
        return out

    def healthy(self, test, service, replica, timeout=5.0):
        """Runs a compose healthcheck `test` (["CMD", ...]) for loopback.

        `ordo health` is the contract; while the CLI lacks it (exit 2 with
        'unknown command'), the same gRPC health call is made from Python."""
        if test[0] == "CMD":
            argv = self.command(test[1:], service, replica, workdir=".")
        elif test[0] == "CMD-SHELL":
            raise ValueError(f"{service}: CMD-SHELL healthchecks are not supported")
        else:
            argv = self.command(test, service, replica, workdir=".")
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        if (os.path.basename(argv[0]) == "ordo" and argv[1:2] == ["health"]
                and result.returncode == 2 and "unknown command" in result.stderr):
            server = argv[argv.index("--server") + 1]
            return is_serving(server)
        return result.returncode == 0


def ordo_health_available():
    """True once build/client/ordo has the `health` command."""
    if not shutil.which(BINARIES["ordo"]):
        return False
    result = subprocess.run([BINARIES["ordo"], "health"], capture_output=True, text=True)
    return "unknown command" not in result.stderr
