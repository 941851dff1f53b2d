"""Regenerate every derived file, in the order they depend on each other, and say which ones changed.

    python tools/regen.py            # write them
    python tools/regen.py --check    # write nothing; exit 1 and name the files that are out of date

1. checks/specs.json: the index of the built-in checks (tools/build_check_index.py), and the error
   signatures' needles in checks/support/error_signatures.json (tools/signature_needles.py)
2. the fixture hosts built from parts (tools/fixture_hosts_{egpu,links,platform,driver_states,python_envs}.py)
3. the fixture hosts' torch-probe recordings (tools/fixture_torch_probes.py)
4. the README tour: real output of the commands between its markers (tools/refresh_readme_tour.py)

The SVG snapshots of the TUI are not here: `pytest tests/tui/test_snapshots.py --snapshot-update`, then look
at them (docs/contributing.md). Run from the repository root, in the development venv.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python tools/regen.py` puts tools/ first, not the repository
    sys.path.insert(0, str(ROOT))

from tools import (  # noqa: E402 - after the path fix above
    build_check_index,
    fixture_hosts_driver_states,
    fixture_hosts_egpu,
    fixture_hosts_jetson,
    fixture_hosts_links,
    fixture_hosts_platform,
    fixture_hosts_python_envs,
    fixture_topology,
    fixture_torch_probes,
    refresh_readme_tour,
    signature_needles,
)

# (what, the files or folders it writes, relative to the repository, how)
STEPS: tuple[tuple[str, tuple[str, ...], Callable[[], int]], ...] = (
    ("check index", ("checks/specs.json",), build_check_index.main),
    ("error-signature needles", ("checks/support/error_signatures.json",), signature_needles.main),
    ("eGPU fixture hosts", ("tests/fixtures/hosts",), fixture_hosts_egpu.main),
    ("PCIe-link fixture hosts", ("tests/fixtures/hosts",), fixture_hosts_links.main),
    ("platform fixture hosts", ("tests/fixtures/hosts",), fixture_hosts_platform.main),
    ("Jetson fixture hosts", ("tests/fixtures/hosts",), fixture_hosts_jetson.main),
    ("driver-state fixture hosts", ("tests/fixtures/hosts",), lambda: fixture_hosts_driver_states.main([])),
    (
        "python-environment fixture hosts",
        ("tests/fixtures/hosts",),
        lambda: fixture_hosts_python_envs.main([]),
    ),
    ("GPU topology of the multi-GPU hosts", ("tests/fixtures/hosts",), fixture_topology.main),
    ("torch-probe recordings", ("tests/fixtures/hosts",), fixture_torch_probes.main),
    ("README tour", ("README.md", "docs/usage.md"), refresh_readme_tour.main),
)


def fingerprints(paths: tuple[str, ...]) -> dict[str, str]:
    """path -> sha256 of every file (and link target) below the given paths."""
    found: dict[str, str] = {}
    for name in paths:
        top = ROOT / name
        entries = [top] if top.is_file() else [Path(d) / f for d, _, files in os.walk(top) for f in files]
        for path in entries:
            rel = str(path.relative_to(ROOT))
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            found[rel] = hashlib.sha256(data).hexdigest()
    return found


def regenerate() -> list[str]:
    """Run every step; the files whose content changed."""
    watched = tuple(sorted({p for _, paths, _ in STEPS for p in paths}))
    before = fingerprints(watched)
    for what, _, run in STEPS:
        print(f"regenerating the {what}", file=sys.stderr)
        if run() not in (0, None):
            raise SystemExit(f"regen: the {what} step failed")
    after = fingerprints(watched)
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 when a file is out of date"
    )
    args = parser.parse_args(argv)
    if not args.check:
        changed = regenerate()
        print("\n".join(changed) if changed else "nothing changed")
        return 0
    # --check: regenerate in a copy of the watched files, put them back, report the difference
    watched = tuple(sorted({p for _, paths, _ in STEPS for p in paths}))
    with tempfile.TemporaryDirectory() as keep:
        for name in watched:
            source = ROOT / name
            target = Path(keep) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True)
            else:
                shutil.copy2(source, target)
        try:
            changed = regenerate()
        finally:
            for name in watched:
                source, saved = ROOT / name, Path(keep) / name
                if source.is_dir():
                    shutil.rmtree(source)
                    shutil.copytree(saved, source, symlinks=True)
                else:
                    shutil.copy2(saved, source)
    if changed:
        print("out of date (run python tools/regen.py):\n" + "\n".join(changed))
        return 1
    print("every derived file is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
