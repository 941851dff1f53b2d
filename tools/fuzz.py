"""Feed the doctor mutated captures, pastes and bundles and count what it does with them (issue 21).

    python -m tools.fuzz --captures 200 --pastes 300 --bundles 40 --seed 1

Every case runs the real command line in-process (`gpu-doctor --root DIR --json`, `gpu-doctor triage FILE`,
`gpu-doctor --replay FILE --json`) and is sorted into: a report (exit 0, 1 or 3), a clear refusal (exit 2 with
a message), `crash` findings (a check or probe that broke, said as such), and the failures the project
promises never happen: an internal error (exit 4), an exception out of main(), a terminal escape character in
text output, and JSON output that does not parse. The failures are printed with their seed and mutation, so
each can become a test.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import shutil
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from torch_gpu_doctor.cli import main as doctor  # noqa: E402 - after the path fix above

HOSTS = ROOT / "tests" / "fixtures" / "hosts"
PASTES = (ROOT / "tests" / "triage" / "pastes", ROOT / "tests" / "triage" / "reports")
CAPTURE_FILES = ("host.json", "nvml.json", "probes.json", "commands.json")
HOSTILE = ["\x1b]0;owned\x07", "\x1b[2J", "\x1b[31m", "\ud800", "\x00", "é" * 3, "A" * 5000, "", "null"]
VALUES: list[Any] = [None, 0, -1, 2**63, 1.5, True, "x", "", [], {}, [1, [2]], {"a": {"b": None}}, *HOSTILE]


DEEP = "\x00deep\x00"


def dumps(data: Any, rng: random.Random) -> str:
    """JSON text; a DEEP marker becomes lists nested deeper than json.dumps itself can go."""
    depth = rng.choice((70, 100_000))
    return json.dumps(data).replace(json.dumps(DEEP), "[" * depth + "1" + "]" * depth)


def run(argv: list[str]) -> tuple[str, str]:
    """(outcome, detail) of one command."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = doctor(argv)
    except BaseException as exc:  # the promise under test: nothing escapes main()
        return "exception", f"{type(exc).__name__}: {exc}"[:200]
    text = out.getvalue()
    if code == 4:
        return "internal error", (err.getvalue() or text)[-200:]
    if "--json" in argv:
        try:
            document = json.loads(text)
        except ValueError as exc:
            return "invalid JSON", str(exc)[:200]
        findings = document.get("findings", []) if isinstance(document, dict) else []
        crashes = [f for f in findings if isinstance(f, dict) and f.get("status") == "crash"]
        bugs = [f for f in crashes if f.get("traceback")]  # a check or probe that raised: a bug, not the data
        if bugs:
            return "check bug", bugs[0].get("summary", "")[:200]
        if crashes:
            return "crash findings", crashes[0].get("summary", "")[:200]
    elif any(c in text for c in ("\x1b", "\x07", "\x9b")):
        return "escape in output", repr(text[:120])
    if code == 2:
        return "refused", err.getvalue().strip().splitlines()[-1][:200] if err.getvalue().strip() else ""
    return "report", ""


def _mutate_json(data: Any, rng: random.Random) -> tuple[Any, str]:
    """One change somewhere in a JSON document: a value replaced, a key dropped, or a value nested deep."""
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in node:
                paths.append((node, key))
                walk(node[key])
        elif isinstance(node, list):
            for i in range(len(node)):
                paths.append((node, i))
                walk(node[i])

    walk(data)
    if not paths:
        return rng.choice(VALUES), "the whole document replaced"
    parent, key = rng.choice(paths)
    kind = rng.random()
    if kind < 0.7:
        value = rng.choice(VALUES)
        parent[key] = value
        return data, f"[{key!r}] = {value!r}"[:120]
    if kind < 0.85 and isinstance(parent, dict):
        del parent[key]
        return data, f"[{key!r}] deleted"
    parent[key] = DEEP  # written as 70 or 100,000 nested lists by dumps()
    return data, f"[{key!r}] nested deep"


