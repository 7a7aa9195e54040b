# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 2 of the pipeline: choose the image, and say why.

Hard constraints first (family, version, architecture, accelerator, CUDA/ROCm, ISA level,
CPU features, optimised-or-not), then the newest release line the request leaves open,
then a score: requested compilers, build kind, version, ISA level, math libraries.
Ties go to the name in alphabetical order, so the result never depends on catalog order.
"""

from __future__ import annotations

import collections
import operator
import re
from dataclasses import replace

from ansible_collections.sodalite.modak.plugins.module_utils import cpu, versions
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError, DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.model import BUILD_RANK, Choice
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec as recipe_model
from ansible_collections.sodalite.modak.plugins.module_utils.recipe.blocks import RecipeError

SHOWN_REJECTIONS = 20  # rejected images named one by one; past them, counted by reason
SHOWN_REASONS = 8
_OWN_VALUE = re.compile(r"(?<![\w.-])\d+(?:\.\d+)+")  # the image's own version in a reason (it comes first)
SCORE_NAMES = ("requested compilers", "build kind", "version", "ISA level", "math libraries")
PREFERRED_MATH = {"x86_64": ("mkl", "onednn"), "aarch64": ("onednn",), "ppc64le": ()}


def _own_version(img):
    return img.version


def _mpi_version(img):
    return versions.parse(img.mpi_version) if img.mpi_version else (0,)


def _same_app(left, right):
    """Application tags compare without case and with '-' and '_' alike (the original's rows say code-aster,
    its tests code_aster)."""
    return bool(left) and left.lower().replace("_", "-") == right.lower().replace("_", "-")


def _of_kind(catalog, kind, key):
    if hasattr(catalog, "of_kind"):
        return catalog.of_kind(kind, key)
    if kind == "application":
        return [i for i in catalog if i.kind == kind and _same_app(i.app, key)]
    field = {"framework": "framework", "mpi": "mpi"}[kind]
    return [i for i in catalog if i.kind == kind and getattr(i, field) == key]


def _version_groups(catalog, family, version_of):
    """The versions of the family, ascending, and (version, its text, sorted names, images) per version; kept on
    the catalog for its own index tuples."""
    def build():
        groups = {}
        for img in family:
            groups.setdefault(version_of(img), []).append(img)
        ordered = sorted(groups.items())
        return ([v for v, _imgs in ordered],
                tuple((v, versions.render(v), tuple(sorted(i.name for i in imgs)), tuple(imgs)) for v, imgs in ordered))
    if isinstance(family, tuple) and hasattr(catalog, "memo"):
        return catalog.memo(("versions", id(family), version_of.__name__), build)
    return build()


def _signature(img, version_of):
    """Everything _reject_reason looks at: images that share it share the verdict."""
    return (version_of(img), img.arch, img.accelerator, img.cuda, img.rocm, img.isa, img.cpu_features, img.build)


def _collapsed(reason):
    """A reason without the image's own version (it comes first), so that such reasons count together."""
    return _OWN_VALUE.sub("…", reason, count=1)


