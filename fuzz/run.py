"""Run the coverage-guided harnesses (atheris, libFuzzer underneath).

One harness, with libFuzzer's own flags passed through::

    uv run --group fuzz python -m fuzz.run server -max_total_time=3600

Every harness for a fixed, seeded budget (what CI runs)::

    uv run --group fuzz python -m fuzz.run --all --runs 3000 --seed 1

Each harness starts from seeds generated from the spec's examples (``fuzz/corpus.py``) in
``fuzz/.work/NAME/corpus`` (git ignores ``fuzz/.work``), which keeps what libFuzzer adds;
a failing input is written to ``fuzz/.work/NAME/crash-*``.  Replay one with
``python -m fuzz.run NAME FILE``.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
#: harness name -> (seed corpus kind, module in fuzz/, name of the check in it)
HARNESSES = {
    "decode": ("messages", "invariants", "check_decode"),
    "server": ("server", "invariants", "check_server_stream"),
    "client": ("client", "invariants", "check_client_stream"),
    "legacy_client": ("legacy_client", "invariants_legacy_client", "check_legacy_client_stream"),
    "legacy_http_client": (
        "legacy_http_client",
        "invariants_legacy_client",
        "check_legacy_http_client",
    ),
    "http_server": ("http_server", "invariants_http", "check_http_server"),
    "http1": ("http1", "invariants_http1", "check_http1"),
    "http_client": ("http_client", "invariants_http", "check_http_client"),
    "sse": ("sse", "invariants_http", "check_sse"),
    "schema": ("schema", "invariants_schema", "check_schema"),
}

#: the modules whose coverage guides a harness, when not all of mcp_proto and h11: the
#: ``http1`` harness explores our reader only (h11 is its slow second opinion)
INSTRUMENT = {"http1": ["mcp_proto.http.wire"]}

#: libFuzzer dictionaries (tokens the mutator splices in), written next to the corpus
DICTIONARIES = {
    "schema": [
        *(
            f'"{k}":'
            for k in [
                "$schema", "$id", "$anchor", "$ref", "$defs", "$dynamicRef", "$dynamicAnchor",
                "$recursiveRef", "$recursiveAnchor", "definitions", "dependencies", "type",
                "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
                "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "items",
                "prefixItems", "additionalItems", "contains", "minContains", "maxContains",
                "maxItems", "minItems", "uniqueItems", "unevaluatedItems", "properties",
                "patternProperties", "additionalProperties", "propertyNames",
                "unevaluatedProperties", "required", "dependentRequired", "dependentSchemas",
                "maxProperties", "minProperties", "allOf", "anyOf", "oneOf", "not", "if",
                "then", "else",
            ]
        ),
        '"#/$defs/', '"http://json-schema.org/draft-07/schema#"', "true", "false", "null",
        '"object"', '"array"', '"string"', '"integer"', '"number"', '"boolean"', '"null"',
    ],
    "http_server": ["\r\n", "content-length: ", "transfer-encoding: chunked", "mcp-method: ",
                    "mcp-name: ", "mcp-protocol-version: 2026-07-28", "HTTP/1.1", "HEAD ",
                    "connection: close", "expect: 100-continue"],
    "http_client": ["\r\n", "content-length: ", "transfer-encoding: chunked", "HTTP/1.1 ",
                    "text/event-stream", "connection: close", "data: ", "\n\n"],
    "sse": ["data: ", "event: ", "id: ", "retry: ", "\r\n", ":", "\xef\xbb\xbf"],
}  # fmt: skip
DICTIONARIES["http1"] = DICTIONARIES["http_server"]


def _escape(byte: int) -> str:
    return chr(byte) if 0x20 <= byte < 0x7F and byte not in b'"\\' else f"\\x{byte:02x}"


def _dictionary(name: str, folder: Path) -> list[str]:
    """``-dict=FILE`` for the harness, if it has one."""
    tokens = DICTIONARIES.get(name)
    if not tokens:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokens.dict"
    lines = ['"' + "".join(_escape(b) for b in tok.encode("latin-1")) + '"' for tok in tokens]
    path.write_text("\n".join(lines) + "\n")
    return [f"-dict={path}"]


def fuzz_one(name: str, flags: list[str]) -> None:
    import atheris

    with atheris.instrument_imports(include=INSTRUMENT.get(name, ["mcp_proto", "h11"])):
        import h11  # noqa: F401

        import mcp_proto
        import mcp_proto.http
        import mcp_proto.schema

        mcp_proto.http.HTTPClientConnection  # noqa: B018 (imports the h11 client, instrumented)
    import importlib

    from fuzz import corpus

    kind, module, check_name = HARNESSES[name]
    invariants = importlib.import_module(f"fuzz.{module}")
    check = getattr(invariants, check_name)
    if hasattr(invariants, "after_instrumentation"):  # a harness's own set-up
        invariants.after_instrumentation()
    work = WORK / name
    paths = [f for f in flags if not f.startswith("-")]
    if not paths:  # fuzz from the generated seeds rather than replay given files
        corpus.write(work / "corpus", kind)
        paths = [str(work / "corpus")]
    options = [f for f in flags if f.startswith("-")]
    # -timeout: a runaway (a schema validation the step budget failed to stop) is a failure
    # argv[0] is the command that libFuzzer's -jobs and -fork run again, through a shell
    again = f"{shlex.quote(sys.executable)} -m fuzz.run {name}"
    argv = [again, f"-artifact_prefix={work}/", "-max_len=8192", "-timeout=20"]
    argv += _dictionary(name, work)
    argv += [*options, *paths]
    atheris.Setup(argv, check)
    atheris.Fuzz()


def fuzz_all(runs: int, seed: int, names: list[str]) -> int:
    failed = []
    for name in names:
        print(f"== {name}: {runs} runs, seed {seed}", flush=True)
        flags = [
            f"-runs={runs}",
            f"-seed={seed}",
            "-timeout=20",
            "-rss_limit_mb=4096",
            "-print_final_stats=1",
        ]
        proc = subprocess.run(
            [sys.executable, "-m", "fuzz.run", name, *flags],
            cwd=HERE.parent,
            check=False,
            stderr=subprocess.PIPE,
            text=True,
        )
        stats = [ln for ln in proc.stderr.splitlines() if ln.startswith(("stat::", "Done "))]
        print("\n".join(stats[:3]))
        if proc.returncode != 0:
            failed.append(name)
            print(proc.stderr[-4000:])
    print(f"fuzz: {len(names) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in HARNESSES:
        fuzz_one(sys.argv[1], sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="run every harness")
    ap.add_argument("--runs", type=int, default=2000, help="executions per harness")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("names", nargs="*", default=[], help=f"harnesses ({', '.join(HARNESSES)})")
    args = ap.parse_args()
    names = list(HARNESSES) if args.all or not args.names else args.names
    return fuzz_all(args.runs, args.seed, names)


if __name__ == "__main__":
    sys.exit(main())
