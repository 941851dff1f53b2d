"""The shapes of collect_env report that people really post, beyond torch's own full report: the wrappers that
print its facts under their own labels (detectron2, mmengine/lmdeploy), the "Versions of relevant libraries"
section alone, a report that starts mid-way or lost its first character, one cut mid-value at its very end;
and the Python a paste shows in its paths and banners when no collect_env line says it. Each test is built on
a real paste (tests/triage/reports, tests/triage/pastes), or on a real paste with lines cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.torch import TorchPackages, TorchRuntime
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.triage.facts import listed_build
from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.parse import parse_report
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.render import header_lines
from torch_gpu_doctor.unavailable import Unavailable

HERE = Path(__file__).parent


def text_of(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def diagnosed(name: str, text: str | None = None) -> PasteDiagnosis:
    data = (HERE / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name)


def packages(facts: Facts) -> TorchPackages:
    assert not isinstance(facts.torch_packages, Unavailable), facts.torch_packages
    return facts.torch_packages


def runtime(facts: Facts) -> TorchRuntime:
    assert not isinstance(facts.torch, Unavailable), facts.torch
    return facts.torch


def kinds(d: PasteDiagnosis) -> dict[str, str]:
    return {v.finding.check_id: v.kind for v in d.result.verdicts}


def python_version(facts: Facts) -> str | None:
    python = facts.python
    return python.version if not isinstance(python, Unavailable) and isinstance(python.version, str) else None


# --- the wrappers --------------------------------------------------------------------------------------------

DETECTRON2 = "reports/detectron2-wrapper-8x-rtx2080ti-torch131-cu100-no-kernel-image.txt"
LMDEPLOY = "reports/lmdeploy-check-env-grid-v100d-32c-vgpu-wrapper.txt"


def test_detectron2_table_gives_torch_cuda_and_eight_gpus() -> None:
    d = diagnosed(DETECTRON2)
    assert d.pasted.collect_env is not None and d.pasted.collect_env.wrapper == "detectron2"
    assert not d.pasted.empty
    assert packages(d.facts).version == "1.3.1"  # "PyTorch 1.3.1"
    assert runtime(d.facts).cuda_available is True  # "CUDA available True"
    assert [g.nvml_index for g in d.facts.gpus] == list(range(8))  # "GPU 0,1,2,3,4,5,6,7 GeForce RTX 2080 Ti"
    assert {g.name for g in d.facts.gpus} == {"GeForce RTX 2080 Ti"}
    assert {g.compute_capability for g in d.facts.gpus} == {"7.5"}
    assert python_version(d.facts) == "3.7.6"  # "Python 3.7.6 (default, ...)"
    assert not isinstance(d.facts.python, Unavailable) and d.facts.python.system == "Linux"  # sys.platform
    assert kinds(d)["torch.installed"] == Kind.FINE and kinds(d)["gpu.present"] == Kind.FINE
    # the table has no "CUDA used to build PyTorch" line: how torch was built stays unknown, not "CPU"
    assert kinds(d)["torch.cpu_build"] == Kind.UNKNOWN
    assert d.result.cause is None
    # and what the paste shows never calls it a CPU build: it reached the GPU (blind set 10's c03 said so)
    shown = header_lines(d.facts)
    assert "torch 1.3.1 (a GPU build; its CUDA is not in the paste)" in shown[0]
    assert not any("CPU-only" in line for line in shown)
    undecided = next(v.finding for v in d.result.verdicts if v.finding.check_id == "torch.cpu_build")
    assert (
        undecided.status is Status.UNKNOWN and undecided.remediation is None
    )  # --json asserts nothing either
    assert undecided.summary.startswith("Not decided from the paste") and "CPU" not in undecided.summary


def test_detectron2_rows_of_newer_releases_give_the_capability_torch_reported() -> None:
    """detectron2's collect_env.py since 2020 writes `name + f" (arch={cap})"` per device group and the torch
    path after its version; the 2019 table above, with its rows rewritten that way."""
    text = (
        text_of(DETECTRON2)
        .replace(
            "GPU 0,1,2,3,4,5,6,7 GeForce RTX 2080 Ti", "GPU 0,1,2,3,4,5,6,7 GeForce RTX 2080 Ti (arch=7.5)"
        )
        .replace("PyTorch 1.3.1", "PyTorch 1.3.1 @/opt/conda/lib/python3.7/site-packages/torch")
    )
    d = diagnosed(DETECTRON2, text)
    assert packages(d.facts).version == "1.3.1"
    assert {(g.name, g.compute_capability, g.compute_capability_source) for g in d.facts.gpus} == {
        ("GeForce RTX 2080 Ti", "7.5", "torch (detectron2 collect_env)")
    }


def test_mmengine_dump_gives_torch_build_arch_list_and_gpu() -> None:
    d = diagnosed(LMDEPLOY)
    assert d.pasted.collect_env is not None and d.pasted.collect_env.wrapper == "mmengine"
    torch = packages(d.facts)
    assert (torch.version, torch.cuda, torch.hip) == ("2.3.1+cu121", "12.1", None)
    run = runtime(d.facts)
    assert run.cuda_available is True
    # "NVCC architecture flags: -gencode;arch=compute_50,code=sm_50;...": what torch was compiled for
    assert run.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
    assert [(g.name, g.compute_capability) for g in d.facts.gpus] == [("GRID V100D-32C", "7.0")]
    assert python_version(d.facts) == "3.8.20"
    report = d.pasted.collect_env
    assert report.cuda_runtime == "12.2.140"  # "NVCC: Cuda compilation tools, release 12.2, V12.2.140"
    assert kinds(d)["torch.arch_compat"] == Kind.FINE and kinds(d)["torch.cuda_init"] == Kind.FINE


def test_the_wrapper_build_line_is_torchs_config_not_the_tag() -> None:
    """Without the local tag the build comes from torch.__config__.show()'s "CUDA Runtime 12.1" line."""
    text = text_of(LMDEPLOY).replace("PyTorch: 2.3.1+cu121", "PyTorch: 2.3.1")
    assert packages(diagnosed(LMDEPLOY, text).facts).cuda == "12.1"


