# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A catalog source that reads an OCI registry through the Distribution v2 HTTP API.

Repositories (``/v2/_catalog``), their tags (``/v2/<repo>/tags/list``), each tag's manifest and
its config blob; the config's ``modak.<attribute>`` labels (written by the recipe writers) become a
catalog entry, checked by the catalog's schema and turned into an ``Image``. Images without a
``modak.framework`` label are skipped. Basic and bearer (token) authentication; without credentials given,
those of the user's ``podman login``/``docker login`` (registry_auth.py); TLS is verified unless told otherwise.
``load`` never raises for an unreachable or misbehaving registry: it warns.

HTTP is requests' with urllib3's ``Retry`` (requests depends on urllib3, so both are wherever this runs): an
answer 429, 500, 502, 503 or 504, or a lost connection, is tried again, after the answer's ``Retry-After`` or an
exponential backoff, never past the request's deadline (DeadlineRetry).

A registry is input like any other: every request has a total deadline (a worker thread, so a trickling
answer cannot stretch it), answers are read up to MAX_BODY bytes and must have the expected JSON shape,
at most MAX_REPOSITORIES repositories, MAX_TAGS tags per repository and MAX_IMAGES images are read,
repository names, tags and digests must be valid OCI references (anything else is skipped with a warning,
so no line break can reach a job script), and warnings show control characters escaped.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time

from ansible_collections.sodalite.modak.plugins.module_utils import catalog, registry_auth
from ansible_collections.sodalite.modak.plugins.module_utils import labels as label_names
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError, ModakError, printable as _printable

try:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.exceptions import InvalidHeader
    from urllib3.util.retry import Retry
except ImportError:  # pragma: no cover - reported by the module
    requests = HTTPAdapter = None
    InvalidHeader, Retry = ValueError, object

MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
])
PREFIX = label_names.PREFIX
LISTS = ("cpu_features", "compilers", "math")
SCALARS = ("name", "framework", "version", "kind", "build", "arch", "isa", "accelerator", "cuda", "rocm", "app")
_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')
# OCI distribution spec: repository path components, tags, digests (lengths bounded before matching)
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*\Z")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\Z")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}\Z")
MAX_BODY = 8 * 1024 * 1024        # bytes of one answer
MAX_REPOSITORIES = 200
MAX_TAGS = 50                     # per repository, newest names last: the last MAX_TAGS in sorted order
MAX_IMAGES = 200
LOAD_BUDGET = 10                  # the whole discovery may take LOAD_BUDGET x timeout
RETRY_STATUSES = (429, 500, 502, 503, 504)   # answers tried again (urllib3 Retry), as registry clients do
RETRIES = 3                       # tries after the first, all within the request's deadline
BACKOFF_S = 0.5                   # urllib3's backoff_factor: 0, 1, 2 s between tries without Retry-After
TOKEN_CLIENT_ID = "modak"         # OAuth2 client_id of an identity token's refresh (the distribution token spec)


class RegistryError(ModakError):
    """The registry answered badly or could not be reached."""


def printable(text, limit=300):
    """``text`` for a terminal: control characters (C0, DEL, C1, line and bidi separators) escaped, length bounded."""
    return _printable(text, limit)


def valid_repository(name):
    return isinstance(name, str) and 0 < len(name) <= 255 and all(_COMPONENT.match(c) for c in name.split("/"))


def valid_tag(tag):
    return isinstance(tag, str) and len(tag) <= 128 and bool(_TAG.match(tag))


def valid_digest(digest):
    return isinstance(digest, str) and len(digest) == 71 and bool(_DIGEST.match(digest))


