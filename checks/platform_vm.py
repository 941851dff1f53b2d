"""platform.virtual_machine: a VM sees only the GPUs its hypervisor passes through."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable


@check("platform.virtual_machine", "A virtual machine has its GPU passed through", "platform")
def virtual_machine(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether this is a virtual machine (the CPU's `hypervisor` flag in /proc/cpuinfo) and which hypervisor the
    DMI strings in /sys/class/dmi/id name (QEMU/KVM, VMware, Hyper-V, Xen, VirtualBox, the clouds), and whether
    an NVIDIA GPU reached it.

    ## Why it matters
    A VM has no GPU unless the host passes one through (PCI passthrough with vfio-pci, a vGPU, or a cloud GPU
    instance type). Installing a driver or a CUDA build of torch inside a VM without one changes nothing.

    ## How to fix
    On a cloud, choose a GPU instance type; on your own host, pass the GPU to the VM (vfio-pci passthrough in
    libvirt/Proxmox, or an NVIDIA vGPU profile) and install the NVIDIA driver in the guest.
    """
    cid = "platform.virtual_machine"
    vm = facts.virtualization
    if isinstance(vm, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not tell whether this is a virtual machine: {vm}.")
    if not isinstance(facts.os, Unavailable) and facts.os.is_wsl:
        return Finding(
            cid, Status.SKIP, "WSL2: the GPU is shared by the Windows driver (see platform.wsl_gpu)."
        )
    evidence = [Evidence(f"DMI {name}", value, f"/sys/class/dmi/id/{name}") for name, value in vm.dmi]
    if not isinstance(vm.hypervisor_flag, Unavailable):
        evidence.append(Evidence("hypervisor CPU flag", str(vm.hypervisor_flag).lower(), "/proc/cpuinfo"))
    if isinstance(vm.is_vm, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not tell whether this is a virtual machine: {vm.is_vm}.")
    if not vm.is_vm:
        return Finding(cid, Status.SKIP, "Not a virtual machine.", evidence=tuple(evidence))
    name = f"a {vm.hypervisor} virtual machine" if vm.hypervisor else "a virtual machine"
    if facts.nvidia_gpus:
        return Finding(
            cid,
            Status.PASS,
            f"This is {name}, and an NVIDIA GPU was passed through to it.",
            evidence=tuple(evidence),
        )
    return Finding(
        cid,
        Status.WARN,
        f"This is {name} without an NVIDIA GPU: a VM sees a GPU only when the host passes one through.",
        evidence=tuple(evidence),
        remediation=Remediation(
            text="Give the VM a GPU: on a cloud, move to a GPU instance type; on your own host, pass the GPU through "
            "(vfio-pci in libvirt or Proxmox) or assign a vGPU, then install the NVIDIA driver in this guest. "
            "Without a GPU, PyTorch's CPU build is the one to install here.",
            target=Target.SYSTEM,
        ),
    )
