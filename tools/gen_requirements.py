"""Generate ``docs/requirements.md``: where each requirement ID cited in the repository is defined.

Usage::

    uv run python tools/gen_requirements.py [--shared PATH] [--check]

The code, tests, fuzz harnesses and docs cite requirement IDs (``GROUP-NN``, e.g. a
``subscriptions/listen`` rule as ``SUB-04``) from the project's normative digests of the spec,
``../shared/notes/spec-{base,features,auth,tasks}.md``, which live beside the checkout, not in
it.  This tool reads the digests and the spec prose (``../shared/spec/<revision>/docs/``) at run
time and writes, for every cited ID, the spec page that defines it (a path relative to that
revision's ``docs/``), the section (headings of that page) and the keyword as the digest gives
it; an ID no digest defines is listed with up to three files that cite it.  Nothing of the
digests' or the spec's sentences is written: only page paths, heading titles and keywords.

How an ID is cited (:func:`scan`): ``GROUP-NN`` anywhere in a text file of :data:`SCANNED`, with
the lists ``A-01/03`` and ranges ``A-01..04`` expanded; in identifiers, such as test names, the
snake-case forms ``meta02`` / ``schema_09`` count too, but only for an ID some digest defines
(so that ``base64`` is not ``BASE-64``).  IDs no digest defines are listed as unresolved.

How the page and section are found (:func:`locate`): the entry's own page reference, else the
one of the digest heading (or lead-in line) above it, resolved against the spec's page tree;
then the section the entry names (``§Title``), else the line it gives (``page.mdx:LINE``), else
the paragraph of the page that shares the most distinctive words with the entry (marked ``≈``).

``--check`` exits 1 when ``docs/requirements.md`` differs from what would be generated (the test
suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHARED = ROOT.parent / "shared"
OUT_NAME = "docs/requirements.md"
OUT = ROOT / OUT_NAME
REVISION = "2026-07-28"
LEGACY = "2025-11-25"
DIGESTS = ("spec-base.md", "spec-features.md", "spec-auth.md", "spec-tasks.md")

#: Where citations are looked for (relative to the repository root).
SCANNED = ("mcp_proto", "adapters", "tests", "fuzz", "docs", "examples", "bench", "README.md")
#: Files that name IDs without citing them: the index itself and its own test.
NOT_CITATIONS = frozenset({OUT_NAME, "tests/test_requirements_index.py"})
#: ``WORD-NN`` tokens that are names of other things, never requirement IDs.
NOT_IDS = frozenset({"UTF", "ECMA", "SHA", "ISO", "RFC", "SEP", "PEP", "CVE", "TLS"})
MAX_WHERE = 3
#: How far (in lines) a paragraph may sit from the lines a digest gives and still be its source.
DRIFT = 30
#: Distinct words a paragraph must share with an entry to be taken as its source.
MIN_SHARED = 3
#: A schema definition is named only if it matches this much better than the next one: the
#: definitions' comments are short and alike.
SCHEMA_MARGIN = 1.5

# GROUP-NN, then any /NN or ..NN suffixes; not a version number like HTTP-1.1.
_CITE = re.compile(
    r"(?<![A-Za-z0-9_-])([A-Z][A-Z0-9]*(?:-[A-Z]+)*)-(\d+)((?:(?:/|\.\.)\d+)*)(?![A-Za-z0-9]|\.\d)"
)
_ENTRY_BULLET = re.compile(r"^\s*[-*] \*\*([A-Z][A-Z0-9]*(?:-[A-Z]+)*-\d+)\*\*\s*(.*)$")
_ENTRY_ROW = re.compile(r"^\|\s*([A-Z][A-Z0-9]*(?:-[A-Z]+)*-\d+)\s*\|(.*)\|\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_KEYWORD = re.compile(
    r"\b(MUST NOT|MUST|SHALL NOT|SHALL|SHOULD NOT|SHOULD|REQUIRED|RECOMMENDED|MAY|OPTIONAL)\b"
)
_MARKERS = (("(derived)", "derived"), ("AMBIGUITY", "AMBIGUITY"), ("SILENT", "SILENT"))
# A page reference (``basic/index.mdx``, ``caching.mdx:13-26``, ``legacy/lifecycle``), a
# reference to the schema (``schema.ts:26``, ``(schema)``) or a section name (``§Title``).
_REF = re.compile(
    r"(?P<page>(?:[\w.-]+/)*[\w-]+\.mdx|legacy/(?:lifecycle|transports))"
    r"(?::(?P<line>\d+)(?:-(?P<end>\d+))?)?(?P<aside>: )?"
    r"|(?P<schema>\bschema\.ts\b|\(schema\b)"
    r"|§\s*(?P<section>[^,;()\n]+)"
)
SCHEMA = "schema.ts"
_WORD = re.compile(r"[a-z0-9][a-z0-9_/$-]*[a-z0-9]")
_STOP_WORDS = """
    the and that this with for are any its from not must should may when then than into only
    each other which their there been being also such more most can will shall one two all per
    via use used does have has was were but nor out own same some what who how why"""
_STOP = frozenset(_STOP_WORDS.split())


def sort_key(ident: str) -> tuple[str, int]:
    group, _, number = ident.rpartition("-")
    return group, int(number)


# -- citations ---------------------------------------------------------------------------------


def _expand(group: str, first: str, tail: str) -> Iterator[str]:
    width = len(first)
    yield f"{group}-{first}"
    previous = int(first)
    for sep, number in re.findall(r"(/|\.\.)(\d+)", tail):
        stop = int(number)
        numbers = range(previous + 1, stop + 1) if sep != "/" else (stop,)
        for n in numbers:
            yield f"{group}-{n:0{width}d}"
        previous = stop


def _text_files(root: Path) -> Iterator[Path]:
    """The files of :data:`SCANNED`, less hidden folders (``.venv``, ``fuzz/.work``) and caches."""
    for name in SCANNED:
        top = root / name
        if top.is_file():
            yield top
            continue
        for folder, dirs, files in os.walk(top):
            skip = ("__pycache__", "node_modules")  # caches, and a test peer's npm packages
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in skip)
            for file in sorted(files):
                path = Path(folder, file)
                if path.relative_to(root).as_posix() not in NOT_CITATIONS:
                    yield path


def _read_text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scan(root: Path, known: Iterable[str] = ()) -> dict[str, list[str]]:
    """Map each ID cited under *root* to the files citing it (relative, in :data:`SCANNED` order).

    *known* are the IDs the digests define: only those count in their snake-case form.
    """
    known_set = set(known)
    groups = sorted({sort_key(k)[0] for k in known_set}, key=len, reverse=True)
    snake = (
        re.compile(
            r"(?<![a-z0-9])("
            + "|".join(re.escape(g.lower().replace("-", "_")) for g in groups)
            + r")_?(\d{1,2})(?![0-9])"
        )
        if groups
        else None
    )
    found: dict[str, list[str]] = {}
    for path in _text_files(root):
        text = _read_text(path)
        if text is None:
            continue
        ids: set[str] = set()
        for m in _CITE.finditer(text):
            if m.group(1) not in NOT_IDS:
                ids.update(_expand(m.group(1), m.group(2), m.group(3)))
        if snake is not None:
            for m in snake.finditer(text):
                ident = f"{m.group(1).upper().replace('_', '-')}-{m.group(2)}"
                if ident in known_set:
                    ids.add(ident)
        for ident in ids:
            found.setdefault(ident, []).append(path.relative_to(root).as_posix())
    return found


# -- the digests -------------------------------------------------------------------------------


@dataclass
class Ref:
    page: str
    lines: tuple[int, int] | None = None
    section: str | None = None
    rank: int = 0  # 0 a page, 1 the schema, 2 a page quoted in passing ("`page.mdx`: ...")


@dataclass
class Entry:
    """One requirement as a digest states it (its words are used to locate it, never written)."""

    ident: str
    digest: str
    group_title: str
    keyword: str
    text: str
    refs: list[Ref]
    context: list[Ref]
    source: str = ""  # the source cell of a table row


def _refs(text: str) -> list[Ref]:
    """The references of *text*, the pages it cites as sources first."""
    refs: list[Ref] = []
    for m in _REF.finditer(text.replace("`", "")):
        if m.group("page"):
            line, end = m.group("line"), m.group("end")
            lines = (int(line), int(end or line)) if line else None
            refs.append(Ref(m.group("page"), lines, rank=2 if m.group("aside") else 0))
        elif m.group("schema"):
            refs.append(Ref(SCHEMA, rank=1))
        elif refs and refs[-1].section is None:
            refs[-1].section = m.group("section").strip()
    return sorted(refs, key=lambda r: r.rank)


def _keyword(text: str) -> str:
    words = list(dict.fromkeys(_KEYWORD.findall(text.split("**Checks:**", maxsplit=1)[0])))
    if words:
        return " / ".join(words)
    return next((label for marker, label in _MARKERS if marker in text), "—")


def _group_title(heading: str) -> str:
    title = re.sub(r"^[\d.]+\s+", "", heading)
    title = re.sub(r"\s*\([^()]*(?:`|\.mdx|schema)[^()]*\)", "", title)
    return title.strip()


def parse_digest(path: Path) -> list[Entry]:
    """A digest's entries: ``- **ID** text`` bullets, ``| ID | level | text | source |`` rows."""
    entries: list[Entry] = []
    headings: dict[int, tuple[str, list[Ref]]] = {}
    lead_in: list[Ref] = []
    current: Entry | None = None
    for line in path.read_text().splitlines():
        heading = _HEADING.match(line)
        bullet = _ENTRY_BULLET.match(line)
        row = _ENTRY_ROW.match(line)
        if current is not None and line.startswith("  ") and not bullet:
            current.text += " " + line.strip()
            continue
        if current is not None:
            entries.append(_finish(current))
            current = None
        if heading:
            level = len(heading.group(1))
            headings = {k: v for k, v in headings.items() if k < level}
            headings[level] = (heading.group(2), _refs(heading.group(2)))
            lead_in = []
            continue
        outer = [r for _, (_, refs) in sorted(headings.items(), reverse=True) for r in refs]
        context = sorted(lead_in + outer, key=lambda r: r.rank)
        title = _group_title(headings[3][0]) if 3 in headings else ""
        if bullet:
            current = Entry(bullet.group(1), path.name, title, "", bullet.group(2), [], context)
        elif row:
            cells = [c.strip() for c in row.group(2).split("|")]
            if len(cells) >= 3:  # | ID | Level | Requirement | Source |
                level_cell, *words, source = cells
                entry = Entry(
                    row.group(1), path.name, title, level_cell, " ".join(words), [], context
                )
                entry.refs = _refs(source)
                entry.source = source
                entries.append(entry)
        elif (
            line.strip()
            and not line.startswith(("|", "-", "*", ">"))
            and line.rstrip().endswith(":")
        ):
            lead_in = _refs(line)
    if current is not None:
        entries.append(_finish(current))
    return entries


