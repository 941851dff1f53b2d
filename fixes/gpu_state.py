"""Next steps for a GPU or driver in a bad state: hung, refused, not initialised. What the kernel log says
comes first: the NVRM and Xid lines name the reason the user-space tools cannot see."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.fixes.kernel_modules import REBOOT
from torch_gpu_doctor.model import Command, Remediation, Target

# The kernel's own account of the NVIDIA driver since boot (journalctl's --grep is a regular expression)
KERNEL_LOG = Command(
    ("sudo", "journalctl", "-k", "-b", "--no-pager", "--grep", "NVRM|Xid|nvidia"),
    note="the driver's kernel messages since boot",
)
# Every CUDA program, nvidia-smi and the display server hold /dev/nvidiactl open
GPU_USERS = Command(("sudo", "lsof", "/dev/nvidiactl"), note="which processes hold the GPU")


def driver_hung() -> Remediation:
    return Remediation(
        text=(
            "The driver stopped answering. Read the kernel log for Xid or GSP errors (they name the reason), "
            "see which processes hold the GPU and end them, then reset the GPU; if the reset is refused or the "
            "GPU is in use by the desktop, reboot."
        ),
        commands=(
            KERNEL_LOG,
            GPU_USERS,
            Command(
                ("sudo", "nvidia-smi", "--gpu-reset", "-i", "0"), note="GPU 0; only with no process on it"
            ),
            REBOOT,
        ),
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )


NOT_ONE_PROGRAM = "the driver or the GPU, not one program's bug"


def faults_in_every_program(facts: Facts, plan: DriverPlan) -> Remediation:
    """A program's fault (Xid 13, 31: an illegal address) that every program meets, or that the same work never
    meets on another system of the same machine: the driver release (with this kernel) or the GPU, not a bug to
    find in each program (NVIDIA's Xid catalog: "if it repeats with different programs, run diagnostics")."""
    return driver_update(
        facts,
        plan,
        "The same memory fault in programs that share nothing but the GPU points at the driver release (with "
        "this kernel) or the GPU itself. Install another driver release (the newest of its branch, or the "
        "previous production branch) and run the same work again.",
        # the open modules' HMM on new kernels is behind several such faults (open-gpu-kernel-modules#901, #1082)
        alternative="With the open kernel modules, `options nvidia_uvm uvm_disable_hmm=1` in /etc/modprobe.d "
        "(then reboot) turns off HMM, behind several such faults on new kernels. If it follows every driver "
        "release, run the GPU's diagnostics (`dcgmi diag -r 3` where DCGM is installed, or the vendor's) and send "
        "`sudo nvidia-bug-report.sh`'s file to NVIDIA.",
    )


def device_access_refused() -> Remediation:
    return Remediation(
        text=(
            "Look at the NVIDIA device nodes: they are normally crw-rw-rw- (mode 0666). Other modes come from "
            "the module options NVreg_DeviceFileMode/NVreg_DeviceFileGID in /etc/modprobe.d (then add your user "
            "to that group); a confined process (a snap, AppArmor or SELinux, a container's device cgroup) must "
            "be granted /dev/nvidia* instead."
        ),
        commands=(Command(("ls", "-l", "/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm")),),
        target=Target.SYSTEM,
    )


def gpu_not_initialised() -> Remediation:
    return Remediation(
        text=(
            "The driver is loaded but could not bring the GPU up. Its kernel messages say why: "
            "'RmInitAdapter failed' or 'GPU has fallen off the bus' point to power (every PCIe power connector "
            "plugged, a large enough supply), seating or a riser, or a board without enough PCI address space "
            "(enable 'Above 4G decoding' in the firmware setup); 'requires use of the NVIDIA open kernel "
            "modules' and 'supported through the NVIDIA … Legacy drivers' name the driver to install."
        ),
        commands=(KERNEL_LOG,),
        requires_root=True,
        target=Target.SYSTEM,
    )


def confined_process() -> Remediation:
    return Remediation(
        text=(
            "This process may not even read files every user can (/proc/driver/nvidia, /sys/module/nvidia): it "
            "runs confined, in a snap, under an AppArmor or SELinux profile, or in a container. Give the "
            "confinement the GPU (a snap's GPU interfaces, the profile's /dev/nvidia* and /proc/driver/nvidia "
            "rules, the container's --gpus), or run gpu-doctor and the program outside it."
        ),
        commands=(
            Command(("cat", "/proc/self/attr/current"), note="the AppArmor or SELinux label this runs under"),
        ),
        target=Target.SYSTEM,
    )


DEV_CHAR_LINKS = ("sudo", "nvidia-ctk", "system", "create-dev-char-symlinks", "--create-all")


def device_access_lost(on_host: bool) -> Remediation:
    """NVML's Unknown Error: in a container the classic cause is the host's `systemctl daemon-reload`, which
    (with the systemd cgroup driver) rewrites the container's device cgroup without /dev/nvidia*: it worked for
    hours or days, then stopped (NVIDIA Container Toolkit troubleshooting, "Containers losing access to GPUs";
    NVIDIA/nvidia-container-toolkit#48, #1227). On a host it follows a GPU or driver fault."""
    host = (KERNEL_LOG, REBOOT)
    container = (
        Command(
            ("docker", "restart", "CONTAINER"),
            note="or delete the pod: it comes back with the GPUs",
            runs_here=False,
        ),
        Command(
            DEV_CHAR_LINKS,
            note="on the host, once: the /dev/char links that keep the GPUs through a daemon-reload",
            runs_here=False,
        ),
    )
    return Remediation(
        text=(
            "In a container (Docker, a Kubernetes pod) that worked before, the container lost its access to "
            "/dev/nvidia*: the host's `systemctl daemon-reload` rewrote its device cgroup. Restart the container "
            "or pod to get the GPUs back; on the host, create the /dev/char symlinks (or run the toolkit's udev "
            "rule) so that it does not happen again. On a machine itself (not a container), read the kernel log "
            "for an Xid and reboot."
        ),
        commands=host + container if on_host else container + host,
        requires_root=True,
        target=Target.SYSTEM,
    )


def hosted_notebook_gpu() -> Remediation:
    """A GPU fault (uncorrectable ECC, an Xid, a lost GPU) on a hosted notebook (Colab, Kaggle): its GPU cannot
    be reset or taken out of use from inside, so the fix is another runtime's GPU."""
    return Remediation(
        text="This runs on a hosted notebook, whose GPU you cannot reset or take out of use from inside: get "
        "another one. In Colab: Runtime > Disconnect and delete runtime, then connect again (a new machine and "
        "GPU); in Kaggle: stop the session and start a new one. Rerun from the start: what the faulty GPU "
        "computed cannot be trusted.",
        target=Target.SYSTEM,
    )


def hosted_notebook_without_gpu() -> Remediation:
    """No NVIDIA driver in a hosted notebook: its runtime was started without a GPU (a CPU machine type), and a
    driver cannot be installed or loaded from inside it."""
    return Remediation(
        text="A hosted notebook gets its GPU and driver from the machine it runs on: start it on a GPU machine. In "
        "Colab: Runtime > Change runtime type > a GPU; in Kaggle: Settings > Accelerator > a GPU; in Paperspace: "
        "stop the notebook and start it again on a GPU machine type (a free GPU may not be available). Then "
        "`nvidia-smi` in the notebook lists it. Installing or loading a driver from inside is not possible.",
        commands=(
            Command(("nvidia-smi",), note="in the notebook, after the change: the GPU must be listed"),
        ),
        target=Target.SYSTEM,
    )


def engine_on_a_mac(engine: str) -> Remediation:
    """A GPU serving engine (vLLM, SGLang) on a Mac: its GPU builds are Linux's, so another machine, or a runtime
    made for the Mac's own GPU."""
    return Remediation(
        text=f"Run {engine} on a Linux machine with a supported NVIDIA or AMD GPU (pip there installs its GPU "
        "build, or use its container image); on this Mac serve the model with a runtime built for Apple's GPU "
        "(llama.cpp, Ollama, MLX).",
        target=Target.SYSTEM,
    )


_CUDA_ONLY_ON_A_MAC = {
    "xFormers": " (uninstall xFormers: its kernels need CUDA, and most programs then use torch's own attention)",
    "bitsandbytes": " (without bitsandbytes' 8-bit and 4-bit features, whose library has no GPU code on macOS: load "
    "the model without load_in_8bit or load_in_4bit, in 16-bit, and train with torch's own optimizers)",
}


def no_cuda_on_a_mac(cuda_only: str | None) -> Remediation:
    """A Mac, where the program asks for CUDA: Apple's GPU through MPS or the CPU, or an NVIDIA machine; with a
    CUDA-only package in the way (xFormers, bitsandbytes), without it."""
    return Remediation(
        text="Run the program on the Mac's GPU with device 'mps' or on the CPU, where the program supports it"
        + _CUDA_ONLY_ON_A_MAC.get(cuda_only or "", "")
        + ", or on a Linux or Windows machine with an NVIDIA GPU.",
        commands=(
            Command(("python", "-m", "pip", "uninstall", "-y", "xformers"), note="its kernels need CUDA"),
        )
        if cuda_only == "xFormers"
        else (),
        target=Target.PYTHON_ENV,
    )


def pod_lost_devices() -> Remediation:
    """NVML's Unknown Error in a Kubernetes pod that worked: the node's `systemctl daemon-reload` (package upgrades
    run one) rewrote the pod's device cgroup under the systemd cgroup driver. The lasting fix on the node first,
    since the controller recreates the pods anyway (blind set 28: akash-network/support#266; NVIDIA Container
    Toolkit troubleshooting, "Containers losing access to GPUs")."""
    return Remediation(
        text="The pods lost /dev/nvidia* when the node's systemd reloaded (a `systemctl daemon-reload`, which "
        "package upgrades also run) with the systemd cgroup driver. Make it last first: on each GPU node create "
        "the /dev/char symlinks, and a udev rule that runs the same command when the driver loads so they come "
        "back after a reboot (CDI, or the GPU Operator's toolkit, avoids the problem); then delete the failing "
        "pods so their controller recreates them with the GPUs.",
        commands=(
            Command(
                DEV_CHAR_LINKS,
                note="on each GPU node: the /dev/char links that keep the GPUs through a daemon-reload",
                runs_here=False,
            ),
            Command(
                ("kubectl", "delete", "pod", "POD"), note="POD: each failing pod; its controller recreates it"
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def pod_devices_under_cpu_manager() -> Remediation:
    """NVML's Unknown Error in pods of a node whose kubelet runs the static CPU manager: it rewrites the pods'
    cgroups and drops the device rules the runtime added (kubernetes/kubernetes#77073). The NVIDIA device plugin
    passes the device specs to the kubelet itself with --pass-device-specs=true, so they survive (its README)."""
    return Remediation(
        text="The kubelet's static CPU manager (--cpu-manager-policy=static) rewrites the pods' cgroups and drops "
        "the device rules for /dev/nvidia* that the NVIDIA runtime added. Run the NVIDIA device plugin with "
        "--pass-device-specs=true (PASS_DEVICE_SPECS=true in its DaemonSet), which hands the device specs to the "
        "kubelet so they survive, or drop the static policy; then recreate the pods.",
        commands=(
            Command(("kubectl", "delete", "pod", "POD"), note="POD: each failing pod, after the change"),
        ),
        target=Target.SYSTEM,
    )
