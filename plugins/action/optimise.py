# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of sodalite.modak.optimise: the optimiser runs on the controller, the job script goes to the host.

The DSL (dsl_file), the catalog (catalog, else the collection's catalog/images.yaml) and the site profile (site)
are read on the controller, found as ansible.builtin.template finds its src, then in the playbook's folder and the
project directory (plugin_utils/controller_paths.py); the registries and the build lookups are reached from
the controller. Only the job script goes to the host (plugin_utils/remote_files.py: the output_file module places
it, atomically, only when changed; output_dir defaults to the DSL's target.work_dir, else ~/modak-jobs). With
results_store, the records and the hardware class are the host's: the DSL and the catalog read here are handed
to the module, which then runs on the host. So does a DSL with job.placement: the host's scheduler says when the job
would start in each partition.
"""

from __future__ import annotations

from ansible.module_utils.basic import missing_required_lib
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.sodalite.modak.plugins.module_utils import catalog, dsl, files, pipeline, secrets, site_profile
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.module_support import dsl_libraries
from ansible_collections.sodalite.modak.plugins.module_utils.tasks import optimise as task
from ansible_collections.sodalite.modak.plugins.plugin_utils import controller_paths
from ansible_collections.sodalite.modak.plugins.plugin_utils.remote_files import RemoteDir

MODULE = "sodalite.modak.optimise"
# output_dir names a directory of the host: '~' is expanded there, not on the controller
ARGUMENT_SPEC = dict(task.ARGUMENT_SPEC, output_dir=dict(type="str"))


def _warm():
    """Build what every task needs (the DSL validator, archspec's CPU data, the collection's catalog) once, when
    ansible-playbook loads this plugin in its own process: the worker it forks for each task inherits them."""
    try:
        pipeline.optimise(_WARM_DSL, catalog.embedded())
    except (ModakError, ImportError, OSError):
        pass             # a missing library or catalog is reported by the task that needs it


_WARM_DSL = {"job": {"application": {"executable": "true"}, "optimisation": {
    "app_type": "ai_training", "opt_build": {"cpu_type": "x86"},
    "app_type-ai_training": {"config": {"ai_framework": "pytorch"}, "ai_framework-pytorch": {"version": "2.5"}}}}}
_warm()


class ActionModule(ActionBase):
    """Optimise on the controller; write the job script on the host."""

    TRANSFERS_FILES = True
    _supports_check_mode = True
    _read_document = None      # the DSL file, once read

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC,
                                                    required_one_of=task.REQUIRED_ONE_OF,
                                                    mutually_exclusive=task.MUTUALLY_EXCLUSIVE)
        try:
            if params["results_store"] or self._places(params):
                return merge_hash(result, self._on_host(params, task_vars))
            return merge_hash(result, self._optimise(params, task_vars))
        except DslInvalid as exc:
            return merge_hash(result, dict(failed=True, msg=str(exc), problems=[p.as_dict() for p in exc.problems]))
        except ModakError as exc:
            return merge_hash(result, dict(failed=True, msg=str(exc)))
        except (IOError, OSError) as exc:
            return merge_hash(result, dict(failed=True, msg="cannot read: %s" % exc))
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)

    def _read(self, path, read):
        """``read(real path)`` of a controller file, decrypted when it is vault-encrypted."""
        local = controller_paths.to_read(self._loader, self._task.get_search_path(), path)
        real = self._loader.get_real_file(local, decrypt=True)
        try:
            return read(real)
        finally:
            self._loader.cleanup_tmp_file(real)

    def _document(self, params):
        if params["dsl"] is not None:
            return params["dsl"]
        if self._read_document is None:
            self._read_document = self._read(params["dsl_file"], dsl.load_file)
        return self._read_document

    def _places(self, params):
        """Whether the DSL asks for job.placement (its partitions' start estimates come from the host)."""
        document = self._document(params)
        job = document.get("job") if isinstance(document, dict) else None
        return isinstance(job, dict) and bool(job.get("placement"))

    def _site(self, params):
        """The task's site profile: O(site) read here as the DSL file is, named as the task names it."""
        def load(path):
            return self._read(path, lambda real: site_profile.load_file(real, path))
        return site_profile.of_task(params, load)

    def _optimise(self, params, task_vars):
        missing = self._missing(params)
        if missing:
            return missing
        document = self._document(params)
        if params["image_dir"]:
            document = dsl.with_target_default(document, "image_dir", params["image_dir"])

        def read_catalog(path, **build):
            return self._read(path, lambda real: catalog.ImageCatalog.from_file(real, **build))

        images, catalog_warnings = task.catalog_of(params, read_catalog)
        result = pipeline.optimise(document, images, site=self._site(params))
        result.warnings[:0] = catalog_warnings
        name = result.script.filename
        files.check_filename(name)
        remote = RemoteDir(self, task_vars, task.output_dir_of(params, result))
        changed, path, diff = remote.write(name, result.script.text, task.JOB_SCRIPT_MODE, task.secret_values(result))
        out = task.outcome(params, result, path, changed, diff)
        if result.warnings:
            out["warnings"] = list(result.warnings)
        return out

    @staticmethod
    def _missing(params):
        """The failure of a task whose library is missing on the controller, else None."""
        needed = list(dsl_libraries())
        if params["registries"]:
            from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog  # pylint: disable=import-outside-toplevel
            needed.append(("requests", oci_catalog.requests is None, None))
        for name, missing, error in needed:
            if missing:
                return dict(failed=True, msg=missing_required_lib(name), exception=error)
        return None

    def _on_host(self, params, task_vars):
        """The module on the host (its results store, its hardware), given the DSL and catalog read here."""
        args = dict(self._task.args)
        args.pop("dsl_file", None)
        args.pop("catalog", None)
        args.pop("site", None)
        site = self._site(params)
        if site is not None:
            args["site_profile"] = site.doc           # read here, checked again on the host
        args["dsl"] = self._document(params)
        hidden = secrets.document_values(args["dsl"])
        if hidden:        # masked in the module's logged call on the host, before the module reads them itself
            args["secret_values"] = hidden
        if params["catalog"]:
            args["catalog_data"] = self._read(params["catalog"], catalog.read_data)
        elif params["catalog_data"] is None:
            args["catalog_data"] = catalog.read_data(catalog.collection_catalog_path())
        return self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