def _finish(bullet: Entry) -> Entry:
    """A bullet's references and keywords, once all its lines are read."""
    bullet.refs = _refs(bullet.text)
    bullet.keyword = _keyword(bullet.text)
    return bullet


# -- the spec pages ----------------------------------------------------------------------------


@dataclass
class Page:
    """A spec page: its headings (line, level, title) and its paragraphs (line, words)."""

    headings: list[tuple[int, int, str]] = field(default_factory=list)
    blocks: list[tuple[int, frozenset[str]]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Page:
        page = cls()
        fenced = False
        block: list[str] = []
        start = 0
        lines = path.read_text().splitlines()
        for number, line in enumerate([*lines, ""], start=1):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            heading = None if fenced else _HEADING.match(line)
            if heading or not line.strip():
                if block:
                    page.blocks.append((start, frozenset(_words(" ".join(block)))))
                block = []
                if heading:
                    page.headings.append((number, len(heading.group(1)), heading.group(2)))
                continue
            if not block:
                start = number
            block.append(line)
        return page

    def chain(self, line: int) -> str:
        """The headings (levels 2 to 4) enclosing *line*, outermost first."""
        stack: dict[int, str] = {}
        for number, level, title in self.headings:
            if number > line:
                break
            stack = {k: v for k, v in stack.items() if k < level}
            stack[level] = title
        titles = [stack[k] for k in sorted(stack) if 2 <= k <= 4]
        return " \u203a ".join(titles) or "(top of the page)"

    def find_heading(self, title: str) -> int | None:
        want = _norm(title)
        for exact in (True, False):
            for number, _, text in self.headings:
                have = _norm(text)
                if have == want or (not exact and have.startswith(want)):
                    return number
        return None


def _norm(text: str) -> str:
    return re.sub(r"[`*_]", "", text).strip().lower()


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP]


