# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shell quoting for generated scripts: every user value goes through here."""

from __future__ import annotations

import re
import shlex

_SAFE = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+\Z")
# characters that end a line for some reader of the script (bash, editors, Python)
_LINE_BREAKS = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")


def quote(value):
    """Quote one word for bash; plain words stay readable.

    A value holding a line break or another control character (a multi-line build command) becomes one
    ANSI-C quoted word (``$'a\\nb'``), so every line of a generated script is a whole line for any reader:
    bash, sbatch/qsub looking for directives, editors.
    """
    text = str(value)
    if _SAFE.match(text):
        return text
    if has_line_break(text):
        return ansi_c(text)
    return shlex.quote(text)


def ansi_c(text):
    """Bash ``$'...'`` quoting; control characters and Unicode line separators as UTF-8 byte escapes."""
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == "'":
            out.append("\\'")
        elif _LINE_BREAKS.match(char):
            out.append("".join("\\x%02x" % b for b in char.encode("utf-8")))
        else:
            out.append(char)
    return "$'%s'" % "".join(out)


def join(argv):
    """Quote and join an argument vector into one command line."""
    return " ".join(quote(a) for a in argv)


def has_line_break(text):
    """True when ``text`` holds a control character or a Unicode line separator."""
    return bool(_LINE_BREAKS.search(str(text)))


def split_words(text):
    """Split a DSL command string into words (POSIX rules, no expansion)."""
    return shlex.split(str(text), comments=False, posix=True)


class Raw(str):
    """A word that is already shell syntax (a quoted variable reference); never re-quoted."""


def word(value):
    return value if isinstance(value, Raw) else quote(value)


def command(argv):
    """Join words, quoting all but Raw ones."""
    return " ".join(word(a) for a in argv)


# words bash reads as syntax, not as a program name, when they come first and unquoted
RESERVED = frozenset(("!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
                      "function", "if", "in", "select", "then", "time", "until", "while"))
_NOT_A_PROGRAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def program(value):
    """The command word, run as a program: 'done' or 'A=1' first would be syntax or an assignment.

    Such a word, and one ending in '}' (shellcheck SC2288), is given to ``command --``. A word starting with '%'
    is a job for bash however it is written (quoted, or after ``command``): the DSL refuses it
    (dsl_rules.program_problems).
    """
    if isinstance(value, Raw):
        return value
    text = quote(value)
    if str(value) in RESERVED or _NOT_A_PROGRAM.match(str(value)) or str(value).endswith("}"):
        return "command -- %s" % text
    return text


def program_command(argv):
    """Like ``command``, with the first word taken literally as the program to run."""
    return " ".join([program(argv[0])] + [word(a) for a in argv[1:]]) if argv else ""
