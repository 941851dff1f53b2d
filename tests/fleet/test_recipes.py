"""The fleet recipes (docs/fleet.md, docs/fleet/*): the YAML parses into what it claims, and every
gpu-doctor command in them is accepted by gpu-doctor's own parser, so the docs cannot drift from the CLI."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from torch_gpu_doctor.cli import build_parser
from torch_gpu_doctor.fleet.expectations import load_expectations

DOCS = Path(__file__).resolve().parents[2] / "docs"
FLEET = DOCS / "fleet"
# a gpu-doctor command line ends at a redirection, a pipe, a separator or a closing quote
_COMMAND = re.compile(r"(?<![\w/.-])gpu-doctor(?: [^>|;&'\"`\n#]*)?(?=[\s>|;&'\"`#]|$)")
_CODE = re.compile(r"```[a-z]*\n(.*?)```|`([^`\n]+)`", re.DOTALL)


def commands_in(text: str) -> list[list[str]]:
    """Every gpu-doctor command line in a script (comment lines skipped), argv after `gpu-doctor`."""
    found = []
    code = "\n".join(
        line for line in text.replace("\\\n", " ").splitlines() if not line.lstrip().startswith("#")
    )
    for match in _COMMAND.finditer(code):
        words = shlex.split(match.group(0))
        found.append(words[1:])
    return found


def parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)  # raises UsageError on anything it would refuse


def load(name: str) -> Any:
    return yaml.safe_load((FLEET / name).read_text(encoding="utf-8"))


def container_script(manifest: dict[str, Any]) -> tuple[dict[str, Any], str]:
    pod = manifest["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["/bin/sh", "-c"]
    return pod, container["args"][0]


def test_the_daemonset_writes_the_textfile_atomically_without_taking_a_gpu() -> None:
    manifest = load("daemonset.yaml")
    assert (manifest["apiVersion"], manifest["kind"]) == ("apps/v1", "DaemonSet")
    pod, script = container_script(manifest)
    assert pod["runtimeClassName"] == "nvidia"
    (container,) = pod["containers"]
    assert "nvidia.com/gpu" not in str(container["resources"])
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in container["env"]
    assert pod["volumes"][0]["hostPath"]["path"] == "/var/lib/node_exporter/textfile_collector"
    assert container["volumeMounts"][0]["mountPath"] == "/textfile"
    assert "gpu-doctor --format prometheus > /textfile/gpu_doctor.prom.tmp" in script
    assert "mv /textfile/gpu_doctor.prom.tmp /textfile/gpu_doctor.prom" in script
    (argv,) = commands_in(script)
    assert parse(argv).format == "prometheus"


def test_the_job_requests_the_gpus_and_runs_the_smoke_test_and_the_gates() -> None:
    manifest = load("job.yaml")
    assert (manifest["apiVersion"], manifest["kind"]) == ("batch/v1", "Job")
    pod, script = container_script(manifest)
    assert pod["runtimeClassName"] == "nvidia" and pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert any(
        v.get("hostPath", {}).get("path") == "/var/lib/node_exporter/textfile_collector"
        for v in pod["volumes"]
    )
    diagnose, verify = (parse(argv) for argv in commands_in(script))
    assert (diagnose.smoke, diagnose.format) == ("quick", "prometheus")
    assert (verify.command, verify.gpus, verify.verify_smoke, verify.nccl, verify.json) == (
        "verify",
        8,
        True,
        True,
        True,
    )


def test_the_playbook_runs_verify_with_the_config_fetches_and_summarizes() -> None:
    (play,) = load("verify-playbook.yml")
    tasks = {t["name"]: t for t in play["tasks"]}
    run = next(t for t in tasks.values() if "ansible.builtin.command" in t)
    argv = run["ansible.builtin.command"]["argv"]
    assert argv[0] == "gpu-doctor"
    verify = parse(argv[1:])
    assert (verify.command, verify.config, verify.json) == ("verify", "{{ gates }}", True)
    assert run["failed_when"] == "verify.rc not in [0, 1]"
    fetch = next(t["ansible.builtin.fetch"] for t in tasks.values() if "ansible.builtin.fetch" in t)
    assert fetch["dest"] == "{{ reports_dir }}/{{ inventory_hostname }}.json"
    summary = next(t for t in tasks.values() if "ansible.builtin.shell" in t)
    (argv,) = commands_in(summary["ansible.builtin.shell"])
    assert parse(argv).command == "summarize"
    sources = [t["ansible.builtin.copy"].get("src") for t in tasks.values() if "ansible.builtin.copy" in t]
    assert "verify.toml" in sources and (FLEET / "verify.toml").is_file()


def test_the_slurm_script_runs_one_task_per_node_then_summarizes() -> None:
    script = (FLEET / "slurm-gpu-doctor.sh").read_text(encoding="utf-8")
    assert "srun --nodes=" in script and "--ntasks-per-node=1" in script
    # with ConstrainDevices=yes a task without a GPU request sees no GPU: the job and its step request them
    directives = [line.split()[1] for line in script.splitlines() if line.startswith("#SBATCH ")]
    assert "--exclusive" in directives
    assert any(d.startswith(("--gpus-per-node=", "--gres=gpu:")) for d in directives)
    srun = script.split("srun ", 1)[1].split("sh -c", 1)[0]
    assert "--gpus-per-node=" in srun or "--gres=gpu:" in srun
    diagnose, summarize = (parse(argv) for argv in commands_in(script))
    assert diagnose.json and diagnose.command is None
    assert summarize.command == "summarize" and summarize.reports == ["reports/*.json"]


def test_the_fleet_page_slurm_example_requests_the_gpus() -> None:
    text = (DOCS / "fleet.md").read_text(encoding="utf-8")
    section = text.split("\n## Slurm\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    srun = next(line for line in block.replace("\\\n", " ").splitlines() if line.startswith("srun "))
    assert "--exclusive" in srun and ("--gpus-per-node=" in srun or "--gres=gpu:" in srun)


def test_every_gpu_doctor_command_in_the_fleet_page_parses() -> None:
    text = (DOCS / "fleet.md").read_text(encoding="utf-8")
    code = "\n".join(block or span for block, span in _CODE.findall(text))
    argvs = commands_in(code)
    commands = {parse(argv).command for argv in argvs}
    assert {"verify", "summarize", "diff", None} <= commands
    assert len(argvs) >= 10


def test_every_gpu_doctor_command_in_the_usage_fleet_section_parses() -> None:
    readme = (DOCS / "usage.md").read_text(encoding="utf-8")
    section = readme.split("\n## Fleets: verify, diff, Prometheus, summarize\n", 1)[1].split("\n## ", 1)[0]
    code = "\n".join(block for block, _ in _CODE.findall(section) if block)
    commands = [parse(argv).command for argv in commands_in(code)]
    assert commands == ["verify", "verify", None, "summarize", "diff", None]


def test_the_example_gates_load() -> None:
    assert load_expectations(FLEET / "verify.toml").gpus == 8


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--gpu", "8"],
        ["summarize"],
        ["diff", "a.json"],
        ["--format", "xml"],
        ["verify", "--min-d", "550"],  # an abbreviation: argparse would take it for --min-driver
        ["--plai"],
        ["triage", "--js", "report.txt"],
    ],
)
def test_the_parser_would_catch_a_drifted_recipe(argv: list[str]) -> None:
    from torch_gpu_doctor.cli import UsageError

    with pytest.raises(UsageError):
        parse(argv)