class Spec:
    """The spec's page trees, one per revision, read on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._pages: dict[str, dict[str, Path]] = {}
        self._read: dict[tuple[str, str], Page] = {}
        self._types: dict[str, list[tuple[str, frozenset[str]]]] = {}

    def pages(self, revision: str) -> dict[str, Path]:
        if revision not in self._pages:
            docs = self.root / revision / "docs"
            found = sorted(docs.rglob("*.mdx")) if docs.is_dir() else []
            self._pages[revision] = {p.relative_to(docs).as_posix(): p for p in found}
        return self._pages[revision]

    def types(self, revision: str) -> list[tuple[str, frozenset[str]]]:
        """The schema's definitions: each name with the words of its descriptions and fields."""
        if revision not in self._types:
            schema = json.loads((self.root / revision / "schema.json").read_text())
            self._types[revision] = [
                (name, frozenset(_words(" ".join(_descriptions(body)))))
                for name, body in sorted(schema.get("$defs", {}).items())
            ]
        return self._types[revision]

    def page(self, revision: str, path: str) -> Page:
        if (revision, path) not in self._read:
            self._read[revision, path] = Page.read(self.pages(revision)[path])
        return self._read[revision, path]

    def resolve(self, name: str, hints: Iterable[tuple[str, str]] = ()) -> tuple[str, str] | None:
        """(revision, path) of a digest's page reference, or None."""
        revision = REVISION
        if name == SCHEMA:
            return (revision, name) if (self.root / revision / "schema.json").is_file() else None
        if name.startswith("legacy/"):
            revision, name = LEGACY, f"basic/{name.removeprefix('legacy/')}.mdx"
        elif m := re.match(r"(?:docs/)?specification/([\d-]+)/(.*)", name):
            revision, name = m.group(1), m.group(2)
        pages = self.pages(revision)
        if name in pages:
            return revision, name
        matches = [p for p in pages if p.endswith("/" + name)]
        preferred = [h for h in hints if h[0] == revision and h[1] in matches]
        if preferred:
            return preferred[0]
        return (revision, matches[0]) if len(matches) == 1 else None


