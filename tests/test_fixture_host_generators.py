"""The fixture hosts that tools/fixture_hosts_*.py write are exactly what is committed.

A hand edit of such a host (or of a sysfs/storage tree it copies) without re-running its generator, or a
generator change without regenerating, fails here. expected.json is hand-written and not compared.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.fixture_host_tree import HOSTS, HostTree
from tools.fixture_hosts_driver_states import BUILDERS as DRIVER_STATE_HOSTS
from tools.fixture_hosts_egpu import BUILDERS as EGPU_HOSTS
from tools.fixture_hosts_jetson import BUILDERS as JETSON_HOSTS
from tools.fixture_hosts_links import BUILDERS as LINK_HOSTS
from tools.fixture_hosts_platform import BUILDERS as PLATFORM_HOSTS
from tools.fixture_hosts_python_envs import BUILDERS as PYTHON_ENV_HOSTS

BUILDERS: tuple[Callable[[], HostTree], ...] = (
    *EGPU_HOSTS,
    *LINK_HOSTS,
    *PLATFORM_HOSTS,
    *JETSON_HOSTS,
    *DRIVER_STATE_HOSTS.values(),
    *PYTHON_ENV_HOSTS.values(),
)
HAND_WRITTEN = {"expected.json"}


def _snapshot(directory: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry below `directory`: ("link", target), ("file", bytes) or ("dir", "")."""
    entries: dict[str, tuple[str, bytes | str]] = {}
    for parent, dirs, files in os.walk(directory):  # os.walk does not follow links to directories
        for name in (*dirs, *files):
            path = Path(parent) / name
            rel = str(path.relative_to(directory))
            if rel in HAND_WRITTEN:
                continue
            if path.is_symlink():
                entries[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[rel] = ("dir", "")
            else:
                entries[rel] = ("file", path.read_bytes())
    return entries


def test_the_generators_cover_twenty_six_distinct_hosts() -> None:
    names = [build().name for build in BUILDERS]
    assert len(names) == len(set(names)) == 26, names


@pytest.mark.parametrize("build", BUILDERS, ids=[b.__name__ for b in BUILDERS])
def test_committed_host_is_what_its_generator_writes(build: Callable[[], HostTree], tmp_path: Path) -> None:
    host = build()
    written = host.write(tmp_path)
    committed = HOSTS / host.name
    want, got = _snapshot(written), _snapshot(committed)
    assert sorted(set(want) ^ set(got)) == [], "regenerate: python tools/regen.py"
    changed = [rel for rel in want if want[rel] != got[rel]]
    assert changed == [], "regenerate: python tools/regen.py"
    assert (committed / "expected.json").is_file(), f"{host.name}: expected.json is written by hand"
