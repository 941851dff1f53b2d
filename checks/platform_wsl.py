"""platform.wsl_gpu and platform.wsl_linux_driver: does the Windows driver reach this WSL distribution, and did a
Linux driver installed inside it get in the way?

driver.installed already fails when no driver version is readable in WSL 2; these checks say which link of the
chain is broken (WSL 1, no /dev/dxg, nothing projected into /usr/lib/wsl/lib) and find a Linux driver's files.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.driver_libraries import WSL_LIB_DIR, LibraryFile
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.wsl import NOT_WSL, WslFacts
from torch_gpu_doctor.fixes.wsl_driver import remove_linux_driver
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

GPU_ID = "platform.wsl_gpu"
DRIVER_ID = "platform.wsl_linux_driver"
QUIRK = (
    "ldconfig prints '/usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link' because Windows projects libcuda.so, "
    ".so.1 and .so.1.1 as three plain files (microsoft/WSL#5663). It is harmless: ldconfig still caches "
    "libcuda.so.1 from there. Only a program that opens the bare `libcuda.so` (Triton, bitsandbytes) may not find "
    "it (microsoft/WSL#8587); for those, put /usr/lib/wsl/lib on LD_LIBRARY_PATH."
)


def _distro(w: WslFacts) -> str:
    return w.distro_name or "DISTRO"


def _wsl(facts: Facts, cid: str) -> WslFacts | Finding:
    w = facts.wsl
    if isinstance(w, Unavailable):
        if w.reason is not Reason.NOT_APPLICABLE:
            return Finding(cid, Status.UNKNOWN, f"Could not read the WSL facts: {w}.")
        return Finding(
            cid, Status.SKIP, "Not running under WSL." if w.detail == NOT_WSL else f"Skipped: {w}."
        )
    return w


def _gpu_evidence(w: WslFacts) -> tuple[Evidence, ...]:
    listing = w.projected if isinstance(w.projected, Unavailable) else ", ".join(w.projected) or "empty"
    items = [
        fact("WSL version", w.version, "/proc/sys/kernel/osrelease"),
        Evidence("/dev/dxg", "present" if w.has_dxg else "missing", "/dev"),
        fact(WSL_LIB_DIR, listing, "directory listing"),
    ]
    if w.projected_libcuda is not None:
        kind = "symbolic link" if w.projected_libcuda.is_symlink else "plain file"
        items.append(Evidence("libcuda.so.1", kind, w.projected_libcuda.path))
    return tuple(items)


def _libcuda_load_error(facts: Facts) -> str | None:
    torch = facts.torch
    if isinstance(torch, Unavailable) or not torch.cuda_init_error:
        return None
    text = torch.cuda_init_error
    # torch says "Found no NVIDIA driver on your system" when dlopen("libcuda.so.1") fails.
    return text if "libcuda" in text or "found no nvidia driver" in text.lower() else None


@check(GPU_ID, "The Windows NVIDIA driver reaches this WSL distribution", "platform")
def wsl_gpu(facts: Facts) -> Finding:
    """
    ## What it checks
    Under WSL: the WSL version (from the kernel release), the GPU paravirtualisation device `/dev/dxg`, and the
    Windows driver's libraries that Windows projects into `/usr/lib/wsl/lib` (libcuda.so.1, libnvidia-ml.so.1,
    nvidia-smi).

    ## Why it matters
    In WSL 2 CUDA runs on the Windows NVIDIA driver: `/dev/dxg` carries the calls and libcuda comes from
    `/usr/lib/wsl/lib`. WSL 1 has no GPU support at all; without `/dev/dxg` (an old Windows or WSL) or without
    the projected libcuda (no or an old Windows driver) `torch.cuda.is_available()` is False.

    ## How to fix
    Convert the distribution to WSL 2 (`wsl --set-version <distro> 2`), update WSL (`wsl --update`) on
    Windows 11 or Windows 10 21H2 and newer, and install a current NVIDIA driver on Windows, then restart WSL
    with `wsl --shutdown`. Never install a Linux display driver inside WSL. The "libcuda.so.1 is not a symbolic
    link" message of ldconfig is harmless.
    """
    w = _wsl(facts, GPU_ID)
    if isinstance(w, Finding):
        return w
    ev = _gpu_evidence(w)
    if w.version == 1:
        return Finding(
            GPU_ID,
            Status.FAIL,
            "This is WSL 1, which has no GPU support: CUDA needs WSL 2.",
            evidence=ev,
            remediation=Remediation(
                text="Convert the distribution to WSL 2 from Windows (PowerShell), then start it again.",
                commands=(
                    Command(
                        ("wsl.exe", "--set-version", _distro(w), "2"),
                        note="run from Windows",
                        runs_here=False,
                    ),
                ),
                needs_network=True,
                target=Target.SYSTEM,
            ),
        )
    restart = Command(
        ("wsl.exe", "--shutdown"), note="from Windows; restarts every WSL distribution", runs_here=False
    )
    if not w.has_dxg:
        return Finding(
            GPU_ID,
            Status.FAIL,
            "/dev/dxg is missing: this WSL 2 has no GPU paravirtualisation, so CUDA cannot reach the GPU.",
            details="GPU support needs Windows 11 or Windows 10 21H2 (build 19044) and newer with a current WSL.",
            evidence=ev,
            remediation=Remediation(
                text="Update WSL from Windows, then restart it; on older Windows 10 builds, update Windows first.",
                commands=(
                    Command(("wsl.exe", "--update"), note="run from Windows", runs_here=False),
                    restart,
                ),
                needs_network=True,
                target=Target.SYSTEM,
            ),
        )
    if isinstance(w.projected, Unavailable) and w.projected.reason is not Reason.NOT_FOUND:
        return Finding(GPU_ID, Status.UNKNOWN, f"Could not list {WSL_LIB_DIR}: {w.projected}.", evidence=ev)
    if w.projected_libcuda is None:
        return Finding(
            GPU_ID,
            Status.FAIL,
            f"No libcuda.so.1 in {WSL_LIB_DIR}: the Windows NVIDIA driver projects no CUDA into WSL.",
            details="Either no NVIDIA driver is installed on Windows or it predates CUDA on WSL (R470).",
            evidence=ev,
            remediation=Remediation(
                text="Install the current NVIDIA driver for your GPU on Windows (GeForce/Studio or RTX/Quadro "
                "package; it includes WSL support), then restart WSL.",
                commands=(restart,),
                needs_network=True,
                target=Target.SYSTEM,
            ),
        )
    quirk = QUIRK if not w.projected_libcuda.is_symlink else ""
    error = _libcuda_load_error(facts)
    if error is not None:
        return Finding(
            GPU_ID,
            Status.WARN,
            f"The Windows driver's libraries are in {WSL_LIB_DIR}, but torch could not load libcuda: {error[:160]}",
            details=(
                quirk + " See platform.wsl_linux_driver for a Linux libcuda that may be loaded instead."
            ).strip(),
            evidence=ev,
            remediation=Remediation(
                text=f"Let the loader find the projected libcuda first: export LD_LIBRARY_PATH={WSL_LIB_DIR}:"
                "$LD_LIBRARY_PATH (in ~/.bashrc), then rebuild the cache.",
                commands=(Command(("sudo", "ldconfig")),),
                requires_root=True,
                target=Target.SYSTEM,
            ),
        )
    return Finding(
        GPU_ID,
        Status.PASS,
        f"WSL 2 with /dev/dxg and the Windows driver's libcuda.so.1 in {WSL_LIB_DIR}.",
        details=quirk,
        evidence=ev,
    )


def _library_line(lib: LibraryFile) -> str:
    version = f" (driver {lib.version})" if isinstance(lib.version, str) else ""
    target = f" -> {lib.resolved}" if isinstance(lib.resolved, str) and lib.resolved != lib.path else ""
    return f"{lib.path}{target}{version}"


def _torch_libcuda(facts: Facts) -> str | None:
    torch = facts.torch
    if isinstance(torch, Unavailable):
        return None
    return next((m.realpath for m in torch.mapped_libraries if m.name == "libcuda"), None)


@check(DRIVER_ID, "No Linux NVIDIA driver is installed inside WSL", "platform")
def wsl_linux_driver(facts: Facts) -> Finding:
    """
    ## What it checks
    Under WSL: Linux copies of `libcuda.so.1` / `libnvidia-ml.so.1` in the distribution's library folders that
    are not the Windows driver's (`/usr/lib/wsl/lib`), an `nvidia-smi` on PATH outside `/usr/lib/wsl/lib`,
    NVIDIA driver packages in dpkg's or pacman's records, and a DKMS-built nvidia module.

    ## Why it matters
    WSL must use the Windows driver. A Linux driver installed inside WSL (`nvidia-driver-*`,
    `libnvidia-compute-*`, `nvidia-utils-*`, `cuda-drivers`, often pulled in by the `cuda` metapackage or by
    Ubuntu's `nvidia-cuda-toolkit`) shadows the projected libraries: CUDA reports no device, `nvidia-smi` fails
    with "couldn't communicate with the NVIDIA driver", and Docker's GPU hook fails with "libnvidia-ml.so.1:
    file exists".

    ## How to fix
    Remove the Linux driver packages (the exact command for your distribution is shown) and keep only the CUDA
    toolkit (`cuda-toolkit-12-x`) and, if you use Docker, the NVIDIA Container Toolkit.
    """
    w = _wsl(facts, DRIVER_ID)
    if isinstance(w, Finding):
        return w
    if w.version == 1:
        return Finding(DRIVER_ID, Status.SKIP, "WSL 1 reaches no GPU at all (see platform.wsl_gpu).")
    packages = () if isinstance(w.driver_packages, Unavailable) else w.driver_packages
    smi = w.nvidia_smi_target if isinstance(w.nvidia_smi_target, str) else None
    foreign_smi = smi is not None and not smi.startswith("/usr/lib/wsl/")
    ev = [
        Evidence("Linux driver library", _library_line(lib), "library folders") for lib in w.linux_libraries
    ]
    ev.append(fact("NVIDIA driver packages", ", ".join(packages) or "none", "dpkg / pacman records"))
    ev.append(fact("nvidia-smi on PATH", w.nvidia_smi or "none", "PATH"))
    if w.dkms_nvidia:
        ev.append(Evidence("DKMS nvidia module", "present", "/var/lib/dkms/nvidia"))
    loaded = _torch_libcuda(facts)
    if loaded is not None:
        ev.append(Evidence("libcuda torch loaded", loaded, "torch probe (/proc/self/maps)"))
    files = tuple(lib.path for lib in w.linux_libraries)
    fix = remove_linux_driver(facts.os, packages, files)
    if w.linux_libraries:
        versions = sorted({lib.version for lib in w.linux_libraries if isinstance(lib.version, str)})
        driver = f"Linux NVIDIA driver {'/'.join(versions)}" if versions else "Linux NVIDIA driver"
        shown = ", ".join(lib.path for lib in w.linux_libraries)
        if loaded is not None and loaded.startswith("/usr/lib/wsl/"):
            return Finding(
                DRIVER_ID,
                Status.WARN,
                f"A {driver} is installed inside WSL ({shown}); torch still loaded the Windows driver's libcuda, "
                "but NVML, nvidia-smi and other programs may pick the Linux copy.",
                evidence=tuple(ev),
                remediation=fix,
            )
        return Finding(
            DRIVER_ID,
            Status.FAIL,
            f"A {driver} is installed inside WSL ({shown}): it shadows the Windows driver's libraries in "
            f"{WSL_LIB_DIR}, and CUDA or NVML loaded from it cannot reach the GPU.",
            evidence=tuple(ev),
            remediation=fix,
        )
    if packages or foreign_smi or w.dkms_nvidia:
        leftovers = [*packages] + ([f"nvidia-smi at {w.nvidia_smi}"] if foreign_smi else [])
        leftovers += ["a DKMS nvidia module"] if w.dkms_nvidia else []
        return Finding(
            DRIVER_ID,
            Status.WARN,
            f"Parts of a Linux NVIDIA driver are installed inside WSL: {', '.join(leftovers)}.",
            details="No Linux libcuda.so.1 or libnvidia-ml.so.1 was found, so CUDA still uses the Windows driver; "
            "a Linux nvidia-smi ahead of /usr/lib/wsl/lib on PATH fails to talk to the GPU.",
            evidence=tuple(ev),
            remediation=fix,
        )
    return Finding(
        DRIVER_ID,
        Status.PASS,
        "No Linux NVIDIA driver inside WSL: CUDA uses the Windows driver.",
        evidence=tuple(ev),
    )
