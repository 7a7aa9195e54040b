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
    if _SAFE.match(text) and not text.startswith(("=", "+=")):
        return text
    if _SAFE.match(text):   # '=x' after a command reads as a mistyped assignment to linters (SC2283-SC2285)
        return "'%s'" % text
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
    """Split a DSL command string into words as a shell does, without expanding anything.

    Variable references stay as written (``${HOME}``); ``split_command`` marks them for expansion.
    """
    return ["".join(part for part, _var in segments) for segments in _tokens(str(text))]


def split_command(text):
    """Split a DSL command string into words; words holding ``$NAME``/``${NAME}`` outside single quotes
    become Raw shell words that expand those variables (double-quoted: no splitting, no globbing) and keep
    everything else literal. Nothing else is ever expanded: ``$(...)``, backticks, ``$1``, ``~``, globs.
    """
    words = []
    for segments in _tokens(str(text)):
        if not any(var for _part, var in segments):
            words.append("".join(part for part, _var in segments))
            continue
        out = []
        for part, var in segments:
            if var:
                out.append('"${%s}"' % var)
            elif part:
                out.append(quote(part))
        word_ = Expanding("".join(out))
        word_.segments = tuple((None, var) if var else (part, None) for part, var in segments)
        words.append(word_)
    return words


def expanded(word_, env):
    """The text a word stands for when run without a shell (``env`` gives the variables; unset is '')."""
    if isinstance(word_, Expanding):
        return "".join(text if var is None else env.get(var, "") for text, var in word_.segments)
    return word_


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_BLANKS = " \t\n"


def _tokens(text):
    """POSIX word splitting in one pass (linear): a list of words, each a list of (text, variable name or None).

    Backslash-newline outside single quotes is a line continuation and disappears, as in a shell.
    Raises ValueError for an unclosed quote or a final lone backslash (shlex's messages).
    """
    words, segments, literal = [], [], []
    in_word = False
    i, n = 0, len(text)

    def flush_literal():
        if literal:
            segments.append(("".join(literal), None))
            del literal[:]

    def dollar(pos):
        """A '$' at pos: a variable reference (its own segment) or a literal '$'; returns the next position."""
        match = _VAR.match(text, pos)
        if not match:
            literal.append("$")
            return pos + 1
        flush_literal()
        segments.append((match.group(0), match.group(1) or match.group(2)))
        return match.end()

    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            continue
        if char in _BLANKS:
            if in_word:
                flush_literal()
                words.append(segments)
                segments, in_word = [], False
            i += 1
            continue
        in_word = True
        if char == "\\":
            if i + 1 >= n:
                raise ValueError("No escaped character")
            literal.append(text[i + 1])
            i += 2
        elif char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            literal.append(text[i + 1:end])
            i = end + 1
        elif char == '"':
            i += 1
            while True:
                if i >= n:
                    raise ValueError("No closing quotation")
                char = text[i]
                if char == '"':
                    i += 1
                    break
                if char == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != "\n":
                        literal.append(text[i + 1])
                    i += 2
                elif char == "$":
                    i = dollar(i)
                else:
                    literal.append(char)
                    i += 1
        elif char == "$":
            i = dollar(i)
        else:
            literal.append(char)
            i += 1
    if in_word:
        flush_literal()
        words.append(segments)
    return words


class Raw(str):
    """A word that is already shell syntax (a quoted variable reference); never re-quoted."""


class Expanding(Raw):
    """A DSL word with $NAME/${NAME} references, as shell syntax; ``segments`` keeps (literal, variable) parts."""

    segments = ()


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

    Such a word, one ending in '}' (shellcheck SC2288) and one starting with '-' (an option where a program
    belongs: arguments without an executable, SC2215), is given to ``command --``. A word starting with '%'
    is a job for bash however it is written (quoted, or after ``command``): the DSL refuses it
    (dsl_rules.program_problems).
    """
    if isinstance(value, Raw):
        return value
    text = quote(value)
    if (str(value) in RESERVED or _NOT_A_PROGRAM.match(str(value)) or str(value).endswith("}")
            or str(value).startswith("-")):
        return "command -- %s" % text
    return text


def program_command(argv):
    """Like ``command``, with the first word taken literally as the program to run."""
    return " ".join([program(argv[0])] + [word(a) for a in argv[1:]]) if argv else ""


def exit_trap_lines(command, saved="MODAK_EXIT_TRAP"):
    """Lines that run ``command`` (fixed text, no single quote) when the script exits, then the EXIT trap set before
    (the site's target.setup, or another of modak's) with the script's exit status kept. ``saved`` names the
    variable that holds the earlier trap: one name for each use, since each trap runs the one it saved."""
    return ['%s="$(trap -p EXIT)"' % saved,
            '%s="$(eval "set -- $%s"; printf %%s "${3:-}")"' % (saved, saved),
            "trap 'MODAK_STATUS=$?; %s; (exit \"$MODAK_STATUS\"); eval \"$%s\"' EXIT" % (command, saved)]


def eval_lines(what, texts):
    """User shell (pre-/post-execution, target setup), run as given in the job's shell.

    Each text is one quoted word for ``eval``: it runs exactly as a script body would (same shell, same
    variables, ``set -e`` applies), and no quote or here-document in it can reach the lines that follow.
    """
    if not texts:
        return []
    return ["# %s (your shell, run as given)" % what] + ["eval %s" % quote(text) for text in texts]
