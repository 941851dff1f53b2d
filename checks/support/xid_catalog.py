"""What the Xid numbers a PyTorch user meets mean, in plain words, and how serious each one is.

Names are NVIDIA's, from the Xid listing (docs.nvidia.com/deploy/xid-errors, "Xid error listing"; r555 copy as
quoted in leptonai/gpud components/accelerator/nvidia/query/xid/xid.go @088be0e1). Severity follows NVIDIA's
resolution advice there and in the Ampere+ Xid catalog (docs.nvidia.com/deploy/xid-errors/
analyzing-xid-catalog.html), the dynamic page retirement guide (48 = double-bit ECC, 63 = page retired or row
remapped, 64 = recording failure) and NVIDIA Health Validation (46 and 48 CRITICAL; hardware.md §3.8).
"""

from __future__ import annotations

from enum import Enum

from torch_gpu_doctor.records import dataclass


class XidSeverity(str, Enum):
    INFO = "info"  # a consequence of another error; nothing to do on its own
    PROGRAM = "program"  # usually the program's own fault (bad address, killed work): restart it
    ATTENTION = "attention"  # memory or firmware event: reset the GPU or reboot when convenient, watch it
    FAULT = "fault"  # the GPU is unusable or its hardware failed until reset, reboot or repair


@dataclass(frozen=True)
class XidMeaning:
    name: str  # NVIDIA's name for it
    meaning: str  # what it means for the user
    severity: XidSeverity