class DeadlineRetry(Retry):
    """urllib3's Retry that never sleeps past ``deadline`` (a time.monotonic() value, set per request): a wait, the
    answer's Retry-After or the backoff, that would end after it raises RegistryError at once, so that retries stay
    within the request's total deadline and the error says why. A Retry-After that is no number or date counts as
    absent (the backoff applies)."""

    deadline = None

    def new(self, **kw):
        retry = super(DeadlineRetry, self).new(**kw)
        retry.deadline = self.deadline
        return retry

    def sleep(self, response=None):
        wait = None
        if self.respect_retry_after_header and response is not None:
            try:
                wait = self.get_retry_after(response)
            except InvalidHeader:
                wait = None
        asked = bool(wait)
        wait = wait or self.get_backoff_time()
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and wait >= left:
            status = getattr(response, "status", None)
            error = getattr(self.history[-1], "error", None) if self.history else None
            raise RegistryError("%s; trying again after %g s%s would pass the request's deadline (%.3g s left)" % (
                "answered %s" % status if status else "cannot reach the registry (%s)" % error.__class__.__name__,
                wait, " (its Retry-After)" if asked else "", max(left, 0)))
        if wait > 0:
            time.sleep(wait)


def http_session():
    """(requests.Session, its DeadlineRetry): GETs tried again (RETRIES times, BACKOFF_S) on RETRY_STATUSES and lost
    connections; the answer of the last try is returned (raise_on_status off), so that its status is reported."""
    retry = DeadlineRetry(total=RETRIES, backoff_factor=BACKOFF_S, status_forcelist=RETRY_STATUSES,
                          respect_retry_after_header=True, raise_on_status=False)
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session, retry


