"""What to do about a CUDA initialisation error, by its class in the signature catalogue.

torch.cuda_init shows the raw message and what it means; this is the step that answers it. The class comes
from checks/support/error_signatures.json (`class`); a class without a builder here gets none, and the check
points at the one that has it.
"""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.runtime_builds import runtime_library
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.fixes.target import driver_max_cuda, driver_system
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable

FABRIC_MANAGER = "nvidia-fabricmanager"


def init_error_fix(
    signature_id: str, cls: str, facts: Facts | None = None, *, in_container: bool = False
) -> Remediation | None:
    """The next step for a CUDA init error (its signature and class), or None when another check carries it.
    With the machine's `facts`, a driver too old gets the install for where its driver lives."""
    if cls == "unknown_error":
        return reload_uvm()
    if cls == "forward_compat" and "804" in signature_id and facts is not None and driver_max_cuda(facts):
        return _no_forward_compat(facts, in_container=in_container)
    if cls == "forward_compat":
        return _forward_compat_fix(signature_id, in_container)
    if cls == "no_driver" and "no_cuda_capable_device" in signature_id:  # error 100, every runtime's words
        return Remediation(
            text="CUDA error 100: the driver answers but lists no usable GPU. In order: is the GPU listed "
            "(`nvidia-smi -L`)? Is CUDA_VISIBLE_DEVICES empty or naming GPUs that do not exist (`echo "
            "$CUDA_VISIBLE_DEVICES`)? After a kernel update without a reboot the module of the old kernel is "
            "gone: reboot. In WSL2 a Linux libcuda shadows the Windows one: /usr/lib/wsl/lib must come first.",
            commands=(Command(("nvidia-smi", "-L"), note="the GPUs the driver sees"),),
            target=Target.SYSTEM,
        )
    if cls == "driver_too_old" and facts is not None:
        return _newer_driver(facts, in_container=in_container)
    if cls == "driver_too_old":  # a runtime's own words (code 35, CUDA_ERROR_INSUFFICIENT_DRIVER)
        return Remediation(
            text="The driver is older than the CUDA runtime this program was built with (or, in WSL2, the "
            "Windows driver gives no GPU to Linux). Update the NVIDIA driver (in WSL2: on Windows, then `wsl "
            "--update`), or use a build of the program for the CUDA the driver supports. `nvidia-smi` shows the "
            "newest CUDA the driver supports (top right).",
            commands=(Command(("nvidia-smi",), note="'CUDA Version' is the newest CUDA this driver runs"),),
            needs_network=True,
            target=Target.SYSTEM,
        )
    packages = facts.torch_packages if facts is not None else None
    build_known = (
        packages is not None and not isinstance(packages, Unavailable) and packages.version is not None
    )
    reporter = next((name for key, name in _ONLY_UNAVAILABLE.items() if key in signature_id), None)
    if cls == "no_visible_gpu" and reporter is not None and not build_known:
        # Lightning's and Ultralytics' words mean only that torch.cuda.is_available() was False: a CPU build as
        # often as no GPU (blind set 30: Ultralytics' "Invalid CUDA 'device=0'" on a machine with no NVIDIA GPU)
        return Remediation(
            text=f"{reporter} found no GPU because torch.cuda.is_available() is False there; whether that torch is "
            "a CPU build (a +cpu version, torch.version.cuda None: install the CUDA build into that same "
            "environment) or a CUDA build that sees no GPU (0 devices: no NVIDIA GPU or driver, CUDA_VISIBLE_DEVICES, "
            f"the container) is one line away, run where {reporter} runs (a notebook: its own kernel). Without an "
            "NVIDIA GPU, run it on the CPU (device=cpu).",
            commands=(
                Command(
                    (
                        "python",
                        "-c",
                        "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), "
                        "torch.cuda.device_count())",
                    ),
                    note=f"in the environment {reporter} runs in (a notebook: a cell of it)",
                ),
            ),
            target=Target.PYTHON_ENV,
        )
    if cls == "no_visible_gpu":
        return Remediation(
            text="CUDA sees no GPU although torch is a CUDA build: CUDA_VISIBLE_DEVICES is empty or names GPUs that "
            "do not exist, the container was started without `--gpus all` (or the NVIDIA runtime), or a Slurm or "
            "Kubernetes job got no GPU. See what the process sees (CUDA_VISIBLE_DEVICES as it is set there), "
            "then what the driver sees:",
            commands=(
                Command(
                    (
                        "python",
                        "-c",
                        "import os, torch; print('CUDA_VISIBLE_DEVICES:', os.environ.get('CUDA_VISIBLE_DEVICES'), "
                        "'· GPUs torch sees:', torch.cuda.device_count())",  # single quotes: cmd and PowerShell too
                    ),
                    note="in the failing program's environment (its shell, job script or container)",
                ),
                Command(
                    ("nvidia-smi", "-L"), note="the GPUs the driver sees, whatever CUDA_VISIBLE_DEVICES says"
                ),
            ),
            target=Target.SYSTEM,
        )
    if cls == "wsl":
        return Remediation(
            text="In WSL2 this comes from the Windows driver: update the NVIDIA driver on Windows and WSL itself "
            "(`wsl --update`, then `wsl --shutdown`, from a Windows terminal). With several GPUs, limit CUDA to "
            "the ones you use with CUDA_VISIBLE_DEVICES.",
            needs_network=True,
            target=Target.SYSTEM,
        )
    return None