class _Rejections(object):
    """The rejected images as (name, reason), and their count per reason without the image's own version,
    tallied as they are added: a catalog of thousands is summarised without a pass over every rejection."""

    def __init__(self):
        self.near, self.far, self.collapsed, self.tally = [], [], {}, collections.Counter()

    def add(self, name, reason):
        """Reject the image ``name`` of a version that matches."""
        if reason not in self.collapsed:
            self.collapsed[reason] = _collapsed(reason)
        self.tally[self.collapsed[reason]] += 1
        self.near.append((name, reason))

    def add_versions(self, groups, wanted):
        """Reject every image of the version ``groups`` (see _version_groups): their version does not match."""
        reasons = ["version %s does not match the request %s" % (text, wanted) for _v, text, _n, _i in groups]
        self.far.extend([(name, reason) for group, reason in zip(groups, reasons) for name in group[2]])
        dotted = "version … does not match the request %s" % wanted   # what _collapsed makes of a dotted one
        for (_v, text, names, _i), reason in zip(groups, reasons):
            collapsed = self.collapsed[reason] = dotted if "." in text else _collapsed(reason)
            self.tally[collapsed] += len(names)

    def ordered(self):
        """The nearest misses first, by name (names are unique), then the other versions by version and name."""
        self.near.sort(key=operator.itemgetter(0))
        return tuple(self.near + self.far)

    def lines(self, rejected):
        """One line per rejected image for the first few; past them, one line per reason with its count."""
        if len(rejected) <= SHOWN_REJECTIONS + 2:
            return ["rejected %s: %s" % r for r in rejected]
        lines = ["rejected %s: %s" % r for r in rejected[:SHOWN_REJECTIONS]]
        counts = collections.Counter(self.tally)
        counts.subtract(self.collapsed[reason] for _name, reason in rejected[:SHOWN_REJECTIONS])
        ranked = sorted(((reason, n) for reason, n in counts.items() if n > 0), key=lambda item: (-item[1], item[0]))
        lines.extend("rejected %d more image(s): %s" % (n, reason) for reason, n in ranked[:SHOWN_REASONS])
        rest = ranked[SHOWN_REASONS:]
        if rest:
            lines.append("rejected %d more image(s) for %d other reasons" % (sum(n for _r, n in rest), len(rest)))
        return lines


def _family(opt, app, catalog):
    """The images of the requested kind, a phrase that names the request, and which version of an
    image the request's version is compared with (an application image is matched on its MPI version)."""
    if opt.app_type in ("ai_training", "ai_inference"):
        imgs = _of_kind(catalog, "framework", opt.framework)
        return imgs, "%s %s" % (opt.framework, opt.version or "(newest)"), _own_version
    if app.app_tag:
        imgs = _of_kind(catalog, "application", app.app_tag)
        if opt.mpi_library:
            imgs = [i for i in imgs if i.mpi == opt.mpi_library] or imgs
        if imgs:
            mpi = " with %s %s" % (opt.mpi_library or "MPI", opt.version) if opt.version else ""
            return imgs, "application %s%s" % (app.app_tag, mpi), _mpi_version
    library = opt.mpi_library or ("openmpi" if opt.parallelisation == "mpi" else None)
    if library is None:
        return [], "%s application" % (opt.parallelisation or "HPC"), _own_version
    imgs = _of_kind(catalog, "mpi", library)
    return imgs, "%s %s" % (library, opt.version or "(newest)"), _own_version


def _reject_reason(img, opt, request, profile, version_of=_own_version):
    if not request.matches(version_of(img)):
        return "version %s does not match the request %s" % (versions.render(version_of(img)), request)
    if img.arch != profile.arch:
        return "built for %s, the target is %s" % (img.arch, profile.arch)
    want = opt.accelerator if opt.accelerator in ("nvidia", "amd", "fpga") else "none"
    if want == "none" and img.accelerator != "none":
        return "needs a %s GPU; the target has no accelerator" % img.accelerator
    if want != "none" and img.accelerator != want:
        return "%s; the target has %s accelerators" % (
            "CPU-only image" if img.accelerator == "none" else "built for %s GPUs" % img.accelerator, want)
    if want == "nvidia" and opt.cuda_version and img.cuda and \
            versions.parse(img.cuda) > versions.parse(opt.cuda_version):
        return "needs CUDA %s; the target supports up to %s" % (img.cuda, opt.cuda_version)
    if want == "amd" and opt.rocm_version and img.rocm and \
            versions.parse(img.rocm)[:2] != versions.parse(opt.rocm_version)[:2]:
        return "built for ROCm %s; the target has %s" % (img.rocm, opt.rocm_version)
    if cpu.ISA_RANK.get(img.isa, 0) > cpu.ISA_RANK.get(profile.isa, 0):
        return "needs %s; the target offers %s" % (img.isa, profile.isa)
    missing = profile.lacks(img.cpu_features)
    if missing:
        return "needs CPU features the target lacks: %s" % ", ".join(missing)
    if not opt.enable_opt_build and img.build != "official":
        return "%s build, but enable_opt_build is false" % img.build
    lacking = sorted(set(opt.python_packages) - set(img.python_packages))
    if lacking:
        return "carries no %s (python_packages)" % ", ".join(lacking)
    return None