class _Answer(object):
    """A finished answer: status, headers, and the body read within the deadline and the size cap."""

    def __init__(self, status_code, headers, body):
        self.status_code, self.headers, self.body = status_code, headers, body

    def json(self, kind=dict):
        try:
            data = json.loads(self.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise RegistryError("the answer is not JSON")
        if not isinstance(data, kind):
            raise RegistryError("the answer is JSON but not an object")
        return data


def _abandon(response):
    """Cut the connection of an answer that ran out of time, so that its worker thread ends too (shutdown, not
    close: close would wait for the worker's blocked read). Without a socket the daemon thread is left behind."""
    sock = getattr(getattr(getattr(response, "raw", None), "_connection", None), "sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _read(response):
    """The body of a streamed response, refusing more than MAX_BODY bytes."""
    if not hasattr(response, "iter_content"):   # a scripted session (unit tests)
        try:
            return json.dumps(response.json()).encode("utf-8")
        except ValueError:
            return b""
    chunks, size = [], 0
    for chunk in response.iter_content(65536):
        size += len(chunk)
        if size > MAX_BODY:
            raise RegistryError("the answer is larger than %d bytes" % MAX_BODY)
        chunks.append(chunk)
    return b"".join(chunks)


def entry_from_labels(labels, uri, default_name):
    """Catalog entry (images.yaml form) from ``modak.*`` labels; None when the image carries none."""
    labels = labels or {}
    if PREFIX + "framework" not in labels:
        return None
    entry = {"uri": uri, "name": labels.get(PREFIX + "name") or default_name}
    for key in SCALARS:
        if key != "name" and labels.get(PREFIX + key):
            entry[key] = labels[PREFIX + key]
    for key in LISTS:
        if labels.get(PREFIX + key):
            entry[key] = [v for v in labels[PREFIX + key].split(",") if v]
    if labels.get(PREFIX + "mpi"):
        entry["mpi"] = {"library": labels[PREFIX + "mpi"]}
        if labels.get(PREFIX + "mpi_version"):
            entry["mpi"]["version"] = labels[PREFIX + "mpi_version"]
        if labels.get(PREFIX + "mpi_pmi"):
            entry["mpi"]["pmi"] = labels[PREFIX + "mpi_pmi"]
    if labels.get(label_names.RECIPE_HASH):
        entry["labels"] = {label_names.RECIPE_HASH: labels[label_names.RECIPE_HASH]}
    return entry


def _sent_to(url):
    """(scheme, host) that requests sends a request for ``url`` to, lower case; (None, None) when it cannot."""
    try:
        sent = requests.compat.urlsplit(requests.Request("GET", url).prepare().url)
        return (sent.scheme or "").lower() or None, sent.hostname
    except (ValueError, requests.exceptions.RequestException):
        return None, None


class Registry(object):
    """A minimal Distribution v2 client (GET, and the token service's POST for an identity token).

    ``identity_token``: an OAuth2 refresh token (a ``docker login`` identity token) traded at the token service for
    bearer tokens; ``credentials_from`` says where the credentials came from, in messages."""

    def __init__(self, url, username=None, password=None, token=None, verify=True, timeout=10.0, session=None,
                 identity_token=None, credentials_from=None):
        if requests is None:
            raise RegistryError("the requests library is needed to read a registry")
        self.url = url.rstrip("/")
        if not re.match(r"^https?://[A-Za-z0-9.-]+(:\d+)?(/[A-Za-z0-9._/-]*)?\Z", self.url):
            raise RegistryError("registry url %r must be http(s)://host[:port]" % url)
        self.host = self.url.split("://", 1)[1].split("/", 1)[0]
        self.username, self.password, self.token = username, password, token
        self.identity_token, self.credentials_from = identity_token, credentials_from
        self.verify, self.timeout = verify, float(timeout)
        self.session, self._retry = (session, None) if session is not None else http_session()
        self.deadline = time.monotonic() + LOAD_BUDGET * self.timeout   # of the whole discovery
        self._tokens = {}  # scope -> bearer token from the token service
        self._bearer = False

    @staticmethod
    def _scope(path):
        """The token scope a GET of ``path`` needs (tokens are kept per scope)."""
        if path.startswith("/v2/_catalog"):
            return "registry:catalog:*"
        match = re.match(r"^/v2/(.+)/(?:tags|manifests|blobs)/", path)
        return "repository:%s:pull" % match.group(1) if match else ""

    def _call(self, url, method="GET", **kwargs):
        """GET (or POST) ``url`` within the total deadline ``timeout`` (every try, connect, headers and body
        together): the request runs in a worker thread that is abandoned, its connection closed, when the deadline
        passes; the retries do not sleep past it."""
        remaining = min(self.timeout, self.deadline - time.monotonic())
        if remaining <= 0:
            raise RegistryError("the registry %s was read for %g s, the limit for one discovery" % (
                self.url, LOAD_BUDGET * self.timeout))
        if self._retry is not None:
            self._retry.deadline = time.monotonic() + remaining
        send = self.session.post if method == "POST" else self.session.get
        box = {}

        def work():
            try:
                response = send(url, verify=self.verify, timeout=remaining, stream=True, **kwargs)
                box["response"] = response
                box["answer"] = _Answer(response.status_code, response.headers, _read(response))
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            finally:
                if "response" in box and hasattr(box["response"], "close"):
                    box["response"].close()

        worker = threading.Thread(target=work, name="modak-registry", daemon=True)
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            _abandon(box.get("response"))
            raise RegistryError("no complete answer within %g s" % remaining)
        if "error" in box:
            raise box["error"]
        return box["answer"]

    def _may_send_credentials(self, realm):
        """Credentials go to a token service over https, or over http only on the registry's own host (the one
        the operator named, any port): a registry cannot have them sent in clear text to another host. Both URLs
        are read as the request is sent: prepared by requests (which parses the host with urllib3) and read back,
        so that a realm whose text names the registry's host after its own (``http://other?@registry/``,
        ``http://other\\@registry/``) is taken for the host it goes to."""
        scheme, host = _sent_to(realm)
        return scheme == "https" or (scheme == "http" and host is not None and host == _sent_to(self.url)[1])

    def _fetch_token(self, challenge):
        params = dict(_CHALLENGE.findall(challenge))
        realm = params.get("realm")
        if not realm:
            raise RegistryError("the registry asked for a bearer token without naming its realm")
        # only what the token service needs: never the challenge's error="insufficient_scope"
        query = dict((k, params[k]) for k in ("service", "scope") if params.get(k))
        auth = (self.username, self.password) if self.username and not self.identity_token else None
        if (auth or self.identity_token) and not self._may_send_credentials(realm):
            raise RegistryError("refusing to send the credentials to the token service %s: plain HTTP to another "
                                "host than the registry's (%s); the token service must use https" % (realm, self.host))
        try:
            if self.identity_token:   # OAuth2 refresh-token grant (distribution's token spec), a POST
                form = dict(query, grant_type="refresh_token", refresh_token=self.identity_token,
                            client_id=TOKEN_CLIENT_ID)
                resp = self._call(realm, method="POST", data=form)
            else:
                resp = self._call(realm, params=query, auth=auth)
        except requests.exceptions.RequestException as exc:
            raise RegistryError("cannot reach the token service %s: %s" % (realm, exc.__class__.__name__))
        if resp.status_code in (400, 401):   # 400: an OAuth2 refresh token that is refused (invalid_grant)
            raise RegistryError("the token service %s refused the credentials%s (%d)" % (
                realm, self._from(), resp.status_code))
        if resp.status_code != 200:
            raise RegistryError("the token service %s answered %d" % (realm, resp.status_code))
        try:
            body = resp.json()
        except RegistryError:
            raise RegistryError("the token service %s did not answer JSON" % realm)
        token = (body.get("token") or body.get("access_token")) if isinstance(body, dict) else None
        if not token:
            raise RegistryError("the token service %s returned no token" % realm)
        return token

    def get(self, path, accept=None, params=None):
        scope = self._scope(path)
        for attempt in range(2):
            headers = {"Accept": accept} if accept else {}
            token = self._tokens.get(scope) or self.token
            if token:
                headers["Authorization"] = "Bearer %s" % token
            # basic credentials go to the registry only while it has not asked for bearer tokens
            auth = (self.username, self.password) if self.username and not token and not self._bearer else None
            try:
                resp = self._call(self.url + path, headers=headers, params=params, auth=auth)
            except requests.exceptions.SSLError as exc:
                raise RegistryError("TLS verification of %s failed (%s); give the CA or set validate_certs "
                                    "false for a test registry" % (self.url, exc.__class__.__name__))
            except requests.exceptions.RequestException as exc:
                raise RegistryError("cannot reach the registry %s: %s" % (self.url, exc.__class__.__name__))
            challenge = resp.headers.get("WWW-Authenticate", "")
            if resp.status_code == 401 and attempt == 0 and challenge.lower().startswith("bearer"):
                self._bearer = True
                self._tokens[scope] = self._fetch_token(challenge[len("bearer"):].strip())
                continue
            if resp.status_code == 401 and attempt == 1:
                raise RegistryError("the registry %s refused the token of its token service (401)" % self.url)
            if resp.status_code == 401:
                if not (self.username or self.token or self.identity_token):
                    raise RegistryError("the registry %s needs credentials (401): give a username and password or "
                                        "a token, or log in to %s with podman or docker login" % (self.url, self.host))
                raise RegistryError("the registry %s refused the credentials%s (401)" % (self.url, self._from()))
            if resp.status_code != 200:
                raise RegistryError("GET %s%s answered %d" % (self.url, path, resp.status_code))
            return resp
        raise RegistryError("the registry %s refused the token" % self.url)  # pragma: no cover

    def _from(self):
        return " of %s" % self.credentials_from if self.credentials_from else ""

    def repositories(self, limit=MAX_REPOSITORIES):
        names = self.get("/v2/_catalog", params={"n": limit}).json().get("repositories", [])
        if not isinstance(names, list):
            raise RegistryError("the catalog's repositories are not a list")
        return names

    def tags(self, repo):
        tags = self.get("/v2/%s/tags/list" % repo).json().get("tags") or []
        if not isinstance(tags, list):
            raise RegistryError("the tags of %s are not a list" % repo)
        return tags

    def labels(self, repo, tag):
        manifest = self.get("/v2/%s/manifests/%s" % (repo, tag), accept=MANIFEST_TYPES).json()
        if manifest.get("manifests"):  # an index: the amd64/linux image, else the first
            found = manifest["manifests"]
            if not isinstance(found, list) or not all(isinstance(m, dict) for m in found):
                raise RegistryError("the image index is malformed")
            chosen = next((m for m in found
                           if isinstance(m.get("platform"), dict) and m["platform"].get("architecture") == "amd64"),
                          found[0])
            if not valid_digest(chosen.get("digest")):
                raise RegistryError("the image index names no valid sha256 digest")
            manifest = self.get("/v2/%s/manifests/%s" % (repo, chosen["digest"]), accept=MANIFEST_TYPES).json()
        config = manifest.get("config")
        if config is not None and not isinstance(config, dict):
            raise RegistryError("the manifest's config is not an object")
        digest = (config or {}).get("digest")
        if not digest:
            return {}
        if not valid_digest(digest):
            raise RegistryError("the manifest's config digest is not a sha256 digest")
        blob = self.get("/v2/%s/blobs/%s" % (repo, digest)).json()
        if blob.get("config") is not None and not isinstance(blob["config"], dict):
            raise RegistryError("the image configuration is not an object")
        labels = (blob.get("config") or {}).get("Labels") or {}
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            raise RegistryError("the image's labels are not an object of strings")
        return labels


def discover(registry, repositories=None):
    """(entries, warnings) for every labelled image of the registry (within the caps)."""
    entries, warnings = [], []
    names = registry.repositories() if repositories is None else list(repositories)
    if len(names) > MAX_REPOSITORIES:
        warnings.append("registry %s lists %d repositories; read the first %d" % (
            registry.url, len(names), MAX_REPOSITORIES))
        names = names[:MAX_REPOSITORIES]
    read = 0
    for repo in names:
        if not valid_repository(repo):
            warnings.append("registry %s: skipped %r: not a valid repository name" % (registry.url, repo))
            continue
        try:
            tags = registry.tags(repo)
        except RegistryError as exc:
            warnings.append("registry %s: skipped repository %s: %s" % (registry.url, repo, exc))
            continue
        good = sorted(t for t in tags if valid_tag(t))
        for tag in [t for t in tags if not valid_tag(t)]:
            warnings.append("registry %s: skipped %s:%r: not a valid tag" % (registry.url, repo, tag))
        if len(good) > MAX_TAGS:
            warnings.append("registry %s: %s has %d tags; read the first %d" % (
                registry.url, repo, len(good), MAX_TAGS))
            good = good[:MAX_TAGS]
        for tag in good:
            if read >= MAX_IMAGES:
                warnings.append("registry %s: read the first %d images only" % (registry.url, MAX_IMAGES))
                return entries, warnings
            read += 1
            try:
                labels = registry.labels(repo, tag)
            except RegistryError as exc:
                warnings.append("registry %s: skipped %s:%s: %s" % (registry.url, repo, tag, exc))
                continue
            name = re.sub(r"[^A-Za-z0-9_.+-]", "-", "%s-%s" % (repo, tag))
            entry = entry_from_labels(labels, "docker://%s/%s:%s" % (registry.host, repo, tag), name)
            if entry is not None:
                entries.append(entry)
    return entries, warnings


def load(url, username=None, password=None, token=None, validate_certs=True, timeout=10.0,
         repositories=None, fallback=None):
    """Images of the registry at ``url`` -> (list of Image, warnings).

    Entries failing the catalog schema are skipped with a warning; an unreachable registry gives a
    warning and ``fallback`` (the embedded catalog's images, when given). Without ``username`` or ``token``, the
    credentials of the user's podman/skopeo/docker login files for the registry's host are used (registry_auth)."""
    warnings = []
    try:
        registry = Registry(url, username, password, token, validate_certs, timeout)
        if not (username or password or token):
            found, warnings = registry_auth.find(registry.host, timeout=timeout)
            if found is not None:
                registry.username, registry.password = found.username, found.password
                registry.identity_token, registry.credentials_from = found.identity_token, found.source
        entries, said = discover(registry, repositories)
        warnings = warnings + said
    except (RegistryError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # whatever the registry answered, optimise goes on with the embedded catalog
        return list(fallback or ()), [printable(w, 600) for w in warnings] + [printable(
            "registry %s was not read (%s); using the embedded catalog" % (url, exc), 600)]
    images, warnings = _images(url, entries, warnings)
    return images, [printable(w, 600) for w in warnings]


def _images(url, entries, warnings):
    images, seen = [], set()
    for entry in entries:
        if entry["name"] in seen:
            warnings.append("registry %s: image name %s appears twice; kept the first" % (url, entry["name"]))
            continue
        try:
            image = catalog.ImageCatalog.from_data([entry], source=url).images[0]
        except CatalogError as exc:
            warnings.append("registry %s: skipped %s: %s" % (url, entry["uri"], str(exc).replace("\n", " ")))
            continue
        seen.add(entry["name"])
        images.append(image)
    return images, warnings
