"""The two word wrappers ``kubectl explain`` uses, written from their behaviour.

* :func:`wordwrap` — the ``wrap`` of the OpenAPI v3 templates (``-o plaintext``): Go's
  ``github.com/mitchellh/go-wordwrap`` 1.0.1 ``WrapString``.  It breaks only at white space,
  counts characters (not bytes), keeps the text's own line breaks, drops the blanks where it
  breaks a line, and leaves a word longer than the limit whole on a line of its own.
* :func:`reflow` — the ``Formatter`` of the OpenAPI v2 explainer (``-o plaintext-openapiv2``):
  joins the text's lines into paragraphs of at most ``width`` characters, one space between
  words, keeping empty lines, indented code blocks, lines after one ending in ``:`` and lines
  that start a list.
"""

from __future__ import annotations

import re

#: Go's ``unicode.IsSpace``: the Latin-1 blanks and the Unicode White_Space characters beyond them
#: (Python's ``str.isspace`` also counts U+001C..U+001F, which Go does not).
_GO_SPACES = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                       + "".join(chr(c) for c in range(0x2000, 0x200B)))
_NBSP = "\xa0"


def wordwrap(text: str, limit: int) -> str:
    """``text`` wrapped at ``limit`` characters a line, as go-wordwrap's ``WrapString`` wraps it.

    A run of blanks is written only when the word after it fits on the line (a break replaces
    it); a blank run at a line break the text has is kept when it fits; a non-breaking space
    belongs to its word.  ``limit`` 0 leaves ``text`` as it is (kubectl's wrapping writer).
    """
    if limit <= 0:
        return text
    out: list[str] = []
    column = 0
    word: list[str] = []
    space: list[str] = []
    for char in text:
        if char == "\n":
            if not word:
                if column + len(space) <= limit:
                    out += space
            else:
                out += space
                out += word
                word = []
            space = []
            out.append(char)
            column = 0
        elif char in _GO_SPACES and char != _NBSP:
            if not space or word:
                column += len(space) + len(word)
                out += space
                out += word
                space, word = [], []
            space.append(char)
        else:
            word.append(char)
            if column + len(space) + len(word) > limit and len(word) < limit:
                out.append("\n")
                column = 0
                space = []
    if not word:
        if column + len(space) <= limit:
            out += space
    else:
        out += space
        out += word
    return "".join(out)


_BULLET = re.compile(r"^(\d+\.?|-|\*)\s")


def _starts_new_line(last_word: str, line: str) -> bool:
    if last_word.endswith(":") or line.startswith("    "):
        return True
    line = line.strip()
    return not line or bool(_BULLET.match(line))


def reflow(text: str, width: int) -> list[str]:
    """The lines of ``text`` reflowed to ``width`` characters (kubectl's v2 explain ``wrapString``).

    The text's lines are joined into paragraphs, words separated by one space; a line starting
    with four spaces is kept as it is, an empty line (after the first line written) is kept, and
    a line that follows one ending in ``:`` or that starts a list (``1.``, ``-``, ``*``) starts a
    new line.  A word longer than ``width`` is left whole on a line of its own.
    """
    wrapped: list[str] = []
    words: list[str] = []
    last_word = ""

    def flush() -> None:
        nonlocal words, last_word
        if words:
            last_word = ""
            wrapped.append(" ".join(words))
            words = []

    for line in text.split("\n"):
        if line.startswith("    "):
            flush()
            wrapped.append(line)
            continue
        if wrapped and not line.strip():
            flush()
            wrapped.append("")
            continue
        if _starts_new_line(last_word, line):
            flush()
        for word in _go_fields(line):
            last_word = word
            if words and len(" ".join([*words, word]).encode()) > width:  # Go counts bytes here
                flush()
            words.append(word)
    flush()
    return wrapped


def _go_fields(line: str) -> list[str]:
    """Go's ``strings.Fields``: the words of ``line`` between runs of ``unicode.IsSpace`` blanks."""
    words: list[str] = []
    current: list[str] = []
    for char in line:
        if char in _GO_SPACES:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        words.append("".join(current))
    return words
