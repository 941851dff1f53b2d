"""nvidia-smi's own "couldn't communicate with the NVIDIA driver": its user-space part is installed, so the
question is the kernel module, not whether there is a GPU or a driver at all (blind set 11: three of forty
pastes opened with `lspci`). Built on real pastes; a paste's words that the kernel changed put the build
first; inside a container the module is the host's business; the container toolkit's own error explains an
image's nvidia-smi, but not the host's driver mismatch it relays."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.checks.driver_installed import INSTALLED_NOT_LOADED
from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.fixes.module_build import load_or_build
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.told import NOT_LOADED_FIND_OUT

PASTES = Path(__file__).parent / "pastes"
OTHER_KERNEL_WORKS = (
    "cachyos-118-nvidia-smi-other-kernel-works.txt"  # "It can work while ... the `linux` kernel"
)
NO_WORDS = (
    "shine-cluster-50-nvidia-smi-failed.txt",
    "gcp-compute-gpu-33-nvidia-smi-failed-today.txt",
    "pytorch-67991-nvidia-smi-failed-no-cuda-gpus.txt",
    "nvautoinstall-75-secureboot-nvidia-smi.txt",
)
IMAGE_NVIDIA_SMI = (
    "manylinux-5-container-nvml-load-failed.txt"  # an image's nvidia-smi, then the toolkit's error
)
RELAYED_MISMATCH = (
    "dalle-104-nvml-version-mismatch.txt"  # the toolkit relays the host's driver/library mismatch
)


def diagnosed(name: str, text: str | None = None) -> PasteDiagnosis:
    data = (PASTES / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name)


def first_commands(d: PasteDiagnosis) -> list[str]:
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    return [c.display() for c in cause.finding.remediation.commands]


@pytest.mark.parametrize("name", [OTHER_KERNEL_WORKS, *NO_WORDS])
def test_the_driver_is_installed_and_its_module_not_loaded(name: str) -> None:
    d = diagnosed(name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "driver.installed"
    assert cause.finding.summary.startswith(INSTALLED_NOT_LOADED)
    commands = first_commands(d)
    assert not any(
        c.startswith("lspci") for c in commands
    )  # nvidia-smi ran: whether there is a GPU is not it
    assert {"sudo modprobe nvidia", "sudo dkms autoinstall"} <= set(commands)
    assert cause.find_out == NOT_LOADED_FIND_OUT  # not nvidia-smi again: its answer is in the paste


@pytest.mark.parametrize("name", NO_WORDS)
def test_without_words_loading_it_comes_first_as_its_error_names_the_case(name: str) -> None:
    assert first_commands(diagnosed(name))[0] == "sudo modprobe nvidia"


@pytest.mark.parametrize(
    "words",
    [
        "It can work while I am running the `linux` kernel.",  # the real paste's wording
        "This started after a kernel update.",
        "I upgraded the kernel yesterday.",
        "Booting the previous kernel works.",
    ],
)
def test_words_that_the_kernel_changed_put_the_build_first(words: str) -> None:
    smi = (PASTES / NO_WORDS[0]).read_text()
    assert first_commands(diagnosed(OTHER_KERNEL_WORKS))[0] == "sudo dkms autoinstall"
    assert first_commands(diagnosed("words.txt", f"{smi}\n{words}\n"))[0] == "sudo dkms autoinstall"


def test_words_about_something_else_leave_the_order() -> None:
    smi = (PASTES / NO_WORDS[0]).read_text()
    text = f"{smi}\nI updated pip and reinstalled torch, same thing.\n"
    assert first_commands(diagnosed("words.txt", text))[0] == "sudo modprobe nvidia"


def test_a_known_distribution_and_kernel_get_their_own_headers() -> None:
    ubuntu = OsFacts(
        "Linux", "6.8.0-45-generic", "", "ubuntu", "Ubuntu 24.04", "24.04", ("debian",), False, False
    )
    fix = load_or_build(ubuntu, kernel_changed=True)
    assert [c.display() for c in fix.commands][:2] == [
        "sudo apt install linux-headers-6.8.0-45-generic",
        "sudo dkms autoinstall -k 6.8.0-45-generic",
    ]
    assert "linux-headers-$(uname -r)" in fix.text  # the text's form for any kernel


def test_an_images_own_nvidia_smi_is_the_container_not_the_module() -> None:
    d = diagnosed(IMAGE_NVIDIA_SMI)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "platform.container_gpus"  # the toolkit's error
    driver = next(v for v in d.result.verdicts if v.finding.check_id == "driver.installed")
    assert driver.finding.summary.startswith("nvidia-smi inside the container reaches no NVIDIA driver")
    assert driver.find_out == "nvidia-smi   # on the host"
    assert not any("dkms" in c.display() for c in driver.finding.remediation.commands)  # type: ignore[union-attr]


def test_a_host_mismatch_the_toolkit_relays_stays_the_cause() -> None:
    cause = diagnosed(RELAYED_MISMATCH).result.cause
    assert cause is not None and cause.finding.check_id == "driver.nvml"
    assert first_commands(diagnosed(RELAYED_MISMATCH))[0] == "systemctl reboot"


def test_a_kernel_module_that_does_not_work_is_not_a_changed_kernel() -> None:
    smi = (PASTES / NO_WORDS[0]).read_text()
    text = f"nvidia-smi doesn't work anymore, I think the kernel module is the problem\n{smi}"
    assert first_commands(diagnosed("words.txt", text))[0] == "sudo modprobe nvidia"
