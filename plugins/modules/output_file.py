#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: output_file
short_description: Place one file, given its content or a file of the host, into a directory of the managed host
version_added: "0.2.0"
description:
  - Writes O(content) as the file O(name) of O(output_dir) with the mode O(mode), atomically and only when the
    content or the mode differ; the collection's one placement (C(plugins/module_utils/files.py), C(place)). The
    action plugins of M(sodalite.modak.optimise) and M(sodalite.modak.container_recipe) place their files through
    it, and the roles their job and staging scripts.
  - Safe in a directory that other users can write. The directory is opened one component at a time, following a
    link only where no other user can have put it. The old file is opened once without following a link and, when
    only its mode differs, the mode is set on that descriptor. A new file is a fresh temporary file of the
    directory, its mode set on its descriptor, renamed over the path, so that a link there is replaced, never
    followed. A directory, or a link to one, at the path is refused.
  - With C(--diff), the old file is read without following a link and without blocking on a FIFO; anything else
    than a regular file shows as a line that says so.
  - With O(source) in place of O(content), the file is a copy of a file of the host that another user (a job) may
    control, such as a job's output before M(ansible.builtin.fetch) takes it. O(source) is opened once, its
    directories one component at a time (a link followed only where no other user can have put it) and the file
    without following a link, and copied from that descriptor; anything else than a regular file reached so fails.
options:
  output_dir:
    description:
      - Directory of the managed host (created when missing, 0700 whatever the umask). C(~) is expanded on the host;
        a relative path is taken in the directory the module runs in.
    type: path
    required: true
  name:
    description: The file's name, one plain name (letters, digits, C(_), C(.) and C(-); no C(/), no C(..)).
    type: str
    required: true
  content:
    description: The file's text. Exactly one of O(content) and O(source) is given.
    type: str
  source:
    description:
      - A file of the host to copy (see above). Nothing is placed when nothing is there (RV(placed) is C(missing)).
    type: path
  mode:
    description: The file's permission bits, an octal string such as C("0755").
    type: str
    default: "0644"
  secret_values:
    description:
      - Texts to mask wherever the host logs this module's call (its journal), O(content) included; the action
        plugins of C(sodalite.modak.optimise) give the DSL's secret values here.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Can run in check mode and return changed status prediction without modifying target.
  diff_mode:
    support: full
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
- name: Put a job script into the directory out
  sodalite.modak.output_file:
    output_dir: out
    name: job.sbatch
    content: "#!/bin/bash\nsrun hostname\n"
    mode: "0755"
"""

RETURN = r"""
path:
  description: The file's absolute path on the host.
  returned: always
  type: str
  sample: /home/user/modak-jobs/job.sbatch
placed:
  description: C(same) (nothing to do), C(mode) (the content was the same, the mode was set), C(changed) (written) or
    C(missing) (nothing at O(source)).
  returned: always
  type: str
  sample: changed
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError

ARGUMENT_SPEC = dict(
    output_dir=dict(type="path", required=True),
    name=dict(type="str", required=True),
    content=dict(type="str"),
    source=dict(type="path"),
    mode=dict(type="str", default="0644"),
    secret_values=dict(type="list", elements="str", no_log=True, default=[]),
)


def run(module):
    params = module.params
    try:
        mode = int(params["mode"], 8)
    except ValueError:
        module.fail_json(msg="mode %r is not an octal number" % params["mode"])
    directory = os.path.abspath(params["output_dir"])
    path = os.path.join(directory, params["name"])
    if params["source"] is not None:
        placed = files.place_from(directory, params["name"], params["source"], mode & 0o7777, module.check_mode)
        return dict(changed=placed is not None, path=path, placed=placed or "missing")
    before = files.read_for_diff(directory, params["name"]) if module._diff else None
    placed = files.place(directory, params["name"], params["content"], mode & 0o7777, module.check_mode)
    result = dict(changed=placed != files.SAME, path=path, placed=placed)
    if module._diff:
        result["diff"] = dict(before=before, after=params["content"], before_header=path, after_header=path)
    return result


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           mutually_exclusive=[("content", "source")], required_one_of=[("content", "source")])
    try:
        result = run(module)
    except ModakError as exc:
        module.fail_json(msg=str(exc))
    except (IOError, OSError) as exc:
        params = module.params
        module.fail_json(msg="cannot write %s into %s: %s" % (params["name"], params["output_dir"], exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
