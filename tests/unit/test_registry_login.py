"""oci_catalog reads the registry credentials the user already has: podman/skopeo/buildah's auth.json and docker's
config.json, in containers/image's order, and docker credential helpers. Given credentials still win, and no
message carries a secret. Real HTTP servers on 127.0.0.1 in the test process; the login files and the helper
(a small script on PATH) are the test's own."""

from __future__ import annotations

import base64
import json
import os
import stat
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog, registry_auth

SECRET = "Pa55-login-s3cret"
REFRESH = "refresh-t0ken-s3cret"
LABELS = {"modak.framework": "pytorch", "modak.version": "2.5"}
DIGEST = "sha256:" + "c" * 64


def basic(user, password):
    return base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


class Registry(BaseHTTPRequestHandler):
    """A registry that wants ``user``/SECRET: by Basic authentication, or (``bearer``) through its token service at
    /token, which takes the password (GET) or an identity token (POST, OAuth2 refresh_token grant)."""

    bearer = False
    seen = []

    def log_message(self, *args):
        pass

    def _answer(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        type(self).seen.append(("POST", self.path, form))
        if form.get("grant_type") == ["refresh_token"] and form.get("refresh_token") == [REFRESH]:
            return self._answer(200, {"access_token": "t0k"})
        return self._answer(400, {"error": "invalid_grant"})

    def do_GET(self):
        auth = self.headers.get("Authorization") or ""
        type(self).seen.append(("GET", self.path, auth))
        if self.path.startswith("/token"):
            ok = auth == "Basic " + basic("user", SECRET)
            return self._answer(200 if ok else 401, {"token": "t0k"} if ok else {})
        if self.bearer and auth != "Bearer t0k":
            realm = "http://%s:%d/token" % self.server.server_address
            return self._answer(401, {}, [("WWW-Authenticate", 'Bearer realm="%s",service="r"' % realm)])
        if not self.bearer and auth != "Basic " + basic("user", SECRET):
            return self._answer(401, {}, [("WWW-Authenticate", 'Basic realm="r"')])
        if self.path.startswith("/v2/_catalog"):
            return self._answer(200, {"repositories": ["m/x"]})
        if self.path.endswith("/tags/list"):
            return self._answer(200, {"tags": ["1"]})
        if "/manifests/" in self.path:
            return self._answer(200, {"config": {"digest": DIGEST}})
        return self._answer(200, {"config": {"Labels": LABELS}})


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user with no login files yet: HOME, XDG_RUNTIME_DIR and PATH (for helpers) of the test's own."""
    for name in ("REGISTRY_AUTH_FILE", "XDG_CONFIG_HOME", "DOCKER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "run").mkdir()
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("PATH", "%s:%s" % (tmp_path / "bin", os.environ.get("PATH", "")))
    return tmp_path


@pytest.fixture
def server():
    Registry.bearer, Registry.seen = False, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def host_of(httpd):
    return "127.0.0.1:%d" % httpd.server_address[1]


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return str(path)


def helper(home, name, body):
    """docker-credential-<name>: a Python script that logs the host it got on stdin and runs ``body``."""
    path = home / "bin" / ("docker-credential-" + name)
    path.write_text("#!%s\nimport json, sys, time\nhost = sys.stdin.read()\nopen(%r, 'a').write(sys.argv[1] + ' ' + "
                    "host + '\\n')\n%s\n" % (sys.executable, str(home / (name + ".log")), body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return home / (name + ".log")


def test_load_reads_the_credentials_of_podman_login(home, server):
    """Before, a registry that needs a login gave a warning and the embedded catalog."""
    write(home / "run" / "containers" / "auth.json", {"auths": {host_of(server): {"auth": basic("user", SECRET)}}})
    images, warnings = oci_catalog.load("http://" + host_of(server), timeout=5, fallback=["embedded"])
    assert [image.uri for image in images] == ["docker://%s/m/x:1" % host_of(server)] and warnings == []
    catalog = "/v2/_catalog?n=%d" % oci_catalog.MAX_REPOSITORIES
    assert ("GET", catalog, "Basic " + basic("user", SECRET)) in Registry.seen


def test_the_files_are_read_in_containers_image_order(home, monkeypatch):
    uid = os.getuid()
    assert registry_auth.auth_files() == [
        (str(home / "run/containers/auth.json"), False), (str(home / ".config/containers/auth.json"), False),
        (str(home / ".docker/config.json"), False), (str(home / ".dockercfg"), True)]
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/cfg")
    monkeypatch.setenv("DOCKER_CONFIG", "/dock")
    assert [path for path, _legacy in registry_auth.auth_files()] == [
        "/run/containers/%d/auth.json" % uid, "/cfg/containers/auth.json", "/dock/config.json",
        str(home / ".dockercfg")]
    monkeypatch.setenv("REGISTRY_AUTH_FILE", "/given/auth.json")   # podman's --authfile: that file alone
    assert registry_auth.auth_files() == [("/given/auth.json", False)]


def test_the_first_file_with_credentials_for_the_host_wins(home):
    runtime = {"other:5000": {"auth": basic("o", "p")}, "reg:5000": {}}     # {}: a helper's mark, no credentials
    write(home / "run/containers/auth.json", {"auths": runtime})
    found = write(home / ".config/containers/auth.json", {"auths": {"reg:5000": {"auth": basic("user", SECRET)}}})
    write(home / ".docker/config.json", {"auths": {"reg:5000": {"auth": basic("docker", "later")}}})
    creds, warnings = registry_auth.find("reg:5000")
    assert (creds.username, creds.password, creds.source, warnings) == ("user", SECRET, found, [])
    assert SECRET not in repr(creds)


def test_docker_config_keys_written_as_urls_and_the_legacy_file(home):
    write(home / ".docker/config.json", {"auths": {"https://reg:5000/v1/": {"auth": basic("user", SECRET)}}})
    assert registry_auth.find("reg:5000")[0].username == "user"
    write(home / ".dockercfg", {"old:443": {"auth": basic("legacy", SECRET), "email": "a@b"}})
    assert registry_auth.find("old:443")[0].username == "legacy"
    assert registry_auth.find("none:1") == (None, [])


def test_docker_config_dir_is_honoured(home, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", str(home / "elsewhere"))
    write(home / ".docker/config.json", {"auths": {"reg": {"auth": basic("home", "x")}}})
    write(home / "elsewhere/config.json", {"auths": {"reg": {"auth": basic("env", "x")}}})
    assert registry_auth.find("reg")[0].username == "env"


def test_a_broken_file_is_skipped_with_a_warning_that_shows_no_secret(home):
    write(home / "run/containers/auth.json", {"auths": {"reg": {"auth": base64.b64encode(SECRET.encode()).decode()}}})
    (home / ".config/containers").mkdir(parents=True)
    (home / ".config/containers/auth.json").write_text("{not json " + SECRET)
    write(home / ".docker/config.json", {"auths": {"reg": {"auth": basic("user", SECRET)}}})
    creds, warnings = registry_auth.find("reg")
    assert creds.username == "user" and len(warnings) == 2
    assert "not base64 user:password" in warnings[0] and "not JSON" in warnings[1]
    assert not any(SECRET in w for w in warnings)


def test_a_credential_helper_is_asked_for_the_host(home, server):
    log = helper(home, "fake", "print(json.dumps({'ServerURL': host, 'Username': 'user', 'Secret': %r}))" % SECRET)
    write(home / ".docker/config.json", {"auths": {host_of(server): {}}, "credHelpers": {host_of(server): "fake"}})
    images, warnings = oci_catalog.load("http://" + host_of(server), timeout=5)
    assert len(images) == 1 and warnings == []
    assert log.read_text() == "get %s\n" % host_of(server)


def test_the_default_store_and_an_identity_token(home, server):
    """credsStore answers for every host without an entry; Username <token> makes Secret an identity token, traded
    at the token service by an OAuth2 refresh_token grant."""
    Registry.bearer = True
    helper(home, "store", "print(json.dumps({'Username': '<token>', 'Secret': %r}))" % REFRESH)
    write(home / ".docker/config.json", {"credsStore": "store"})
    images, warnings = oci_catalog.load("http://" + host_of(server), timeout=5)
    assert len(images) == 1 and warnings == []
    posts = [form for method, _path, form in Registry.seen if method == "POST"]
    assert posts and all(form["refresh_token"] == [REFRESH] and form["grant_type"] == ["refresh_token"]
                         for form in posts)


def test_an_identity_token_in_auth_json(home, server):
    Registry.bearer = True
    write(home / "run/containers/auth.json", {"auths": {host_of(server): {"identitytoken": REFRESH}}})
    assert len(oci_catalog.load("http://" + host_of(server), timeout=5)[0]) == 1


@pytest.mark.parametrize("body, said", [
    ("sys.stderr.write('credentials not found in native keychain'); sys.exit(1)", None),
    ("sys.stderr.write('locked: %s'); sys.exit(3)" % SECRET, "exit status 3"),
    ("print('no json %s')" % SECRET, "no credentials in its answer"),
    ("time.sleep(5)", "no answer within 0.5 s"),
])
def test_a_helper_that_has_nothing_fails_or_hangs(home, body, said):
    helper(home, "bad", body)
    write(home / ".docker/config.json", {"credHelpers": {"reg": "bad"}, "auths": {"reg": {"auth": basic("u", "p")}}})
    creds, warnings = registry_auth.find("reg", timeout=0.5)
    assert creds is None           # only the helper the file names for the host is asked
    assert warnings == ([] if said is None else ["registry credentials: credential helper 'bad' for reg: %s; skipped"
                                                 % said])


def test_a_missing_or_odd_helper_is_a_warning(home):
    write(home / ".docker/config.json", {"credHelpers": {"reg": "absent", "odd": "../x"}})
    assert registry_auth.find("reg") == (None, [
        "registry credentials: credential helper 'absent' for reg: docker-credential-absent is not on PATH; skipped"])
    assert "not a helper name" in registry_auth.find("odd")[1][0]


def test_given_credentials_win_over_the_login_files(home, server):
    write(home / "run/containers/auth.json", {"auths": {host_of(server): {"auth": basic("user", "stale")}}})
    images, warnings = oci_catalog.load("http://" + host_of(server), "user", SECRET, timeout=5)
    assert len(images) == 1 and warnings == []
    assert {auth for method, _path, auth in Registry.seen if auth} == {"Basic " + basic("user", SECRET)}


def test_refused_login_file_credentials_name_the_file_not_the_password(home, server):
    path = write(home / "run/containers/auth.json", {"auths": {host_of(server): {"auth": basic("user", "wr0ng-pw")}}})
    images, warnings = oci_catalog.load("http://" + host_of(server), timeout=5, fallback=["embedded"])
    assert images == ["embedded"]
    assert "refused the credentials of %s (401)" % path in warnings[0] and "wr0ng-pw" not in warnings[0]


def test_no_credentials_says_how_to_give_them(home, server):
    images, warnings = oci_catalog.load("http://" + host_of(server), timeout=5, fallback=["embedded"])
    said = ("needs credentials (401): give a username and password or a token, or log in to %s with podman or "
            "docker login" % host_of(server))
    assert images == ["embedded"] and said in warnings[0]
