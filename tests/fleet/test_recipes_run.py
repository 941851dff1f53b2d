"""The fleet recipes for real: the Ansible playbook run by ansible-playbook against this machine
(`-c local`), and the Kubernetes manifests validated against the Kubernetes API's own schema
(kubernetes-validate, strict: an unknown field is an error)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

FLEET = Path(__file__).resolve().parents[2] / "docs" / "fleet"
BIN = Path(sys.executable).parent
MANIFESTS = ("daemonset.yaml", "job.yaml")


def _tool(name: str) -> str:
    found = BIN / name
    which = str(found) if found.exists() else shutil.which(name)
    if which is None:
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return which


@pytest.mark.slow
def test_the_playbook_runs_for_real_on_this_machine(tmp_path: Path) -> None:
    """Every task runs: the gates' folder is made, verify runs, its JSON is fetched and summarized. This
    machine has no 8 H100s, so the last task fails this host, naming the gates it missed, as it should."""
    inventory = tmp_path / "inventory.ini"
    inventory.write_text(
        f"[gpu_nodes]\nlocalhost ansible_connection=local ansible_python_interpreter={sys.executable}\n"
    )
    gates_dir, reports = tmp_path / "etc" / "gpu-doctor", tmp_path / "reports"
    env = dict(
        os.environ,
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # gpu-doctor, as an installed host has it
        ANSIBLE_HOME=str(tmp_path / "ansible-home"),
        ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"),
        ANSIBLE_REMOTE_TEMP=str(tmp_path / "ansible-tmp"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_STDOUT_CALLBACK="default",
        ANSIBLE_LOCALHOST_WARNING="false",
    )
    proc = subprocess.run(
        [
            _tool("ansible-playbook"),
            "-i",
            str(inventory),
            str(FLEET / "verify-playbook.yml"),
            "-e",
            f"gates_dir={gates_dir} gates_become=false reports_dir={reports}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert (gates_dir / "verify.toml").read_text() == (FLEET / "verify.toml").read_text(), out
    document = json.loads((reports / "localhost.json").read_text())
    failed = {e["name"] for e in document["expectations"] if e["status"] == "fail"}
    assert "gpus" in failed, out  # no GPU here: the 8-GPU gate fails
    assert "TASK [Show the fleet table]" in out and "localhost" in out.split("TASK [Show the fleet table]")[1]
    assert "TASK [Fail the hosts that missed a gate]" in out
    assert "gpus" in out.split("TASK [Fail the hosts that missed a gate]")[1]
    assert proc.returncode == 2, out  # ansible-playbook: a host failed


def _manifests() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name in MANIFESTS:
        for doc in yaml.safe_load_all((FLEET / name).read_text(encoding="utf-8")):
            if doc:
                found.append((name, doc))
    return found


@pytest.mark.parametrize("version", ["1.28.0", "latest"])
@pytest.mark.parametrize(("name", "manifest"), _manifests(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_kubernetes_manifests_match_the_api_schema(
    name: str, manifest: dict[str, Any], version: str
) -> None:
    import kubernetes_validate

    wanted = kubernetes_validate.latest_version() if version == "latest" else version
    kubernetes_validate.validate(manifest, wanted, strict=True)  # raises on any error


def test_the_schema_check_catches_a_misplaced_field() -> None:
    """The validation can fail: `resources` one level too high, a typo in a field name."""
    import copy

    import kubernetes_validate

    (_, daemonset) = next(m for m in _manifests() if m[1]["kind"] == "DaemonSet")
    broken = copy.deepcopy(daemonset)
    broken["spec"]["template"]["spec"]["containers"][0]["resourcez"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.latest_version(), strict=True)