def _score(img, opt):
    math = PREFERRED_MATH.get(img.arch, ())
    return (
        len(set(opt.compilers) & (set(img.compilers) | set(img.math))),
        BUILD_RANK.get(img.build, 0),
        img.version,
        cpu.ISA_RANK.get(img.isa, 0),
        len(set(math) & set(img.math)),
    )


def _ranked(imgs, opt):
    """Best first; ties broken by name (ascending)."""
    return sorted(sorted(imgs, key=lambda i: i.name), key=lambda i: _score(i, opt), reverse=True)


def _why_lost(loser, winner, opt):
    a, b = _score(winner, opt), _score(loser, opt)
    for name, wa, lb in zip(SCORE_NAMES, a, b):
        if wa != lb:
            if name == "version":
                wa, lb = versions.render(wa), versions.render(lb)
            elif name == "build kind":
                wa, lb = winner.build, loser.build
            elif name == "ISA level":
                wa, lb = winner.isa, loser.isa
            elif name in ("requested compilers", "math libraries"):
                wa, lb = "%d matched" % wa, "%d matched" % lb
            return "lost on %s (%s < %s)" % (name, lb, wa)
    return "tied with the chosen image; lost on name order"


def _describe(img):
    bits = ["%s %s" % (img.framework, img.version_text), "%s build" % img.build, "needs %s" % img.isa]
    if img.accelerator != "none":
        runtime = " CUDA %s" % img.cuda if img.cuda else (" ROCm %s" % img.rocm if img.rocm else "")
        bits.append(img.accelerator + runtime)
    if img.compilers:
        bits.append("compilers %s" % "+".join(img.compilers))
    if img.math:
        bits.append("math %s" % "+".join(img.math))
    if img.mpi:
        bits.append("%s %s" % (img.mpi, img.mpi_version or ""))
    return ", ".join(b.strip() for b in bits)


def _official(opt, request, profile, catalog):
    """The best published official image of the framework that fits the request, or None.

    Official images that need a GPU are allowed on a CPU target (a CUDA build runs on a CPU node too);
    a GPU target only takes images for its accelerator. Recipe-backed images are not fallbacks."""
    cpu_opt = replace(opt, accelerator="none")
    fits = []
    for img in catalog:
        if img.kind != "framework" or img.framework != opt.framework or img.build != "official" or img.recipe:
            continue
        if _reject_reason(img, opt, request, profile) is None:
            fits.append((1, img))
        elif opt.accelerator in ("none", None) and img.accelerator != "none" and \
                _reject_reason(replace(img, accelerator="none"), cpu_opt, request, profile) is None:
            fits.append((0, img))  # a GPU build, second choice on a CPU node
    if not fits:
        return None
    return sorted(sorted(fits, key=lambda f: f[1].name), key=lambda f: (f[0], f[1].version), reverse=True)[0][1]


def _opt_build_asked(req):
    """The DSL itself says enable_opt_build: true (not only the default of an optimisation section)."""
    return req.opt is not None and req.opt.opt_build_asked


def _recipe_image(req, catalog):
    """(the recipe-backed Image of the request's own recipe, None) or (None, why no recipe can be made): the image
    modak builds for exactly this framework version and target, at the catalog's build prefix."""
    if req.opt is None:
        return None, "the request has no optimisation section to build from"
    try:
        return catalog.recipe_image(recipe_model.spec_of(req)), None
    except (CatalogError, DslInvalid, RecipeError) as exc:
        return None, str(exc).split(": ", 2)[-1]


