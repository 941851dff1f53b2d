"""Virtual-machine detection from the hypervisor CPU flag and DMI strings (tests/fixtures/vm-captures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import facts, gpu, os_facts
from torch_gpu_doctor.checks.platform_vm import virtual_machine
from torch_gpu_doctor.facts.virtualization import gather_virtualization, hypervisor_from_dmi
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status

FLAGS = (
    Path(__file__).resolve().parents[1] / "fixtures" / "vm-captures" / "ci-vm-cpuinfo-flags.txt"
).read_text()
BARE_METAL_FLAGS = FLAGS.replace(" hypervisor", "")


def host(tmp_path: Path, cpuinfo: str | None, dmi: dict[str, str] | None = None) -> RecordedHost:
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    if cpuinfo is not None:
        (root / "proc" / "cpuinfo").write_text(f"processor\t: 0\nvendor_id\t: AuthenticAMD\n{cpuinfo}")
    for name, value in (dmi or {}).items():
        path = root / "sys/class/dmi/id" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return RecordedHost(tmp_path)


def test_the_ci_vm_is_a_vm_without_a_named_hypervisor(tmp_path: Path) -> None:
    found = gather_virtualization(host(tmp_path, FLAGS))
    assert (found.hypervisor_flag, found.is_vm, found.hypervisor, found.dmi) == (True, True, None, ())
    finding = virtual_machine(facts(virtualization=found, gpus=()))
    assert finding.status is Status.WARN
    assert finding.summary.startswith("This is a virtual machine without an NVIDIA GPU")


@pytest.mark.parametrize(
    ("dmi", "name"),
    [
        ({"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"}, "QEMU/KVM"),
        ({"sys_vendor": "Microsoft Corporation", "product_name": "Virtual Machine"}, "Hyper-V"),
        ({"sys_vendor": "Amazon EC2", "product_name": "g5.xlarge"}, "Amazon EC2 (Nitro/KVM)"),
        ({"sys_vendor": "Google", "product_name": "Google Compute Engine"}, "Google Compute Engine (KVM)"),
        ({"sys_vendor": "Dell Inc.", "product_name": "Precision 7920 Tower"}, None),
    ],
)
def test_dmi_names_the_hypervisor(dmi: dict[str, str], name: str | None) -> None:
    assert hypervisor_from_dmi(dmi) == name


def test_a_passed_through_gpu_passes(tmp_path: Path) -> None:
    found = gather_virtualization(host(tmp_path, FLAGS, {"sys_vendor": "QEMU"}))
    finding = virtual_machine(facts(virtualization=found, gpus=(gpu(),)))
    assert finding.status is Status.PASS
    assert (
        finding.summary == "This is a QEMU/KVM virtual machine, and an NVIDIA GPU was passed through to it."
    )


def test_bare_metal_is_skipped(tmp_path: Path) -> None:
    found = gather_virtualization(host(tmp_path, BARE_METAL_FLAGS, {"sys_vendor": "Dell Inc."}))
    assert found.is_vm is False
    assert virtual_machine(facts(virtualization=found)).status is Status.SKIP


def test_wsl_is_left_to_the_wsl_checks(tmp_path: Path) -> None:
    found = gather_virtualization(host(tmp_path, FLAGS, {"sys_vendor": "Microsoft Corporation"}))
    assert virtual_machine(facts(virtualization=found, os=os_facts(wsl=True))).status is Status.SKIP


@pytest.mark.parametrize("cpuinfo", [None, "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"])
def test_no_flag_and_no_dmi_is_unknown_not_bare_metal(tmp_path: Path, cpuinfo: str | None) -> None:
    found = gather_virtualization(host(tmp_path, cpuinfo))
    finding = virtual_machine(facts(virtualization=found))
    assert finding.status is Status.UNKNOWN
