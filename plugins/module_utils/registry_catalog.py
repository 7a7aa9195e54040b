# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A catalog source that reads an OCI registry through the Distribution v2 HTTP API.

Repositories (``/v2/_catalog``), their tags (``/v2/<repo>/tags/list``), each tag's manifest and
its config blob; the config's ``modak.<attribute>`` labels (written by the recipe writers) become a
catalog entry, checked by the catalog's schema and turned into an ``Image``. Images without a
``modak.framework`` label are skipped. Basic and bearer (token) authentication; TLS is verified
unless told otherwise. ``load`` never raises for an unreachable registry: it warns.
"""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils import catalog
from ansible_collections.sodalite.modak.plugins.module_utils import labels as label_names
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError, ModakError

try:
    import requests
except ImportError:  # pragma: no cover - reported by the module
    requests = None

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


class RegistryError(ModakError):
    """The registry answered badly or could not be reached."""


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
    if labels.get(label_names.RECIPE_HASH):
        entry["labels"] = {label_names.RECIPE_HASH: labels[label_names.RECIPE_HASH]}
    return entry


class Registry(object):
    """A minimal Distribution v2 client (GET only)."""

    def __init__(self, url, username=None, password=None, token=None, verify=True, timeout=10.0, session=None):
        if requests is None:
            raise RegistryError("the requests library is needed to read a registry")
        self.url = url.rstrip("/")
        if not re.match(r"^https?://[A-Za-z0-9.-]+(:\d+)?(/[A-Za-z0-9._/-]*)?\Z", self.url):
            raise RegistryError("registry url %r must be http(s)://host[:port]" % url)
        self.host = self.url.split("://", 1)[1].split("/", 1)[0]
        self.username, self.password, self.token = username, password, token
        self.verify, self.timeout = verify, timeout
        self.session = session or requests.Session()
        self._tokens = {}  # scope -> bearer token from the token service
        self._bearer = False

    @staticmethod
    def _scope(path):
        """The token scope a GET of ``path`` needs (tokens are kept per scope)."""
        if path.startswith("/v2/_catalog"):
            return "registry:catalog:*"
        match = re.match(r"^/v2/(.+)/(?:tags|manifests|blobs)/", path)
        return "repository:%s:pull" % match.group(1) if match else ""

    def _fetch_token(self, challenge):
        params = dict(_CHALLENGE.findall(challenge))
        realm = params.get("realm")
        if not realm:
            raise RegistryError("the registry asked for a bearer token without naming its realm")
        # only what the token service needs: never the challenge's error="insufficient_scope"
        query = dict((k, params[k]) for k in ("service", "scope") if params.get(k))
        auth = (self.username, self.password) if self.username else None
        try:
            resp = self.session.get(realm, params=query, auth=auth, verify=self.verify, timeout=self.timeout)
        except requests.exceptions.RequestException as exc:
            raise RegistryError("cannot reach the token service %s: %s" % (realm, exc.__class__.__name__))
        if resp.status_code == 401:
            raise RegistryError("the token service %s refused the credentials (401)" % realm)
        if resp.status_code != 200:
            raise RegistryError("the token service %s answered %d" % (realm, resp.status_code))
        try:
            body = resp.json()
        except ValueError:
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
                resp = self.session.get(self.url + path, headers=headers, params=params, auth=auth,
                                        verify=self.verify, timeout=self.timeout)
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
                if not (self.username or self.token):
                    raise RegistryError("the registry %s needs credentials (401)" % self.url)
                raise RegistryError("the registry %s refused the credentials (401)" % self.url)
            if resp.status_code != 200:
                raise RegistryError("GET %s%s answered %d" % (self.url, path, resp.status_code))
            return resp
        raise RegistryError("the registry %s refused the token" % self.url)  # pragma: no cover

    def repositories(self, limit=1000):
        return list(self.get("/v2/_catalog", params={"n": limit}).json().get("repositories") or [])

    def tags(self, repo):
        return list(self.get("/v2/%s/tags/list" % repo).json().get("tags") or [])

    def labels(self, repo, tag):
        manifest = self.get("/v2/%s/manifests/%s" % (repo, tag), accept=MANIFEST_TYPES).json()
        if manifest.get("manifests"):  # an index: the amd64/linux image, else the first
            chosen = next((m for m in manifest["manifests"]
                           if (m.get("platform") or {}).get("architecture") == "amd64"), manifest["manifests"][0])
            manifest = self.get("/v2/%s/manifests/%s" % (repo, chosen["digest"]), accept=MANIFEST_TYPES).json()
        digest = (manifest.get("config") or {}).get("digest")
        if not digest:
            return {}
        config = self.get("/v2/%s/blobs/%s" % (repo, digest)).json()
        return (config.get("config") or {}).get("Labels") or {}


def discover(registry, repositories=None):
    """(entries, warnings) for every labelled image of the registry."""
    entries, warnings = [], []
    for repo in repositories or registry.repositories():
        try:
            tags = registry.tags(repo)
        except RegistryError as exc:
            warnings.append("registry %s: skipped repository %s: %s" % (registry.url, repo, exc))
            continue
        for tag in sorted(tags):
            try:
                labels = registry.labels(repo, tag)
            except (RegistryError, ValueError) as exc:
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
    warning and ``fallback`` (the embedded catalog's images, when given)."""
    try:
        registry = Registry(url, username, password, token, validate_certs, timeout)
        entries, warnings = discover(registry, repositories)
    except (RegistryError, ValueError) as exc:
        return list(fallback or ()), ["registry %s was not read (%s); using the embedded catalog" % (url, exc)]
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
