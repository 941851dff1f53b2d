"""`gpu-doctor fit` on captured machines, as a person types it (the issue's "done when")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.exit_codes import ExitCode

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"
RTX4090 = ["--root", str(HOSTS / "rtx4090-workstation-healthy")]  # 8x RTX 4090, 24 GiB each
LLAMA = str(Path(__file__).parent / "models" / "llama-2-7b-hf")


def test_7b_training_on_24_gib_does_not_fit_says_by_how_much_and_what_fits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fit", "7B", "--train", *RTX4090]) == ExitCode.FINDINGS
    out = capsys.readouterr().out
    verdict = next(line for line in out.splitlines() if line.startswith("Does not fit"))
    assert "GiB more than the 24.0 GiB there" in verdict
    assert "QLoRA: a 4-bit base with LoRA adapters" in out and "per GPU, fits" in out
    assert "optimizer_states" in out and "AdamW, fp32 master weights" in out


def test_7b_inference_fits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "7B", *RTX4090]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "\nFits: needs " in out and "bf16: the best precision every GPU here runs fast" in out
    assert "GPUs 0-7 (8x)  NVIDIA GeForce RTX 4090" in out


def test_a_local_llama_2_config_gives_its_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    main(["fit", LLAMA, "--lora", *RTX4090])
    out = capsys.readouterr().out
    assert out.startswith("6.74 B parameters, from config.json (llama)")
    assert "kv_cache" not in out and "activations" in out


def test_the_json_document_has_the_fit_object(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fit", LLAMA, "--train", "--json", *RTX4090])
    document = json.loads(capsys.readouterr().out)
    fit = document["fit"]
    assert document["exit_code"] == code == 1 and fit["fits"] is False
    assert fit["parameters"] == 6_738_415_616
    assert {p["name"] for p in fit["breakdown"]} >= {
        "weights",
        "gradients",
        "optimizer_states",
        "activations",
    }
    assert fit["total_bytes"] == sum(p["bytes"] for p in fit["breakdown"])
    assert len(fit["per_gpu"]) == 8 and all(g["headroom_bytes"] < 0 for g in fit["per_gpu"])
    assert any(o["fits"] for o in fit["options"])


def test_on_a_jetson_the_model_must_fit_in_the_boards_shared_ram(capsys: pytest.CaptureFixture[str]) -> None:
    """An Orin Nano (7.4 GiB of RAM, henrygd/beszel#286): no PCI or NVML GPU, the integrated GPU allocates from
    the RAM, and the Orin's compute capability 8.7 runs bf16 fast."""
    orin = ["--root", str(HOSTS / "jetson-orin-jp6-pypi-torch")]
    assert main(["fit", "7B", *orin]) == ExitCode.FINDINGS
    out = capsys.readouterr().out
    assert "a Jetson's GPU shares the board's RAM with the CPU" in out
    assert "GiB more than the 7.4 GiB there" in out
    assert "bf16: the best precision every GPU here runs fast" in out
    assert main(["fit", "1B", *orin]) == ExitCode.OK


def test_no_gpu_to_compare_with_is_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "7B", "--root", str(HOSTS / "virtio-vm-no-gpu")]) == ExitCode.INCOMPLETE
    assert "no NVIDIA GPU memory to compare it with here" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["fit", "7B", "--train", "--precision", "int4"], "--qlora"),
        (["fit", "nonsense"], "neither a parameter count"),
        (["fit", "7B", "--batch", "0"], "positive number"),
        (["fit", "7B", "--train", "--lora"], "not allowed with argument"),
    ],
)
def test_what_cannot_be_estimated_is_a_usage_error(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, *RTX4090]) == ExitCode.USAGE
    assert says in capsys.readouterr().err


def test_output_writes_the_estimate_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "fit.json"
    assert main(["fit", "7B", "--json", "--output", str(target), *RTX4090]) == ExitCode.OK
    assert capsys.readouterr().out == ""
    assert json.loads(target.read_text())["fit"]["fits"] is True
