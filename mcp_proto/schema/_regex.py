"""``pattern`` regexes: ECMA-262 syntax read by Python's ``re``, with backtracking refused.

Python's ``re`` backtracks, so a regex such as ``(a+)+$`` takes time exponential in the length
of a non-matching string. The schema comes from the peer, so such a regex is refused when the
schema is compiled (``InvalidSchema``, keyword ``pattern``), by a conservative syntactic rule:

* a group repeated more than once (``*``, ``+``, ``{n,}``, ``{n,m}`` with ``m > 1``) may not
  contain a quantifier (``*``, ``+``, ``?``, ``{n,m}``; an exact ``{n}`` is fine) or an
  alternation ``|``: that is the shape of every exponential case (``(a+)+``, ``(a|a)*``,
  ``(\\w+\\s?)*``); safe regexes of that shape (``([a-z]+\\.)+``) are refused too;
* backreferences (``\\1``, ``\\k<name>``) are refused (they are not regular);
* a regex longer than ``Limits.max_pattern_length`` is refused.

Polynomial cases remain: ``a*a*b`` searched in 10 000 ``a`` takes minutes. So each regex
gets its own bound on the length of the strings it is matched against: with ``q`` repeating
quantifiers (all but ``?`` and exact ``{n}``), plus one when the regex does not start with
``^`` (a search tries every start), the work is at most ``length ** exponent``, and the length
is bounded so that this stays under ``Limits.max_regex_work`` (10 000 000, about 15 ms of
``re`` on a laptop), and under ``Limits.max_pattern_subject`` in any case. A longer string is a
``LimitExceeded`` naming the bound (never a silent pass). Each match is also charged to the
step budget (one step per 100 characters).

ECMA-262 differences handled: ``$`` outside a class means the end of the string (Python's ``$``
also matches before a final newline, so it becomes ``\\Z``); ``(?<name>`` becomes ``(?P<name>``;
``[]`` matches nothing and ``[^]`` any character; ``[`` inside a class is a literal; ``\\d``,
``\\w`` and ``\\b`` are ASCII as in ECMA-262 (the ``re.ASCII`` flag, which also makes ``\\s``
ASCII-only: a documented deviation). Syntax ``re`` does not know (``\\p{L}``, ``\\cX``) makes
the schema invalid, never permissive.
"""

from __future__ import annotations

import re

from attrs import frozen

from ._errors import InvalidSchema, LimitExceeded
from ._limits import Limits

__all__ = ["Regex", "compile_pattern"]


@frozen
class Regex:
    """A compiled ``pattern`` and the longest string it may be matched against."""

    regex: re.Pattern[str]
    max_subject: int
    bound: str  # the Limits attribute that set max_subject

    def search(self, subject: str, where: str) -> bool:
        """Whether the regex matches somewhere in ``subject``; raise if it is too long."""
        if len(subject) > self.max_subject:
            raise LimitExceeded(
                self.bound,
                self.max_subject,
                f"the length of the string at {where or '/'} ({len(subject)}) matched against "
                f"the regex {self.regex.pattern!r}",
            )
        return self.regex.search(subject) is not None


_CLASS_RESERVED = frozenset("[&~|")
_QUANT = re.compile(r"\*|\+|\?|\{(\d+)(,(\d*))?\}")


def compile_pattern(pattern: str, limits: Limits, schema_path: str, keyword: str) -> Regex:
    """Check ``pattern`` against the rules above and compile it; raise on refusal."""
    if len(pattern) > limits.max_pattern_length:
        raise LimitExceeded(
            "max_pattern_length",
            limits.max_pattern_length,
            f"the length of the regex at {schema_path} ({len(pattern)})",
        )

    def refuse(reason: str) -> InvalidSchema:
        return InvalidSchema(
            f"regex {pattern!r} refused: {reason}", schema_path=schema_path, keyword=keyword
        )

    out: list[str] = []
    # One frame per open group: [has a quantifier inside, has an alternation inside].
    frames: list[list[bool]] = [[False, False]]
    i, n = 0, len(pattern)
    repeats = 0
    while i < n:
        c = pattern[i]
        atom_group: list[bool] | None = None
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if (nxt.isdigit() and nxt != "0") or nxt == "k":
                raise refuse("backreferences are not supported")
            out.append(pattern[i : i + 2])
            i += 2
        elif c == "[":
            j = i + 1
            negated = pattern[j : j + 1] == "^"
            j += negated
            # ECMA-262: a "]" right after "[" or "[^" closes the class; "[]" matches nothing
            # and "[^]" any character (in Python a leading "]" would be a member).
            out.append("[^" if negated else "[")
            if pattern[j : j + 1] == "]":
                out[-1] = r"[\s\S]" if negated else r"[^\s\S]"
                i = j + 1
            else:
                while j < n and pattern[j] != "]":
                    step = 2 if pattern[j] == "\\" else 1
                    piece = pattern[j : j + step]
                    # Literal in ECMA-262; in Python "[" and doubled "&", "~", "|" are
                    # reserved for set operations.
                    out.append("\\" + piece if piece in _CLASS_RESERVED else piece)
                    j += step
                if j < n:
                    out.append("]")
                i = j + 1
        elif c == "(":
            if pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
                out.append("(?P<")
                i += 3
            else:
                out.append("(")
                i += 1
            frames.append([False, False])
            continue
        elif c == ")":
            if len(frames) == 1:
                raise refuse("unbalanced parenthesis")
            atom_group = frames.pop()
            frames[-1][0] |= atom_group[0]
            frames[-1][1] |= atom_group[1]
            out.append(")")
            i += 1
        elif c == "|":
            frames[-1][1] = True
            out.append("|")
            i += 1
            continue
        elif c == "$":
            out.append(r"\Z")
            i += 1
        else:
            out.append(c)
            i += 1
        m = _QUANT.match(pattern, i)
        if m is None:
            continue
        text = m.group(0)
        exact = m.group(1) is not None and m.group(2) is None
        if m.group(1) is None:
            most = 1 if text == "?" else None
        else:
            most = int(m.group(1)) if exact else (int(m.group(3)) if m.group(3) else None)
        if not exact:
            frames[-1][0] = True
        if most is None or most > 1:
            repeats += 1
        if atom_group is not None and any(atom_group) and (most is None or most > 1):
            raise refuse(
                "a repeated group containing a quantifier or '|' can backtrack exponentially"
            )
        out.append(text)
        i = m.end()
        if pattern[i : i + 1] == "?":  # lazy quantifier
            out.append("?")
            i += 1
    if len(frames) != 1:
        raise refuse("unbalanced parenthesis")
    try:
        regex = re.compile("".join(out), re.ASCII)
    except re.error as e:
        raise refuse(f"not a regex this validator understands ({e})") from None
    exponent = repeats + (0 if pattern.startswith("^") else 1)
    if exponent <= 1:
        return Regex(regex, limits.max_pattern_subject, "max_pattern_subject")
    derived = int(limits.max_regex_work ** (1 / exponent) + 1e-9)
    if derived < limits.max_pattern_subject:
        return Regex(regex, derived, "max_regex_work")
    return Regex(regex, limits.max_pattern_subject, "max_pattern_subject")