def _recipe_choice(req, catalog, explanation, rejected, why, runners=()):
    """(the Choice of the request's own recipe, to be built, None) or (None, why no recipe can be made)."""
    image, failure = _recipe_image(req, catalog)
    if image is None:
        return None, "no recipe can be made for the request: %s" % failure
    msg = ("%s: build the optimised image %s from its recipe (%s; sodalite.modak.container_recipe writes it, the "
           "sodalite.modak.container_build role builds it and adds it to the catalog, the optimised_job role builds "
           "it before the job when it is not built yet)" % (why, image.uri, _describe(image)))
    return Choice(image, image.uri, "recipe", tuple(explanation + [msg]), (), tuple(runners), tuple(rejected)), None


def _fallback(req, opt, label, explanation, rejected, profile, catalog):
    app = req.app
    why = "no catalog image fits %s" % label
    if rejected:
        why += " (%d candidate(s) rejected, see the explanation)" % len(rejected)
    if app.container_runtime:
        msg = "%s: using your container_runtime %s" % (why, app.container_runtime)
        return Choice(None, app.container_runtime, "user", tuple(explanation + [msg]), (msg,), (), tuple(rejected))
    if opt.enable_opt_build and opt.framework:
        # an optimised build of a framework was asked for: the recipe of this version and target comes before any
        # generic image (a CPU target never gets a CUDA build when a CPU recipe can be made)
        recipe, failure = _recipe_choice(req, catalog, explanation, rejected, why + " and enable_opt_build is true")
        if recipe is not None:
            return recipe
        explanation = explanation + [failure]
    official = _official(opt, versions.VersionRequest(opt.version), profile, catalog) if opt.framework else None
    if official is not None:
        msg = "%s: falling back to the official image %s (%s)" % (why, official.uri, _describe(official))
        if official.accelerator != "none" and opt.accelerator in ("none", None):
            msg += "; it is a %s build and runs on the CPU here" % official.accelerator
        return Choice(official, official.uri, "official", tuple(explanation + [msg]), (msg,), (), tuple(rejected))
    if opt.enable_opt_build and not opt.framework:
        # an application of its own (MPI, OpenMP): its program is the user's, so it runs bare; the recipe of an
        # image for its libraries is named, to build when wanted
        image, failure = _recipe_image(req, catalog)
        if image is not None:
            msg = ("%s and there is no official image to fall back on: the application runs without a container; "
                   "an optimised image for it can be built from the recipe %s (sodalite.modak.container_recipe writes "
                   "it, the sodalite.modak.container_build role builds it and adds it to the catalog)"
                   % (why, image.name))
            return Choice(None, None, "recipe", tuple(explanation + [msg]), (msg,), (), tuple(rejected))
        explanation = explanation + ["no recipe can be made either: %s" % failure]
    msg = "%s and there is no official image to fall back on: the application runs without a container" % why
    return Choice(None, None, "bare", tuple(explanation + [msg]), (msg,), (), tuple(rejected))


