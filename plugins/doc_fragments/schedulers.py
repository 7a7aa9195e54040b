# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Generated from the scheduler registry by scripts/export_doc_fragments.py (make schema): do not edit.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The scheduler registry's names, for the modules' documentation."""

    # adds the registry's names as the choices of a module's scheduler option
    DOCUMENTATION = r"""
options:
  scheduler:
    choices: [slurm, pbspro, torque, gridengine, flux, local]
"""

    # every scheduler, named, for a module's notes
    NAMES = r"""
options: {}
notes:
  - The schedulers are Slurm (V(slurm)), PBS Pro (V(pbspro)), Torque (V(torque)), Grid Engine (V(gridengine)), Flux (V(flux)) and bash on the host (V(local)).
"""
