"""Run the coverage-guided harnesses (atheris, libFuzzer underneath).

One harness, with libFuzzer's own flags passed through::

    uv run --group fuzz python -m fuzz.run server -max_total_time=3600

Every harness for a fixed, seeded budget (what CI runs)::

    uv run --group fuzz python -m fuzz.run --all --runs 2000 --seed 1

Each harness starts from seeds generated from the spec's examples (``fuzz/corpus.py``) in
``fuzz/.work/NAME/corpus`` (git ignores ``fuzz/.work``), which keeps what libFuzzer adds;
a failing input is written to ``fuzz/.work/NAME/crash-*``.  Replay one with
``python -m fuzz.run NAME FILE``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
#: harness name -> (seed corpus kind, name of the check in fuzz.invariants)
HARNESSES = {
    "decode": ("messages", "check_decode"),
    "server": ("server", "check_server_stream"),
    "client": ("client", "check_client_stream"),
}


def fuzz_one(name: str, flags: list[str]) -> None:
    import atheris

    with atheris.instrument_imports(include=["mcp_proto"]):
        import mcp_proto  # noqa: F401
    from fuzz import corpus, invariants

    kind, check_name = HARNESSES[name]
    check = getattr(invariants, check_name)
    work = WORK / name
    paths = [f for f in flags if not f.startswith("-")]
    if not paths:  # fuzz from the generated seeds rather than replay given files
        corpus.write(work / "corpus", kind)
        paths = [str(work / "corpus")]
    options = [f for f in flags if f.startswith("-")]
    argv = [sys.argv[0], f"-artifact_prefix={work}/", "-max_len=8192", *options, *paths]
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