def test_wrapper_labels_are_read_only_where_a_wrapper_row_is() -> None:
    """Cut the rows only mmengine prints, and "PyTorch: 2.3.1+cu121" is no longer taken for a report line; in
    the xFormers warning "PyTorch 2.0.0+cu118 with CUDA 1108 (you have 2.0.0+cpu)" is what xFormers was built
    for, never the installed torch."""
    kept = "\n".join(
        line for line in text_of(LMDEPLOY).splitlines() if not line.startswith("PyTorch compiling details")
    )
    assert parse_report(kept).wrapper is None
    assert parse_report(kept).torch_version is None
    xformers = diagnosed("pastes/tldream-3-xformers-built-for-cu118-you-have-cpu.txt")
    assert xformers.pasted.collect_env is None
    assert (
        isinstance(xformers.facts.torch_packages, Unavailable) or xformers.facts.torch_packages.cuda is None
    )


# --- the "Versions of relevant libraries" section alone -----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version", "cuda", "hip"),
    [
        # pip's untagged torch==1.10.2 takes its build from conda's "py3.7_cuda10.2_cudnn7.6.5_0" line
        ("reports/fragment-libs-only-conda-cu102-no-kernel-image.txt", "1.10.2", "10.2", None),
        ("reports/vllm-newformat-fragment-libs-torch271-cu128-rtx-pro-6000.txt", "2.7.1+cu128", "12.8", None),
        ("pastes/pytorch-164346-rocm-gfx1151-pip.txt", "2.10.0.dev20250929+rocm7.0", None, "7.0"),
        ("pastes/pytorch-188892-mixed-cu12-cu13-pip.txt", "2.12.1+cu132", "13.2", None),
    ],
)
def test_library_section_alone_gives_torch_and_its_build(
    name: str, version: str, cuda: str | None, hip: str | None
) -> None:
    d = diagnosed(name)
    assert d.pasted.collect_env is not None and not d.pasted.empty
    torch = packages(d.facts)
    assert (torch.version, torch.cuda, torch.hip) == (version, cuda, hip)
    assert kinds(d)["torch.installed"] == Kind.FINE


