"""driver.secure_boot, driver.kernel_module_build and driver.reboot_pending over in-memory facts.

Facts come from tests/factories.py (a healthy machine) and tests/checks/state_facts.py (values from the
captures in tests/fixtures/driver-state-trees); two tests gather the facts from those trees.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.checks.state_facts import (
    MISSING_MODULE,
    RELEASE,
    kernel,
    kernel_log,
    module_facts,
    module_info,
    secure_boot,
    unreadable_log,
)
from tests.factories import GONE, driver, facts, nvml_error, os_facts
from tests.factories import kernel as kernel_modules
from torch_gpu_doctor.checks.driver_module_build import driver_kernel_module_build
from torch_gpu_doctor.checks.driver_reboot_pending import driver_reboot_pending
from torch_gpu_doctor.checks.driver_secure_boot import driver_secure_boot
from torch_gpu_doctor.facts.dkms import DkmsEntry
from torch_gpu_doctor.facts.driver import DriverVersionReading
from torch_gpu_doctor.facts.kernel_log import gather_kernel_log
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.nvidia_module import gather_nvidia_module
from torch_gpu_doctor.facts.secure_boot import MokCertificate, gather_secure_boot
from torch_gpu_doctor.fixes.kernel_modules import REBOOT
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status, Target
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "driver-state-trees"
NOT_LOADED = kernel_modules(loaded=())
UNLOADED_DRIVER = driver(version=None, installed_module_version="550.120")
LOCKDOWN = (
    "[    5.102344] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7"
)
REJECTED_KEY = "[   13.2] Loading of module with unavailable key is rejected"


def unloaded(**fields: object) -> Facts:
    """An NVIDIA GPU whose module is installed but not loaded."""
    base = facts(driver=UNLOADED_DRIVER, kernel=NOT_LOADED, nvml=nvml_error("DriverNotLoaded", 9))
    return replace(base, **fields)  # type: ignore[arg-type]


def from_tree(name: str, **fields: object) -> Facts:
    host = RecordedHost(TREES / name)
    gathered = facts(
        nvidia_module=gather_nvidia_module(host, UNLOADED_DRIVER),
        secure_boot=gather_secure_boot(host),
        kernel_log=gather_kernel_log(host),
        driver=UNLOADED_DRIVER,
        kernel=NOT_LOADED,
    )
    assert host.unexpected_commands == []
    return replace(gathered, **fields)  # type: ignore[arg-type]


# --- driver.secure_boot -----------------------------------------------------------------------------------------


def test_fedora_capture_fails_with_the_akmods_signing_commands() -> None:
    f = driver_secure_boot(from_tree("fedora-akmods-unsigned-secure-boot", os=os_facts("fedora", ())))
    assert f.status is Status.FAIL
    assert "Secure Boot is blocking the NVIDIA driver" in f.summary
    assert "not signed" in f.details
    assert f.remediation is not None
    argvs = [c.argv for c in f.remediation.commands]
    assert argvs[0] == ("sudo", "kmodgenca", "-a")
    assert argvs[1] == ("sudo", "akmods", "--rebuild", "--kernels", "5.17.9-300.fc36.x86_64")
    assert argvs[2] == ("sudo", "mokutil", "--import", "/etc/pki/akmods/certs/public_key.der")
    assert f.remediation.requires_reboot and f.remediation.target is Target.SYSTEM
    assert any("Lockdown: modprobe" in e.value for e in f.evidence)


def test_unsigned_module_under_secure_boot_fails_even_without_the_log() -> None:
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(),
            nvidia_module=module_facts(modinfo=module_info(signed=False, signer=None)),
            kernel_log=unreadable_log(),
        )
    )
    assert f.status is Status.FAIL
    assert f.summary.startswith("Secure Boot is on and the nvidia module for this kernel is not signed")
    assert f.remediation is not None
    argvs = [c.argv for c in f.remediation.commands]
    # Ubuntu: DKMS builds again, signing with its key (`install --force` alone would reinstall the unsigned
    # build), installs that build, then the key is enrolled
    assert argvs[0] == ("sudo", "dkms", "build", "--force", "nvidia/550.120", "-k", RELEASE)
    assert argvs[1] == ("sudo", "dkms", "install", "--force", "nvidia/550.120", "-k", RELEASE)
    assert argvs[2] == ("sudo", "mokutil", "--import", "/var/lib/shim-signed/mok/MOK.der")


def test_signed_module_refused_by_the_kernel_only_needs_its_key_enrolled() -> None:
    cert = MokCertificate("/var/lib/dkms/mok.pub", False)
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(certificates=(cert,)),
            nvidia_module=module_facts(),
            kernel_log=kernel_log(signature_lines=(REJECTED_KEY,)),
        )
    )
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert f.remediation.commands[0].argv == (
        "sudo",
        "mokutil",
        "--import",
        "/var/lib/dkms/mok.pub",
    )
    assert "signed by 'DKMS module signing key'" in f.details


def test_a_pending_enrollment_request_asks_only_for_the_reboot() -> None:
    # mokutil --test-key says "is already in the enrollment request": importing again would only be skipped
    cert = MokCertificate("/var/lib/dkms/mok.pub", False, pending=True)
    for log in (kernel_log(signature_lines=(REJECTED_KEY,)), unreadable_log()):
        f = driver_secure_boot(
            unloaded(
                secure_boot=secure_boot(certificates=(cert,)), nvidia_module=module_facts(), kernel_log=log
            )
        )
        assert f.status in (Status.FAIL, Status.WARN)
        assert f.remediation is not None
        assert [c.argv for c in f.remediation.commands] == [REBOOT.argv]
        assert "already filed" in f.remediation.text and "Enroll MOK" in f.remediation.commands[0].note
    assert any("enrollment request waits for a reboot" in e.value for e in f.evidence)


def test_loaded_module_passes_whatever_the_state() -> None:
    f = driver_secure_boot(
        facts(secure_boot=secure_boot(), nvidia_module=module_facts(), kernel_log=unreadable_log())
    )
    assert f.status is Status.PASS
    assert "is not blocking it" in f.summary


def test_taint_notice_alone_is_not_a_refusal() -> None:
    taint = (
        "[ 12.1] nvidia: module verification failed: signature and/or required key missing - tainting kernel"
    )
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(on=False),
            nvidia_module=module_facts(),
            kernel_log=kernel_log(signature_lines=(taint,)),
        )
    )
    assert f.status is Status.PASS
    assert f.summary == "Secure Boot is off: it cannot block the module."


def test_shim_without_validation_is_not_blocking() -> None:
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(shim_disabled=True),
            nvidia_module=module_facts(modinfo=module_info(signed=False)),
        )
    )
    assert f.status is Status.PASS
    assert "shim does not validate" in f.summary


def test_signed_module_with_a_readable_clean_log_is_not_blamed_on_secure_boot() -> None:
    f = driver_secure_boot(
        unloaded(secure_boot=secure_boot(), nvidia_module=module_facts(), kernel_log=kernel_log())
    )
    assert f.status is Status.PASS
    assert "see driver.installed" in f.summary


def test_signed_module_with_an_unenrolled_certificate_and_no_log_warns() -> None:
    cert = MokCertificate("/var/lib/shim-signed/mok/MOK.der", False)
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(certificates=(cert,)),
            nvidia_module=module_facts(),
            kernel_log=unreadable_log(),
        )
    )
    assert f.status is Status.WARN
    assert f.remediation is not None and f.remediation.commands[0].argv[-1] == cert.path


def test_signed_module_enrolled_certificate_and_no_log_passes() -> None:
    cert = MokCertificate("/var/lib/shim-signed/mok/MOK.der", True)
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(certificates=(cert,)),
            nvidia_module=module_facts(),
            kernel_log=unreadable_log(),
        )
    )
    assert f.status is Status.PASS


def test_signed_module_without_log_or_certificates_is_unknown() -> None:
    f = driver_secure_boot(
        unloaded(secure_boot=secure_boot(), nvidia_module=module_facts(), kernel_log=unreadable_log())
    )
    assert f.status is Status.UNKNOWN
    assert "not readable" in f.summary


def test_unknown_secure_boot_state_with_an_unsigned_module_warns() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/sys/firmware/efi/efivars/SecureBoot-...")
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(on=denied), nvidia_module=module_facts(modinfo=module_info(signed=False))
        )
    )
    assert f.status is Status.WARN
    assert f.summary.startswith("Could not read the Secure Boot state")


def test_unknown_secure_boot_state_with_a_signed_module_is_unknown() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "efivars")
    f = driver_secure_boot(unloaded(secure_boot=secure_boot(on=denied), nvidia_module=module_facts()))
    assert f.status is Status.UNKNOWN


def test_legacy_bios_and_no_module_installed_skip() -> None:
    bios = replace(secure_boot(on=Unavailable(Reason.NOT_APPLICABLE, "legacy BIOS")), efi=False)
    assert driver_secure_boot(unloaded(secure_boot=bios, nvidia_module=module_facts())).status is Status.SKIP
    f = driver_secure_boot(
        unloaded(secure_boot=secure_boot(), nvidia_module=module_facts(modinfo=MISSING_MODULE))
    )
    assert f.status is Status.SKIP
    assert "must be signed with an enrolled key" in f.summary


def test_a_refusal_is_not_blamed_on_nvidia_when_no_nvidia_module_exists() -> None:
    f = driver_secure_boot(
        unloaded(
            secure_boot=secure_boot(),
            nvidia_module=module_facts(modinfo=MISSING_MODULE),
            kernel_log=kernel_log(signature_lines=(LOCKDOWN,)),  # e.g. VirtualBox's vboxdrv
        )
    )
    assert f.status is Status.SKIP


def test_unreadable_module_info_under_secure_boot_is_unknown() -> None:
    timed_out = Unavailable(Reason.TIMED_OUT, "modinfo: timed_out")
    f = driver_secure_boot(unloaded(secure_boot=secure_boot(), nvidia_module=module_facts(modinfo=timed_out)))
    assert f.status is Status.UNKNOWN


def test_secure_boot_facts_missing_no_gpu_and_wsl() -> None:
    assert driver_secure_boot(unloaded(secure_boot=GONE)).status is Status.UNKNOWN
    assert driver_secure_boot(unloaded(secure_boot=secure_boot(), gpus=())).status is Status.SKIP
    assert (
        driver_secure_boot(unloaded(secure_boot=secure_boot(), os=os_facts(wsl=True))).status is Status.SKIP
    )


# --- driver.kernel_module_build ----------------------------------------------------------------------------------


def test_ubuntu_capture_booted_a_kernel_without_headers_or_module() -> None:
    f = driver_kernel_module_build(from_tree("ubuntu-kernel-upgrade-no-headers"))
    assert f.status is Status.FAIL
    assert f.summary == (
        "The NVIDIA module is built for 6.8.0-45-generic, but the running kernel is 6.8.0-49-generic: "
        "it has no NVIDIA module."
    )
    assert "headers for 6.8.0-49-generic are not installed" in f.details
    assert f.remediation is not None
    assert [c.argv for c in f.remediation.commands] == [
        ("sudo", "apt", "install", "linux-headers-6.8.0-49-generic"),
        ("sudo", "dkms", "autoinstall", "-k", "6.8.0-49-generic"),
        ("sudo", "modprobe", "nvidia"),
    ]


def test_fedora_build_uses_kernel_devel_and_akmods() -> None:
    module = module_facts(
        modinfo=MISSING_MODULE,
        kernels=(
            kernel("5.17.8-300.fc36.x86_64"),
            kernel("5.17.9-300.fc36.x86_64", modules=False, headers=False),
        ),
        dkms=Unavailable(Reason.NOT_FOUND, "dkms is not on PATH"),
        running="5.17.9-300.fc36.x86_64",
    )
    f = driver_kernel_module_build(unloaded(nvidia_module=module, os=os_facts("fedora", ())))
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert [c.argv[:3] for c in f.remediation.commands][:2] == [
        ("sudo", "dnf", "install"),
        ("sudo", "akmods", "--force"),
    ]


def test_ubuntu_prebuilt_modules_name_the_linux_modules_package() -> None:
    old = replace(
        kernel("6.8.0-45-generic"),
        nvidia_modules=("/lib/modules/6.8.0-45-generic/kernel/nvidia-550/nvidia.ko",),
    )
    module = module_facts(modinfo=MISSING_MODULE, kernels=(old, kernel(modules=False)), dkms=())
    f = driver_kernel_module_build(unloaded(nvidia_module=module))
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert f.remediation.commands[0].argv == ("sudo", "apt", "install", f"linux-modules-nvidia-550-{RELEASE}")


def test_dkms_sources_never_built() -> None:
    module = module_facts(
        modinfo=MISSING_MODULE,
        kernels=(kernel(modules=False),),
        dkms=(DkmsEntry("nvidia", "550.120", None, None, "added", ""),),
    )
    f = driver_kernel_module_build(unloaded(nvidia_module=module))
    assert f.status is Status.FAIL
    assert "by DKMS, but for no kernel yet" in f.summary
    assert "never built them" in f.details


def test_headers_present_but_no_module_points_at_the_build_log() -> None:
    module = module_facts(modinfo=MISSING_MODULE, kernels=(kernel("6.8.0-45-generic"), kernel(modules=False)))
    module = replace(
        module, dkms=(DkmsEntry("nvidia", "550.120", "6.8.0-45-generic", "x86_64", "installed", ""),)
    )
    f = driver_kernel_module_build(unloaded(nvidia_module=module))
    assert f.status is Status.FAIL
    assert "/var/lib/dkms/nvidia/550.120/build/make.log" in f.details


def test_module_for_the_running_kernel_passes() -> None:
    f = driver_kernel_module_build(facts(nvidia_module=module_facts()))
    assert f.status is Status.PASS
    assert f.summary == f"An NVIDIA kernel module is built for the running kernel {RELEASE}."


def test_newer_installed_kernel_without_module_warns() -> None:
    module = module_facts(kernels=(kernel(), kernel("6.8.0-51-generic", modules=False, headers=False)))
    f = driver_kernel_module_build(facts(nvidia_module=module))
    assert f.status is Status.WARN
    assert "the newer kernel 6.8.0-51-generic has none" in f.summary
    assert "headers are not installed" in f.details
    assert (
        f.remediation is not None and f.remediation.commands[0].argv[-1] == "linux-headers-6.8.0-51-generic"
    )


def test_leftover_folder_of_a_removed_kernel_is_not_a_newer_kernel() -> None:
    module = module_facts(kernels=(kernel(), kernel("6.8.0-51-generic", modules=False, installed=False)))
    assert driver_kernel_module_build(facts(nvidia_module=module)).status is Status.PASS


def test_no_module_anywhere_skips_and_unreadable_is_unknown() -> None:
    nothing = module_facts(modinfo=MISSING_MODULE, kernels=(kernel(modules=False),), dkms=())
    assert driver_kernel_module_build(unloaded(nvidia_module=nothing)).status is Status.SKIP
    denied = Unavailable(Reason.PERMISSION_DENIED, "/lib/modules")
    blind = module_facts(
        modinfo=Unavailable(Reason.NOT_FOUND, "modinfo is not on PATH"), kernels=denied, dkms=()
    )
    assert driver_kernel_module_build(unloaded(nvidia_module=blind)).status is Status.UNKNOWN
    no_release = module_facts(
        running=Unavailable(Reason.NOT_FOUND, "/proc/sys/kernel/osrelease"),
        modinfo=Unavailable(Reason.TIMED_OUT, "modinfo"),
    )
    assert driver_kernel_module_build(unloaded(nvidia_module=no_release)).status is Status.UNKNOWN
    assert driver_kernel_module_build(unloaded(nvidia_module=GONE)).status is Status.UNKNOWN


# --- driver.reboot_pending ---------------------------------------------------------------------------------------

# samples/proc-driver-nvidia/mismatch-truenas-580.txt: module 580.173.02 runs, user space is 580.178.04
LOADED_OLD = driver(
    "580.173.02",
    readings=(
        DriverVersionReading(
            "nvml", "nvmlSystemGetDriverVersion", Unavailable(Reason.FAILED, "NVMLError_LibRmVersionMismatch")
        ),
        DriverVersionReading("procfs", "/proc/driver/nvidia/version", "580.173.02"),
    ),
    userspace_version="580.178.04",
)
MISMATCH = nvml_error("LibRmVersionMismatch", 18)


def test_upgrade_waiting_for_a_reboot_warns_and_points_at_driver_nvml() -> None:
    f = driver_reboot_pending(
        facts(driver=LOADED_OLD, nvml=MISMATCH, nvidia_module=module_facts(modinfo=module_info("580.178.04")))
    )
    assert f.status is Status.WARN
    assert f.summary == "A driver update waits for a reboot: 580.178.04 is installed, 580.173.02 still runs."
    assert "see driver.nvml" in f.details
    assert f.remediation is not None and f.remediation.requires_reboot


def test_library_and_module_on_disk_disagree_fails_because_a_reboot_will_not_help() -> None:
    same_on_disk = module_facts(modinfo=module_info("580.173.02"))
    f = driver_reboot_pending(facts(driver=LOADED_OLD, nvml=MISMATCH, nvidia_module=same_on_disk))
    assert f.status is Status.FAIL
    assert "a reboot will not fix this mismatch" in f.summary
    assert f.remediation is not None and not f.remediation.commands  # the package manager's job, in words


def test_half_upgraded_update_pending_warns_before_the_reboot_breaks_it() -> None:
    new_module = module_facts(modinfo=module_info("580.178.04"))
    old_library = replace(LOADED_OLD, userspace_version="580.173.02")
    f = driver_reboot_pending(facts(driver=old_library, nvidia_module=new_module))
    assert f.status is Status.WARN
    assert "rebooting now would load module 580.178.04 beside library 580.173.02" in f.summary


def test_library_differs_and_the_module_on_disk_is_unreadable_warns() -> None:
    blind = module_facts(modinfo=Unavailable(Reason.NOT_FOUND, "modinfo is not on PATH"))
    f = driver_reboot_pending(facts(driver=LOADED_OLD, nvml=MISMATCH, nvidia_module=blind))
    assert f.status is Status.WARN
    assert "most likely a driver update waiting for a reboot" in f.summary


def test_everything_agrees_passes() -> None:
    f = driver_reboot_pending(facts(nvidia_module=module_facts(modinfo=module_info("550.54.15"))))
    assert f.status is Status.PASS
    assert "550.54.15" in f.summary


@pytest.mark.parametrize(
    "fields",
    [
        {"driver": driver(version=None)},  # the module is not loaded
        {"os": os_facts(wsl=True)},
        {"gpus": ()},
        {"driver": driver("35.3.1", is_jetson=True)},
    ],
)
def test_nothing_to_compare_skips(fields: dict[str, object]) -> None:
    assert driver_reboot_pending(facts(nvidia_module=module_facts(), **fields)).status is Status.SKIP


def test_nothing_readable_to_compare_is_unknown() -> None:
    blind = module_facts(modinfo=Unavailable(Reason.TIMED_OUT, "modinfo"))
    lib = driver(userspace_version=Unavailable(Reason.NOT_FOUND, "libnvidia-ml.so.1"))
    assert driver_reboot_pending(facts(driver=lib, nvidia_module=blind)).status is Status.UNKNOWN
    assert driver_reboot_pending(facts(driver=GONE)).status is Status.UNKNOWN