def choose(req, catalog):
    """Return the Choice for a JobRequest against an ImageCatalog.

    ``container_runtime: ""`` says no container: the job runs in its own environment whatever fits, and the image
    modak would choose is named in the explanation as advice."""
    if req.app.container_runtime == "":
        mine = "container_runtime '': no container, the application runs in the job's own environment"
        if req.opt is None:
            return Choice(None, None, "bare", (mine,))
        advised = choose(replace(req, app=replace(req.app, container_runtime=None)), catalog)
        advice = ("advice: with a container, modak would run it in %s (%s)" % (advised.uri, advised.source)
                  if advised.uri else "advice: modak would run it without a container too")
        return Choice(None, None, "bare", (mine,) + tuple("advice: " + line for line in advised.explanation[-1:])
                      + (advice,))
    opt, app = req.opt, req.app
    if opt is None:
        if app.container_runtime:
            return Choice(None, app.container_runtime, "user",
                          ("no optimisation section: running your container_runtime %s as given" % app.container_runtime,))
        return Choice(None, None, "bare",
                      ("no optimisation section and no container_runtime: the application runs without a container",))
    if not opt.enable_opt_build and app.container_runtime:
        return Choice(None, app.container_runtime, "user",
                      ("enable_opt_build is false: running your container_runtime %s as given" % app.container_runtime,))

    profile = cpu.profile(opt.cpu_type, opt.cpu_isa, opt.cpu_microarch, opt.cpu_features)
    request = versions.VersionRequest(opt.version)
    family, label, version_of = _family(opt, app, catalog)
    explanation = ["target CPU: %s, %s (%s)" % (profile.arch, profile.isa, profile.source)]
    explanation.append("looking for %s%s%s" % (
        label,
        " on %s GPUs" % opt.accelerator if opt.accelerator in ("nvidia", "amd", "fpga") else " on CPU",
        ", with %s" % " and ".join(opt.compilers) if opt.compilers else ""))
    others = len(catalog) - len(family)
    if others:
        explanation.append("%d catalog image(s) of other frameworks or kinds were not considered" % others)

    rejections, fits, verdicts = _Rejections(), [], {}
    wanted = str(request)
    ordered, groups = _version_groups(catalog, family, version_of)
    span = request.span(ordered)               # a pinned prefix: the matching versions are one slice
    if span is not None:
        inside, outside = groups[span[0]:span[1]], groups[:span[0]] + groups[span[1]:]
    else:
        matching = [request.matches(group[0]) for group in groups]
        inside = tuple(group for group, match in zip(groups, matching) if match)
        outside = tuple(group for group, match in zip(groups, matching) if not match)
    rejections.add_versions(outside, wanted)   # one verdict for every image of a version
    for _version, _text, _names, imgs in inside:
        for img in imgs:
            signature = _signature(img, version_of)
            if signature not in verdicts:
                verdicts[signature] = _reject_reason(img, opt, request, profile, version_of)
            if verdicts[signature]:
                rejections.add(img.name, verdicts[signature])
            else:
                fits.append(img)
    if fits:
        newest = max(request.line_of(version_of(i)) for i in fits)
        for img in [i for i in fits if request.line_of(version_of(i)) != newest]:
            rejections.add(img.name, "release line %s is older than %s, the newest that matches %s"
                           % (versions.render(request.line_of(version_of(img))), versions.render(newest), request))
        fits = [i for i in fits if request.line_of(version_of(i)) == newest]
    rejected = rejections.ordered()
    if not fits:
        explanation.extend(rejections.lines(rejected))
        return _fallback(req, opt, label, explanation, rejected, profile, catalog)

    ranked = _ranked(fits, opt)
    best = ranked[0]
    if best.build == "official" and _opt_build_asked(req) and opt.framework and not app.container_runtime:
        # the fitting images are generic builds, and the DSL asks for an optimised build of its version and target
        losers = ["%s: an official (generic) build, and enable_opt_build asks for an optimised one" % img.name
                  for img in ranked[:3]]
        recipe, failure = _recipe_choice(req, catalog, explanation + ["runner-up %s" % r for r in losers]
                                         + rejections.lines(rejected), rejected,
                                         "only official (generic) builds fit %s and enable_opt_build is true" % label,
                                         losers)
        if recipe is not None:
            return recipe
        explanation.append("%s; the best official image is used" % failure)
    explanation.append("chosen %s (%s): %s" % (best.name, best.uri, _describe(best)))
    if opt.compilers:
        missing = sorted(set(opt.compilers) - set(best.compilers) - set(best.math))
        if missing:
            explanation.append("no fitting image offers %s; the chosen one is the best without it" % ", ".join(missing))
    runners = ["%s: %s" % (img.name, _why_lost(img, best, opt)) for img in ranked[1:4]]
    explanation.extend("runner-up %s" % r for r in runners)
    explanation.extend(rejections.lines(rejected))
    warnings = []
    if app.container_runtime and app.container_runtime != best.uri:
        warnings.append("your container_runtime %s is replaced by the optimised image %s "
                        "(set enable_opt_build: false to keep yours)" % (app.container_runtime, best.uri))
    if profile.assumed:
        warnings.append("the target CPU was assumed to be %s; declare opt_build.cpu_isa or cpu_microarch "
                        "to allow images built for newer CPUs" % profile.isa)
    return Choice(best, best.uri, "catalog", tuple(explanation), tuple(warnings), tuple(runners), tuple(rejected))
