"""Whether a recipe's image is built: one HEAD request to a real (local) HTTP server answering like a registry."""

from __future__ import annotations

import http.server
import threading

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import recipe_images

TAG = "/v2/modak/pytorch/manifests/"


class Registry(http.server.BaseHTTPRequestHandler):
    """200 for the tag 'there', a redirect for 'moved', 404 otherwise; records the Accept header."""

    seen = []

    def do_HEAD(self):  # noqa: N802 - the http.server API
        self.seen.append((self.command, self.path, self.headers.get("Accept")))
        if self.path == TAG + "there":
            self.send_response(200)
        elif self.path == TAG + "moved":
            self.send_response(307)
            self.send_header("Location", TAG + "there")
        else:
            self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def registry():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "docker://127.0.0.1:%d/modak/pytorch" % server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_manifest_the_registry_has_means_built(registry):
    built, why = recipe_images.is_built(registry + ":there", timeout=5)
    assert built and "is in its registry" in why
    method, path, accept = Registry.seen[-1]
    assert (method, path) == ("HEAD", TAG + "there") and "application/vnd.oci.image.manifest.v1+json" in accept


def test_a_missing_manifest_means_to_build_with_the_status(registry):
    server = registry.replace("docker://", "http://").rsplit("/modak", 1)[0]
    assert recipe_images.is_built(registry + ":absent", timeout=5) == (
        False, "%s answered 404 for %s" % (server, registry + ":absent"))


def test_a_redirect_is_not_followed(registry):
    built, why = recipe_images.is_built(registry + ":moved", timeout=5)
    assert not built and "answered 307" in why


def _server(answer):
    """A TCP server on 127.0.0.1 that sends ``answer`` (None: says nothing) to each connection; its port."""
    import socket
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve():
        while True:
            try:
                conn, _addr = listener.accept()
            except OSError:
                return
            if answer is not None:
                conn.recv(4096)
                conn.sendall(answer)
                conn.close()
            else:
                threading.Timer(30, conn.close).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener


def test_a_server_that_does_not_speak_http_means_to_build_not_a_crash():
    listener = _server(b"SSH-2.0-OpenSSH_9.2\r\nnot http at all\r\n")
    try:
        built, why = recipe_images.is_built("docker://127.0.0.1:%d/modak/x:1" % listener.getsockname()[1], timeout=5)
    finally:
        listener.close()
    assert not built and "not reachable" in why


def test_a_registry_that_never_answers_is_given_up_within_the_deadline():
    import time
    listener = _server(None)
    try:
        started = time.monotonic()
        built, why = recipe_images.is_built("docker://127.0.0.1:%d/modak/x:1" % listener.getsockname()[1],
                                            timeout=0.5)
        took = time.monotonic() - started
    finally:
        listener.close()
    assert not built and "not reachable" in why and took < 2.5