def fuzz_captures(count: int, rng: random.Random, scratch: Path) -> list[tuple[str, str, str]]:
    hosts = sorted(p for p in HOSTS.iterdir() if (p / "root").is_dir())
    results = []
    for i in range(count):
        host = rng.choice(hosts)
        case = scratch / f"capture-{i}"
        shutil.copytree(host, case, symlinks=True)  # sysfs trees hold symlink loops
        name = rng.choice([f for f in CAPTURE_FILES if (case / f).is_file()] or ["host.json"])
        path = case / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        mutated, what = _mutate_json(data, rng)
        path.write_text(dumps(mutated, rng), encoding="utf-8")
        outcome, detail = run(["--root", str(case), "--json", "--no-plugins"])
        results.append((outcome, f"{host.name}/{name}{what}", detail))
        shutil.rmtree(case, ignore_errors=True)
    return results


def _mutate_text(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    kind = rng.randrange(6)
    if kind == 0:
        cut = rng.randrange(len(data) + 1)
        return data[:cut], f"cut at {cut}"
    if kind == 1:
        at = rng.randrange(len(data) + 1)
        bad = rng.choice(HOSTILE).encode("utf-8", "surrogatepass")
        return data[:at] + bad + data[at:], f"inserted {bad[:20]!r} at {at}"
    if kind == 2:
        flipped = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            if flipped:
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped), "bytes flipped"
    if kind == 3:
        return data.decode("utf-8", "replace").encode("utf-16"), "UTF-16 with BOM"
    if kind == 4:
        return data.replace(b"\n", b"\r\n") * rng.randrange(1, 40), "CRLF, repeated"
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096))), "random bytes"


def fuzz_pastes(count: int, rng: random.Random, scratch: Path) -> list[tuple[str, str, str]]:
    pastes = sorted(p for folder in PASTES for p in folder.glob("*.txt"))
    results = []
    for i in range(count):
        source = rng.choice(pastes)
        data, what = _mutate_text(source.read_bytes(), rng)
        path = scratch / f"paste-{i}.txt"
        path.write_bytes(data)
        argv = ["triage", str(path)] if rng.random() < 0.5 else ["triage", "--json", str(path)]
        outcome, detail = run(argv)
        results.append((outcome, f"{source.name}: {what}", detail))
    return results


def fuzz_bundles(count: int, rng: random.Random, scratch: Path) -> list[tuple[str, str, str]]:
    made = scratch / "made.tar.gz"
    outcome, detail = run(
        ["bundle", "--output", str(made), "--no-plugins"]
    )  # this machine: bundles record it
    if not made.is_file():
        return [("bundle not made", outcome, detail)]
    original = made.read_bytes()
    results = []
    for i in range(count):
        path = scratch / f"bundle-{i}.tar.gz"
        if rng.random() < 0.5:
            data, what = _mutate_text(original, rng)
            path.write_bytes(data)
        else:  # a member changed inside a well-formed archive
            with tarfile.open(made) as tar:
                members = [(m, tar.extractfile(m).read() if m.isreg() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
            target = rng.choice([m for m, d in members if d is not None])
            with tarfile.open(path, "w:gz") as tar:
                for m, content in members:
                    body = content
                    if m is target and content is not None:
                        try:
                            changed, change = _mutate_json(json.loads(content), rng)
                            body = dumps(changed, rng).encode()
                        except ValueError:
                            body, change = _mutate_text(content, rng)
                        m.size = len(body)
                        what = f"{m.name}{change}"
                    tar.addfile(m, io.BytesIO(body) if body is not None else None)
        outcome, detail = run(["--replay", str(path), "--json", "--no-plugins"])
        results.append((outcome, f"bundle {what}", detail))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--captures", type=int, default=100)
    parser.add_argument("--pastes", type=int, default=200)
    parser.add_argument("--bundles", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)  # noqa: S311 - reproducible mutations, not secrets
    failures = (
        "internal error",
        "exception",
        "escape in output",
        "invalid JSON",
        "bundle not made",
        "check bug",
    )
    bad = 0
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for name, fn, n in (
            ("captures", fuzz_captures, args.captures),
            ("pastes", fuzz_pastes, args.pastes),
            ("bundles", fuzz_bundles, args.bundles),
        ):
            results = fn(n, rng, scratch)
            counts = Counter(outcome for outcome, _, _ in results)
            print(f"{name}: {len(results)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
            for outcome, what, detail in results:
                if outcome in failures:
                    bad += 1
                    print(f"  {outcome}: {what} -> {detail}")
            for kind in ("crash findings", "refused"):  # samples: each must say what was wrong and where
                for outcome, what, detail in [r for r in results if r[0] == kind][:3]:
                    print(f"  ({outcome}: {what} -> {detail})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
