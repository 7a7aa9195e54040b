"""The token service a registry names gets the credentials only over https or at the registry's own origin: a
registry (or whoever answers for it) cannot have them sent in clear text to another host. Real HTTP servers on
127.0.0.1 in the test process: the registry and, on another port, a token service reached as 127.0.0.1 (the
registry's host) or localhost (another host name) that records what it got."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog

SECRET = "Pa55-realm-s3cret"


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def handler_class(realm_of, seen):
    """A registry asking for a bearer token from ``realm_of()``, and the token service at /token."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self, status, body, headers=()):
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            auth = self.headers.get("Authorization") or ""
            if self.path.startswith("/token"):
                seen.append(auth)
                return self._answer(200, {"token": "t0k"})
            if auth != "Bearer t0k":
                return self._answer(401, {"errors": []}, [(
                    "WWW-Authenticate", 'Bearer realm="%s",service="svc",scope="registry:catalog:*"' % realm_of())])
            return self._answer(200, {"repositories": ["a"]})

    return Handler


@pytest.fixture
def servers():
    seen, state = [], {}
    token = serve(handler_class(lambda: "", seen))
    registry = serve(handler_class(lambda: state["realm"], seen))
    yield registry, token, state, seen
    for server in (registry, token):
        server.shutdown()
        server.server_close()


def test_credentials_never_go_in_clear_text_to_another_hosts_token_service(servers):
    registry, token, state, seen = servers
    state["realm"] = "http://localhost:%d/token" % token.server_address[1]    # another host name than the registry's
    client = oci_catalog.Registry("http://127.0.0.1:%d" % registry.server_address[1], "modak", SECRET, timeout=5)
    with pytest.raises(oci_catalog.RegistryError) as err:
        client.repositories()
    assert "plain HTTP" in str(err.value) and SECRET not in str(err.value)
    assert seen == []                                      # the token service was never asked


def test_the_token_service_of_the_registrys_own_host_gets_them(servers):
    registry, token, state, seen = servers
    state["realm"] = "http://127.0.0.1:%d/token" % token.server_address[1]
    client = oci_catalog.Registry("http://127.0.0.1:%d" % registry.server_address[1], "modak", SECRET, timeout=5)
    assert client.repositories() == ["a"]
    assert seen == ["Basic " + base64.b64encode(("modak:" + SECRET).encode()).decode()]


def test_an_anonymous_token_may_come_from_another_host(servers):
    registry, token, state, seen = servers
    state["realm"] = "http://localhost:%d/token" % token.server_address[1]
    client = oci_catalog.Registry("http://127.0.0.1:%d" % registry.server_address[1], timeout=5)
    assert client.repositories() == ["a"] and seen == [""]


def recording_server(seen):
    """A token service that records the Authorization header of every request, whatever its path."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(self.headers.get("Authorization") or "")
            data = json.dumps({"token": "t0k"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return serve(Handler)


@pytest.mark.parametrize("realm", ["http://localhost:%d?@127.0.0.1/token", "http://localhost:%d#@127.0.0.1/token",
                                   "http://localhost:%d\\@127.0.0.1/token", "http://localhost:%d/@127.0.0.1/token"])
def test_a_realm_that_names_the_registrys_host_after_its_own_still_gets_no_credentials(servers, realm):
    """The host was read from the realm with a split of the text, and the request went where requests (urllib3)
    reads the host: ``http://localhost:P?@127.0.0.1/`` passed as the registry's own host, and the credentials went
    in clear text to localhost. Now the realm's host is read by the parser that sends the request."""
    registry, _token, state, _seen = servers
    seen = []
    other = recording_server(seen)
    try:
        state["realm"] = realm % other.server_address[1]
        client = oci_catalog.Registry("http://127.0.0.1:%d" % registry.server_address[1], "modak", SECRET, timeout=5)
        with pytest.raises(oci_catalog.RegistryError) as err:
            client.repositories()
        assert SECRET not in str(err.value)
        assert not [auth for auth in seen if auth.startswith("Basic")]
    finally:
        other.shutdown()
        other.server_close()
