"""driver.kernel_module_build: is there an nvidia module for the running kernel, and for the newest one?

Rules: a module for the running kernel (modinfo, or a file under /lib/modules/<release>) passes; none for it
while other kernels have one is the kernel-upgrade failure (DKMS could not build: headers missing, or the build
broke); a newer installed kernel without a module is a warning (booting it loses the GPU). Whether the module
*loads* is driver.installed's and driver.secure_boot's question, not this one's.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import is_wsl
from torch_gpu_doctor.checks.support.driver_state import module_on_disk, nvidia_loaded
from torch_gpu_doctor.facts.dkms import DkmsEntry
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.nvidia_module import (
    InstalledKernel,
    NvidiaModuleFacts,
    kernel_sort_key,
    module_missing,
)
from torch_gpu_doctor.fixes.module_build import build_module
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

CID = "driver.kernel_module_build"
_UBUNTU_PREBUILT = lazy(r"/kernel/nvidia-(\d{3})[^/]*/nvidia\.ko")


def _kernels(module: NvidiaModuleFacts) -> tuple[InstalledKernel, ...]:
    return () if isinstance(module.kernels, Unavailable) else module.kernels


def _nvidia_dkms(module: NvidiaModuleFacts) -> tuple[DkmsEntry, ...]:
    if isinstance(module.dkms, Unavailable):
        return ()
    return tuple(e for e in module.dkms if e.module.startswith("nvidia"))


def _evidence(module: NvidiaModuleFacts, release: str) -> tuple[Evidence, ...]:
    items = [Evidence("running kernel", release, "/proc/sys/kernel/osrelease")]
    for kernel in _kernels(module):
        files = ", ".join(kernel.nvidia_modules) or "none"
        headers = "headers installed" if kernel.headers else "no headers"
        items.append(
            Evidence(f"kernel {kernel.release}", f"nvidia module: {files}; {headers}", "/lib/modules")
        )
    items += [
        Evidence(
            "dkms", f"{e.module}/{e.version}, {e.kernel or '-'}: {e.state} {e.note}".strip(), "dkms status"
        )
        for e in _nvidia_dkms(module)
    ]
    return tuple(items)


def _ubuntu_branch(kernels: list[InstalledKernel]) -> int | None:
    for kernel in kernels:
        for path in kernel.nvidia_modules:
            match = _UBUNTU_PREBUILT.search(path)
            if match:
                return int(match[1])
    return None


@check(CID, "An NVIDIA kernel module is built for the running kernel", "driver")
def driver_kernel_module_build(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether an nvidia kernel module exists for the running kernel (`modinfo nvidia`, the module folders under
    `/lib/modules/<release>/`), for which other installed kernels one exists, whether each kernel's headers are
    installed, and what `dkms status` reports.

    ## Why it matters
    The NVIDIA module is compiled for one exact kernel. After a kernel update DKMS (or akmods) must build it
    again for the new kernel, which needs that kernel's headers; when it cannot, the machine boots into the new
    kernel without an NVIDIA driver, nvidia-smi fails and PyTorch sees no GPU, although "the driver is
    installed".

    ## How to fix
    Install the headers for the running kernel (`linux-headers-$(uname -r)` on Debian and Ubuntu,
    `kernel-devel-$(uname -r)` on Fedora and RHEL), then `sudo dkms autoinstall` (Fedora: `sudo akmods
    --force`) and load the module or reboot. Booting the older kernel the module was built for also works.
    """
    module = facts.nvidia_module
    if is_wsl(facts):
        return Finding(CID, Status.SKIP, "WSL2 uses the Windows driver: no Linux module to build.")
    if not facts.nvidia_gpus:
        return Finding(CID, Status.SKIP, "No NVIDIA GPU here.")
    if isinstance(module, Unavailable):
        return Finding(CID, Status.UNKNOWN, f"Could not read the kernel module facts: {module}.")
    kernels = _kernels(module)
    dkms = _nvidia_dkms(module)
    info = module_on_disk(facts)
    release = module.running_kernel
    if isinstance(release, Unavailable):
        if module_missing(module.modinfo) and not dkms and not any(k.nvidia_modules for k in kernels):
            return Finding(CID, Status.SKIP, "No NVIDIA kernel module is installed (see driver.installed).")
        if nvidia_loaded(facts) or info is not None:
            return Finding(CID, Status.PASS, "An NVIDIA kernel module is built for the running kernel.")
        return Finding(CID, Status.UNKNOWN, f"Could not read the running kernel's release: {release}.")
    evidence = _evidence(module, release)
    here = next((k for k in kernels if k.release == release), None)
    dkms_here = any(e.kernel == release and e.state == "installed" for e in dkms)
    if nvidia_loaded(facts) or info is not None or dkms_here or (here is not None and here.nvidia_modules):
        return _built_here(facts, module, release, evidence)
    others = [k for k in kernels if k.release != release and k.nvidia_modules]
    if not others and not dkms:
        if isinstance(module.kernels, Unavailable) and not module_missing(module.modinfo):
            return Finding(
                CID,
                Status.UNKNOWN,
                f"Could not look for the nvidia module: modinfo ({module.modinfo}), /lib/modules "
                f"({module.kernels}).",
                evidence=evidence,
            )
        return Finding(
            CID,
            Status.SKIP,
            "No NVIDIA kernel module is installed for any kernel (see driver.installed).",
            evidence=evidence,
        )
    built_for = sorted(
        {k.release for k in others} | {e.kernel for e in dkms if e.kernel and e.kernel != release},
        key=kernel_sort_key,
    )
    why = _why_not_built(release, here, dkms)
    where = f"for {', '.join(built_for)}" if built_for else "by DKMS, but for no kernel yet"
    return Finding(
        CID,
        Status.FAIL,
        f"The NVIDIA module is built {where}, but the running kernel is {release}: it has no NVIDIA module.",
        details=why,
        evidence=evidence,
        remediation=build_module(facts.os, release, _ubuntu_branch(others)),
    )


