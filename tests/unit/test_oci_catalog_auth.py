"""oci_catalog's authentication logic with a scripted HTTP session (the real registries are in
tests/integration/containers/test_registry_auth.py): tokens kept per scope, what goes to the token
service, and errors that are warnings and never carry the password."""

from __future__ import annotations

import pytest
import requests

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog

URL = "http://registry.test:5000"
REALM = "https://auth.test/token"   # credentials go to a token service of another host over https only
SECRET = "Pa55-unit-s3cret"


class Response(object):
    def __init__(self, status, body=None, headers=None):
        self.status_code, self.body, self.headers = status, body, headers or {}

    def json(self):
        if isinstance(self.body, Exception):
            raise self.body
        return self.body


class TokenSession(object):
    """A registry that wants a token per scope, and its token service."""

    def __init__(self, token_answer=None):
        self.calls = []
        self.token_answer = token_answer

    def get(self, url, headers=None, params=None, auth=None, verify=True, timeout=None, stream=False):
        self.calls.append({"url": url, "headers": dict(headers or {}), "params": dict(params or {}), "auth": auth})
        if url == REALM:
            if isinstance(self.token_answer, Exception):
                raise self.token_answer
            if self.token_answer is not None:
                return self.token_answer
            return Response(200, {"token": "tok:" + params["scope"]})
        path = url[len(URL):]
        scope = oci_catalog.Registry._scope(path)
        if (headers or {}).get("Authorization") != "Bearer tok:" + scope:
            challenge = 'Bearer realm="%s",service="svc",scope="%s"' % (REALM, scope)
            if (headers or {}).get("Authorization"):
                challenge += ',error="insufficient_scope"'
            return Response(401, {"errors": []}, {"WWW-Authenticate": challenge})
        if path.startswith("/v2/_catalog"):
            return Response(200, {"repositories": ["a", "b"]})
        return Response(200, {"name": path.split("/")[2], "tags": ["1"]})

    def token_requests(self):
        return [c for c in self.calls if c["url"] == REALM]


def test_scope_of_each_endpoint():
    scope = oci_catalog.Registry._scope
    assert scope("/v2/_catalog") == "registry:catalog:*"
    assert scope("/v2/modak/pytorch/tags/list") == "repository:modak/pytorch:pull"
    assert scope("/v2/modak/pytorch/manifests/2.6") == "repository:modak/pytorch:pull"
    assert scope("/v2/x/blobs/sha256:ab") == "repository:x:pull"


def test_tokens_are_kept_per_scope():
    session = TokenSession()
    reg = oci_catalog.Registry(URL, "modak", SECRET, session=session)
    assert reg.repositories() == ["a", "b"]
    assert reg.tags("a") == ["1"] and reg.tags("b") == ["1"]
    calls_before = len(session.calls)
    assert reg.tags("a") == ["1"] and reg.repositories() == ["a", "b"]
    # going back to a scope reuses its token: no 401, no token request
    assert len(session.calls) == calls_before + 2
    assert [c["params"] for c in session.token_requests()] == [
        {"service": "svc", "scope": "registry:catalog:*"}, {"service": "svc", "scope": "repository:a:pull"},
        {"service": "svc", "scope": "repository:b:pull"}]
    # the credentials go to the token service only, once the registry asked for tokens
    assert all(c["auth"] == ("modak", SECRET) for c in session.token_requests())
    assert all(c["auth"] is None for c in session.calls[1:] if c["url"] != REALM)


def test_the_challenge_error_is_not_sent_to_the_token_service():
    session = TokenSession()
    reg = oci_catalog.Registry(URL, "modak", SECRET, token="tok:registry:catalog:*", session=session)
    assert reg.repositories() == ["a", "b"]  # the given token is used as it is
    assert reg.tags("a") == ["1"]  # insufficient scope: a token for the repository
    assert [c["params"] for c in session.token_requests()] == [{"service": "svc", "scope": "repository:a:pull"}]


@pytest.mark.parametrize("answer, said", [
    (Response(401, {"errors": []}), "token service https://auth.test/token refused the credentials (401)"),
    (Response(500, {}), "token service https://auth.test/token answered 500"),
    (Response(200, ValueError("no JSON")), "did not answer JSON"),
    (Response(200, {"nothing": 1}), "returned no token"),
    (requests.exceptions.ConnectionError("refused, password %s" % SECRET), "cannot reach the token service"),
])
def test_token_service_failures_are_warnings_without_the_secret(answer, said):
    session = TokenSession(answer)
    with pytest.raises(oci_catalog.RegistryError) as err:
        oci_catalog.Registry(URL, "modak", SECRET, session=session).repositories()
    assert said in str(err.value) and SECRET not in str(err.value)


def test_load_turns_an_unreachable_token_service_into_a_warning(monkeypatch):
    session = TokenSession(requests.exceptions.ConnectionError("down"))
    monkeypatch.setattr(oci_catalog, "http_session", lambda: (session, None))
    images, warnings = oci_catalog.load(URL, "modak", SECRET, fallback=["embedded"])
    assert images == ["embedded"] and len(warnings) == 1
    assert "cannot reach the token service" in warnings[0] and SECRET not in warnings[0]


def test_anonymous_and_refused_are_told_apart():
    def basic_only(url, headers=None, params=None, auth=None, verify=True, timeout=None, stream=False):
        return Response(401, {}, {"WWW-Authenticate": 'Basic realm="r"'})

    session = TokenSession()
    session.get = basic_only
    with pytest.raises(oci_catalog.RegistryError, match="needs credentials"):
        oci_catalog.Registry(URL, session=session).repositories()
    with pytest.raises(oci_catalog.RegistryError, match="refused the credentials") as err:
        oci_catalog.Registry(URL, "modak", SECRET, session=session).repositories()
    assert SECRET not in str(err.value)
