"""What a triage is made of: the checks a paste can decide and their order as causes, each check's verdict on
the paste, and the commands the verdicts share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding, Remediation, Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.triage.shown_error import ShownError
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.triage.hunch import Hunch  # its module reads the paste, which imports this one


TORCH_VERSION = 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)"'


CUDA_INIT = 'python -c "import torch; torch.cuda.init(); print(torch.cuda.get_device_name(0))"'


# check id → the command that decides it on the reporter's machine
FIND_OUT: dict[str, str] = {
    "driver.installed": "nvidia-smi",
    "driver.nvml": "nvidia-smi",
    "driver.xid_errors": "sudo dmesg | grep -i nvrm",
    "gpu.present": "nvidia-smi -L",
    "torch.installed": TORCH_VERSION,
    "torch.cpu_build": TORCH_VERSION,
    "torch.driver_compat": "nvidia-smi",
    "torch.arch_compat": 'python -c "import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())"',
    "torch.cuda_init": CUDA_INIT,
    "torch.nvidia_wheels": "python -m pip list",
    "torch.companions": "python -m pip list",
    "torch.out_of_memory": "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
    "nccl.communication": "NCCL_DEBUG=INFO (in the failing program's environment)",
    "driver.nouveau": "lsmod | grep -E 'nouveau|nvidia'",
    "driver.secure_boot": "mokutil --sb-state",
    "driver.kernel_module_build": "dkms status",
    "platform.container_gpus": "docker run --rm --gpus all IMAGE nvidia-smi",
    "platform.wsl_gpu": "ls -l /dev/dxg /usr/lib/wsl/lib/libcuda.so.1",
    "platform.wsl_linux_driver": "ldconfig -p | grep -E 'libcuda|libnvidia-ml'",
    "platform.jetson": "cat /etc/nv_tegra_release",
    "env.cuda_visible_devices": "nvidia-smi -L",
    "env.library_path": "python -m pip check",
    "compat.data_age": TORCH_VERSION,
    "amd.torch_rocm": TORCH_VERSION,
    "amd.gfx_target": "rocminfo | grep gfx",
}


UNEXPLAINED_FALSE = "torch.cuda.is_available() is False; the paste does not say why"


TORCH_BUILD_AND_REASON = "import torch; print(torch.__version__, torch.version.cuda); torch.cuda.init()"


FALSE_IN_A_CONTAINER = "torch.cuda.is_available() is False inside a container"


# Root causes first: a missing or broken driver explains every torch symptom after it, a wrong build explains
# the CUDA errors, and the errors of a running program come last.
CAUSE_ORDER = (
    # a module that Secure Boot refused, or a GPU that nouveau holds, is why no NVIDIA driver answers
    "driver.secure_boot",
    "driver.nouveau",
    "driver.kernel_module_build",  # a module that did not build for this kernel: why none loads
    "platform.wsl_gpu",  # WSL 1 reaches no GPU at all
    "platform.wsl_linux_driver",  # a Linux driver inside WSL shadows the Windows one: nothing after it works
    "driver.installed",
    "driver.nvml",
    "driver.xid_errors",
    "platform.container_gpus",
    "platform.jetson",
    "torch.installed",
    "torch.cpu_build",
    "amd.torch_rocm",
    "torch.driver_compat",
    "torch.arch_compat",
    "amd.gfx_target",
    "env.cuda_visible_devices",
    "env.library_path",
    "torch.nvidia_wheels",
    "torch.cuda_init",
    "torch.out_of_memory",
    "nccl.communication",
    "gpu.topology",  # a pasted `nvidia-smi topo -m` only
    "torch.companions",
    "gpu.present",
    "compat.data_age",
)


# Catalogue entries that only report another failure (a launcher's "a worker failed"): any other problem in the
# paste is what failed, so a verdict made of these alone comes after it
FAILURE_REPORTS = frozenset({"launcher_child_failed"})

# Catalogue entries for a bug in the program that fails the same on the CPU as on any GPU (tensor sizes that do not
# fit): where one follows a warning the program went on from (torch's driver warning, after which it ran on the
# CPU), that bug stopped it, not the warning
PROGRAM_BUGS = frozenset({"other_tensor_shapes_do_not_match"})


# Checks a paste decides only through a known error message: without one they are left out, not "unknown"
BY_MESSAGE_ONLY = frozenset(
    {
        "driver.nouveau", "driver.secure_boot", "driver.kernel_module_build", "platform.container_gpus",
        "env.cuda_visible_devices", "platform.wsl_gpu", "platform.wsl_linux_driver",
        "env.library_path", "torch.out_of_memory", "nccl.communication",
    }
)  # fmt: skip


NVIDIA_ONLY = (
    "platform.jetson",  # a Jetson's GPU is NVIDIA's: never asked of an AMD machine
    "gpu.present",
    "driver.installed",
    "driver.nouveau",
    "driver.secure_boot",
    "driver.nvml",
    "torch.driver_compat",
    "torch.arch_compat",
    "gpu.topology",
    "driver.xid_errors",  # the NVIDIA driver's kernel log: `dmesg | grep NVRM` says nothing of an AMD GPU
    "platform.wsl_linux_driver",
)


AMD_CHECKS = tuple(c for c in CAUSE_ORDER if c not in NVIDIA_ONLY)


# What only a Linux machine has (a kernel module and its log, Secure Boot's module signing, nouveau, Jetson's
# L4T, WSL's projected driver): on a Windows paste they would ask for `sudo dmesg` or `modprobe` there
LINUX_ONLY = frozenset(
    {
        "driver.secure_boot", "driver.nouveau", "driver.kernel_module_build", "driver.nvml",
        "driver.xid_errors", "platform.jetson", "platform.wsl_gpu", "platform.wsl_linux_driver",
    }
)  # fmt: skip


# WSL's GPU is Windows' driver seen through /dev/dxg: no NVIDIA kernel module, no NVRM log, no Jetson
NOT_ON_WSL = frozenset(
    {
        "driver.secure_boot",
        "driver.nouveau",
        "driver.kernel_module_build",
        "driver.xid_errors",
        "platform.jetson",
    }
)


# a Jetson's GPU has no desktop driver or NVML to ask, and its CUDA is its L4T's (platform.jetson)
NOT_ON_A_JETSON = frozenset(
    {
        "driver.installed",
        "driver.nvml",
        "driver.nouveau",
        "driver.secure_boot",
        "driver.kernel_module_build",
        "torch.driver_compat",
    }
)


NVIDIA_CHECKS = tuple(c for c in CAUSE_ORDER if not c.startswith("amd."))


TOPOLOGY = "gpu.topology"


WHOLE_MACHINE = "gpu-doctor --json"  # everything a paste never has (PCIe, eGPU, storage, ...)


class Kind:
    PROBLEM = "problem"
    FINE = "fine"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not_applicable"


class Confidence:
    STATED = "stated"  # the paste says it: the program's own message, a collect_env line
    INFERRED = "inferred"  # the doctor's tables fill a gap (a GPU's compute capability, a driver's CUDA)
    # the paste shows the symptom, not its cause: the usual one for such a paste ("is_available() is False",
    # nothing answering inside a container), which the to-be-sure command settles
    LIKELY = "likely"


@dataclass(frozen=True)
class Verdict:
    finding: Finding
    title: str
    kind: str  # Kind.*
    missing: tuple[str, ...]  # what the check needed that the paste does not show
    find_out: str | None  # the command that would decide it on that machine
    lines: tuple[int, ...] = ()  # the paste's lines of the error messages behind it


@dataclass(frozen=True)
class Triage:
    report: Report  # the checks that ran on the paste's facts
    verdicts: tuple[Verdict, ...]
    not_in_report: tuple[str, ...]  # check ids that need facts a paste never has
    cause: Verdict | None  # the most likely cause: the first problem in CAUSE_ORDER
    confidence: str | None  # Confidence.* of the cause
    # with no cause: the failure the paste shows that no signature knows (never "No problem found" beside it)
    unrecognised: ShownError | None = None
    # with a failure said without its error: what the machine shown most likely hit (never the cause)
    hunch: Hunch | None = None

    def exit_problem(self) -> bool:
        """Exit 1: a cause is named (a warning that leads the answer is a problem found), an error no signature
        knows is shown, or a check fails."""
        return (
            self.cause is not None
            or self.unrecognised is not None
            or any(v.kind == Kind.PROBLEM and v.finding.status is Status.FAIL for v in self.verdicts)
        )


def error_reported(facts: Facts, kind: str) -> bool:
    errors = facts.reported_errors
    return not isinstance(errors, Unavailable) and any(e.kind == kind for e in errors)


def installs_torch(fix: Remediation | None) -> bool:
    """The fix's commands install a torch (a rule that moves the fix elsewhere, or drops it, reads this)."""
    return fix is not None and any(
        arg == "torch" or arg.startswith("torch==") for c in fix.commands for arg in c.argv
    )
