"""oci_catalog tries a registry's 429/5xx answers again (urllib3's Retry under requests), after the answer's
Retry-After or a backoff, and never past the request's total deadline. A real HTTP server on 127.0.0.1 in the test
process plays a registry whose answers for a path are scripted one by one."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog

DIGEST = "sha256:" + "b" * 64
LABELS = {"modak.framework": "pytorch", "modak.version": "2.5"}
CATALOG = (200, {}, {"repositories": ["m/x"]})
UNAVAILABLE = (503, {}, {"errors": [{"code": "UNAVAILABLE"}]})


class Scripted(BaseHTTPRequestHandler):
    """Each path's answers in turn (the last one repeats); anything else: a labelled image."""

    script = {}
    calls = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        type(self).calls.append((path, time.monotonic()))
        answers = self.script.get(path)
        if answers:
            status, headers, body = answers.pop(0) if len(answers) > 1 else answers[0]
        elif path.endswith("/tags/list"):
            status, headers, body = 200, {}, {"tags": ["1"]}
        elif "/manifests/" in path:
            status, headers, body = 200, {}, {"config": {"digest": DIGEST}}
        else:
            status, headers, body = 200, {}, {"config": {"Labels": LABELS}}
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setenv("REGISTRY_AUTH_FILE", "/nonexistent/auth.json")   # no login file of the machine's user
    Scripted.script, Scripted.calls = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


def catalog_calls():
    return [at for path, at in Scripted.calls if path == "/v2/_catalog"]


def test_a_503_is_tried_again_and_the_next_answer_is_used(registry):
    Scripted.script["/v2/_catalog"] = [UNAVAILABLE, CATALOG]
    assert oci_catalog.Registry(registry, timeout=5).repositories() == ["m/x"]
    assert len(catalog_calls()) == 2


@pytest.mark.parametrize("status", [429, 500, 502, 504])
def test_the_other_passing_failures_are_tried_again_too(registry, status):
    Scripted.script["/v2/_catalog"] = [(status, {}, {}), CATALOG]
    assert oci_catalog.Registry(registry, timeout=5).repositories() == ["m/x"]


@pytest.mark.parametrize("status", [400, 403, 404])
def test_an_answer_that_will_not_change_is_not_tried_again(registry, status):
    Scripted.script["/v2/_catalog"] = [(status, {}, {}), CATALOG]
    with pytest.raises(oci_catalog.RegistryError, match="answered %d" % status):
        oci_catalog.Registry(registry, timeout=5).repositories()
    assert len(catalog_calls()) == 1


def test_retry_after_is_waited_for_within_the_deadline(registry):
    Scripted.script["/v2/_catalog"] = [(503, {"Retry-After": "1"}, {}), CATALOG]
    assert oci_catalog.Registry(registry, timeout=5).repositories() == ["m/x"]
    first, second = catalog_calls()
    assert 0.95 <= second - first < 3


def test_a_retry_after_past_the_deadline_ends_the_request_at_once_and_says_why(registry):
    Scripted.script["/v2/_catalog"] = [(503, {"Retry-After": "30"}, {}), CATALOG]
    started = time.monotonic()
    with pytest.raises(oci_catalog.RegistryError) as err:
        oci_catalog.Registry(registry, timeout=2).repositories()
    assert time.monotonic() - started < 1.5
    assert "answered 503; trying again after 30 s (its Retry-After) would pass the request's deadline" in str(err.value)
    assert len(catalog_calls()) == 1


def test_the_backoff_stops_at_the_deadline_with_a_clear_error(registry):
    Scripted.script["/v2/_catalog"] = [UNAVAILABLE]            # unavailable for good: tries at 0, 0, then 1 s
    started = time.monotonic()
    with pytest.raises(oci_catalog.RegistryError, match=r"answered 503; trying again after 2 s would pass the "
                                                        r"request's deadline \(0\.\d+ s left\)"):
        oci_catalog.Registry(registry, timeout=1.6).repositories()
    assert time.monotonic() - started < 1.6
    assert len(catalog_calls()) == 3


def test_after_the_last_try_its_answer_is_reported(registry, monkeypatch):
    monkeypatch.setattr(oci_catalog, "BACKOFF_S", 0.01)
    Scripted.script["/v2/_catalog"] = [UNAVAILABLE]
    with pytest.raises(oci_catalog.RegistryError, match="/v2/_catalog answered 503"):
        oci_catalog.Registry(registry, timeout=5).repositories()
    assert len(catalog_calls()) == 1 + oci_catalog.RETRIES


def test_a_retry_after_that_is_no_time_counts_as_absent(registry):
    Scripted.script["/v2/_catalog"] = [(503, {"Retry-After": "soon"}, {}), CATALOG]
    assert oci_catalog.Registry(registry, timeout=5).repositories() == ["m/x"]
    first, second = catalog_calls()
    assert second - first < 0.9       # the first backoff is 0


def test_load_finds_the_images_of_a_registry_that_was_briefly_unavailable(registry):
    Scripted.script["/v2/_catalog"] = [UNAVAILABLE, CATALOG]
    Scripted.script["/v2/m/x/tags/list"] = [(502, {}, {}), (200, {}, {"tags": ["1"]})]
    images, warnings = oci_catalog.load(registry, timeout=5, fallback=["embedded"])
    assert [image.uri for image in images] == ["docker://%s/m/x:1" % registry.split("://")[1]] and warnings == []


def test_a_registry_that_is_down_is_tried_within_the_deadline_and_named(monkeypatch):
    monkeypatch.setenv("REGISTRY_AUTH_FILE", "/nonexistent/auth.json")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    url = "http://127.0.0.1:%d" % server.server_address[1]
    server.server_close()                      # nobody listens there now: every connection is refused
    started = time.monotonic()
    images, warnings = oci_catalog.load(url, timeout=1.6, fallback=["embedded"])
    assert images == ["embedded"] and time.monotonic() - started < 1.6
    assert "cannot reach the registry (NewConnectionError); trying again after 2 s would pass" in warnings[0]
