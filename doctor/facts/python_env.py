"""The Python that will be diagnosed, described by itself in a child process."""

from __future__ import annotations

import json
from typing import Any

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class PythonFacts:
    executable: str  # as given (--python) or the interpreter running gpu-doctor
    version: Maybe[str]
    implementation: Maybe[str]
    machine: Maybe[str]  # platform.machine() of the target interpreter
    system: Maybe[str]  # platform.system()
    prefix: Maybe[str]
    base_prefix: Maybe[str]
    in_virtualenv: Maybe[bool]
    conda_prefix: Maybe[str]
    user_site_enabled: Maybe[bool]


PROBE_TIMEOUT_S = 20.0


def parse_python_probe(stdout: str) -> dict[str, Any] | Unavailable:
    try:
        data = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else None
    except (ValueError, RecursionError):  # RecursionError: garbage such as "[[[[..." nested too deep
        data = None
    if not isinstance(data, dict):
        return Unavailable(Reason.UNPARSEABLE, f"probe printed no JSON object: {stdout[:200]!r}")
    return data


def gather_python(host: Host, python: str) -> PythonFacts:
    result = host.run_probe(python, "python_env", PROBE_TIMEOUT_S)
    data: dict[str, Any] | Unavailable = (
        parse_python_probe(result.stdout) if result.ok else result.unavailable()
    )

    def get(key: str, kind: type) -> Maybe[Any]:
        if isinstance(data, Unavailable):
            return data
        value = data.get(key)
        if key == "conda_prefix" and value is None:
            return Unavailable(Reason.NOT_APPLICABLE, "not a conda environment")
        if not isinstance(value, kind):
            return Unavailable(Reason.UNPARSEABLE, f"{key}={value!r}")
        return value

    return PythonFacts(
        executable=python,
        version=get("version", str),
        implementation=get("implementation", str),
        machine=get("machine", str),
        system=get("system", str),
        prefix=get("prefix", str),
        base_prefix=get("base_prefix", str),
        in_virtualenv=get("in_virtualenv", bool),
        conda_prefix=get("conda_prefix", str),
        user_site_enabled=get("user_site_enabled", bool),
    )
