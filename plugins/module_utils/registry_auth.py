# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry credentials a user already has: what ``podman login``, ``skopeo login``, ``buildah login`` and
``docker login`` wrote, looked up as containers/image (the library of podman, skopeo and buildah) looks them up.

Files, first one with credentials for the host wins (containers-auth.json(5)):

1. ``$REGISTRY_AUTH_FILE`` when set, and then no other file (podman's ``--authfile``);
2. ``$XDG_RUNTIME_DIR/containers/auth.json`` (``/run/containers/<uid>/auth.json`` without XDG_RUNTIME_DIR);
3. ``${XDG_CONFIG_HOME:-~/.config}/containers/auth.json``;
4. ``$DOCKER_CONFIG/config.json``, else ``~/.docker/config.json``;
5. ``~/.dockercfg`` (the legacy form: the ``auths`` map alone).

In one file: ``credHelpers[host]`` names a credential helper, and only that helper is asked; else the ``auths``
entry of the host (an exact key, then a key written as a URL, ``https://host/v1/``): ``auth`` is base64
``user:password``, ``identitytoken`` an OAuth2 refresh token for the registry's token service; an empty entry
(``{}``, the mark docker leaves when a helper holds the secret) is no credential; then docker's default store
``credsStore``. A helper is ``docker-credential-<name> get`` with the host on stdin, run with a timeout; it
answers ``{"Username", "Secret"}`` (Username ``<token>``: Secret is an identity token).

Credentials are keyed by registry host: a namespace key (``host/team``) is not used, since one discovery reads the
whole registry with one identity. Nothing here logs or returns a secret in a message: problems name the file or
the helper only.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import shutil

from ansible_collections.sodalite.modak.plugins.module_utils import commands
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CommandError, CommandTimeout

HELPER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")   # the part after docker-credential-
HELPER_TOKEN_USER = "<token>"                                  # docker-credential-helpers: Secret is a token
MAX_FILE = 1024 * 1024


class Credentials(object):
    """A username and password, or an identity token, and where they were found. Its repr shows no secret."""

    __slots__ = ("username", "password", "identity_token", "source")

    def __init__(self, username=None, password=None, identity_token=None, source=None):
        self.username, self.password, self.identity_token, self.source = username, password, identity_token, source

    def __repr__(self):
        return "Credentials(username=%r, source=%r)" % (self.username, self.source)


def auth_files(environ=None):
    """[(path, legacy)] in the order containers/image reads them; ``legacy`` files hold the ``auths`` map alone."""
    env = os.environ if environ is None else environ
    if env.get("REGISTRY_AUTH_FILE"):
        return [(env["REGISTRY_AUTH_FILE"], False)]
    home = env.get("HOME") or os.path.expanduser("~")
    runtime = env.get("XDG_RUNTIME_DIR")
    primary = os.path.join(runtime, "containers", "auth.json") if runtime else "/run/containers/%d/auth.json" % (
        os.getuid())
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    docker = os.path.join(env["DOCKER_CONFIG"] if env.get("DOCKER_CONFIG") else os.path.join(home, ".docker"),
                          "config.json")
    return [(primary, False), (os.path.join(config_home, "containers", "auth.json"), False), (docker, False),
            (os.path.join(home, ".dockercfg"), True)]


def find(host, environ=None, timeout=10.0):
    """(Credentials or None, warnings) for the registry ``host`` (``name[:port]``) from the user's login files."""
    warnings = []
    for path, legacy in auth_files(environ):
        try:
            content = _read_json(path)
        except ValueError as exc:
            warnings.append("registry credentials: skipped %s: %s" % (path, exc))
            continue
        if content is None:
            continue
        found = _in_file(host, path, content, legacy, timeout, environ, warnings)
        if found is not None:
            return found, warnings
    return None, warnings


def _read_json(path):
    """The file's JSON object; None when there is no such file; ValueError (no secret in it) when unreadable."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError("cannot be read (%s)" % (exc.strerror or exc.__class__.__name__))
    if len(raw) > MAX_FILE:
        raise ValueError("larger than %d bytes" % MAX_FILE)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError("not JSON")
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _in_file(host, path, content, legacy, timeout, environ, warnings):
    auths = content if legacy else content.get("auths") or {}
    helpers = {} if legacy else content.get("credHelpers") or {}
    if not isinstance(auths, dict) or not isinstance(helpers, dict):
        warnings.append("registry credentials: skipped %s: auths or credHelpers is not an object" % path)
        return None
    if host in helpers:
        return _from_helper(helpers[host], host, timeout, environ, warnings)
    entry = _entry(auths, host)
    if entry is not None:
        found = _decode(entry, path, host, warnings)
        if found is not None:
            return found
    store = None if legacy else content.get("credsStore")
    return _from_helper(store, host, timeout, environ, warnings) if store else None


def _entry(auths, host):
    """The ``auths`` entry of ``host``: its own key, else a key written as a URL (``https://host/v1/``)."""
    if isinstance(auths.get(host), dict):
        return auths[host]
    for key, value in auths.items():
        if isinstance(key, str) and isinstance(value, dict):
            bare = re.sub(r"^https?://", "", key)
            if bare != key and bare.split("/", 1)[0] == host:
                return value
    return None


def _decode(entry, path, host, warnings):
    token = entry.get("identitytoken") if isinstance(entry.get("identitytoken"), str) else None
    encoded = entry.get("auth")
    if not encoded or not isinstance(encoded, str):
        return Credentials(identity_token=token, source=path) if token else None
    try:
        user, sep, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, ValueError):
        sep = ""
    if not sep:   # the text is not shown: it may be a password
        warnings.append("registry credentials: %s: the auth of %s is not base64 user:password; skipped" % (path, host))
        return Credentials(identity_token=token, source=path) if token else None
    return Credentials(user, password.strip("\x00"), token, path)


def _from_helper(name, host, timeout, environ, warnings):
    """Ask ``docker-credential-<name> get`` for ``host``; None (with a warning unless it knows no credentials)."""
    said = "registry credentials: credential helper %r for %s" % (name, host)
    if not isinstance(name, str) or not HELPER_NAME.match(name):
        warnings.append("%s: not a helper name; skipped" % said)
        return None
    program = shutil.which("docker-credential-" + name, path=(environ or os.environ).get("PATH"))
    if program is None:
        warnings.append("%s: docker-credential-%s is not on PATH; skipped" % (said, name))
        return None
    runner = commands.ProcessRunner(timeout=timeout, env=environ)
    try:
        rc, out, err = runner.run([program, "get"], check=False, input_text=host)
    except CommandError as exc:
        timed_out = isinstance(exc, CommandTimeout)
        warnings.append("%s: %s; skipped" % (said, "no answer within %g s" % timeout if timed_out else "cannot run"))
        return None
    if rc != 0:
        if "credentials not found" not in (out + err).lower():   # docker-credential-helpers' own words
            warnings.append("%s: exit status %d; skipped" % (said, rc))   # its words may hold a secret
        return None
    try:
        answer = json.loads(out)
        user, secret = answer.get("Username"), answer.get("Secret")
    except (ValueError, AttributeError, RecursionError):
        user = secret = None
    if not isinstance(secret, str) or not secret or not isinstance(user, (str, type(None))):
        warnings.append("%s: no credentials in its answer; skipped" % said)
        return None
    source = "credential helper docker-credential-%s" % name
    if user == HELPER_TOKEN_USER:
        return Credentials(identity_token=secret, source=source)
    return Credentials(user, secret, None, source)
