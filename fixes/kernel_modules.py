"""Loading, reloading and blacklisting kernel modules; rebuilding the initramfs."""

from __future__ import annotations

from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.fixes.distro import recipe
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

BLACKLIST_FILE = "/etc/modprobe.d/blacklist-nouveau.conf"
BLACKLIST_TEXT = "blacklist nouveau\noptions nouveau modeset=0\n"
REBOOT = Command(("systemctl", "reboot"), note="save your work first")


def rebuild_initramfs(os_facts: OsFacts | Unavailable) -> Command:
    return recipe(os_facts).initramfs


def blacklist_nouveau(os_facts: OsFacts | Unavailable) -> Remediation:
    return Remediation(
        text=(
            "Stop nouveau from loading (also from the initramfs, where a blacklist file alone does not reach), "
            "then reboot so the NVIDIA driver can claim the GPU."
        ),
        commands=(
            Command(("sudo", "tee", BLACKLIST_FILE), stdin=BLACKLIST_TEXT, note="writes the blacklist file"),
            rebuild_initramfs(os_facts),
            REBOOT,
        ),
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )


def load_nvidia_module() -> Remediation:
    return Remediation(
        text=(
            "Load the NVIDIA kernel module. If modprobe answers 'Key was rejected by service', Secure Boot is "
            "refusing the unsigned module: enroll its key (mokutil) or sign it. If it loads, a reboot makes it stick."
        ),
        commands=(Command(("sudo", "modprobe", "nvidia")), Command(("sudo", "modprobe", "nvidia_uvm"))),
        requires_root=True,
        target=Target.SYSTEM,
    )


