# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MODAK's scaling models, which cap MPI ranks and threads.

* ``noop``: no cap.
* ``max``: ``max_nranks`` and ``max_nthreads`` caps.
* ``amdahl``: parallel fraction ``F``; with a minimal efficiency e the ranks are capped at
  round((1 - e*F) / (e * (1 - F))), where efficiency E(n) = 1 / (n * (1 - F) + F).
"""

from __future__ import annotations


def amdahl_max_ranks(fraction, efficiency):
    if fraction >= 1.0:
        return None
    return max(1, int(round((1.0 - efficiency * fraction) / (efficiency * (1.0 - fraction)))))


def apply(model, ranks, threads, minimal_efficiency=None):
    """Return (ranks, threads, note or None) after the model's caps."""
    name = (model or {}).get("name", "noop")
    if name == "max":
        new_ranks = min(ranks, int(model.get("max_nranks", ranks)))
        new_threads = min(threads, int(model.get("max_nthreads", threads)))
        if (new_ranks, new_threads) != (ranks, threads):
            return new_ranks, new_threads, "scaling model 'max' capped ranks %d->%d, threads %d->%d" % (
                ranks, new_ranks, threads, new_threads)
        return ranks, threads, None
    if name == "amdahl" and minimal_efficiency:
        cap = amdahl_max_ranks(float(model["F"]), float(minimal_efficiency))
        if cap is not None and cap < ranks:
            return cap, threads, ("Amdahl model (F=%s) caps ranks at %d for efficiency >= %s (asked %d)"
                                  % (model["F"], cap, minimal_efficiency, ranks))
    return ranks, threads, None
