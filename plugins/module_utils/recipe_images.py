# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recipe-backed catalog entries: images that modak builds, and whether they are built yet.

A catalog entry with a ``recipe`` holds the recipe specification (model.RecipeSpec) its image is built
from, not a reference to somebody's registry. Its attributes are the recipe's (so the entry can only
promise what the build makes), and its ``uri`` is where the build pushes it: under the build
prefix (``docker://host[:port]/namespace`` of the user's registry, or an image directory for SIF
files), tagged with the recipe hash, so an image built from another recipe never answers for it.
``availability`` tells ``published`` (a reference somebody publishes), ``built`` (the recipe's image
is already at its uri) and ``to-build``.
"""

from __future__ import annotations

import os
import socket
import threading

from ansible_collections.sodalite.modak.plugins.module_utils import frameworks, image_refs
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError
from ansible_collections.sodalite.modak.plugins.module_utils.model import RecipeSpec
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec as recipe_model
from ansible_collections.sodalite.modak.plugins.module_utils.recipe.blocks import RecipeError

# the local registry of a login node; the optimise module's build_prefix replaces it
DEFAULT_PREFIX = "docker://localhost:5000/modak"
PREFIX = image_refs.BUILD_PREFIX
# what a recipe entry may say besides its recipe: everything else comes from the recipe
OVERRIDES = ("name", "recipe", "uri", "kind", "app", "build", "description", "legacy_code")
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
])


def _switch(framework, feature):
    """The DSL option of ``framework`` that asks for the graph compiler ``feature``."""
    known = frameworks.FRAMEWORKS.get(framework)
    for option, (switched, _description) in (known.switches.items() if known else ()):
        if switched == feature:
            return option
    raise CatalogError("%s has no option for the graph compiler %s" % (framework, feature))


def recipe_of(spec, base_image=None):
    """The Recipe of a RecipeSpec; ``base_image`` replaces the base of CPU recipes."""
    base = base_image if base_image and spec.accelerator in ("none", None) else None
    return recipe_model.from_spec(spec, base_image=base)


def check_prefix(prefix):
    if not PREFIX.match(prefix or ""):
        raise CatalogError("build prefix %r must be docker://host[:port]/namespace or an absolute directory" % prefix)
    return prefix.rstrip("/")


def build_uri(prefix, recipe):
    """Where the image of ``recipe`` is pushed: tagged (or named) with the first 12 digits of its hash."""
    prefix = check_prefix(prefix)
    if prefix.startswith("/"):
        return "%s/%s-%s.sif" % (prefix, recipe.name, recipe.sha256[:12])
    return "%s/%s:%s" % (prefix, recipe.name.lower(), recipe.sha256[:12])


def resolve(raw, prefix=DEFAULT_PREFIX, base_image=None, source="<memory>"):
    """A recipe entry -> (the catalog entry of the image its recipe builds (attributes, uri, recipe hash), its
    RecipeSpec)."""
    extra = sorted(set(raw) - set(OVERRIDES))
    if extra:
        raise CatalogError("catalog %s: image %s has a recipe, so its attributes come from the recipe; remove %s"
                           % (source, raw.get("name"), ", ".join(extra)))
    spec = RecipeSpec.from_dict(dict(raw["recipe"], **({"version": str(raw["recipe"]["version"])}
                                                       if "version" in raw["recipe"] else {})))
    try:
        if spec.framework:
            for feature in spec.compilers:
                _switch(spec.framework, feature)
        recipe = recipe_of(spec, base_image)
    except (RecipeError, CatalogError) as exc:
        raise CatalogError("catalog %s: no recipe can be made for image %s: %s" % (source, raw.get("name"), exc))
    entry = recipe.catalog_entry(raw.get("uri") or build_uri(prefix, recipe))
    for key in OVERRIDES:
        if key in raw and key != "uri":
            entry[key] = raw[key]
    return entry, spec


def _manifest_url(uri):
    """docker://host[:port]/repo:tag -> the registry's manifest URL (http on loopback, else https)."""
    match = image_refs.TAGGED.match(uri)
    if not match:
        return None
    host, repo, tag = match.groups()
    scheme = "http" if host.split(":")[0] in LOOPBACK or host.startswith("[::1]") else "https"
    return "%s://%s/v2/%s/manifests/%s" % (scheme, host, repo, tag)


