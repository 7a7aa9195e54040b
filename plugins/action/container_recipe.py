# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of sodalite.modak.container_recipe: the recipes are derived on the controller, the files go to
the host.

The DSL (dsl_file) is read and parsed on the controller, found as ansible.builtin.template finds its src, then in
the playbook's folder and the project directory (plugin_utils/controller_paths.py); only the
recipe files go to the host (plugin_utils/remote_files.py: the output_file module places each, atomically, only
when changed). With wheels, a directory of the host, the module runs on the host with the recipe specification
derived here (its O(recipe)): it places the wheels there.
"""

from __future__ import annotations

from ansible.module_utils.basic import missing_required_lib
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, files, site_profile
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.module_support import dsl_libraries
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.tasks import container_recipe as task
from ansible_collections.sodalite.modak.plugins.plugin_utils import controller_paths
from ansible_collections.sodalite.modak.plugins.plugin_utils.remote_files import RemoteDir

MODULE = "sodalite.modak.container_recipe"
# output_dir and wheels name directories of the host: '~' is expanded there, not on the controller
ARGUMENT_SPEC = dict(task.ARGUMENT_SPEC, output_dir=dict(type="str", required=True), wheels=dict(type="str"))


class ActionModule(ActionBase):
    """Derive the recipes on the controller; write them on the host."""

    TRANSFERS_FILES = True
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC,
                                                    required_one_of=task.REQUIRED_ONE_OF,
                                                    mutually_exclusive=task.MUTUALLY_EXCLUSIVE)
        for name, missing, error in dsl_libraries():
            if missing:
                return merge_hash(result, dict(failed=True, msg=missing_required_lib(name), exception=error))
        try:
            recipe_spec = task.spec_of(params, self._load_file, self._load_site)
            if params["wheels"]:
                return merge_hash(result, self._on_host(recipe_spec, task_vars))
            return merge_hash(result, self._write(params, recipe_spec, task_vars))
        except DslInvalid as exc:
            return merge_hash(result, dict(failed=True, msg=str(exc), problems=[p.as_dict() for p in exc.problems]))
        except ModakError as exc:
            return merge_hash(result, dict(failed=True, msg=str(exc)))
        except (IOError, OSError) as exc:
            return merge_hash(result, dict(failed=True, msg="cannot read dsl_file %s: %s" % (params["dsl_file"], exc)))
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)

    def _load_file(self, path):
        """A DSL file of the controller (decrypted when vault-encrypted), found as controller_paths finds it."""
        return self._controller_file(path, dsl.load_file)

    def _load_site(self, path):
        """The site profile file of the controller (O(site)), found and decrypted as the DSL file is."""
        return self._controller_file(path, lambda real: site_profile.load_file(real, path))

    def _controller_file(self, path, read):
        """``read(real path)`` of a controller file, found as template finds its src, then in the playbook's folder
        and the project directory (controller_paths); decrypted when vault-encrypted."""
        local = controller_paths.to_read(self._loader, self._task.get_search_path(), path)
        real = self._loader.get_real_file(local, decrypt=True)
        try:
            return read(real)
        finally:
            self._loader.cleanup_tmp_file(real)

    def _write(self, params, recipe_spec, task_vars):
        recipe, texts = generate.render(recipe_spec, params["formats"], params["base_image"])
        remote = RemoteDir(self, task_vars, params["output_dir"])
        changed, paths, diffs = False, {}, []
        for fmt in params["formats"]:
            filename, text = texts[fmt]
            files.check_filename(filename)
            written, paths[fmt], diff = remote.write(filename, text, generate.RECIPE_MODE)
            changed = changed or written
            if diff is not None and written:
                diffs.append(diff)
        out = generate.outcome(recipe, paths, changed)
        if self._task.diff:
            out["diff"] = diffs
        return out

    def _on_host(self, recipe_spec, task_vars):
        """The module on the host, which places the wheels of the host's directory, given the recipe
        specification derived here."""
        args = dict(self._task.args)
        for key in ("dsl", "dsl_file", "site", "site_profile"):      # the recipe was derived from them here
            args.pop(key, None)
        args["recipe"] = recipe_spec.as_dict()
        return self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
