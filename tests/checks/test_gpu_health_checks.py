"""driver.xid_errors, gpu.persistence_mode, gpu.throttle and gpu.memory_errors over in-memory facts.

Xid lines are samples/dmesg/xid-samples.txt; health values follow the nvidia-smi -q samples (A100: 353
corrected errors and a row remap pending on GPU 9E; RTX 3090/4090: no ECC data) via tests/checks/state_facts.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.checks.state_facts import (
    NOT_SUPPORTED,
    geforce_health,
    health,
    kernel_log,
    rtx4090_health,
    unreadable_log,
)
from tests.factories import GONE, facts, gpu, nvml_device, nvml_error, nvml_ok, os_facts
from torch_gpu_doctor.checks.driver_xid_errors import driver_xid_errors
from torch_gpu_doctor.checks.gpu_memory_errors import gpu_memory_errors
from torch_gpu_doctor.checks.gpu_persistence import gpu_persistence_mode
from torch_gpu_doctor.checks.gpu_throttle import decode_reasons, gpu_throttle
from torch_gpu_doctor.checks.support.xid_catalog import XID_CATALOG, XidSeverity, xid_meaning
from torch_gpu_doctor.facts.gpu_health import gather_gpu_health
from torch_gpu_doctor.facts.kernel_log import gather_kernel_log
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

SAMPLE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "driver-state-trees" / "a100x4-remap-pending-xid-log"
)
XID_79 = "May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus."
XID_31 = "Nov 22 18:29:55 hostname kernel: [ 966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000"
XID_63 = "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."
XID_13 = "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:01:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception"
XID_45 = "NVRM: Xid (PCI:0000:01:00): 45, pid=2271, name=python, Ch 00000008"


def a100x4() -> Facts:
    """The A100 capture: NVML answers and the sample kernel log, gathered from the tree."""
    host = RecordedHost(SAMPLE)
    bdfs = ("0000:68:00.0", "0000:9e:00.0", "0000:c2:00.0", "0000:d4:00.0")
    gpus = tuple(gpu(bdf=b, name="NVIDIA A100-SXM4-80GB", cc="8.0", nvml_index=i) for i, b in enumerate(bdfs))
    devices = tuple(nvml_device(i, b, persistence_mode=True) for i, b in enumerate(bdfs))
    return facts(
        gpus=gpus,
        nvml=nvml_ok("555.42.02", devices),
        gpu_health=gather_gpu_health(host),
        kernel_log=gather_kernel_log(host),
    )


# --- driver.xid_errors --------------------------------------------------------------------------------------------


def test_sample_log_fails_on_the_fallen_off_gpu_and_explains_each_xid() -> None:
    f = driver_xid_errors(a100x4())
    assert f.status is Status.FAIL
    assert f.summary == "The NVIDIA driver logged GPU faults since boot (Xid 79, 32, 63, 31, 69)."
    assert "Xid 79 (GPU has fallen off the bus) once on 0000:2b:00.0" in f.details
    assert "Xid 63 (ECC page retirement or row remapping recording event) once on 0000:10:1c.0" in f.details
    assert f.remediation is not None and f.remediation.requires_reboot  # gpu_lost(): power, risers, reboot
    assert len(f.evidence) == 5 and f.evidence[-1].value.endswith("intr 10000000")


def test_program_level_xids_warn_and_name_the_gpu() -> None:
    f = driver_xid_errors(facts(kernel_log=kernel_log((XID_13, XID_31, XID_31))))
    assert f.status is Status.WARN
    assert f.summary == "Xid 13, 31 since boot: errors raised by programs on the GPU, usually their own bugs."
    assert "Xid 31 (GPU memory page fault) 2× on NVIDIA GeForce RTX 4090 at 0000:01:00.0" in f.details


# The form of an Xid line that names its process (NVRM's own: a gpu-health log and a vLLM report quote it so)
VLLM_31 = (
    "NVRM: Xid (PCI:0000:01:00): 31, pid=665187, name=VLLM::EngineCor, Ch 0000000a, intr 00000000. MMU Fault: "
    "ENGINE GRAPHICS GPC0 GPCCLIENT_T1_9 faulted @ 0x17_00001000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"
)
EXE_31 = (
    "NVRM: Xid (PCI:0000:01:00): 31, pid=1587983, name=exe, Ch 0000000a, intr 00000000. MMU Fault: ENGINE "
    "GRAPHICS GPC5 GPCCLIENT_T1_5 faulted @ 0x2ae1_d6600000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"
)


def test_the_same_fault_in_different_programs_is_the_driver_or_the_gpu() -> None:
    f = driver_xid_errors(facts(kernel_log=kernel_log((VLLM_31, EXE_31))))
    assert f.status is Status.FAIL
    assert f.summary == (
        "Xid 31 from 2 different programs (VLLM, exe): the driver or the GPU, not one program's bug."
    )
    assert "usually the program's bug" not in f.details  # no line of it says the opposite
    assert f.remediation is not None and "another driver release" in f.remediation.text


def test_one_programs_faults_stay_its_own_bug() -> None:
    """The same process name under several pids (a server restarted), and Xid 43 after programs were killed."""
    again = EXE_31.replace("pid=1587983", "pid=1590012")
    assert driver_xid_errors(facts(kernel_log=kernel_log((EXE_31, again)))).status is Status.WARN
    killed = (
        XID_45.replace(": 45,", ": 43,"),
        XID_45.replace(": 45,", ": 43,").replace("name=python", "name=Xorg"),
    )
    assert driver_xid_errors(facts(kernel_log=kernel_log(killed))).status is Status.WARN


def test_row_remap_recorded_is_a_warning_not_a_fault() -> None:
    f = driver_xid_errors(facts(kernel_log=kernel_log((XID_63,))))
    assert f.status is Status.WARN
    assert "needs a reset or a closer look" in f.summary


def test_informational_cleanup_xid_alone_passes() -> None:
    f = driver_xid_errors(facts(kernel_log=kernel_log((XID_45,))))
    assert f.status is Status.PASS
    assert "Only informational" in f.summary


def test_an_xid_not_in_the_table_is_reported_not_ignored() -> None:
    f = driver_xid_errors(facts(kernel_log=kernel_log(("NVRM: Xid (PCI:0000:01:00): 999, pid=1, unknown",))))
    assert f.status is Status.WARN
    assert "look it up in NVIDIA's Xid catalog" in f.details


def test_the_recovery_action_xid_alone_is_informational() -> None:
    """Xid 154 (r550+) names the recovery an earlier Xid needs; alone it is the driver's note, not a fault."""
    f = driver_xid_errors(
        facts(kernel_log=kernel_log(("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed",)))
    )
    assert f.status is Status.PASS