def _address(url):
    """(host, port) of an http(s) URL made by _manifest_url."""
    scheme, _sep, rest = url.partition("://")
    host = rest.split("/", 1)[0]
    if host.startswith("["):
        name, _sep, port = host[1:].partition("]")
        port = port.lstrip(":")
    else:
        name, _sep, port = host.partition(":")
    return name, int(port) if port else (443 if scheme == "https" else 80)


def _loopback(url):
    return _address(url)[0] in ("localhost", "127.0.0.1", "::1")


def _manifest_status(url, timeout):
    """HTTP status of one HEAD request for a manifest, redirects not followed; ``timeout`` seconds to connect
    and for each read. urllib (the environment's proxies apply; a CA bundle named by REQUESTS_CA_BUNDLE or
    CURL_CA_BUNDLE is used as requests would) costs a fifth of the import time of requests, and this lookup runs
    in every optimise task."""
    import ssl  # pylint: disable=import-outside-toplevel
    import urllib.error  # pylint: disable=import-outside-toplevel
    import urllib.request  # pylint: disable=import-outside-toplevel

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            return None

    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None
    tls = urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=bundle))
    opener = urllib.request.build_opener(_NoRedirect, tls)
    try:
        with opener.open(urllib.request.Request(url, method="HEAD", headers={"Accept": MANIFEST_TYPES}),
                         timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _lookup(url, timeout):
    """(status, None) or (None, why) of the manifest lookup, all of it (name lookup, connect, request, answer)
    within a deadline of twice ``timeout`` seconds."""
    outcome = []

    def probe():
        try:
            if _loopback(url):
                # the default prefix is a registry on this host; when none listens, a refused connection says so
                # without loading an HTTP client
                socket.create_connection(_address(url), timeout=timeout).close()
            outcome.append((_manifest_status(url, timeout), None))
        except Exception as exc:  # pylint: disable=broad-except  # anything a registry answers ends as a reason
            reason = getattr(exc, "reason", None)   # URLError wraps the socket's error
            outcome.append((None, (reason if isinstance(reason, BaseException) else exc).__class__.__name__))

    worker = threading.Thread(target=probe, name="modak-manifest-lookup", daemon=True)
    worker.start()
    worker.join(2 * timeout)
    return outcome[0] if outcome else (None, "no answer within %g s" % (2 * timeout))


def is_built(uri, timeout=5.0):
    """(True/False, why) whether the image at ``uri`` exists: a file in the image directory, or a manifest in
    the registry (one request; ``timeout`` seconds to connect and then to read, twice that in all). An
    unreachable registry, or a server that does not answer as one, counts as not built, with the reason."""
    if uri.startswith("/"):
        return os.path.isfile(uri), "file %s %s" % (uri, "exists" if os.path.isfile(uri) else "is missing")
    url = _manifest_url(uri)
    if url is None:
        return False, "%s is not a registry reference modak can look up" % uri
    status, failure = _lookup(url, timeout)
    if failure is not None:
        return False, "registry of %s not reachable (%s)" % (uri, failure)
    if status == 200:
        return True, "%s is in its registry" % uri
    return False, "%s answered %s for %s" % (url.split("/v2/")[0], status, uri)


def availability(choice, timeout=5.0):
    """(availability, why) of a Choice: published, built, to-build, or None (your container, or no container)."""
    image = choice.image
    if image is not None and image.recipe:
        built, why = is_built(choice.uri, timeout)
        return ("built" if built else "to-build"), why
    if choice.source in ("catalog", "official"):
        return "published", "%s is a published reference" % choice.uri
    return None, None


def build_request(choice, base_image=None):
    """What the container_build role needs to build a recipe-backed choice: its recipe specification (the catalog's
    ``recipe`` form), its base image, the image name and the push target (none for a SIF in an image directory)."""
    spec = choice.image.recipe
    recipe = recipe_of(spec, base_image)
    uri = choice.uri
    local = uri.startswith("/")
    return {"recipe": spec.as_dict(), "base_image": recipe.base_image, "recipe_sha256": recipe.sha256,
            "image": uri if local else uri[len("docker://"):], "push_to": "" if local else uri}