def _why_not_built(release: str, here: InstalledKernel | None, dkms: tuple[DkmsEntry, ...]) -> str:
    if here is not None and not here.headers:
        return (
            f"The kernel headers for {release} are not installed (/lib/modules/{release}/build is missing), so "
            "DKMS could not build the module when this kernel was installed."
        )
    versions = sorted({e.version for e in dkms})
    if dkms and all(e.state == "added" for e in dkms):
        return f"DKMS has the sources of nvidia {', '.join(versions)} but never built them."
    if dkms:
        log = f"/var/lib/dkms/nvidia/{versions[-1]}/build/make.log"
        return f"The headers are there, so the DKMS build itself probably failed: see {log}."
    return "The module was built for another kernel only (a prebuilt package for that kernel, or no DKMS)."


def _built_here(
    facts: Facts, module: NvidiaModuleFacts, release: str, evidence: tuple[Evidence, ...]
) -> Finding:
    kernels = _kernels(module)
    newer = [k for k in kernels if k.installed and kernel_sort_key(k.release) > kernel_sort_key(release)]
    newest = max(newer, key=lambda k: kernel_sort_key(k.release), default=None)
    if newest is not None and not newest.nvidia_modules:
        headers = (
            "" if newest.headers else " Its headers are not installed either, so DKMS could not build it."
        )
        return Finding(
            CID,
            Status.WARN,
            f"The NVIDIA module is built for the running kernel {release}, but the newer kernel "
            f"{newest.release} has none: booting into it would leave the GPU without a driver.",
            details="Build the module for it before rebooting (unless your boot menu does not start that "
            f"kernel).{headers}",
            evidence=evidence,
            remediation=build_module(facts.os, newest.release, _ubuntu_branch(list(kernels))),
        )
    return Finding(
        CID,
        Status.PASS,
        f"An NVIDIA kernel module is built for the running kernel {release}.",
        evidence=evidence,
    )
