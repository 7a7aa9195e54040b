"""Registry discovery with authentication, against real docker-registry instances.

Basic: a registry with an htpasswd (bcrypt) file. Bearer: a registry with ``auth: token``; the registry is
real, only the token issuer is this module's (http.server in a thread, RS256 JWTs signed with a key whose
self-signed certificate is the registry's rootcertbundle). Images are pushed with podman ``--creds``, which
does the token flow itself, and discovered with ``oci_catalog.load`` and the optimise module.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog

from .test_build_podman import DSL  # the same PyTorch 2.6 request the unauthenticated tests use

USER = "modak"
PASSWORD = "Pa55-s3cret-4-modak"
WRONG = "Wr0ng-pa55-4-modak"
SERVICE = "modak-test"
ISSUER = "modak-test-issuer"
LOCAL = "localhost/modak/auth-pytorch:2.6"
REPO = "modak/pytorch-auth"
LABELS = {"modak.framework": "pytorch", "modak.version": "2.6", "modak.kind": "framework", "modak.build": "optimised-pip",
          "modak.arch": "x86_64", "modak.isa": "x86-64-v2", "modak.accelerator": "none", "modak.compilers": "inductor",
          "modak.math": "mkl,onednn", "modak.name": "modak-auth-pytorch-2.6", "modak.recipe.sha256": "a" * 64}


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _no_secret(texts):
    joined = "\n".join(str(t) for t in texts)
    for secret in (PASSWORD, WRONG, base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()):
        assert secret not in joined


class TokenIssuer(object):
    """A tiny Distribution token service: checks basic credentials, grants the requested scopes."""

    def __init__(self, workdir):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(self.key.public_key())
                     .serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.bundle = workdir / "token-cert.pem"
        self.bundle.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self.requests = []  # (authenticated, scopes) per request
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.realm = "http://127.0.0.1:%d/token" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def token(self, subject, scopes):
        access = []
        for scope in scopes:
            kind, rest = scope.split(":", 1)
            name, actions = rest.rsplit(":", 1)
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256",
                  "x5c": [base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode("ascii")]}
        claims = {"iss": ISSUER, "sub": subject, "aud": SERVICE, "exp": now + 300, "nbf": now - 10, "iat": now,
                  "jti": uuid.uuid4().hex, "access": access}
        signing_input = "%s.%s" % (_b64url(json.dumps(header).encode()), _b64url(json.dumps(claims).encode()))
        signature = self.key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
        return "%s.%s" % (signing_input, _b64url(signature))

    def _handler(self):
        issuer = self
        expected = "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode("ascii")

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                scopes = [s for value in query.get("scope", []) for s in value.split()]
                authenticated = self.headers.get("Authorization", "") == expected
                issuer.requests.append((authenticated, scopes))
                if url.path != "/token" or query.get("service") != [SERVICE] or not authenticated:
                    self._answer(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
                    return
                token = issuer.token(USER, scopes)
                self._answer(200, {"token": token, "access_token": token, "expires_in": 300,
                                   "issued_at": datetime.datetime.now(datetime.timezone.utc).isoformat()})

            def _answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture(scope="module")
def labelled_image(busybox_base, tmp_path_factory):
    """A local image carrying modak labels (a LABEL-only build: nothing runs)."""
    work = tmp_path_factory.mktemp("labelled")
    labels = " ".join('%s="%s"' % item for item in sorted(LABELS.items()))
    (work / "Containerfile").write_text("FROM %s\nLABEL %s\n" % (busybox_base, labels))
    subprocess.run(["podman", "build", "-q", "-t", LOCAL, str(work)], check=True, capture_output=True)
    return LOCAL


def push(image, host, password):
    return subprocess.run(["podman", "push", "--tls-verify=false", "--creds", "%s:%s" % (USER, password), image,
                           "docker://%s/%s:2.6" % (host, REPO)], capture_output=True, text=True, check=False,
                          timeout=120)


@pytest.fixture(scope="module")
def basic_registry(start_registry, labelled_image, tmp_path_factory):
    work = tmp_path_factory.mktemp("basic-registry")
    entry = subprocess.run(["htpasswd", "-Bbn", USER, PASSWORD], capture_output=True, text=True, check=True).stdout
    (work / "htpasswd").write_text(entry)
    auth = "auth:\n  htpasswd:\n    realm: modak-basic\n    path: %s\n" % (work / "htpasswd")
    with start_registry(work, extra_config=auth) as reg:
        pushed = push(labelled_image, reg["host"], PASSWORD)
        assert pushed.returncode == 0, pushed.stderr
        yield reg


@pytest.fixture(scope="module")
def token_registry(start_registry, labelled_image, tmp_path_factory):
    work = tmp_path_factory.mktemp("token-registry")
    issuer = TokenIssuer(work)
    issuer.thread.start()
    auth = ("auth:\n  token:\n    realm: %s\n    service: %s\n    issuer: %s\n    rootcertbundle: %s\n"
            % (issuer.realm, SERVICE, ISSUER, issuer.bundle))
    try:
        with start_registry(work, extra_config=auth) as reg:
            pushed = push(labelled_image, reg["host"], PASSWORD)
            assert pushed.returncode == 0, pushed.stderr + reg["log"].read_text()
            yield dict(reg, issuer=issuer)
    finally:
        issuer.server.shutdown()
        issuer.server.server_close()


def _ours(images, host):
    uri = "docker://%s/%s:2.6" % (host, REPO)
    return [i for i in images if i.uri == uri]


# basic authentication (htpasswd, bcrypt)

def test_basic_registry_refuses_anonymous_reads(basic_registry):
    resp = requests.get(basic_registry["url"] + "/v2/_catalog", timeout=5)
    assert resp.status_code == 401 and resp.headers["WWW-Authenticate"].startswith("Basic ")
    images, warnings = oci_catalog.load(basic_registry["url"], fallback=["embedded"], timeout=5)
    assert images == ["embedded"] and "needs credentials (401)" in warnings[0]


def test_basic_auth_discovers_the_pushed_image_with_its_labels(basic_registry):
    images, warnings = oci_catalog.load(basic_registry["url"], USER, PASSWORD, timeout=5)
    assert warnings == []
    found = _ours(images, basic_registry["host"])
    assert len(found) == 1, [i.uri for i in images]
    image = found[0]
    assert (image.name, image.framework, image.version_text, image.build, image.compilers) == (
        "modak-auth-pytorch-2.6", "pytorch", "2.6", "optimised-pip", ("inductor",))
    assert dict(image.labels)["modak.recipe.sha256"] == "a" * 64


def test_basic_auth_wrong_password_warns_without_the_secret(basic_registry):
    images, warnings = oci_catalog.load(basic_registry["url"], USER, WRONG, fallback=["embedded"], timeout=5)
    assert images == ["embedded"]
    assert len(warnings) == 1 and "refused the credentials (401)" in warnings[0] and "using the embedded catalog" in warnings[0]
    _no_secret(warnings)


def test_basic_auth_errors_never_carry_the_secret(basic_registry):
    reg = oci_catalog.Registry(basic_registry["url"], USER, WRONG, timeout=5)
    with pytest.raises(oci_catalog.RegistryError) as err:
        reg.repositories()
    _no_secret([err.value, repr(err.value), reg.url, reg.host])


# bearer tokens (the Distribution token flow)

def test_token_registry_asks_for_a_bearer_token(token_registry):
    resp = requests.get(token_registry["url"] + "/v2/_catalog", timeout=5)
    challenge = resp.headers["WWW-Authenticate"]
    assert resp.status_code == 401 and challenge.startswith("Bearer ")
    assert 'realm="%s"' % token_registry["issuer"].realm in challenge and 'scope="registry:catalog:*"' in challenge
    # podman did the flow with our credentials to push
    assert any(ok and "repository:%s:pull,push" % REPO in scopes for ok, scopes in token_registry["issuer"].requests)
    # a token signed by another key is refused by the real registry
    forged_dir = token_registry["log"].parent / "forged"
    forged_dir.mkdir(exist_ok=True)
    forged = TokenIssuer(forged_dir)
    forged.server.server_close()
    bad = requests.get(token_registry["url"] + "/v2/_catalog", timeout=5,
                       headers={"Authorization": "Bearer " + forged.token(USER, ["registry:catalog:*"])})
    assert bad.status_code == 401


def test_bearer_flow_discovers_the_pushed_image(token_registry):
    issuer = token_registry["issuer"]
    before = len(issuer.requests)
    images, warnings = oci_catalog.load(token_registry["url"], USER, PASSWORD, timeout=5)
    assert warnings == []
    found = _ours(images, token_registry["host"])
    assert len(found) == 1, [i.uri for i in images]
    assert (found[0].framework, found[0].version_text, found[0].compilers) == ("pytorch", "2.6", ("inductor",))
    asked = issuer.requests[before:]
    assert all(ok for ok, scopes in asked)
    assert [scopes for ok, scopes in asked] == [["registry:catalog:*"], ["repository:%s:pull" % REPO]]


def test_bearer_flow_wrong_password_warns_without_the_secret(token_registry):
    images, warnings = oci_catalog.load(token_registry["url"], USER, WRONG, fallback=["embedded"], timeout=5)
    assert images == ["embedded"]
    assert len(warnings) == 1 and "token service" in warnings[0] and "401" in warnings[0]
    _no_secret(warnings)


@pytest.mark.parametrize("which", ["basic_registry", "token_registry"])
def test_podman_login_is_enough(which, request, tmp_path, monkeypatch):
    """``podman login`` writes its auth file; load, given no credentials, reads it (registry_auth)."""
    registry = request.getfixturevalue(which)
    authfile = tmp_path / "auth.json"
    login = subprocess.run(["podman", "login", "--authfile", str(authfile), "--tls-verify=false", "-u", USER,
                            "--password-stdin", registry["host"]], input=PASSWORD, capture_output=True, text=True,
                           check=False, timeout=60)
    assert login.returncode == 0, login.stderr
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(authfile))
    images, warnings = oci_catalog.load(registry["url"], timeout=5)
    assert warnings == [] and len(_ours(images, registry["host"])) == 1, warnings


def test_optimise_module_reads_the_token_registry_and_hides_the_password(root, token_registry, tmp_path):
    result_file = tmp_path / "result.json"
    extra = {"dsl": DSL, "output_dir": str(tmp_path / "out"), "result_file": str(result_file),
             "registries": [{"url": token_registry["url"], "username": USER, "password": PASSWORD, "timeout": 5}]}
    varsfile = tmp_path / "vars.json"
    varsfile.write_text(json.dumps(extra))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(root, ".venv", "bin", "ansible-playbook"), "-v", "-e", "@%s" % varsfile,
                           os.path.join(root, "tests", "integration", "playbooks", "optimise_task.yml")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = result_file.read_text()
    data = json.loads(result)
    assert data["image"]["uri"] == "docker://%s/%s:2.6" % (token_registry["host"], REPO)
    assert not any("not read" in w for w in data["modak_warnings"]), data["modak_warnings"]
    _no_secret([proc.stdout, proc.stderr, result])