def test_clean_readable_log_passes_and_says_how_much_was_read() -> None:
    f = driver_xid_errors(facts(kernel_log=kernel_log()))
    assert f.status is Status.PASS
    assert f.summary == "No Xid errors in the kernel log (900 lines from `dmesg`)."


def test_unreadable_log_is_unknown_and_never_no_errors() -> None:
    f = driver_xid_errors(facts(kernel_log=unreadable_log()))
    assert f.status is Status.UNKNOWN
    assert "kernel log not readable (kernel.dmesg_restrict = 1)" in f.summary
    assert "not the same as 'no errors'" in f.summary
    assert "No Xid" not in f.summary


def test_missing_tools_and_missing_facts_are_unknown_no_gpu_and_wsl_skip() -> None:
    none = kernel_log(source=Unavailable(Reason.NOT_FOUND, "dmesg is not on PATH; journalctl is not on PATH"))
    assert "neither dmesg nor journalctl" in driver_xid_errors(facts(kernel_log=none)).summary
    assert driver_xid_errors(facts(kernel_log=GONE)).status is Status.UNKNOWN
    assert driver_xid_errors(facts(kernel_log=kernel_log(), gpus=())).status is Status.SKIP
    # a GPU that fell off the bus may be gone from the PCI bus: its Xid still fails
    assert driver_xid_errors(facts(kernel_log=kernel_log((XID_79,)), gpus=())).status is Status.FAIL
    assert (
        driver_xid_errors(facts(kernel_log=kernel_log((XID_79,)), os=os_facts(wsl=True))).status
        is Status.SKIP
    )


@pytest.mark.parametrize("xid", [13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120])
def test_the_xids_the_issue_names_are_in_the_table(xid: int) -> None:
    assert xid in XID_CATALOG


def test_hardware_xids_are_faults_and_program_xids_are_not() -> None:
    assert {x for x in (48, 64, 79, 95, 119) if xid_meaning(x).severity is XidSeverity.FAULT} == {
        48,
        64,
        79,
        95,
        119,
    }
    assert xid_meaning(31).severity is XidSeverity.PROGRAM
    assert xid_meaning(9999).severity is XidSeverity.ATTENTION


# --- gpu.persistence_mode -----------------------------------------------------------------------------------------


def test_persistence_on_passes() -> None:
    f = gpu_persistence_mode(a100x4())
    assert f.status is Status.PASS
    assert f.summary == "Persistence mode is on for all 4 GPUs."