def reload_after_upgrade() -> Remediation:
    return Remediation(
        text=(
            "The driver packages were upgraded but the old kernel module is still running. Reboot (simplest), "
            "or stop everything that uses the GPU (display manager, CUDA programs) and reload the modules."
        ),
        commands=(
            REBOOT,
            Command(
                ("sudo", "rmmod", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"),
                note="instead of rebooting: only with no GPU process and no desktop on the GPU",
            ),
            Command(("sudo", "modprobe", "nvidia"), note="then load the new module"),
        ),
        requires_root=True,
        requires_reboot=True,
        destructive=True,  # closes every program that uses the GPU, including the desktop
        target=Target.SYSTEM,
    )


def mismatch_comes_back() -> Remediation:
    """The library/module mismatch a reboot clears, and that comes back (at each first boot of a node, after
    some days): the driver's packages change after the module loaded, and that is the step (blind set 31,
    k8s-device-plugin#1431)."""
    return Remediation(
        text="A reboot clears it, so the module that loads is right and the driver's libraries change after it "
        "loaded: something installs or upgrades the driver packages while the machine runs (unattended "
        "upgrades, cloud-init or a node's bootstrap script, a driver container). Fix the driver version where "
        "the machine is built (the image or node template), hold its packages (`apt-mark hold`, `dnf "
        "versionlock`) and keep them out of unattended upgrades, or have the install reload the modules (or "
        "reboot) before the GPU's users (kubelet and the device plugin, the desktop) start.",
        commands=(
            Command(
                ("grep", "-i", "nvidia", "/var/log/apt/history.log"),
                note="Debian and Ubuntu: when the driver packages changed (RHEL: `dnf history`)",
            ),
            Command(
                ("uptime", "-s"), note="the boot: packages changed after it, not a reboot, made the mismatch"
            ),
        ),
        target=Target.SYSTEM,
    )


def operator_beside_a_node_driver() -> Remediation:
    """The library/module mismatch where the NVIDIA GPU Operator installs the driver (its driver container): a
    driver installed on the node itself as well gives the pods' nvidia-container-cli libraries of another version
    than the module the Operator loaded (blind set 32: gpu-operator#898, its validator pod, told to reboot)."""
    return Remediation(
        text="The GPU Operator runs the driver in a container on the node (driver.enabled: true) and loads that "
        "driver's kernel module; a driver also installed on the node itself (its packages, a .run install, or "
        "libraries left from one) is another version, and the container toolkit the pods start with meets its "
        "libraries. Keep one driver: remove the node's own driver packages and reboot the node, so that the "
        "Operator's driver container loads its module alone; or keep the node's driver and set driver.enabled "
        "to false in the Operator's values. Where the node has no driver of its own, the Operator's driver was "
        "upgraded while its old module stayed loaded: drain the node and reboot it.",
        commands=(
            Command(
                ("cat", "/proc/driver/nvidia/version"),
                note="on the node: the module that runs",
                runs_here=False,
            ),
            Command(
                ("dpkg", "-l"),
                note="on the node: nvidia-driver-* or libnvidia-* packages are a driver of the node's own (RHEL: "
                "rpm -qa)",
                runs_here=False,
            ),
            Command(
                (
                    "helm",
                    "upgrade",
                    "gpu-operator",
                    "nvidia/gpu-operator",
                    "-n",
                    "gpu-operator",
                    "--reuse-values",
                    "--set",
                    "driver.enabled=false",
                ),
                note="only to keep the node's own driver instead (release and namespace as installed)",
                runs_here=False,
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def stray_nvml() -> Remediation:
    """NVML's library/module mismatch where CUDA itself works: the module and libcuda agree, and only the
    libnvidia-ml that nvidia-smi loads is another version (blind set 31, statcan/aaw#1581: a notebook server)."""
    return Remediation(
        text="CUDA works, so the kernel module and the libcuda programs load are the same version: only the NVML "
        "library nvidia-smi loads (libnvidia-ml.so.1) is another one, and a reboot changes nothing. Inside a "
        "container or a notebook server, the image carries its own (an nvidia-utils or libnvidia-ml package): "
        "remove it from the image so the NVIDIA runtime mounts the host's. On a machine of its own, a leftover "
        "libnvidia-ml from another driver install (a .run installer beside the distribution's packages, a conda "
        "package) shows in the loader's list.",
        commands=(
            Command(("cat", "/proc/driver/nvidia/version"), note="the kernel module's version"),
            Command(
                ("ldconfig", "-p"),
                note="where libnvidia-ml.so.1 comes from: its file's version must be the module's",
            ),
        ),
        target=Target.SYSTEM,
    )


def mismatch_after_reboot() -> Remediation:
    """The library/module mismatch a reboot did not clear: the module that loads at boot is another version."""
    return Remediation(
        text=(
            "A reboot did not clear it, so the kernel module that loads at boot is itself another version than "
            "the driver's libraries: the new driver's module was not built or installed for the running kernel "
            "(its DKMS build failed, or an old module elsewhere under /lib/modules is found first), or two "
            "driver installs (distribution packages and NVIDIA's .run installer) are mixed. Compare the module "
            "that runs with the one modprobe finds and the ones DKMS built, then reinstall one driver so module "
            "and libraries are the same version (its kernel-module or DKMS package too), and reboot."
        ),
        commands=(
            Command(("cat", "/proc/driver/nvidia/version"), note="the module that runs"),
            Command(("modinfo", "-F", "version", "nvidia"), note="the module modprobe loads at boot"),
            Command(("dkms", "status"), note="the modules DKMS built, for which kernels"),
        ),
        target=Target.SYSTEM,
    )


def gpu_lost_again(line: int) -> Remediation:
    """A GPU that dropped off the bus again, or on a second card too: another reboot will not stop it, and a
    fault shared by the cards is the machine's, power first (blind set 17: two RTX 3090s in a cold room)."""
    return Remediation(
        text=f"It came back (line {line} of the paste), so a reboot only buys time. A GPU that drops off the bus "
        "under load on more than one card points first at power: the supply's capacity and its load spikes "
        "(an RTX 3090 peaks well above its 350 W rating), shared or daisy-chained PCIe power cables, risers. "
        "Cap the cards' power while testing; if it stops, the supply is the cause. Then the memory's "
        "temperature, a reseat, and last the card itself; the kernel log's Xid 79 and PCIe (AER) lines say "
        "when and which GPU.",
        commands=(
            Command(
                ("sudo", "nvidia-smi", "-pl", "WATTS"),
                note="WATTS: well below the card's limit (250 for an RTX 3090); does it still happen?",
                runs_here=False,
            ),
            Command(
                ("sudo", "dmesg", "--level=err,warn"), note="Xid 79 and PCIe errors, with the GPU's bus id"
            ),
        ),
        target=Target.SYSTEM,
    )


def gpu_lost() -> Remediation:
    """The kernel log first: a reboot empties dmesg, and its Xid and PCIe lines say which GPU and why."""
    return Remediation(
        text="Keep the kernel log before anything else (a reboot empties dmesg; its Xid 79 and PCIe lines name the "
        "GPU and the time), then reboot; if it happens again check power cables, risers and temperatures.",
        commands=(
            Command(
                ("sudo", "dmesg", "-T"),
                note="save it to a file before the reboot (its Xid 79 and PCIe lines name the GPU); after one, "
                "`journalctl -k -b -1` still has it where the journal is kept",
            ),
            REBOOT,
        ),
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )
