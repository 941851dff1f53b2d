"""checks/specs.json, the index `--list-checks` and `explain` read, stays equal to the real registry; reading it
imports no check module and not the Facts model (DESIGN §7: start-up under 300 ms)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_plugins import GOOD_MODULE, _distribution
from torch_gpu_doctor.catalog import builtin_modules, builtin_specs, load_checks, spec_from_json, spec_to_json
from torch_gpu_doctor.checks import BUILTIN_CHECK_MODULES
from torch_gpu_doctor.model import CheckSpec, Explanation
from torch_gpu_doctor.registry import RegistryError

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "checks" / "specs.json"
REBUILD = "run python tools/regen.py"


def _drift(index: tuple[CheckSpec, ...], registry: tuple[CheckSpec, ...]) -> list[str]:
    """Every difference, field by field, between the index and the registry (empty: in step)."""
    ids_index, ids_registry = [s.id for s in index], [s.id for s in registry]
    if ids_index != ids_registry:
        return [f"ids or their order differ: index {ids_index} != registry {ids_registry}"]
    problems = []
    for ours, real in zip(index, registry, strict=True):
        for field in ("title", "area", "required"):
            if getattr(ours, field) != getattr(real, field):
                problems.append(f"{real.id}.{field}: {getattr(ours, field)!r} != {getattr(real, field)!r}")
        for field in ("what", "why", "fix"):
            if getattr(ours.explanation, field) != getattr(real.explanation, field):
                problems.append(f"{real.id}.explanation.{field} differs")
    return problems


def _registry_specs() -> tuple[CheckSpec, ...]:
    return tuple(c.spec for c in load_checks(plugins=False).checks)


def test_the_index_equals_the_registry_field_by_field() -> None:
    problems = _drift(builtin_specs(), _registry_specs())
    assert not problems, f"checks/specs.json is stale: {REBUILD}\n" + "\n".join(problems)


def test_the_shipped_file_is_the_one_in_the_source_tree() -> None:
    # builtin_specs() reads the installed package data; the file in checks/ is what a wheel ships
    document = json.loads(INDEX.read_text(encoding="utf-8"))
    from_source = tuple(spec_from_json(entry) for entry in document["checks"])
    assert from_source == builtin_specs(), f"the installed index differs from checks/specs.json: {REBUILD}"


def test_drift_is_detected_and_named() -> None:
    # proves the test above can fail: a changed title, explanation, flag, order or a missing check
    real = _registry_specs()
    first, second = real[0], real[1]
    retitled = (dataclasses.replace(first, title="old title"), *real[1:])
    assert _drift(retitled, real) == [f"{first.id}.title: 'old title' != {first.title!r}"]
    reworded = dataclasses.replace(first, explanation=dataclasses.replace(first.explanation, why="x"))
    assert _drift((reworded, *real[1:]), real) == [f"{first.id}.explanation.why differs"]
    flipped = dataclasses.replace(second, required=not second.required)
    assert _drift((first, flipped, *real[2:]), real) == [
        f"{second.id}.required: {flipped.required!r} != {second.required!r}"
    ]
    assert _drift((second, first, *real[2:]), real)[0].startswith("ids or their order differ")
    assert _drift(real[:-1], real)[0].startswith("ids or their order differ")


def test_the_index_covers_every_built_in_module_in_registry_order() -> None:
    modules = {c.module for c in load_checks(plugins=False).checks}
    assert modules == set(BUILTIN_CHECK_MODULES)
    ids = [s.id for s in builtin_specs()]
    assert ids[0] == "gpu.present"  # the first module's first check
    assert len(ids) == len(set(ids))


def test_an_entry_round_trips() -> None:
    spec = CheckSpec("lab.x", "A title — with “quotes”", "lab", Explanation("w\nmore", "y", "f"), True)
    assert spec_from_json(json.loads(json.dumps(spec_to_json(spec, "lab.checks")))) == spec


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("gpu.present", "malformed entry"),
        ({"id": "a.b", "title": "t", "area": "a", "required": False}, "malformed entry"),
        (
            {"id": "a.b", "title": "t", "area": "a", "required": "no", "explanation": {}},
            "'required' is not true/false",
        ),
        (
            {
                "id": 1,
                "title": "t",
                "area": "a",
                "required": False,
                "explanation": {"what": "w", "why": "y", "fix": "f"},
            },
            "'id' is not a string",
        ),
        (
            {
                "id": "a.b",
                "title": "t",
                "area": "a",
                "required": False,
                "explanation": {"what": "w", "why": "y"},
            },
            "'fix' is not a string",
        ),
    ],
)
def test_a_garbled_entry_is_a_registry_error(entry: object, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        spec_from_json(entry)


IMPORTS = """
import json, sys
{call}
heavy = sorted(m for m in sys.modules if m.startswith("torch_gpu_doctor.checks.") or m == "torch_gpu_doctor.facts.model")
print(json.dumps(heavy))
"""


def _heavy_modules(call: str, env: dict[str, str] | None = None) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTS.format(call=call)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    heavy: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return heavy


def test_builtin_specs_imports_no_check_module_nor_the_facts_model() -> None:
    call = "from torch_gpu_doctor.catalog import builtin_specs\nassert len(builtin_specs()) > 40"
    assert _heavy_modules(call) == []


def test_the_import_check_sees_load_checks() -> None:
    # proves the test above can fail: the registry itself imports every check module and the Facts model
    heavy = _heavy_modules("from torch_gpu_doctor.catalog import load_checks\nload_checks(plugins=False)")
    assert "torch_gpu_doctor.facts.model" in heavy
    assert "torch_gpu_doctor.checks.gpu_present" in heavy


def test_the_index_names_each_checks_module() -> None:
    # load_checks(only=...) imports the modules the index names: a stale module there would lose a check
    real = {c.spec.id: c.module for c in load_checks(plugins=False).checks}
    assert builtin_modules() == real, f"checks/specs.json names other modules: {REBUILD}"


def test_only_imports_just_the_modules_of_the_checks_asked_for() -> None:
    call = (
        "from torch_gpu_doctor.catalog import load_checks\n"
        "got = load_checks(plugins=False, only=['torch.arch_compat', 'gpu.present', 'no.such_check'])\n"
        "assert [c.spec.id for c in got.checks] == ['gpu.present', 'torch.arch_compat'], got"
    )
    heavy = [
        m for m in _heavy_modules(call) if m.startswith("torch_gpu_doctor.checks.") and ".support" not in m
    ]
    assert heavy == ["torch_gpu_doctor.checks.gpu_present", "torch_gpu_doctor.checks.torch_build"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--list-checks"],
        ["--list-checks", "--json"],
        ["explain", "torch.arch_compat"],
        ["--list-checks", "--no-plugins"],
    ],
)
def test_list_and_explain_import_no_check_module_without_plugins_installed(argv: list[str]) -> None:
    call = f"import contextlib, io\nfrom torch_gpu_doctor.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n    assert main({argv!r}) == 0"
    assert _heavy_modules(call) == []


def test_an_installed_plugin_is_listed_and_explained(tmp_path: Path) -> None:
    _distribution(tmp_path, "lab-checks", "lab_checks", GOOD_MODULE)
    _distribution(tmp_path, "broken-checks", "broken_checks", "raise ImportError('needs libfoo')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))

    def doctor(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "torch_gpu_doctor", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    listed = doctor("--list-checks")
    assert listed.returncode == 0
    assert "lab.gpu_count" in listed.stdout
    assert "gpu.present" in listed.stdout
    assert "plugin.broken_checks: The check plugin 'broken-checks'" in listed.stderr
    explained = doctor("explain", "lab.gpu_count")
    assert explained.returncode == 0
    assert "Ask the lab admins." in explained.stdout
    hidden = doctor("--no-plugins", "explain", "lab.gpu_count")
    assert hidden.returncode == 2
    assert "unknown check id 'lab.gpu_count'" in hidden.stderr
    # with a plugin installed the checks really load (the plugin registers through the registry)
    call = "import contextlib, io\nfrom torch_gpu_doctor.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n    main(['--list-checks'])"
    assert "torch_gpu_doctor.checks.gpu_present" in _heavy_modules(call, env)
