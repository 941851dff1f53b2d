"""Token-shaped values in environment variables and paths (issue 21): bundles replace them with pseudonyms;
`--json` keeps them and lists where they are (`host.token_shaped`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.bundle.test_identifier_leaks import _bundle_and_replay, _grep
from torch_gpu_doctor.bundle.redact import Redactor
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.render.json_report import envelope
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.tokens import TOKEN, tokens_in

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
GPU_UUID = "GPU-8ee5f1e0-7f35-4a1b-9c3e-52d1a8e7f9b0"  # the shape `nvidia-smi -L` prints
PLUGIN_ID = "nvidia0a8f3c2e91d4b7f6e5a2c1"  # an opaque device-plugin id, as a scheduler may set it
RUNNER = "/opt/runner/_work/aB3dE5fG7hI9jK1lM3/venv"  # a CI runner's random work folder


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (GPU_UUID, [GPU_UUID]),
        (f"MIG-{GPU_UUID}/1/0", [GPU_UUID]),
        ("0,1", []),
        ("all", []),
        ("/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8", []),
        ("torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl", []),
        (
            "/hub/models--x/snapshots/8cca527612d856d7d32bd94f8103728d614eb852",
            ["8cca527612d856d7d32bd94f8103728d614eb852"],
        ),
        (RUNNER, ["aB3dE5fG7hI9jK1lM3"]),
        ("nvidia-cuda-runtime-cu12", []),  # words and a version: a name, not a token
    ],
)
def test_token_shapes(text: str, found: list[str]) -> None:
    assert tokens_in(text) == found


def _capture_with(tmp_path: Path, env: dict[str, str]) -> Path:
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES / "rtx4090-workstation-healthy", capture, symlinks=True)
    host = json.loads((capture / "host.json").read_text())
    host["env"].update(env)
    (capture / "host.json").write_text(json.dumps(host))
    return capture


ENV = {"CUDA_VISIBLE_DEVICES": GPU_UUID, "NVIDIA_VISIBLE_DEVICES": PLUGIN_ID, "VIRTUAL_ENV": RUNNER}


def test_a_bundle_replaces_tokens_in_the_environment_and_in_paths(tmp_path: Path) -> None:
    members, report, replayed = _bundle_and_replay(_capture_with(tmp_path, ENV), tmp_path)
    for token in (GPU_UUID, PLUGIN_ID, "aB3dE5fG7hI9jK1lM3"):
        assert _grep(members, token) == [], token
    facts = json.loads(members["facts.json"])
    env = facts["env"]
    assert env["CUDA_VISIBLE_DEVICES"].startswith("GPU-uuid-")  # a GPU's UUID keeps its kind
    assert env["NVIDIA_VISIBLE_DEVICES"].startswith("token-") and env["VIRTUAL_ENV"].startswith(
        "/opt/runner/_work/token-"
    )
    assert json.loads(members["manifest.json"])["pseudonyms"]["token-1"] == "token"

    # the same findings, a token quoted by one now its pseudonym: CUDA_VISIBLE_DEVICES='token-1' hides ...
    def shape(text: str) -> str:
        return re.sub(r"(?:token|GPU-uuid)-\d+", "<token>", TOKEN.sub("<token>", text))

    assert [(f.check_id, f.status, shape(f.summary)) for f in replayed.findings] == [
        (f.check_id, f.status, shape(f.summary)) for f in report.findings
    ]
    assert any("GPU-uuid-" in f.summary for f in replayed.findings)


def test_without_shapes_nothing_is_replaced() -> None:
    redactor = Redactor(shapes=False)  # --include-identifiers
    assert redactor.text(RUNNER).text == RUNNER


def test_json_keeps_tokens_and_lists_where_they_are(tmp_path: Path) -> None:
    capture = _capture_with(tmp_path, ENV)
    document = envelope(diagnose(RecordedHost(capture), "python3", plugins=False))
    assert (
        document["facts"]["env"]["CUDA_VISIBLE_DEVICES"] == GPU_UUID
    )  # kept: the reader is the user's script
    places = document["host"]["token_shaped"]
    assert {
        "facts.env.CUDA_VISIBLE_DEVICES",
        "facts.env.NVIDIA_VISIBLE_DEVICES",
        "facts.env.VIRTUAL_ENV",
    } <= set(places)
    plain = envelope(
        diagnose(RecordedHost(FIXTURES / "rtx4090-workstation-healthy"), "python3", plugins=False)
    )
    assert plain["host"]["token_shaped"] == []  # proves the list can be empty: nothing opaque there


def test_a_gpu_uuid_in_the_environment_stays_a_gpu_uuid_so_the_replay_agrees(tmp_path: Path) -> None:
    """Review finding: CUDA_VISIBLE_DEVICES naming the machine's own GPUs by UUID became 'token-1,token-2',
    and the replay said it hides every GPU. A GPU's UUID keeps its kind and the same pseudonym as NVML's."""
    nvml = json.loads((FIXTURES / "rtx4090-workstation-healthy" / "nvml.json").read_text())
    uuids = [d["uuid"] for d in nvml["devices"][:2]]
    capture = _capture_with(tmp_path, {"CUDA_VISIBLE_DEVICES": f"{uuids[1]},{uuids[0]}"})
    members, report, replayed = _bundle_and_replay(capture, tmp_path)
    assert all(_grep(members, u) == [] for u in uuids)

    def same(text: str) -> str:  # a UUID and its pseudonym read alike
        return re.sub(r"GPU-uuid-\d+", "<gpu>", TOKEN.sub("<gpu>", text))

    assert [(f.check_id, f.status, same(f.summary)) for f in replayed.findings] == [
        (f.check_id, f.status, same(f.summary)) for f in report.findings
    ]
    env = json.loads(members["facts.json"])["env"]["CUDA_VISIBLE_DEVICES"]
    assert env.startswith("GPU-uuid-") and "token" not in env