def test_persistence_off_on_a_headless_server_warns_with_the_daemon() -> None:
    f = gpu_persistence_mode(facts(gpu_health=(health(),)))
    assert f.status is Status.WARN
    assert "headless" in f.summary
    assert f.remediation is not None
    assert [c.argv for c in f.remediation.commands] == [
        ("sudo", "nvidia-smi", "-pm", "1"),
        ("sudo", "systemctl", "enable", "--now", "nvidia-persistenced"),
    ]


def test_persistence_off_on_a_desktop_passes() -> None:
    f = gpu_persistence_mode(facts(gpu_health=(health(display_active=True),)))
    assert f.status is Status.PASS
    assert "fine on a desktop" in f.summary


def test_persistence_off_with_unknown_display_does_not_cry_wolf() -> None:
    f = gpu_persistence_mode(facts(gpu_health=(health(display_active=NOT_SUPPORTED),)))
    assert f.status is Status.PASS
    assert "may be a desktop" in f.summary and "nvidia-persistenced" in f.details


def test_persistence_not_supported_skips_and_unreadable_is_unknown() -> None:
    unsupported = nvml_ok(devices=(nvml_device(persistence_mode=NOT_SUPPORTED),))
    assert gpu_persistence_mode(facts(nvml=unsupported, gpu_health=(health(),))).status is Status.SKIP
    denied = nvml_ok(
        devices=(
            nvml_device(persistence_mode=Unavailable(Reason.PERMISSION_DENIED, "NVMLError_NoPermission")),
        )
    )
    assert gpu_persistence_mode(facts(nvml=denied, gpu_health=(health(),))).status is Status.UNKNOWN


def test_nvml_down_is_unknown_and_no_gpu_or_wsl_skips() -> None:
    down = Unavailable(Reason.FAILED, "NVMLError_LibRmVersionMismatch")
    f = gpu_persistence_mode(facts(nvml=nvml_error("LibRmVersionMismatch", 18), gpu_health=down))
    assert f.status is Status.UNKNOWN and "see driver.nvml" in f.summary
    assert gpu_persistence_mode(facts(gpu_health=(), gpus=())).status is Status.SKIP
    no_driver = Unavailable(Reason.FAILED, "NVMLError_DriverNotLoaded")
    assert (
        gpu_throttle(facts(nvml=nvml_error("DriverNotLoaded", 9), gpu_health=no_driver)).status is Status.SKIP
    )
    assert gpu_persistence_mode(facts(gpu_health=(health(),), os=os_facts(wsl=True))).status is Status.SKIP
    assert gpu_throttle(facts(gpu_health=())).status is Status.UNKNOWN  # NVML listed no GPU
    # persistence comes from the nvml facts; without health answers the display is unknown: no warning
    assert gpu_persistence_mode(facts(gpu_health=GONE)).status is Status.PASS


# --- gpu.throttle ------------------------------------------------------------------------------------------------


def test_idle_clocks_are_normal() -> None:
    f = gpu_throttle(a100x4())  # every sample GPU: Idle Active, nothing else
    assert f.status is Status.PASS
    assert all(e.value == "idle" for e in f.evidence)


@pytest.mark.parametrize("mask", [0x0, 0x1, 0x2, 0x4, 0x10, 0x100, 0x1 | 0x4])
def test_normal_operation_passes(mask: int) -> None:
    assert gpu_throttle(facts(gpu_health=(health(clocks_event_reasons=mask),))).status is Status.PASS


@pytest.mark.parametrize(
    ("mask", "named"),
    [
        (0x20, "software thermal slowdown"),
        (0x8 | 0x40, "hardware thermal slowdown"),
        (0x8 | 0x80, "hardware power brake"),
        (0x8, "hardware slowdown"),
    ],
)
def test_heat_and_power_slowdowns_warn(mask: int, named: str) -> None:
    f = gpu_throttle(facts(gpu_health=(health(clocks_event_reasons=mask),)))
    assert f.status is Status.WARN
    assert named in f.summary
    assert "snapshot" in f.details


def test_unknown_bits_are_named_not_judged() -> None:
    assert decode_reasons(0x1 | 0x8000) == [("idle", True), ("unknown reason 0x8000", True)]
    assert gpu_throttle(facts(gpu_health=(health(clocks_event_reasons=0x8000),))).status is Status.PASS