# programs whose no-GPU message says only that torch.cuda.is_available() was False, by a word of their signature ids
_ONLY_UNAVAILABLE = {"lightning": "Lightning", "ultralytics": "Ultralytics"}


def reload_uvm() -> Remediation:
    """CUDA's unknown error at initialisation: the unified-memory module's lost state, reloaded now."""
    return Remediation(
        text="The driver's unified-memory module lost its state, most often after suspend and resume. Reload "
        "it with nothing using the GPU (close the programs that do), or reboot; then restart the programs that "
        "were running: a server (Ollama, a notebook kernel, a container) keeps its failed GPU state until it "
        "restarts. To stop it recurring, let the driver keep video memory across suspend: the "
        "NVreg_PreserveVideoMemoryAllocations=1 module option with the nvidia-suspend and nvidia-resume "
        "services (NVIDIA driver README, 'Configuring Power Management Support'; ollama/ollama#2934).",
        commands=(
            Command(("sudo", "rmmod", "nvidia_uvm"), note="fails while a program still uses the GPU"),
            Command(("sudo", "modprobe", "nvidia_uvm")),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def uvm_lost_again() -> Remediation:
    """The unknown error the person already clears by reloading nvidia_uvm or restarting, and that comes back:
    what keeps it from recurring is the step, not the reload again (blind set 31, pytorch#159954)."""
    return Remediation(
        text="The reload (or a restart) clears it, so the driver's unified-memory module loses its state again: "
        "most often at suspend and resume. Let the driver keep video memory across suspend: the "
        "NVreg_PreserveVideoMemoryAllocations=1 option of the nvidia module with the nvidia-suspend, "
        "nvidia-resume and nvidia-hibernate services enabled (NVIDIA driver README, 'Configuring Power "
        "Management Support'), or keep the machine from suspending while CUDA programs run. If it comes back "
        "without a suspend, the kernel log from that moment (`sudo dmesg | grep -i -e nvrm -e xid`) names what "
        "broke it.",
        commands=(
            Command(
                ("grep", "PreserveVideoMemoryAllocations", "/proc/driver/nvidia/params"),
                note="1 keeps video memory across suspend; 0 (the default) loses it",
            ),
            Command(
                ("systemctl", "is-enabled", "nvidia-suspend.service", "nvidia-resume.service"),
                note="both must be enabled with that option",
            ),
        ),
        requires_root=False,
        target=Target.SYSTEM,
    )


def _newer_driver(facts: Facts, *, in_container: bool) -> Remediation:
    """Code 35 (CUDA_ERROR_INSUFFICIENT_DRIVER) on a machine the facts describe: the program's CUDA runtime is
    newer than the driver. The install comes first; the driver's own CUDA, where known, is already the proof."""
    cuda = driver_max_cuda(facts)
    lead = (
        f"The driver runs CUDA ≤ {cuda}; this program was built for a newer CUDA."
        if cuda
        else "The driver is older than the CUDA runtime this program was built with."
    )
    other = f"CUDA ≤ {cuda}" if cuda else "the CUDA the driver runs"
    fix = driver_update(
        facts,
        plan_driver(facts),
        lead,
        alternative=f"Or use a build of the program for {other}.",
        in_container=in_container,
    )
    if fix.commands or cuda:
        return fix
    return dataclasses.replace(  # nothing says which CUDA the driver runs: nvidia-smi does
        fix, commands=(Command(("nvidia-smi",), note="'CUDA Version' is the newest CUDA this driver runs"),)
    )


def _no_forward_compat(facts: Facts, *, in_container: bool) -> Remediation:
    """Error 804 where the driver's CUDA is known. The error is only raised by a forward-compatibility libcuda
    (cuda-compat, a CUDA image's own) loaded in place of the driver's: without one, a program too new for the
    driver fails with 'driver too old' instead. So the step is taking it off the library path; the driver's
    CUDA says whether a newer driver is needed after that (blind set 18: Fooocus on a GTX 1070 with a 535
    driver, vLLM's v0.15 image under WSL)."""
    driver = facts.driver
    own = (  # the driver's own CUDA by its version: under a compat libcuda nvidia-smi reports the compat's
        load_matrix().max_cuda_for_driver(driver.version, driver_system(facts))
        if not isinstance(driver, Unavailable) and isinstance(driver.version, str)
        else None
    )
    cuda = own or driver_max_cuda(facts)
    assert cuda is not None  # the caller's condition
    packages = facts.torch_packages
    program = packages.cuda if not isinstance(packages, Unavailable) else None
    driver_major = int(cuda.split(".")[0])
    if (program is not None and int(program.split(".")[0]) > driver_major) or (
        program is None and driver_major < 12
    ):
        # a program of a newer CUDA major (or, unsaid, today's CUDA 12 and 13 builds on an older driver): minor
        # version compatibility cannot bridge a major, so without the compat library it fails anyway
        return driver_update(
            facts,
            plan_driver(facts),
            f"Error 804: the program's CUDA is newer than the driver's (CUDA ≤ {cuda}), and this GPU (GeForce and "
            "most workstation cards) has no forward compatibility to bridge it.",
            alternative=f"Or use a build or an image for CUDA ≤ {cuda}; outside a container, a cuda-compat folder "
            "(.../compat) on LD_LIBRARY_PATH or in /etc/ld.so.conf.d is what tried the bridge: remove it.",
            in_container=in_container,
        )
    where = (
        "the image's /etc/ld.so.conf.d/cuda-compat.conf, or a .../compat folder on its LD_LIBRARY_PATH, as CUDA "
        "images such as vLLM's register it"
        if in_container
        else "the cuda-compat package, or a .../compat folder on LD_LIBRARY_PATH or in /etc/ld.so.conf.d"
    )
    remove = (
        "Start the container with that file removed and `ldconfig` run before the program (or that folder left "
        "off LD_LIBRARY_PATH)"
        if in_container
        else "Take it off the library path (`sudo apt remove cuda-compat-*`, or the folder out of "
        "LD_LIBRARY_PATH or /etc/ld.so.conf.d, then `sudo ldconfig`)"
    )
    return Remediation(
        text=f"Error 804: a CUDA forward-compatibility libcuda ({where}) was loaded in place of the driver's own, "
        f"and this GPU (GeForce and most workstation cards) cannot use one. {remove}: a program built for CUDA "
        f"≤ {cuda} then runs on the driver itself; one built for a newer CUDA needs a newer driver instead, or a "
        f"build for CUDA ≤ {cuda}.",
        commands=(
            Command(
                ("ldconfig", "-p"),
                note="a libcuda.so.1 under .../compat is the one to take off the path"
                + (" (run it in the container)" if in_container else ""),
            ),
            Command(("printenv", "LD_LIBRARY_PATH"), note="a .../compat folder here is loaded first"),
        ),
        target=Target.SYSTEM,
    )


def _forward_compat_fix(signature_id: str, in_container: bool = False) -> Remediation:
    """802, 803 and 804 share a class (the driver and what runs on it disagree) but not a fix."""
    if "803" in signature_id and in_container:
        return Remediation(
            text="Error 803 inside a container: the libcuda the program loaded is not the host driver's version. "
            "A container gets libcuda from the host's driver (the NVIDIA Container Toolkit mounts it), unless the "
            "image brings its own: CUDA's forward-compatibility package (/usr/local/cuda/compat, or a cuda-compat "
            "in a conda env) on LD_LIBRARY_PATH, or a libcuda copied into the image. Run the program without that "
            "folder on LD_LIBRARY_PATH, or update the host driver to one that runs the image's CUDA. On the host, "
            "a driver updated without a reboot gives the same error: nvidia-smi there fails too.",
            commands=(
                Command(("nvidia-smi",), note="on the host: its 'Driver Version' is what libcuda must match"),
                Command(
                    ("ldconfig", "-p"),
                    note="in the container: a libcuda.so.1 under .../compat is the image's",
                ),
            ),
            target=Target.SYSTEM,
        )
    if "803" in signature_id:
        return Remediation(
            text="Error 803: the libcuda this program loaded and the driver's kernel module are different "
            'versions. Run `nvidia-smi`: if it fails too ("Driver/library version mismatch"), the driver was '
            "updated without a reboot: reboot, or reinstall the driver cleanly. If nvidia-smi works, the program "
            "loads a foreign libcuda.so.1 (a conda cuda-compat, a container's own copy, LD_LIBRARY_PATH): "
            "`ldconfig -p | grep libcuda` and the program's LD_LIBRARY_PATH show which.",
            commands=(
                Command(("nvidia-smi",), note="fails too: reboot; works: a foreign libcuda is loaded"),
                Command(("systemctl", "reboot"), note="after a driver update; save your work first"),
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    if "804" in signature_id:
        return Remediation(
            text="Error 804: CUDA forward compatibility was attempted on a GPU that does not support it "
            "(GeForce, most workstation cards): the program's CUDA is newer than the driver, and a cuda-compat "
            "library tried to bridge it. In a container (vLLM, NGC or other CUDA images) the image's CUDA needs "
            "a newer host driver: update the host driver, or use an image built for the CUDA the driver "
            "supports. Outside a container, remove the cuda-compat folder (.../compat) from LD_LIBRARY_PATH or "
            "/etc/ld.so.conf.d, or update the driver.",
            commands=(
                Command(
                    ("nvidia-smi",), note="on the host: 'CUDA Version' is the newest CUDA its driver runs"
                ),
                Command(
                    ("ldconfig", "-p"),
                    note="a libcuda.so.1 under .../compat is the culprit outside containers",
                ),
            ),
            target=Target.SYSTEM,
        )
    if "fabric_manager" in signature_id:  # the service refuses a driver of another version
        return Remediation(
            text="nvidia-fabricmanager is installed at another version than the driver, so it refuses to start "
            "and CUDA on this NVSwitch machine fails with error 802. Install the fabric-manager package of "
            "exactly the driver's version (Ubuntu: nvidia-fabricmanager-<branch>=<driver version>-1; RHEL: "
            "nvidia-fabricmanager-<driver version>), remove any hold or version lock that keeps the old one, "
            "then start the service.",
            commands=(
                Command(
                    ("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"),
                    note="the version the package must have",
                ),
                Command(("sudo", "systemctl", "enable", "--now", FABRIC_MANAGER)),
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    return Remediation(
        text="Error 802 (system not yet initialized) on an NVSwitch machine (HGX, DGX, some cloud VMs): "
        "nvidia-fabricmanager must run, at exactly the driver's version. Start it, and install the "
        "fabric-manager package of the driver's version if it is missing or differs.",
        commands=(
            Command(("sudo", "systemctl", "enable", "--now", FABRIC_MANAGER)),
            Command(("systemctl", "status", FABRIC_MANAGER), note="its version and why it stopped"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


@dataclass(frozen=True)
class Cuda11Build:
    """A library's last release built for CUDA 11 and the pip command that installs it."""

    shown_as: str  # "CTranslate2 (faster-whisper's engine)"
    version: str  # "3.24.0"
    pin: Command


def last_cuda11_build(owner: str, note: str) -> Cuda11Build | None:
    """The last CUDA 11 release of a library with a CUDA runtime of its own (compat/runtime_builds.json:
    CTranslate2 3.24.0), with its install command (`note` says why it runs there); None where the data knows
    none."""
    library = runtime_library(owner)
    older = library.last_for("11") if library is not None else None
    if library is None or older is None:
        return None
    pin = Command(
        ("python", "-m", "pip", "install", f"{library.name}=={older}"), note=f"{library.name}'s {note}"
    )
    return Cuda11Build(library.shown_as, older, pin)


def with_older_build(fix: Remediation | None, owner: str, driver_cuda: str | None) -> Remediation | None:
    """A driver too old for the CUDA runtime of a library with its own (compat/runtime_builds.json): that
    library's last build for CUDA 11 first, which runs on the driver there is, beside the driver update (blind
    set 28: whisperX's CTranslate2 4.x, built for CUDA 12, in a CUDA 11.8 image on an older host driver). A driver
    that runs CUDA 12 already (`driver_cuda` "12.2") is behind a newer CUDA 12 only: its update is the fix."""
    if (
        driver_cuda is not None
        and driver_cuda.split(".")[0].isdigit()
        and int(driver_cuda.split(".")[0]) >= 12
    ):
        return fix
    library = runtime_library(owner)
    older = last_cuda11_build(
        owner,
        "last CUDA 11 build, which this driver runs (it needs CUDA 11's cuBLAS and cuDNN 8); no --force-reinstall, "
        "which would move numpy too"
        + (
            "; faster-whisper's README gives this pin as its CUDA 11 workaround"
            if library is not None and library.name == "ctranslate2"
            else ""
        ),
    )
    if fix is None or older is None:
        return fix
    said = (
        f"{older.shown_as} brings its own CUDA runtime, whatever torch's is: its releases after {older.version} are "
        f"built for CUDA 12. Keep the driver and install its last CUDA 11 build, or update the driver. "
    )
    return dataclasses.replace(fix, text=said + fix.text, commands=(older.pin, *fix.commands))