def test_mixed_cuda_wheel_families_are_judged_from_the_library_section() -> None:
    d = diagnosed("pastes/pytorch-188892-mixed-cu12-cu13-pip.txt")
    assert d.result.cause is not None and d.result.cause.finding.check_id == "torch.nvidia_wheels"


def test_untagged_torch_without_a_conda_build_is_not_taken_for_a_cpu_build() -> None:
    name = "reports/fragment-libs-only-conda-cu102-no-kernel-image.txt"
    kept = "\n".join(line for line in text_of(name).splitlines() if "[conda] pytorch " not in line)
    facts = diagnosed(name, kept).facts
    assert isinstance(facts.torch_packages, Unavailable)
    assert "torch 1.10.2 without a build tag" in facts.torch_packages.detail


@pytest.mark.parametrize(
    ("version", "build", "expected"),
    [
        ("2.7.1+xpu", None, (None, None)),
        ("2.8.0.dev20250528+cpu", None, (None, None)),
        ("2.10.0.dev20250929+rocm7.0", None, (None, "7.0")),
        ("1.10.2", "py3.7_cuda10.2_cudnn7.6.5_0", ("10.2", None)),
        ("1.3.0", "py3.7_cuda10.1.243_cudnn7.6.3_0", ("10.1", None)),
        ("0.11.3", "py37_cu102", ("10.2", None)),
        ("1.12.1", "py3.9_cpu_0", (None, None)),
        ("1.10.2", None, None),  # an untagged pip line does not say
        ("2.10.0.dev20250929+rocm7.0", "pypi_0", (None, "7.0")),
    ],
)
def test_listed_build_reads_tags_and_conda_build_strings(
    version: str, build: str | None, expected: tuple[str | None, str | None] | None
) -> None:
    assert listed_build(version, build) == expected


@pytest.mark.parametrize(
    "name", ["pastes/bioimageio-307-conda-pytorch-cpu.txt", "pastes/torchdata-315-conda-cpuonly.txt"]
)
def test_conda_rows_without_their_header_show_the_cpu_build(name: str) -> None:
    """`conda list | grep pytorch`, or one row quoted: "pytorch 1.12.1 py3.9_cpu_0 pytorch"."""
    torch = packages(diagnosed(name).facts)
    assert torch.version in ("1.12.1", "1.11.0") and torch.cuda is None and torch.hip is None


# --- reports that start mid-way or lost their first character ----------------------------------------------

FIRST_CHAR = "reports/rtx2080ti-torch180-cu102-first-char-missing-cudnn-not-initialized.txt"


def test_a_report_missing_its_first_character_keeps_its_torch_line() -> None:
    d = diagnosed(FIRST_CHAR)  # "yTorch version: 1.8.0"
    torch = packages(d.facts)
    assert (torch.version, torch.cuda) == ("1.8.0", "10.2")
    assert runtime(d.facts).cuda_available is True
    assert kinds(d)["torch.cuda_init"] == Kind.FINE and kinds(d)["torch.driver_compat"] == Kind.FINE


def test_only_the_first_line_may_have_lost_a_character() -> None:
    lines = text_of(FIRST_CHAR).splitlines()
    moved = "\n".join([lines[1], lines[0], *lines[2:]])  # "yTorch version" no longer first: not a label
    assert parse_report(moved).torch_version is None