@dataclass
class Located:
    entry: Entry
    revision: str | None
    page: str | None
    section: str


def locate(entry: Entry, spec: Spec) -> Located:
    """The entry's spec page and section (see the module docstring for the order of evidence)."""
    hints = [r for ref in entry.context if (r := spec.resolve(ref.page)) is not None]
    sources = [r for r in entry.refs if r.rank < 2] + [r for r in entry.context if r.rank < 2]
    asides = [r for r in entry.refs + entry.context if r.rank == 2]
    for ref in sources + asides:
        where = spec.resolve(ref.page, hints)
        if where is not None and where[1] == SCHEMA:
            return Located(entry, *where, _schema_type(entry, spec.types(where[0])))
        if where is not None:
            return Located(entry, *where, _section(entry, ref, spec.page(*where)))
    return Located(entry, None, None, "")


def _schema_type(entry: Entry, types: list[tuple[str, frozenset[str]]]) -> str:
    """The schema definition the entry names, else the one whose comments share most words."""
    text = entry.text + " " + entry.source
    quoted = " ".join(re.findall(r"`([^`]*)`", text))
    names = {name for name, _ in types}
    for word in re.findall(r"[A-Z][A-Za-z]+", quoted + " " + text):
        if word in names:
            return f"`{word}`"
    best = _best(entry.text, types, margin=SCHEMA_MARGIN)
    return f"≈ `{best}`" if best is not None else ""


