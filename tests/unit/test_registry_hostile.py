"""oci_catalog against a hostile registry: a real HTTP server on 127.0.0.1 that trickles, sends garbage,
huge lists, tags with line breaks and escape codes. load() always ends in time and never raises; what reaches
the catalog is a valid reference; what reaches the operator's terminal has no control characters."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog

DIGEST = "sha256:" + "a" * 64
LABELS = {"modak.framework": "pytorch", "modak.version": "2.5"}
TRICKLE_S = 20      # a trickling answer ends by itself after this long, so that an unfixed client ends too


def control_free(text):
    return not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in text)


class Hostile(BaseHTTPRequestHandler):
    routes = {}          # path -> (status, body bytes) or a callable(handler)
    calls = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        type(self).calls.append(path)
        route = self.routes.get(path)
        if route is None:
            if "/manifests/" in path:
                route = (200, json.dumps({"config": {"digest": DIGEST}}).encode())
            elif "/blobs/" in path:
                route = (200, json.dumps({"config": {"Labels": LABELS}}).encode())
            elif path.endswith("/tags/list"):
                route = (200, json.dumps({"tags": ["1.0"]}).encode())
            else:
                route = (404, b"{}")
        if callable(route):
            route(self)
            return
        status, body = route
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def trickle(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "1000000")
    handler.end_headers()
    end = time.time() + TRICKLE_S
    try:
        while time.time() < end:
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)
    except OSError:
        pass


def trickle_headers(handler):
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    end = time.time() + TRICKLE_S
    try:
        while time.time() < end:
            handler.wfile.write(b"X-Slow: 1\r\n")
            handler.wfile.flush()
            time.sleep(0.2)
    except OSError:
        pass


@pytest.fixture
def registry():
    Hostile.routes, Hostile.calls = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    # a short poll interval: shutdown() returns within it (the default 0.5 s, paid by every test)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1], Hostile
    server.shutdown()
    server.server_close()


def load(url, **kwargs):
    started = time.monotonic()
    images, warnings = oci_catalog.load(url, fallback=["embedded"], **kwargs)
    return images, warnings, time.monotonic() - started


@pytest.mark.parametrize("answer", [trickle, trickle_headers], ids=["body", "headers"])
def test_a_trickling_answer_ends_at_the_total_deadline(registry, answer):
    url, server = registry
    server.routes["/v2/_catalog"] = answer
    images, warnings, took = load(url, timeout=0.5)
    assert took < 3, "load took %.1f s with timeout=0.5" % took
    assert images == ["embedded"] and "within" in warnings[0], warnings


GARBAGE = [b"not json", b"[1, 2, 3]", b'"text"', b'{"repositories": "abc"}', b'{"repositories": [1, {"a": 1}]}',
           b'{"repositories": null}', b"\xff\xfe", b"{" * 5000 + b"}" * 5000, b"1e999999"]


@pytest.mark.parametrize("body", GARBAGE, ids=range(len(GARBAGE)))
def test_a_malformed_catalog_falls_back_with_a_warning(registry, body):
    url, server = registry
    server.routes["/v2/_catalog"] = (200, body)
    images, warnings, _took = load(url, timeout=5.0)
    assert images in (["embedded"], []) and warnings, (images, warnings)


@pytest.mark.parametrize("path,body", [
    ("/v2/m/x/tags/list", b'{"tags": 5}'), ("/v2/m/x/tags/list", b"[]"), ("/v2/m/x/tags/list", b'{"tags": [[1]]}'),
    ("/v2/m/x/manifests/1.0", b'{"config": "x"}'), ("/v2/m/x/manifests/1.0", b'{"manifests": [1]}'),
    ("/v2/m/x/manifests/1.0", b'{"manifests": "x"}'), ("/v2/m/x/blobs/" + DIGEST, b'{"config": {"Labels": [1]}}'),
    ("/v2/m/x/blobs/" + DIGEST, b'{"config": 7}'),
    ("/v2/m/x/blobs/" + DIGEST, b'{"config": {"Labels": {"modak.framework": 1}}}'),
    ("/v2/m/x/manifests/1.0", b'{"config": {"digest": "sha256:../../x"}}'),
])
def test_malformed_answers_deeper_down_are_warnings(registry, path, body):
    url, server = registry
    server.routes["/v2/_catalog"] = (200, b'{"repositories": ["m/x"]}')
    server.routes[path] = (200, body)
    images, warnings, _took = load(url, timeout=5.0)
    assert isinstance(images, list) and warnings, (images, warnings)


def test_huge_lists_are_capped(registry):
    url, server = registry
    server.routes["/v2/_catalog"] = (200, json.dumps({"repositories": ["r%d" % i for i in range(50000)]}).encode())
    server.routes["/v2/r0/tags/list"] = (200, json.dumps({"tags": ["t%d" % i for i in range(50000)]}).encode())
    _images, warnings, took = load(url, timeout=5.0)
    tag_lists = [p for p in server.calls if p.endswith("/tags/list")]
    manifests = [p for p in server.calls if "/manifests/" in p]
    assert len(tag_lists) <= oci_catalog.MAX_REPOSITORIES and len(manifests) <= oci_catalog.MAX_IMAGES
    assert any("first" in w for w in warnings), warnings


def test_a_tag_with_a_line_break_never_reaches_the_catalog(registry):
    url, server = registry
    server.routes["/v2/_catalog"] = (200, b'{"repositories": ["m/x", "m/Bad\\nrepo"]}')
    server.routes["/v2/m/x/tags/list"] = (200, json.dumps({"tags": ["1.0\n", "2.0\r\n#SBATCH --x", "ok"]}).encode())
    images, warnings, _took = load(url, timeout=5.0)
    assert [image.uri for image in images] == ["docker://%s/m/x:ok" % url.split("://")[1]], images
    assert len([w for w in warnings if "not a valid" in w]) == 3, warnings


def test_escape_codes_never_reach_the_operators_terminal(registry):
    url, server = registry
    evil = "\x1b]0;owned\x07\x1b[2J\x9b31m"
    server.routes["/v2/_catalog"] = (200, json.dumps({"repositories": ["m/x", evil]}).encode())
    server.routes["/v2/m/x/tags/list"] = (200, json.dumps({"tags": [evil, "ok"]}).encode())
    server.routes["/v2/m/x/manifests/ok"] = (500, evil.encode())
    _images, warnings, _took = load(url, timeout=5.0)
    assert warnings and all(control_free(w) for w in warnings), warnings
    assert any("\\x1b" in w for w in warnings), warnings        # shown escaped, not hidden