@pytest.mark.parametrize(
    "name",
    [
        "reports/gh200-aarch64-64k-kernel-conda-forge-cuda-true-midreport.txt",
        "reports/colab-t4-sm75-expected-is-sm80-or-sm90-midreport.txt",
        "reports/wsl2-rtx3060-laptop-driver-api-internal-assert-midreport.txt",
        "reports/rocm-fedora42-midreport-trailing-space-padded-lines.txt",
    ],
)
def test_a_report_starting_after_its_torch_lines_still_says_is_cuda_available(name: str) -> None:
    d = diagnosed(name)
    assert runtime(d.facts).cuda_available is True
    assert "Is CUDA available: True" in header_lines(d.facts)


def test_a_report_cut_before_its_torch_lines_says_what_its_other_lines_say() -> None:
    lines = text_of(FIRST_CHAR).splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("Is CUDA available"))
    d = diagnosed(FIRST_CHAR, "\n".join(lines[start:]))
    assert runtime(d.facts).cuda_available is True
    assert [g.name for g in d.facts.gpus] == ["NVIDIA GeForce RTX 2080 Ti"]
    assert not isinstance(d.facts.driver, Unavailable) and d.facts.driver.version == "515.65.01"


def test_jetson_midreport_says_cuda_is_not_available() -> None:
    d = diagnosed("reports/jetson-orin-l4t36-container-cuda-false-driver-na-midreport.txt")
    assert runtime(d.facts).cuda_available is False
    assert [g.name for g in d.facts.gpus] == ["Orin (nvgpu)"]


# --- a value cut at the very end of the paste ---------------------------------------------------------------


def test_a_value_cut_at_the_end_is_missing_not_a_gpu_named_g() -> None:
    name = "reports/aws-g4dn-torch1131-cu117-shell-prompt-cut-at-gpu.txt"
    d = diagnosed(name)  # ends "GPU models and configuration: G", no line break
    report = d.pasted.collect_env
    assert report is not None and report.cut_line is not None and report.cut_line.key == "gpu_models"
    assert not report.has("gpu_models") and report.truncated
    assert not any(isinstance(g.name, str) for g in d.facts.gpus)
    assert kinds(d)["gpu.present"] == Kind.UNKNOWN
    assert runtime(d.facts).cuda_available is True  # the lines before it stand
    assert len(d.pasted.parts) == 1 and d.pasted.parts[0].last_line == 19  # the cut line was read


def test_a_cut_build_line_is_no_rocm_build() -> None:
    """ "ROCM used to build PyTorch: N/" at the very end is no ROCm build: the driver's warning is judged."""
    d = diagnosed("reports/driver-too-old-found-9010-torch1121-cu102-truncated.txt")
    assert packages(d.facts).hip is None
    assert d.result.cause is not None and d.result.cause.finding.check_id == "torch.driver_compat"


def test_a_cut_gpu_row_is_dropped_unless_the_same_model_is_listed_above() -> None:
    cut = diagnosed(
        "reports/vllm-collect-env-cli-torch211-cu130-xpu-line-8x-rtx3090.txt"
    )  # "GPU 3: NVIDIA GeForc"
    assert [g.name for g in cut.facts.gpus] == ["NVIDIA GeForce RTX 3090"] * 3
    whole = diagnosed(
        "reports/vllm-v100s-cu118-torch-collect-env-after-vllm-script-failed.txt"
    )  # "GPU 2: Tesla ..."
    assert [g.name for g in whole.facts.gpus] == ["Tesla V100S-PCIE-32GB"] * 3


def test_a_cut_line_keeps_what_is_whole() -> None:
    cut_os = diagnosed(
        "pastes/pytorch-92745-mamba-nightly-version-cuda-none.txt"
    )  # "OS: Red Hat Enterprise Linux r"
    assert not isinstance(cut_os.facts.os, Unavailable)
    assert cut_os.facts.os.distro_name == "Red Hat Enterprise Linux"
    # "Is CUDA available: True" is whole even without a line break after it
    assert runtime(
        diagnosed("reports/rocm-fedora42-midreport-trailing-space-padded-lines.txt").facts
    ).cuda_available


