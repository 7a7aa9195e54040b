# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which cached or staged images a job runs: the trust model of docs/containers.md, as the job's shell lines.

A cached image is run only when nobody but the user (and root) can change it, nor swap it for another between the
check and the launch, as sshd's StrictModes checks ``~/.ssh``:

- the image's directory is resolved once (``cd -P``, ``pwd -P``) and ``$IMAGE`` names the image there: the launch
  uses exactly the path that was checked;
- the check of the image is the last test before the launch: the image is fetched when missing (or the job stops),
  then checked, then launched, and a missing image fails the check (before, a missing image passed and the test
  that decided the launch came after it: an image another user created in between was launched); a fetch writes
  into the image's directory only once its path has passed the check;
- every directory from ``/`` down to the image's is root's or the user's, and others may write it only where they
  cannot rename what is not theirs (the sticky bit) or where the group is trusted; with that no one else can
  rename a directory of the path or the image, so the image checked is the image launched;
- the image is the user's and written by nobody else (a trusted group aside); inside an image directory every
  entry is the user's, and others write only its sticky directories (its /tmp) or, for a trusted group, group
  -writable files (Debian's /var/mail, /var/log/wtmp, which an unprivileged conversion gives the user's group).

A trusted group is the user's private group (the primary group named as the user, with no other member listed and
no other account's primary group in the passwd database: User Private Groups, as useradd makes them; an account
made with ``useradd -g <user>`` is in the group without being listed) or a group the site lists in
``MODAK_TRUSTED_GROUPS`` (names or gids, separated by spaces). A shared primary group (``users``) is not trusted: its
members are other users.
"""

from __future__ import annotations

# the functions the check calls; defined where the check is (a job script, a stage script)
_FUNCTIONS = r"""modak_trusted_gids() {  # the user's private group, the site's trusted groups
  local me entry others group
  me="$(id -un 2>/dev/null || true)"
  entry="$(getent group "$(id -g)" || true)"
  if [ -n "$me" ] && [ "${entry%%:*}" = "$me" ] && { [ -z "${entry##*:}" ] || [ "${entry##*:}" = "$me" ]; }; then
    # and nobody else's primary group (useradd -g): a group lists only its supplementary members
    others="$(getent passwd | awk -F: -v u="$(id -u)" -v g="$(id -g)" '$4 == g && $3 != u' || echo unknown)"
    [ -n "$others" ] || id -g
  fi
  for group in ${MODAK_TRUSTED_GROUPS:-}; do getent group "$group" | cut -d: -f3 || true; done
}
modak_acl_writers() {  # $1: a path; $2: -R for what is under it too, self for the object itself (no sticky pass);
  local me trusted recursive  # prints $1 when a POSIX ACL lets another user or an untrusted group write it (each entry
  if [ "${2:-}" != -R ]; then  # with the mask: its effective right, acl(5))
    # shellcheck disable=SC2012  # ls -ld marks an ACL with + after the mode, which no other common tool shows
    [ "$(ls -ld -- "$1" 2>/dev/null | cut -c11)" = + ] || return 0
    # a directory above: sticky, others rename only what is theirs
    if [ "${2:-}" != self ] && [ -d "$1" ] && [ -k "$1" ]; then return 0; fi
    if ! command -v getfacl >/dev/null; then echo "$1 (an ACL, and no getfacl to read it)"; return 0; fi
  elif ! command -v getfacl >/dev/null; then
    return 0                                           # inside an image: read where getfacl is there
  fi
  me="$(id -u)"
  trusted=" $(modak_trusted_gids | tr '\n' ' ') "
  recursive=()
  [ "${2:-}" != -R ] || recursive=(-R)
  getfacl -spn "${recursive[@]}" -- "$1" 2>/dev/null | awk -v me="$me" -v path="$1" -v trusted="$trusted" '
    BEGIN { RS = ""; FS = "\n" }
    { masked = 0; maskw = 0; found = 0; gid = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^# group: /) gid = substr($i, 10)
        split($i, f, ":")
        if (f[1] == "mask") { masked = 1; maskw = substr(f[3], 2, 1) == "w" }
      }
      for (i = 1; i <= NF; i++) {
        split($i, f, ":")
        if (f[1] == "mask" || substr(f[3], 2, 1) != "w") continue
        if (f[1] == "user" && f[2] != "" && f[2] != me && f[2] != "0") found = 1
        if (f[1] == "group" && index(trusted, " " (f[2] == "" ? gid : f[2]) " ") == 0) found = 1
      }
      if (found && (!masked || maskw)) { print path; exit } }'
}
modak_untrusted_dirs() {  # $1: a directory, resolved; prints it and each one above it where others may rename
  local uid dir gid trusted=(-false)  # what is not theirs (not root's or the user's; others or an untrusted group
  uid="$(id -u)"                      # write it without the sticky bit)
  for gid in $(modak_trusted_gids); do trusted+=(-o -gid "$gid"); done
  dir="$1"
  while :; do
    find "$dir" -maxdepth 0 \( -type l -o ! \( -uid 0 -o -uid "$uid" \) -o \( -perm -002 ! -perm -1000 \) \
      -o \( -perm -020 ! -perm -1000 ! \( "${trusted[@]}" \) \) \) -print
    modak_acl_writers "$dir"
    [ "$dir" != / ] && [ "$dir" != . ] || break
    dir="$(dirname -- "$dir")"
  done
}"""
_IMAGE_FUNCTION = r"""modak_untrusted() {  # $1: an image, its directory resolved; prints what others may change, or that it is missing
  local uid gid trusted=(-false)  # $2: "before-fetch": no image yet is fine, and its files are checked after
  if [ ! -d "$(dirname -- "$1")" ]; then echo "$1 (missing)"; return 0; fi
  uid="$(id -u)"
  for gid in $(modak_trusted_gids); do trusted+=(-o -gid "$gid"); done
  modak_untrusted_dirs "$(dirname -- "$1")"
  if [ ! -e "$1" ] && [ ! -L "$1" ]; then [ "${2:-}" = before-fetch ] || echo "$1 (missing)"; return 0; fi
  find "$1" -maxdepth 0 \( -type l -o ! -uid "$uid" -o -perm -002 -o \( -perm -020 ! \( "${trusted[@]}" \) \) \) -print
  modak_acl_writers "$1" self
  [ "${2:-}" != before-fetch ] || return 0
  find "$1" -mindepth 1 ! -type l \( ! -uid "$uid" -o \( -perm /022 ! \( -type d -perm -1000 \) \
    \( -perm -002 -o ! \( "${trusted[@]}" \) \) \) \) -print -quit || echo "$1 (not all of it could be read)"
  modak_acl_writers "$1" -R
}"""


def resolve_functions(directories_only=False):
    """The check's shell functions (``modak_trusted_gids``, ``modak_untrusted_dirs``, and ``modak_untrusted`` unless
    ``directories_only``), as lines."""
    return (_FUNCTIONS if directories_only else _FUNCTIONS + "\n" + _IMAGE_FUNCTION).split("\n")


def resolve_lines(variable="IMAGE"):
    """The check's functions, and lines that resolve ``$variable``'s directory once: the fetch, the check and the
    launch all use that path."""
    var = '"$%s"' % variable
    return resolve_functions() + [
        'if MODAK_RESOLVED="$(cd -P -- "$(dirname -- %s)" 2>/dev/null && pwd -P)"; then  # the path launched' % var,
        '  %s="${MODAK_RESOLVED%%/}/$(basename -- %s)"' % (variable, var),
        "fi",
    ]


def _refuse_lines(variable, what):
    var = '"$%s"' % variable
    return [
        'MODAK_UNTRUSTED="$(modak_untrusted %s%s || echo "$%s (not checked)")"' % (var, what, variable),
        'if [ -n "$MODAK_UNTRUSTED" ]; then',
        '  echo "modak: $%s is not this user'"'"'s own image, or others may change it or its directory'
        ' ($MODAK_UNTRUSTED): not run (use an image directory of your own, see docs/containers.md)" >&2' % variable,
        "  exit 1",
        "fi",
    ]


def before_fetch_lines(variable="IMAGE"):
    """Lines that stop the job, before a fetch writes into the image's directory (after ``resolve_lines``), when
    others may change a directory of ``$variable``'s path, or when what is already there is not the user's own
    (a link, another user's); no image yet is fine, and the files inside an image are left to the check before
    the launch (``before_launch_lines``, once)."""
    return _refuse_lines(variable, " before-fetch")


def before_launch_lines(variable="IMAGE"):
    """Lines that stop the job when there is no image at ``$variable``, or anybody but the user, root or a trusted
    group may change it or swap it (see above): the last test before the launch (after ``resolve_lines`` and any
    fetch), so nothing another user does after it changes what is launched."""
    return [
        'if [ ! -e "$%s" ] && [ ! -L "$%s" ]; then  # and modak_untrusted refuses one missing when it looks' % (
            variable, variable),
        '  echo "modak: no image at $%s: not run" >&2' % variable,
        "  exit 1",
        "fi",
    ] + _refuse_lines(variable, "")


def trust_lines(variable="IMAGE"):
    """Lines that resolve ``$variable``'s directory once and stop the job when there is no image there, or anybody
    but the user, root or a trusted group may change the image or swap it (see above)."""
    return resolve_lines(variable) + before_launch_lines(variable)


def workdir_lines(what):
    """Lines that stop the job unless others may rename nothing in its working directory nor above it (the trust
    model above, for directories), before the job makes ``what`` there with mktemp and writes it by its name: in a
    directory of a group the site does not trust a member renamed the new file away and put her own at the name."""
    return resolve_functions(directories_only=True) + [
        '# the directory checked is the one the files are made in (its physical path: no link on the way)',
        'MODAK_WORKDIR="$(pwd -P)"',
        'MODAK_UNTRUSTED="$(modak_untrusted_dirs "$MODAK_WORKDIR" || echo "$MODAK_WORKDIR (not checked)")"',
        'if [ -n "$MODAK_UNTRUSTED" ]; then',
        '  echo "modak: others may rename files in the job'"'"'s working directory $PWD or above it ($MODAK_UNTRUSTED),'
        ' where the job writes %s: not run (use a directory of your own, or one the site trusts: '
        'MODAK_TRUSTED_GROUPS; docs/containers.md)" >&2' % what,
        "  exit 1",
        "fi",
    ]