def test_throttle_not_supported_skips_and_unreadable_is_unknown() -> None:
    assert gpu_throttle(facts(gpu_health=(health(clocks_event_reasons=NOT_SUPPORTED),))).status is Status.SKIP
    garbled = Unavailable(Reason.UNPARSEABLE, "clocks_event_reasons=-1")
    assert gpu_throttle(facts(gpu_health=(health(clocks_event_reasons=garbled),))).status is Status.UNKNOWN


# --- gpu.memory_errors ------------------------------------------------------------------------------------------


def test_a100_capture_warns_about_the_pending_row_remap_only() -> None:
    f = gpu_memory_errors(a100x4())
    assert f.status is Status.WARN
    assert f.summary == (
        "NVIDIA A100-SXM4-80GB at 0000:9e:00.0: a bad memory row remap waits for a GPU reset or reboot to take effect."
    )
    assert "0000:c2:00.0: no uncorrectable memory errors (1 remapped row)." in f.details
    assert f.remediation is not None and f.remediation.requires_reboot


def test_many_corrected_errors_alone_are_not_a_failure() -> None:
    f = gpu_memory_errors(
        facts(gpu_health=(health(ecc_corrected_volatile=353, ecc_corrected_aggregate=353),))
    )
    assert f.status is Status.PASS
    assert "353 corrected errors since the driver loaded (fixed by ECC)" in f.summary


def test_uncorrectable_errors_since_the_driver_loaded_fail() -> None:
    f = gpu_memory_errors(facts(gpu_health=(health(ecc_uncorrected_volatile=1),)))
    assert f.status is Status.FAIL
    assert "1 uncorrectable memory error since the driver loaded" in f.summary


def test_failed_row_remap_fails() -> None:
    f = gpu_memory_errors(facts(gpu_health=(health(remapping_failed=True),)))
    assert f.status is Status.FAIL and "replacing the GPU" in f.summary


def test_pending_page_retirement_and_ecc_mode_change_warn() -> None:
    pre_ampere = health(retired_pages_single_bit=2, retired_pages_double_bit=0, retired_pages_pending=True)
    assert "page retirement" in gpu_memory_errors(facts(gpu_health=(pre_ampere,))).summary
    f = gpu_memory_errors(facts(gpu_health=(health(ecc_enabled=False, ecc_pending=True),)))
    assert f.status is Status.WARN and "ECC will be switched on" in f.summary


def test_lifetime_errors_already_handled_pass_with_a_note() -> None:
    f = gpu_memory_errors(
        facts(gpu_health=(health(ecc_uncorrected_aggregate=2, remapped_rows_uncorrectable=2),))
    )
    assert f.status is Status.PASS
    assert "2 uncorrectable errors in its lifetime, already handled" in f.summary


def test_geforce_without_ecc_skips_and_ecc_off_passes() -> None:
    assert gpu_memory_errors(facts(gpu_health=(geforce_health(),))).status is Status.SKIP
    f = gpu_memory_errors(facts(gpu_health=(rtx4090_health(),)))
    assert f.status is Status.PASS and "ECC is off" in f.summary


def test_unreadable_counters_are_unknown() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "NVMLError_NoPermission")
    names = [n for n in vars(health()) if n not in ("index", "bdf", "clocks_event_reasons", "display_active")]
    fields: dict[str, Any] = dict.fromkeys(names, denied)
    f = gpu_memory_errors(facts(gpu_health=(health(**fields),)))
    assert f.status is Status.UNKNOWN


def test_nvlink_xids_lead_to_the_links_not_a_gpu_reset() -> None:
    """nccl#2241 (B200): Xid 145 on link 11 and Xid 137 'on link 11': the links' state and counters, the fabric
    manager. A memory or firmware Xid beside them keeps its own fix."""
    nvlink = (
        "kernel: NVRM: Xid (PCI:0000:18:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (0x00000000)",
        "kernel: NVRM: Xid (PCI:0000:18:00): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error",
    )
    f = driver_xid_errors(facts(kernel_log=kernel_log(nvlink)))
    assert f.status is Status.FAIL and f.remediation is not None
    assert f.remediation.commands[0].argv == ("nvidia-smi", "nvlink", "-s")
    f = driver_xid_errors(facts(kernel_log=kernel_log((*nvlink, XID_79))))
    assert f.remediation is not None and f.remediation.requires_reboot  # the GPU that fell off decides
    gsp = (
        "NVRM: Xid (PCI:0000:01:00): 119, pid=1234, name=python, Timeout after 6s of waiting for RPC response"
    )
    f = driver_xid_errors(facts(kernel_log=kernel_log((nvlink[0], gsp))))
    assert f.remediation is not None and f.remediation.commands[0].argv[:3] != ("nvidia-smi", "nvlink", "-s")
