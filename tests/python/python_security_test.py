#!/usr/bin/python3
"""The Python client over TLS with a bearer token, against a real ordo-server.

Makes a CA and a server certificate (SAN 127.0.0.1) with the openssl command
line in a temporary folder, starts ordo-server with --tls-cert, --tls-key and
--auth-token-file (in-process scheduling), and checks that OrdoClient with
tls_ca_file + auth_token_file is served, that a missing or wrong token is
UNAUTHENTICATED, and that the server's log never shows a token.

Run by ctest (tests/python/CMakeLists.txt), or by hand:
  ORDO_SERVER_BINARY=build/server/ordo-server /usr/bin/python3 \\
      tests/python/python_security_test.py
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("ORDO_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
SERVER_BINARY = os.environ.get("ORDO_SERVER_BINARY") or os.path.join(
    SOURCE_DIR, "build", "server", "ordo-server")
sys.path[:0] = [os.path.join(SOURCE_DIR, "client", "python")]

import grpc  # noqa: E402
from ordo_client import OrdoClient, OrdoError  # noqa: E402

TOKEN = "py-token-5be0c1d2e3"
OTHER_TOKEN = "py-token-rotated-77aa"

MAKE_CERTS = r"""
set -e
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1; }
key ca.key; key server.key
openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=ordo-test-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign
openssl req -new -key server.key -out server.csr -subj /CN=localhost
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -out server.pem -extfile server.ext
"""


@unittest.skipUnless(shutil.which("openssl"), "openssl not installed (scripts/install-deps)")
class TlsAndTokenTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ordo-py-security-")
        subprocess.run(["sh", "-c", MAKE_CERTS], cwd=cls.dir, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.tokens = cls.path("tokens")
        with open(cls.tokens, "w") as f:
            f.write(f"# rotation: both valid\n{TOKEN}\n{OTHER_TOKEN}\n")
        cls.other = cls.path("other-token")
        with open(cls.other, "w") as f:
            f.write(f"{OTHER_TOKEN}\n")
        cls.log = open(cls.path("server.log"), "w+")
        cls.server = subprocess.Popen(
            [SERVER_BINARY, "--listen=127.0.0.1:0", "--metrics-port=0", "--local-workers=0",
             "--log-level=debug", f"--tls-cert={cls.path('server.pem')}",
             f"--tls-key={cls.path('server.key')}", f"--auth-token-file={cls.tokens}"],
            stdout=subprocess.PIPE, stderr=cls.log, text=True)
        line = cls.server.stdout.readline()  # the server exits if it cannot start
        if not line.startswith("listening on "):
            cls.tearDownClass()
            raise RuntimeError(f"ordo-server did not start: {line!r}")
        cls.target = line.split()[-1]

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(timeout=10)
        cls.log.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def path(cls, name):
        return os.path.join(cls.dir, name)

    def client(self, **kwargs):
        return OrdoClient(self.target, timeout_s=20, retry=False,
                          tls_ca_file=self.path("ca.pem"), **kwargs)

    def test_tls_with_token_estimates(self):
        with self.client(auth_token_file=self.tokens) as client:
            response = client.estimate(os.path.join(SOURCE_DIR, "examples", "models",
                                                    "tiny_cell.onnx"))
            self.assertGreater(response.model_order_peak_bytes, 0)
        with self.client(auth_token_file=self.other) as client:
            self.assertTrue(client.info().schedulers)

    def test_missing_or_wrong_token_is_unauthenticated(self):
        for kwargs in ({}, {"auth_token": "not-a-token"}):
            with self.client(**kwargs) as client:
                with self.assertRaises(OrdoError) as caught:
                    client.info()
                self.assertEqual(caught.exception.code, grpc.StatusCode.UNAUTHENTICATED)
                self.assertNotIn("not-a-token", caught.exception.message)

    def test_plaintext_client_is_refused(self):
        with OrdoClient(self.target, timeout_s=5, retry=False, auth_token=TOKEN) as client:
            with self.assertRaises(OrdoError) as caught:
                client.info()
            self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)

    def test_log_never_shows_a_token(self):
        with self.client(auth_token=TOKEN) as client:
            client.info()
        self.log.flush()
        with open(self.path("server.log")) as f:
            log = f.read()
        self.assertNotIn(TOKEN, log)
        self.assertNotIn(OTHER_TOKEN, log)


if __name__ == "__main__":
    unittest.main()
