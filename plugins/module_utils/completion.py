# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shell completion of the ``modak`` command, written from its argparse parser (``modak completion bash``).

Static: the script lists the commands, each command's options and the words an option takes, read from the
parser when it is printed, so that it cannot drift from the command line; nothing runs modak while completing.
"""

from __future__ import annotations

import argparse

SHELLS = ("bash",)
# metavars whose value is a directory; every other option value and positional is completed as a file name
_DIRECTORIES = ("DIR",)
_NO_COMPLETION = ("JOB_ID", "N", "SECONDS", "ARG", "URI", "NAME")


def _commands(parser):
    for action in parser._actions:      # pylint: disable=protected-access  # argparse keeps them there
        if isinstance(action, argparse._SubParsersAction):  # pylint: disable=protected-access
            return action.choices
    return {}


def _words(words):
    return " ".join(sorted(words))


def _command_case(name, sub):
    """One ``case`` arm: the words the option before the cursor takes, else the command's options or files."""
    options, values, directories, free = [], [], [], []
    for action in sub._actions:         # pylint: disable=protected-access
        options.extend(action.option_strings)
        if not action.option_strings or action.nargs == 0:
            continue
        pattern = "|".join(action.option_strings)
        if action.choices:
            values.append("                %s) _modak_words %s; return ;;" % (pattern, _quote(_words(action.choices))))
        elif action.metavar in _DIRECTORIES:
            directories.append(pattern)
        elif action.metavar in _NO_COMPLETION:
            free.append(pattern)
    if directories:
        values.append("                %s) _modak_files -d; return ;;" % "|".join(directories))
    if free:
        values.append("                %s) return ;;" % "|".join(free))
    lines = ["        %s)" % name]
    if values:
        lines.extend(["            case $prev in"] + values + ["            esac"])
    lines.append("            options=%s" % _quote(_words(options)))
    positional = [a for a in sub._actions if not a.option_strings]   # pylint: disable=protected-access
    files = not positional or any(a.metavar not in _NO_COMPLETION and not a.choices for a in positional)
    choices = [word for a in positional if a.choices for word in a.choices]
    if choices:
        lines.append("            [[ $cur == -* ]] || { _modak_words %s; return; }" % _quote(_words(choices)))
    elif not files:
        lines.append("            [[ $cur == -* ]] || return")
    lines.append("            ;;")
    return lines


def _quote(text):
    return "'%s'" % text


def bash(parser):
    """The bash completion script of ``parser`` (source it, or eval "$(modak completion bash)")."""
    commands = _commands(parser)
    top = [o for a in parser._actions for o in a.option_strings]   # pylint: disable=protected-access
    lines = [
        "# bash completion of modak, printed by 'modak completion bash': eval \"$(modak completion bash)\"",
        "_modak_words() {",
        "    mapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\")",
        "}",
        "_modak_files() {",
        "    mapfile -t COMPREPLY < <(compgen \"$1\" -- \"$cur\")",
        "}",
        "_modak() {",
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command='' options='' i",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        "        case ${COMP_WORDS[i]} in",
        "            -*) ;;",
        "            *) command=${COMP_WORDS[i]}; break ;;",
        "        esac",
        "    done",
        "    case $command in",
        "        '')",
        "            _modak_words %s" % _quote(_words(list(commands) + top)),
        "            return",
        "            ;;",
    ]
    for name, sub in commands.items():
        lines.extend(_command_case(name, sub))
    lines.extend([
        "        *) return ;;",
        "    esac",
        "    if [[ $cur == -* ]]; then",
        "        _modak_words \"$options\"",
        "    else",
        "        _modak_files -f",
        "    fi",
        "}",
        "complete -o filenames -F _modak modak",
    ])
    return "\n".join(lines) + "\n"


def script(shell, parser):
    """The completion script of ``shell`` (one of SHELLS) for ``parser``."""
    return {"bash": bash}[shell](parser)