def _descriptions(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                if key == "properties" and isinstance(value, dict):
                    yield " ".join(value)
                yield from _descriptions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _descriptions(item)


def _section(entry: Entry, ref: Ref, page: Page) -> str:
    if ref.section and (line := page.find_heading(ref.section)) is not None:
        return page.chain(line)
    # The digests' line numbers drift as the spec is edited: they only narrow the search.
    line = None
    if ref.lines:
        low, high = ref.lines[0] - DRIFT, ref.lines[1] + DRIFT
        line = _best(entry.text, page.blocks, lambda start: low <= start <= high)
    if line is None:
        line = _best(entry.text, page.blocks)
    if line is None and ref.lines:
        line = ref.lines[0]
    if line is not None:
        return "≈ " + page.chain(line)
    for other in entry.context:
        if other.section and (line := page.find_heading(other.section)) is not None:
            return page.chain(line)
    return ""


K = TypeVar("K")


def _best(
    text: str,
    blocks: list[tuple[K, frozenset[str]]],
    keep: Callable[[K], bool] = bool,
    margin: float = 1.0,
) -> K | None:
    """The key of the block sharing the most distinctive words with *text* (IDF-weighted).

    None when no block shares :data:`MIN_SHARED` words, or when the best does not score
    *margin* times the runner-up.
    """
    text = _CITE.sub(" ", _REF.sub(" ", text.replace("`", "")))
    wanted = set(_words(text))
    df = Counter(w for _, words in blocks for w in words & wanted)
    n = len(blocks)
    scored: list[tuple[float, int, K]] = []
    for index, (key, words) in enumerate(blocks):
        shared = words & wanted
        if len(shared) >= MIN_SHARED and keep(key):
            scored.append((-sum(math.log((n + 1) / df[w]) for w in shared), index, key))
    scored.sort()
    if not scored or (len(scored) > 1 and -scored[0][0] < margin * -scored[1][0]):
        return None
    return scored[0][2]


# -- the index ---------------------------------------------------------------------------------

USAGE = "uv run python tools/gen_requirements.py"
INTRO = f"""\
# Requirement IDs

The code, tests, fuzz harnesses and docs cite requirements by ID: `GROUP-NN` (for example a
rule of `subscriptions/listen` as `SUB-04`, or in a test name as `sub04`). The IDs are those of
the project's normative digests of the MCP specification, revision {REVISION}
(`spec-base.md`, `spec-features.md`, `spec-auth.md`, `spec-tasks.md`, kept beside the repository
in `../shared/notes/`; `LEG-` IDs are the legacy behaviour of revision {LEGACY}). This page maps
each ID cited here to the spec page that states it, so that it can be read in the spec itself.

- **spec page**: a path under the revision's `docs/` folder (revision {REVISION} unless the page
  names another); `schema.ts` when the digest has the rule from the schema's comments (the
  spec repository's `schema/{REVISION}/schema.ts`), the section then being the definition.
- **section**: the page's headings around the requirement. Without a mark the digest names the
  section itself; `≈` marks a section found by matching the digest entry's words against the
  page (the digests' line numbers drift as the spec is edited), which is right in most cases but
  not all.
- **keyword**: the requirement's keywords as the digest gives them (`—`: none; `derived`,
  `SILENT`, `AMBIGUITY`: the digest's own notes where the spec leaves a choice).

Where the repository cites an ID is left to `grep`: a column of it would make this page stale at
every commit that moves a citation.

An ID defined by two digests has a row for each. Nothing here quotes a sentence of the spec or
of the digests: only page paths, headings and keywords. Regenerate after citing a new ID (it
needs `../shared`); the test suite fails when this file is stale:

    {USAGE}
"""


def render(located: list[Located], cited: dict[str, list[str]]) -> str:
    """The text of ``docs/requirements.md``."""
    by_group: dict[str, list[Located]] = {}
    for loc in located:
        by_group.setdefault(sort_key(loc.entry.ident)[0], []).append(loc)
    defined = {loc.entry.ident for loc in located}
    out = [INTRO]
    for group, rows in by_group.items():
        sources = dict.fromkeys(f"`{r.entry.digest}`, “{r.entry.group_title}”" for r in rows)
        out.append(f"## {group}\n\nDefined in {'; '.join(sources)}.\n")
        out.append("| ID | spec page | section | keyword |")
        out.append("| --- | --- | --- | --- |")
        counts = Counter(r.entry.ident for r in rows)
        for r in sorted(
            rows, key=lambda r: (sort_key(r.entry.ident), DIGESTS.index(r.entry.digest))
        ):
            ident = r.entry.ident
            if counts[ident] > 1:
                ident += f" ({r.entry.digest})"
            page = f"`{r.page}`" if r.page else "—"
            if r.revision not in (None, REVISION):
                page += f" ({r.revision})"
            cells = [ident, page, r.section or "—", r.entry.keyword]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    unresolved = sorted((i for i in cited if i not in defined), key=sort_key)
    out.append("## Unresolved\n")
    if not unresolved:
        out.append("None: every ID cited in the repository is defined by a digest.\n")
    else:
        out.append("Cited in the repository but defined by no digest:\n")
        out.extend(f"- {i}: {_where(cited[i])}" for i in unresolved)
        out.append("")
    return "\n".join(out)


def _where(paths: list[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:MAX_WHERE])
    more = len(paths) - MAX_WHERE
    return shown + (f" and {more} more" if more > 0 else "")


def generate(shared: Path) -> str:
    """Read the digests and the spec under *shared*; scan the repository; return the index."""
    notes = shared / "notes"
    missing = [d for d in DIGESTS if not (notes / d).is_file()]
    if missing:
        raise SystemExit(f"no digest {', '.join(missing)} under {notes}")
    entries = [e for d in DIGESTS for e in parse_digest(notes / d)]
    cited = scan(ROOT, {e.ident for e in entries})
    spec = Spec(shared / "spec")
    located = [locate(e, spec) for e in entries if e.ident in cited]
    return render(located, cited)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--check", action="store_true", help="fail if docs/requirements.md is stale")
    args = ap.parse_args(argv)
    text = generate(args.shared)
    current = OUT.read_text() if OUT.exists() else None
    if args.check:
        if current != text:
            print(f"stale: {OUT_NAME} (run: {USAGE})", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT_NAME} ({'changed' if current != text else 'unchanged'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