XID_CATALOG: dict[int, XidMeaning] = {
    8: XidMeaning(
        "GPU stopped processing", "the driver stopped a program's work on the GPU", XidSeverity.PROGRAM
    ),
    13: XidMeaning(
        "Graphics Engine Exception",
        "a GPU program faulted, usually through its own bug (an out-of-range access); if it repeats with "
        "different programs, run the GPU's diagnostics",
        XidSeverity.PROGRAM,
    ),
    31: XidMeaning(
        "GPU memory page fault",
        "a program used GPU memory it does not own (CUDA 'illegal memory access'): usually the program's bug",
        XidSeverity.PROGRAM,
    ),
    32: XidMeaning(
        "Invalid or corrupted push buffer stream",
        "the GPU received a corrupted command stream (driver, PCIe or memory trouble)",
        XidSeverity.ATTENTION,
    ),
    38: XidMeaning(  # logged at idle or by modprobe at the driver's load (open-gpu-kernel-modules#1045)
        "Driver firmware error",
        "the GPU's firmware reported an error to the driver: most often the driver release's (or its open or "
        "proprietary kernel module's), not the program's; install another driver release",
        XidSeverity.ATTENTION,
    ),
    43: XidMeaning(
        "GPU stopped processing",
        "the driver stopped a program's work after it faulted or was killed",
        XidSeverity.PROGRAM,
    ),
    45: XidMeaning(
        "Preemptive cleanup, due to previous errors",
        "cleanup after another error or a killed program; informational only",
        XidSeverity.INFO,
    ),
    46: XidMeaning(
        "GPU stopped processing", "the GPU stopped responding to its work: reset it", XidSeverity.FAULT
    ),
    48: XidMeaning("Double Bit ECC Error", "an uncorrectable error in the GPU's memory", XidSeverity.FAULT),
    54: XidMeaning(
        "Auxiliary power is not connected to the GPU board",
        "a PCIe power cable is missing or loose",
        XidSeverity.FAULT,
    ),
    61: XidMeaning(
        "Internal micro-controller breakpoint/warning",
        "the GPU's firmware hit a breakpoint: reset the GPU",
        XidSeverity.ATTENTION,
    ),
    62: XidMeaning(
        "Internal micro-controller halt",
        "the GPU's firmware halted (a driver or firmware fault): reboot, and install another driver release if "
        "it returns",
        XidSeverity.FAULT,
    ),
    63: XidMeaning(
        "ECC page retirement or row remapping recording event",
        "a bad memory page or row was recorded for retirement; it takes effect after a GPU reset or reboot",
        XidSeverity.ATTENTION,
    ),
    64: XidMeaning(
        "ECC page retirement or row remapper recording failure",
        "a bad memory page or row could NOT be recorded: reset the GPU now; if it repeats, contact the vendor",
        XidSeverity.FAULT,
    ),
    69: XidMeaning(
        "Graphics Engine class error",
        "a program sent the GPU an invalid command; usually the program or its driver version",
        XidSeverity.PROGRAM,
    ),
    74: XidMeaning("NVLINK Error", "an NVLink connection between GPUs reported errors", XidSeverity.FAULT),
    79: XidMeaning(
        "GPU has fallen off the bus",
        "the GPU stopped answering on PCIe: power, overheating, a riser or cable, or a hardware fault",
        XidSeverity.FAULT,
    ),
    92: XidMeaning(
        "High single-bit ECC error rate",
        "the GPU's memory corrects errors unusually often; run the GPU's field diagnostics",
        XidSeverity.ATTENTION,
    ),
    94: XidMeaning(
        "Contained ECC error",
        "an uncorrectable memory error was contained: restart the affected program, reset the GPU when "
        "convenient",
        XidSeverity.ATTENTION,
    ),
    95: XidMeaning(
        "Uncontained ECC error",
        "an uncorrectable memory error could not be contained: reset the GPU or reboot now",
        XidSeverity.FAULT,
    ),
    109: XidMeaning(  # the driver prints "errorString CTX SWITCH TIMEOUT" (pytorch/pytorch#74235)
        "Context Switch Timeout",
        "the GPU did not switch between programs in time: an overloaded or stuck GPU, or a driver problem; "
        "update the driver, check power and temperature, and reset the GPU",
        XidSeverity.ATTENTION,
    ),
    119: XidMeaning(
        "GSP RPC Timeout", "the GPU's system processor (GSP firmware) stopped answering", XidSeverity.FAULT
    ),
    120: XidMeaning(
        "GSP Error", "the GPU's system processor (GSP firmware) reported an error", XidSeverity.FAULT
    ),
    140: XidMeaning(
        "Unrecovered ECC Error", "an uncorrectable memory error was not recovered", XidSeverity.FAULT
    ),
    143: XidMeaning("GPU Initialization Failure", "the GPU failed to initialise", XidSeverity.FAULT),
    # 144-150: NVLink errors of NVSwitch systems (Hopper and later), each for one unit of the link, in
    # NVIDIA's Xid catalog; Xid 45 lines then say "caused by previous Xid 145" (ogkm#1150)
    **{
        xid: XidMeaning(
            "NVLink Error",
            "an NVLink connection of this GPU failed: drain the node, collect nvidia-bug-report.sh and check "
            "the NVSwitch fabric (nvidia-fabricmanager, `nvidia-smi nvlink -s`)",
            XidSeverity.FAULT,
        )
        for xid in range(144, 151)
    },
    # r550 and later: the driver names the recovery the GPU now needs ("GPU recovery action changed from 0x0
    # (None) to 0x1 (PF FLR)"; open-gpu-kernel-modules#1151), after the Xid that caused it
    154: XidMeaning(
        "GPU Recovery Action Changed",
        "the driver says which recovery the GPU now needs (the action in the line: a GPU reset, a reboot), "
        "after the Xid before it",
        XidSeverity.INFO,
    ),
}


# NVLink's own Xids (NVLINK Error; 144-150, one per unit of the link on NVSwitch systems): the link between GPUs,
# not the GPU's memory or its firmware. A line of another number that names a link ("137, RLW_RXPIPE interrupt
# hit on link 11", blind set 25's B200) is the same fabric (checks.driver_xid_errors reads the line too).
NVLINK_XIDS = frozenset({74, *range(144, 151)})


def xid_meaning(xid: int) -> XidMeaning:
    """An Xid not in the table is reported by number, as worth a look: never silently ignored."""
    return XID_CATALOG.get(
        xid,
        XidMeaning(
            f"Xid {xid}",
            "not in gpu-doctor's table: look it up in NVIDIA's Xid catalog",
            XidSeverity.ATTENTION,
        ),
    )
