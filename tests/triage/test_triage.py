"""gpu-doctor triage on real collect_env reports (tests/triage/reports, provenance in SOURCES.md): each parses,
and each gets the diagnosis pinned in expected.json."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.triage.outcome import Kind, Triage
from torch_gpu_doctor.triage.parse import looks_like_collect_env, parse_report
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.unavailable import Reason, Unavailable

HERE = Path(__file__).parent
EXPECTED: dict[str, dict[str, Any]] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
# the first corpus, pinned check by check; the whole corpus (reports/ and pastes/) is pinned by cause and first
# command in corpus_expected.json (test_corpus.py)
REPORTS = [HERE / "reports" / f"{name}.txt" for name in sorted(EXPECTED)]


def diagnosed(path: Path) -> Triage:
    return diagnose_paste(path.read_bytes(), path.name).result


def test_every_pinned_report_exists() -> None:
    assert all(p.is_file() for p in REPORTS)
    assert len(REPORTS) >= 12


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_report_parses(path: Path) -> None:
    parsed = parse_report(path.read_text(encoding="utf-8"))
    assert looks_like_collect_env(parsed)
    assert parsed.torch_version is not None or parsed.torch_missing


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_diagnosis_is_pinned(path: Path) -> None:
    expected = EXPECTED[path.stem]
    result = diagnosed(path)
    shown = {
        v.finding.check_id: f"{v.kind}:{v.finding.status.value}"
        for v in result.verdicts
        if v.kind != Kind.NOT_APPLICABLE
    }
    assert shown == expected["checks"]
    assert (1 if result.exit_problem() else 0) == expected["exit_code"]
    by_id = {v.finding.check_id: v.finding for v in result.verdicts}
    for check_id, text in expected.get("summary_contains", {}).items():
        assert text in by_id[check_id].summary
    for check_id, text in expected.get("fix_contains", {}).items():
        fix = by_id[check_id].remediation
        assert fix is not None and text in fix.text and "driver" not in fix.text
    for check_id, commands in expected.get("fix_commands", {}).items():
        fix = by_id[check_id].remediation
        assert fix is not None and [c.display() for c in fix.commands] == commands
    rec = result.report.recommended_install
    if "install" in expected:
        assert rec is not None and " ".join(rec.pip_argv("python")) == expected["install"]


def test_missing_lines_are_unknown_never_failures() -> None:
    """The WSL paste stops at the platform line: gpu.present would say "no GPU" on these facts."""
    result = diagnosed(HERE / "reports" / "wsl-cu111-truncated.txt")
    gpu = next(v for v in result.verdicts if v.finding.check_id == "gpu.present")
    assert gpu.kind == Kind.UNKNOWN and gpu.missing == ("the GPU (nvidia-smi -L)",)
    assert gpu.find_out == "nvidia-smi -L"
    assert not any(v.kind == Kind.PROBLEM for v in result.verdicts)


def test_no_platform_line_still_gives_the_cuda_build_from_its_index() -> None:
    """Without its `OS:` and `Python platform:` lines the RTX 4080 paste (CPU torch 2.2.2, driver 551.86) does
    not show the interpreter, but the CUDA variant does not depend on it: the fix names the variant's index
    (PyPI's default build differs per platform) and says why; it never tells a working driver to change."""
    text = (HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_text(encoding="utf-8")
    kept = "\n".join(line for line in text.splitlines() if not line.startswith(("OS:", "Python platform:")))
    result = diagnose_paste(kept.encode(), "kept").result
    build = next(v.finding for v in result.verdicts if v.finding.check_id == "torch.cpu_build")
    assert build.status.value == "fail" and build.remediation is not None
    assert build.remediation.text.startswith("Install torch 2.2.2 (cu121) into python: keeps the installed")
    assert "the interpreter is not known here" in build.remediation.text
    assert build.remediation.commands[0].argv[-2:] == (
        "--index-url",
        "https://download.pytorch.org/whl/cu121",
    )
    assert "driver" not in build.remediation.text


def test_a_paste_that_names_windows_gets_a_windows_build() -> None:
    text = (HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_text(encoding="utf-8")
    kept = "\n".join(
        "OS: Microsoft Windows 11 Education" if line.startswith("Python version") else line
        for line in text.splitlines()
        if not line.startswith(("OS:", "Python platform:"))
    )
    build = next(
        v.finding
        for v in diagnose_paste(kept.encode(), "kept").result.verdicts
        if v.finding.check_id == "torch.cpu_build"
    )
    assert build.remediation is not None and build.remediation.commands
    assert build.remediation.commands[0].argv[-1] == "https://download.pytorch.org/whl/cu121"


def test_driver_cuda_comes_from_torchs_warning_not_nvcc() -> None:
    parsed = parse_report(
        (HERE / "reports" / "gke-driver470-cu121-truncated.txt").read_text(encoding="utf-8")
    )
    facts = diagnose_paste((HERE / "reports" / "gke-driver470-cu121-truncated.txt").read_bytes(), "gke").facts
    assert parsed.warnings.driver_cuda == "11.4"
    assert not isinstance(facts.driver, type(None)) and getattr(facts.driver, "cuda_version", None) == "11.4"
    windows = parse_report((HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_text(encoding="utf-8"))
    assert windows.cuda_runtime == "12.4.99"  # nvcc's, never taken for the driver's
    windows_facts = diagnose_paste(
        (HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_bytes(), "w"
    ).facts
    assert getattr(windows_facts.driver, "cuda_version_source", None) == "compat table"


def test_variants_parse() -> None:
    mangled = parse_report(
        (HERE / "reports" / "p100-torch150-driver410-mangled.txt").read_text(encoding="utf-8")
    )
    assert (
        mangled.torch_version == "1.5.0" and mangled.cuda_available is False
    )  # "PyTorch version 1.5.0", "No"
    assert mangled.gpus is not None and len(mangled.gpus) == 4  # "GPU 0： ..." with fullwidth colons
    rocm = parse_report((HERE / "reports" / "rocm63-gfx1010-details.txt").read_text(encoding="utf-8"))
    assert rocm.torch_version == "2.7.0.dev20250123+rocm6.3"  # joined to the header line, inside <details>
    assert rocm.gpus is not None and rocm.gpus[0].name == "AMD Radeon RX 5700 XT (gfx1010:xnack-)"
    sm120 = parse_report((HERE / "reports" / "rtx5090d-cu126-sm120.txt").read_text(encoding="utf-8"))
    assert sm120.warnings.arch_list[-1] == "sm_90"
    conda = parse_report((HERE / "reports" / "t4-conda-torch130-driver410.txt").read_text(encoding="utf-8"))
    assert conda.libraries is not None and any(
        lib.build and "cuda10.1" in lib.build for lib in conda.libraries
    )


def test_cli_text_and_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["triage", str(HERE / "reports" / "windows-cpu-torch-rtx4080.txt")])
    out = capsys.readouterr().out
    assert code == 1
    cause = out.split("Most likely cause (the paste says so): ", 1)[1].splitlines()[0]
    assert cause.startswith("torch 2.2.2 is a CPU-only build")
    assert "--index-url https://download.pytorch.org/whl/cu121" in out
    assert (
        "\nEverything a paste cannot show (PCIe, eGPU, modules, storage): run `gpu-doctor --json` there."
        in out
    )


def test_cli_json_is_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["triage", "--json", str(HERE / "reports" / "gke-driver470-cu121-truncated.txt")])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["summary"]["exit_code"] == 1
    assert document["report"]["torch_version"] == "2.1.0+cu121"
    assert {u["check_id"] for u in document["unknown"]} >= {"gpu.present", "driver.installed"}
    assert document["recommended_install"] is None  # no GPU in the report: no wheel is chosen blind


def test_cli_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = (HERE / "reports" / "wsl-cu121-rtx4070-laptop.txt").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["triage", "-"]) == 0
    assert "No problem found" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (b"hello world\nthis is a bug report without versions\n", "found nothing it knows in this text"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary data"),
    ],
    ids=["empty", "garbage", "binary"],
)
def test_unreadable_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, message: str
) -> None:
    path = tmp_path / "report.txt"
    path.write_bytes(data)
    assert main(["triage", str(path)]) == 2
    assert message in capsys.readouterr().err
    assert main(["triage", "--json", str(path)]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["kind"] == "unreadable_input"


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["triage", str(tmp_path / "nope.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "model", "l4t", "kind"),
    [
        # JetPack 6 in a container: nvidia-smi names the GPU "Orin (nvgpu)", the CUDA toolkit is 12.2; the report
        # is cut before torch's version, and CUDA is not available: not NVIDIA's torch for the board
        ("jetson-orin-l4t36-container-cuda-false-driver-na-midreport", "Orin (nvgpu)", "36.3", Kind.PROBLEM),
        # JetPack 5: no GPU line, NVIDIA's torch 1.12.0a0+2c916ef.nv22.3 built for CUDA 11.4
        ("jetson-l4t35-nv22-torch112-pypi-torchaudio-mismatch", None, "35", Kind.FINE),
    ],
)
def test_a_jetson_report_is_judged_as_a_jetson(name: str, model: str | None, l4t: str, kind: str) -> None:
    """A Jetson has no desktop driver to ask nvidia-smi about (JetPack 4 and 5 have none): the driver checks do
    not send the reader to it, and platform.jetson names the JetPack family from the report's CUDA."""
    result = diagnosed(HERE / "reports" / f"{name}.txt")
    jetson = result.report.facts.jetson
    assert not isinstance(jetson, Unavailable)
    assert (jetson.model, jetson.l4t) == (model, l4t)
    verdicts = {v.finding.check_id: v for v in result.verdicts}
    for check_id in ("driver.installed", "driver.nvml"):
        assert check_id not in verdicts or verdicts[check_id].kind != Kind.UNKNOWN, check_id
    compat = verdicts.get("torch.driver_compat")
    assert compat is None or not any("nvidia-smi" in m for m in compat.missing), compat
    assert verdicts["platform.jetson"].kind == kind


def test_a_report_from_another_machine_is_not_a_jetson() -> None:
    result = diagnosed(HERE / "reports" / "8x-a40-cu124-container-shell-prompt-healthy.txt")
    jetson = result.report.facts.jetson
    assert isinstance(jetson, Unavailable) and jetson.reason is Reason.NOT_APPLICABLE


def test_sglang_check_env_is_read_as_a_report() -> None:
    """`python -m sglang.check_env` (sgl-project/sglang#5389, #14327): mmengine's labels, "CUDA Driver
    Version", a "GPU 0 Compute Capability" row that names no GPU, package rows, and `nvidia-smi topo -m` rows
    after it that name none either."""
    report = parse_report((HERE / "reports" / "c05_sglang_nvcc117_flashinfer_jit.txt").read_text())
    assert looks_like_collect_env(report)
    assert report.wrapper == "sglang check_env"
    assert report.torch_version == "2.5.1+cu124"
    assert report.driver_version == "535.54.03"
    assert [g.name for g in report.gpus or ()] == ["NVIDIA A100-SXM4-80GB"]
    packages = {lib.name: lib.version for lib in report.libraries or ()}
    assert packages["vllm"] == "0.6.4.post1" and packages["triton"] == "3.1.0"
    assert "flashinfer" not in packages  # "Module Not Found"
    gb300 = parse_report((HERE / "reports" / "c06_sglang_gb300_wheel_envfine.txt").read_text())
    assert [g.name for g in gb300.gpus or ()] == ["NVIDIA GB300"] * 4


def test_hugging_face_env_is_read_as_a_report() -> None:
    """`transformers-cli env` / `accelerate env` (the bug template of Hugging Face's libraries): a Markdown list
    whose torch row carries the build and is_available() ("2.3.0+cpu (False)"), the platform string, and the
    libraries' versions. A CPU build is a problem only when the person means to use the GPU."""
    report = parse_report(
        (HERE / "reports" / "hf-transformers-31217-env-wsl2-cpu-torch-envfine.txt").read_text()
    )
    assert report.wrapper == "huggingface env"
    assert (report.torch_version, report.cuda_available) == ("2.3.0+cpu", False)
    assert report.python_platform is not None and "WSL2" in report.python_platform
    assert {lib.name for lib in report.libraries or ()} >= {"transformers", "huggingface-hub", "safetensors"}
    assert diagnose_paste(b"".join(_hf_env(using_gpu="No")), "env.txt").result.cause is None
    asked = diagnose_paste(b"".join(_hf_env(using_gpu="yes")), "env.txt").result.cause
    assert asked is not None and asked.finding.check_id == "torch.cpu_build"


def _hf_env(using_gpu: str) -> list[bytes]:
    rows = (HERE / "reports" / "hf-transformers-15843-env-cpu-torch-no-gpu-envfine.txt").read_bytes()
    return [rows.replace(b"Using GPU in script?: No", f"Using GPU in script?: {using_gpu}".encode())]


def test_wsl1_is_told_from_its_kernel_release() -> None:
    """ShivamShrirao/diffusers#18: `Linux-4.4.0-19041-Microsoft-x86_64` is WSL 1 (WSL 2 says microsoft-standard),
    which has no GPU: the cause and the conversion command, and never "WSL2" in what the paste shows."""
    result = diagnosed(HERE / "reports" / "c08_diffusers_env_wsl1_false.txt")
    wsl = result.report.facts.wsl
    assert not isinstance(wsl, Unavailable) and wsl.version == 1
    assert result.cause is not None and result.cause.finding.check_id == "platform.wsl_gpu"
    fix = result.cause.finding.remediation
    assert fix is not None and fix.commands[0].argv[:2] == ("wsl.exe", "--set-version")
    wsl2 = diagnosed(HERE / "reports" / "wsl-cu121-rtx4070-laptop.txt").report.facts
    assert isinstance(wsl2.wsl, Unavailable) and not isinstance(wsl2.os, Unavailable) and wsl2.os.has_dxg