def test_a_complete_last_line_is_read() -> None:
    name = "reports/aws-g4dn-torch1131-cu117-shell-prompt-cut-at-gpu.txt"
    kept = "\n".join(text_of(name).splitlines()[:-1])  # ends "CUDA_MODULE_LOADING set to: LAZY"
    report = diagnosed(name, kept + "\n").pasted.collect_env
    assert report is not None and report.cut_line is None and report.has("cuda_module_loading")


def test_a_last_package_line_without_a_line_break_is_read_when_its_version_is_whole() -> None:
    """Issue forms drop a paste's final line break: "[pip3] torchvision==0.4.0+cu92" at the very end is whole
    (no cut leaves a CUDA tag of two or three digits), "torchvision==0.4.0+cu9" may be cut and is not read."""
    name = "reports/c06_geforce210_collect_env.txt"
    upto = "\n".join(text_of(name).splitlines()[:45])  # ends "[pip3] torchvision==0.4.0+cu92", no line break
    assert upto.endswith("torchvision==0.4.0+cu92")

    def torchvision(text: str) -> list[str]:
        report = diagnosed(name, text).pasted.collect_env
        assert report is not None
        return [f"{lib.version}" for lib in report.libraries or () if lib.name == "torchvision"]

    assert torchvision(upto) == ["0.4.0+cu92"]
    assert torchvision(upto[:-1]) == []  # "+cu9": maybe cut
    assert torchvision(upto + "\n") == ["0.4.0+cu92"]


# --- the Python (and Windows) a paste shows without a collect_env line ---------------------------------------


@pytest.mark.parametrize(
    ("name", "version", "windows"),
    [
        ("pastes/chatglm-webui-1-cpu-torch-windows-half-cuda.txt", "3.10", True),  # \Python310\
        (
            "pastes/comic-translate-17-ultralytics-torch-cpu-invalid-cuda-device.txt",
            "3.10.11",
            False,
        ),  # Python-3.10.11
        ("pastes/detectron2-460-torch-not-compiled-cuda.txt", "3.7", False),  # /lib/python3.7/site-packages
        ("pastes/human-pose-23-cuda-error-35-insufficient.txt", "3.5", False),
        ("pastes/lightning-899-requested-gpus-but-machine-has-none.txt", "3.7", False),
        ("pastes/tldream-3-xformers-built-for-cu118-you-have-cpu.txt", "3.10.9", True),  # "(you have 3.10.9)"
        ("pastes/torchdata-315-conda-cpuonly.txt", "3.8", False),  # py3.8_cpu_0, py38_cpu
        ("pastes/bioimageio-307-conda-pytorch-cpu.txt", "3.9", False),  # py3.9_cpu_0
        (
            "reports/driver-too-old-found-9010-torch1121-cu102-truncated.txt",
            "3.8",
            False,
        ),  # cut before its line
    ],
)
def test_the_python_a_paste_shows(name: str, version: str, windows: bool) -> None:
    facts = diagnosed(name).facts
    assert python_version(facts) == version
    shown_windows = not isinstance(facts.os, Unavailable) and facts.os.system == "Windows"
    assert shown_windows is windows


