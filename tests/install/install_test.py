#!/usr/bin/python3
"""`cmake --install` into a temporary prefix, and the installed files work.

Installs the build tree named by $ORDO_BUILD_DIR (all targets built), then
runs the installed `ordo` on an example model, compiles the installed protos
with protoc from the installed --proto_path only, and imports the installed
Python client with nothing of the build or source tree on its path.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD_DIR = os.environ["ORDO_BUILD_DIR"]
SOURCE_DIR = os.environ["ORDO_SOURCE_DIR"]
PYTHONDIR = os.environ["ORDO_INSTALL_PYTHONDIR"]
EXAMPLE = os.path.join(SOURCE_DIR, "examples", "models", "small_resnet.onnx")


class InstallTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.prefix = tempfile.mkdtemp(prefix="ordo-install-")
        subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", cls.prefix],
                       check=True, stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.prefix)

    def path(self, *parts):
        return os.path.join(self.prefix, *parts)

    def test_binaries_are_installed_side_by_side(self):
        # ordo-server finds ordo-worker next to itself.
        for name in ["ordo", "ordo-server", "ordo-worker"]:
            self.assertTrue(os.access(self.path("bin", name), os.X_OK), name)

    def test_installed_cli_compiles_a_model(self):
        out = subprocess.run([self.path("bin", "ordo"), "compile", EXAMPLE, "--json"],
                             check=True, capture_output=True, text=True, cwd=self.prefix)
        report = json.loads(out.stdout)  # CompileResponse, protobuf's JSON mapping
        self.assertEqual(report["status"], "SCHEDULE_STATUS_OPTIMAL")
        self.assertEqual(report["peak_bytes"], report["lower_bound_bytes"])

    def test_installed_protos_compile_on_their_own(self):
        proto_path = self.path("share", "ordo", "proto")
        out_dir = tempfile.mkdtemp(dir=self.prefix)
        subprocess.run(["protoc", "--proto_path=" + proto_path, "--cpp_out=" + out_dir,
                        "ordo/v1/compiler_service.proto", "ordo/v1/worker_service.proto",
                        "grpc/health/v1/health.proto"], check=True)
        self.assertTrue(os.path.exists(
            os.path.join(out_dir, "ordo", "v1", "compiler_service.pb.h")))

    def test_installed_python_client_imports_from_the_prefix(self):
        pythondir = self.path(PYTHONDIR)
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": pythondir,
               "ORDO_PYTHON_STUBS": pythondir, "PYTHONDONTWRITEBYTECODE": "1"}
        code = ("import ordo_client, nas_loop; "
                "ordo_client.pb.CompileRequest(); print(ordo_client.__file__)")
        out = subprocess.run(["/usr/bin/python3", "-c", code], check=True,
                             capture_output=True, text=True, env=env, cwd=self.prefix)
        self.assertTrue(out.stdout.strip().startswith(pythondir), out.stdout)


if __name__ == "__main__":
    unittest.main()
