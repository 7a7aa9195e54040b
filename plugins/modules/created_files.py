#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: created_files
short_description: Record the files modak created in a directory, and remove only those
version_added: "0.2.0"
description:
  - Keeps C(modak-created.json) in O(path), which lists each file modak wrote there with the SHA-256 of what it
    wrote, and whether modak made the directory (C(plugins/module_utils/created.py)). The TOSCA operations record
    what their create wrote, and their delete removes only that.
  - O(state=check) fails when one of O(names) is in O(path) and is not recorded, a file modak did not create that
    a create must not overwrite; it lists in RV(theirs) what O(path) holds that modak did not create.
  - O(state=present) records O(names); with O(make_directory), it first makes O(path) (0700) unless it is there,
    in one step, and records whether it made it.
  - O(state=absent) removes the recorded files of O(names) (every recorded file when O(names) is empty) that still
    hold what modak wrote (an edited one stays, and is listed in RV(kept)), the record once it lists nothing else
    (another create's files in a shared directory stay recorded), and the directory when modak made it and nothing
    else is left.
options:
  path:
    description: The directory (on the host the module runs on).
    type: path
    required: true
  names:
    description: Plain file names of O(path) (for O(state=check), O(state=present) and O(state=absent)).
    type: list
    elements: str
    default: []
  job_name:
    description: With O(state=check), the job script of this job name (whatever the scheduler's file extension)
      must not be a file modak did not create either.
    type: str
  directory_created:
    description: With O(state=present), modak made O(path) (then O(state=absent) removes it when it is empty).
    type: bool
    default: false
  once:
    description:
      - With O(state=present), a name recorded already keeps the hash it was recorded with, so that a file modak
        wrote once (a job's output, recorded by the task that saw the job end) and that was changed since is not
        taken for modak's by a later task.
    type: bool
    default: false
  make_directory:
    description:
      - With O(state=present), make O(path) (0700 whatever the umask, its missing parents too) unless it is there,
        and record that modak made it when this task did (a directory that someone else made meanwhile is never
        taken for modak's).
      - O(path), made or found, must be the user's (or root's) and closed to others (written by others only with
        the sticky bit or by a trusted group, as docs/containers.md says for image directories), since a job script
        placed there is submitted by its path; otherwise the task fails.
    type: bool
    default: false
  state:
    description: C(check), C(present) or C(absent), as above.
    type: str
    choices: [check, present, absent]
    default: present
attributes:
  check_mode:
    support: full
    description: Can run in check mode and return changed status prediction without modifying target.
  diff_mode:
    support: none
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
  platform:
    support: full
    platforms: posix
    description: Target OS/families that can be operated against.
extends_documentation_fragment:
  - sodalite.modak.examples
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
- name: Refuse to overwrite a file modak did not write
  sodalite.modak.created_files:
    path: out
    names: [job.dsl.yaml]
    state: check

- name: Make the job directory unless it is there, and record whether this task made it
  sodalite.modak.created_files:
    path: /scratch/alice/train
    make_directory: true
  register: made

- name: Remove what modak created in out, and nothing else
  sodalite.modak.created_files:
    path: out
    state: absent
"""

RETURN = r"""
removed:
  description: The paths removed (O(state=absent)).
  returned: always
  type: list
  elements: str
  sample: [/srv/modak/job.dsl.yaml]
kept:
  description: Recorded files left in place because they changed since modak wrote them (O(state=absent)).
  returned: always
  type: list
  elements: str
  sample: []
directory_created:
  description: Whether the record of O(path) says that modak made it (O(state=present)).
  returned: always
  type: bool
  sample: true
theirs:
  description: The names in O(path) that modak did not create (O(state=check)).
  returned: always
  type: list
  elements: str
  sample: [notes.txt]
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils import created
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError

ARGUMENT_SPEC = dict(
    path=dict(type="path", required=True),
    names=dict(type="list", elements="str", default=[]),
    directory_created=dict(type="bool", default=False),
    make_directory=dict(type="bool", default=False),
    once=dict(type="bool", default=False),
    job_name=dict(type="str"),
    state=dict(type="str", choices=["check", "present", "absent"], default="present"),
)


def run(params, check_mode):
    """The module's result for ``params``."""
    directory = os.path.abspath(params["path"])
    if params["state"] == "check":
        names = list(params["names"]) + (created.job_script_names(params["job_name"]) if params["job_name"] else [])
        theirs = created.foreign(directory, names)
        if theirs:
            msg = "refusing to overwrite %s in %s: modak did not create it (move it away, or choose another job " \
                  "name)" % (", ".join(theirs), directory)
            return dict(failed=True, removed=[], kept=[], theirs=created.theirs(directory), msg=msg,
                        directory_created=False)
        return dict(changed=False, removed=[], kept=[], theirs=created.theirs(directory), directory_created=False)
    if params["state"] == "present":
        made = params.get("make_directory") and created.make_directory(directory, check_mode)
        if made and check_mode:
            return dict(changed=True, removed=[], kept=[], theirs=[], directory_created=True)
        changed = created.record(directory, params["names"], params["directory_created"] or made, check_mode,
                                 once=params.get("once", False))
        return dict(changed=changed or bool(made), removed=[], kept=[], theirs=[],
                    directory_created=created.load(directory)["directory_created"] or bool(made))
    removed, kept = created.remove(directory, params["names"] or None, check_mode)
    return dict(changed=bool(removed), removed=removed, kept=kept, theirs=[], directory_created=False)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = run(module.params, module.check_mode)
    except ModakError as exc:
        module.fail_json(msg=str(exc))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot use the record of %s: %s" % (module.params["path"], exc))
    if result.get("failed"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