@pytest.mark.parametrize(
    "name",
    [
        "pastes/chatglm-webui-1-cpu-torch-windows-half-cuda.txt",
        "pastes/detectron2-460-torch-not-compiled-cuda.txt",
        "pastes/lightning-899-requested-gpus-but-machine-has-none.txt",
        "pastes/tldream-3-xformers-built-for-cu118-you-have-cpu.txt",
        "pastes/torchdata-315-conda-cpuonly.txt",
        "pastes/bioimageio-307-conda-pytorch-cpu.txt",
    ],
)
def test_the_wheel_offered_is_built_for_that_python(name: str) -> None:
    d = diagnosed(name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.cpu_build"
    fix = cause.finding.remediation
    assert fix is not None and fix.commands
    pip = next(c for c in fix.commands if "pip" in c.argv)  # conda's own torch: conda's commands come first
    pins = [arg.split("==")[1] for arg in pip.argv if arg.startswith("torch==")]
    release = next(r for r in load_torch_releases().releases if pins and pins[0] in r.all_versions)
    minor = ".".join((python_version(d.facts) or "").split(".")[:2])
    assert minor in release.python_versions


def test_the_collect_env_python_line_wins_over_paths() -> None:
    name = "reports/centos7-cu110-found-no-nvidia-driver-warning.txt"  # a /lib/python3.6/ path, and its line
    assert python_version(diagnosed(name).facts) == "3.6.4"
    kept = "\n".join(line for line in text_of(name).splitlines() if not line.startswith("Python version"))
    assert python_version(diagnosed(name, kept).facts) == "3.6"


def test_pip_list_after_its_own_command_line_is_a_package_list() -> None:
    """`$ pip list | grep torch` prints no "Package Version" header: its command line starts the list
    (pytorch/pytorch#56126, a cluster login's prompt before it). Prose that mentions pip list reads nothing."""
    from torch_gpu_doctor.triage.tool_output import parse_package_lists

    name = "pastes/pytorch-56126-torch-c-no-attribute-user-site-copy.txt"
    lines = text_of(name).split("\n")
    (listing,) = parse_package_lists(lines)
    assert listing.manager == "pip"
    assert {lib.name: lib.version for lib in listing.packages} == {
        "torch": "1.5.1+cu101",
        "torchvision": "0.6.1+cu101",
    }
    assert lines[listing.lines[0] - 1].endswith("pip list | grep torch")
    assert parse_package_lists(["I ran pip list and torch is there.", "Then I reinstalled it."]) == ()


# --- vLLM's own release line -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("reports/vllm-085-gpu-topology-nics-section-only.txt", "0.8.5.post1"),
        ("reports/vllm-newformat-tail-torch211-cu130-h800-topology-tabs.txt", "0.19.1rc1.dev328+g18013df6a"),
    ],
)
def test_vllms_version_row_lists_vllm_as_installed(name: str, version: str) -> None:
    """vLLM's collect_env names its release in its own row ("vLLM Version : 0.8.5.post1"), not in the library
    list: it is read as the vllm package, which the checks judge (its GPU floor, a torch it pins)."""
    report = parse_report(text_of(name))
    assert [(lib.name, lib.version) for lib in report.libraries or () if lib.name == "vllm"] == [
        ("vllm", version)
    ]


def test_vllms_version_row_without_a_release_lists_nothing() -> None:
    text = text_of(
        "pastes/vllm-16901-vllm-rtx5090-no-kernel-image.txt"
    )  # "vLLM Version**: Latest (from PyPI)"
    assert not any(lib.name == "vllm" for lib in parse_report(text).libraries or ())
    assert not any(lib.name == "vllm" for lib in parse_report("vLLM Version: N/A\n").libraries or ())


def test_a_pip_list_pasted_without_its_header_is_read() -> None:
    """open-mmlab/mmdetection#4357: `pip list`'s rows with no "Package Version" header are read as a list (a run
    of rows with torch among them), an extension compiled against torch (mmcv-full) included."""
    from torch_gpu_doctor.triage.tool_output import parse_package_lists

    name = "pastes/mmdetection-4357-ext-abi-mismatch.txt"
    (listing,) = parse_package_lists(text_of(name).split("\n"))
    assert {lib.name: lib.version for lib in listing.packages}["mmcv-full"] == "1.2.3"
    assert {lib.name: lib.version for lib in listing.packages}["torch"] == "1.5.1"
    # prose with a few "name 1.2" pairs is no list
    assert parse_package_lists(["torch 1.5.1 and cuda 10.1", "python 3.7"]) == ()
