"""platform.container_gpus: inside a container, were the GPUs passed in, with the driver libraries CUDA needs?

Rules from hardware.md §3.7 and §8 trap 4: sysfs is not namespaced, so the PCI bus shows the host's GPUs whether or
not any was passed in; `NVIDIA_VISIBLE_DEVICES=all` is baked into CUDA images and proves nothing. What proves a GPU
was passed is its device node (`/dev/nvidia0`, or `/dev/dxg` for a container on WSL 2) plus the host driver's
libcuda.so.1, which the NVIDIA Container Toolkit injects only with the `compute` capability. Apptainer shares the
host's /dev, so there only the libraries (`--nv`) tell.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.signatures import reported, reported_evidence
from torch_gpu_doctor.facts.container import ContainerFacts, ContainerRuntime
from torch_gpu_doctor.facts.describe import gpu_label
from torch_gpu_doctor.facts.driver_libraries import LIBCUDA
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.container_gpus import (
    COMPOSE_WITHOUT_GPUS,
    compose_gpus,
    host_driver_for_toolkit,
    l4t_driver_for_toolkit,
    pass_gpus,
    toolkit_on_host,
)
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

ID = "platform.container_gpus"
_GPU_NODE = lazy(r"^nvidia[0-9]+$")
SHARED_DEV = (ContainerRuntime.APPTAINER, ContainerRuntime.SINGULARITY)


def _name(c: ContainerFacts) -> str:
    return "container" if c.runtime in (None, ContainerRuntime.OTHER) else f"{c.runtime.value} container"


def _evidence(c: ContainerFacts, nodes: tuple[str, ...] | Unavailable) -> tuple[Evidence, ...]:
    items = [Evidence("container marker", m, "filesystem / environment") for m in c.markers]
    shown = str(nodes) if isinstance(nodes, Unavailable) else (", ".join(nodes) or "none")
    items.append(Evidence("NVIDIA device nodes", shown, "/dev"))
    items += [Evidence(lib.name, lib.path, "library folders") for lib in c.driver_libraries]
    for label, value in (
        ("NVIDIA_VISIBLE_DEVICES", c.visible_devices),
        ("NVIDIA_DRIVER_CAPABILITIES", c.driver_capabilities),
    ):
        items.append(Evidence(label, value if value is not None else "unset", "environment"))
    return tuple(items)


def _lacks_compute(c: ContainerFacts) -> bool:
    """The toolkit injects libcuda only for `compute` (or `all`); unset means its default, `utility`."""
    words = {w.strip() for w in (c.driver_capabilities or "utility").split(",")}
    return not words & {"compute", "all"}


@check(ID, "GPUs were passed into this container", "platform")
def container_gpus(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether gpu-doctor runs in a container (Docker, Podman, Kubernetes, Apptainer/Singularity, LXC), and if so,
    whether GPU device nodes (`/dev/nvidia0`, `/dev/nvidiactl`, `/dev/nvidia-uvm`) and the host driver's
    `libcuda.so.1` were passed in, compared with the NVIDIA GPUs on the host's PCI bus.

    ## Why it matters
    A container sees the host's PCI devices but can use a GPU only when the runtime passes its device node and
    the driver's libraries in. Without them `torch.cuda.is_available()` is False although `lspci` shows the GPU.
    CUDA images set `NVIDIA_VISIBLE_DEVICES=all` themselves, so that variable proves nothing.

    ## How to fix
    Recreate the container with the GPUs passed in: `docker run --gpus all`, Podman
    `--device nvidia.com/gpu=all` (after `nvidia-ctk cdi generate` on the host), a `nvidia.com/gpu` limit in the
    Kubernetes pod spec, Apptainer `--nv`. If only the libraries are missing, add `compute` to
    `NVIDIA_DRIVER_CAPABILITIES`.
    """
    c = facts.container
    no_host_driver = reported(facts, "container_host_driver")
    refused = reported(facts, "container_runtime")
    unknown_runtime = [e for e in refused if e.signature == "container_docker_runtime_nvidia_unknown"]
    if no_host_driver:
        # with Docker's own 'unknown runtime nvidia' beside it, the toolkit's setup broke too (an upgrade cut
        # short): its registration is the step after the host's driver, not something that changes nothing
        means = no_host_driver[0].means
        return Finding(
            ID,
            Status.FAIL,
            "The container toolkit could not load the host's NVIDIA driver library "
            f"({no_host_driver[0].where}): the host driver is missing or not in its loader cache"
            + (
                f", and Docker no longer knows the nvidia runtime ({unknown_runtime[0].where})."
                if unknown_runtime
                else "."
            ),
            details=means.replace(" Installing or configuring the toolkit again changes nothing.", "")
            + " "
            + unknown_runtime[0].means
            if unknown_runtime
            else means,
            evidence=reported_evidence([*no_host_driver, *unknown_runtime]),
            remediation=l4t_driver_for_toolkit()
            if facts.jetson_board is not None and not unknown_runtime
            else host_driver_for_toolkit(reregister=bool(unknown_runtime)),
        )
    if refused:
        return Finding(
            ID,
            Status.FAIL,
            f"The container runtime could not give the container the GPUs ({refused[0].where}).",
            details=refused[0].means,
            evidence=reported_evidence(refused),
            remediation=toolkit_on_host(),
        )
    started_without = reported(facts, "container_no_gpus")
    if started_without:
        return Finding(
            ID,
            Status.FAIL,
            f"The container was started without the GPUs ({started_without[0].where}).",
            details=started_without[0].means,
            evidence=reported_evidence(started_without),
            remediation=compose_gpus()
            if started_without[0].signature == COMPOSE_WITHOUT_GPUS
            else pass_gpus(ContainerRuntime.DOCKER),
        )
    if isinstance(c, Unavailable):
        status = Status.SKIP if c.reason is Reason.NOT_APPLICABLE else Status.UNKNOWN
        return Finding(ID, status, f"Could not tell whether this is a container: {c}.")
    if c.runtime is None:
        aside = tuple(Evidence("container marker set aside", m, "filesystem / procfs") for m in c.set_aside)
        return Finding(
            ID,
            Status.SKIP,
            "Not running in a container.",
            details="\n".join(f"{m[0].upper()}{m[1:]}." for m in c.set_aside),
            evidence=aside,
        )
    nodes = facts.kernel if isinstance(facts.kernel, Unavailable) else facts.kernel.device_nodes
    evidence = _evidence(c, nodes)
    libcuda = [lib for lib in c.driver_libraries if lib.name == LIBCUDA]
    dxg = not isinstance(facts.os, Unavailable) and facts.os.has_dxg
    if isinstance(nodes, Unavailable) and c.runtime not in SHARED_DEV and not dxg:
        return Finding(
            ID, Status.UNKNOWN, f"Could not list /dev to see what was passed in: {nodes}.", evidence=evidence
        )
    gpu_nodes = [] if isinstance(nodes, Unavailable) else [n for n in nodes if _GPU_NODE.match(n)]
    passed = bool(libcuda) if c.runtime in SHARED_DEV else bool(gpu_nodes) or dxg
    if passed and libcuda:
        return _passed(c, nodes, gpu_nodes, dxg, evidence)
    if passed:
        return _no_libraries(c, gpu_nodes, dxg, evidence)
    return _not_passed(c, facts, evidence)


def _passed(
    c: ContainerFacts,
    nodes: tuple[str, ...] | Unavailable,
    gpu_nodes: list[str],
    dxg: bool,
    ev: tuple[Evidence, ...],
) -> Finding:
    if c.runtime in SHARED_DEV or dxg:
        how = "through /dev/dxg (WSL 2)" if dxg else "with --nv"
        return Finding(ID, Status.PASS, f"The GPU driver was passed into this {_name(c)} {how}.", evidence=ev)
    count = f"{len(gpu_nodes)} GPU{'s' if len(gpu_nodes) > 1 else ''}"
    if not isinstance(nodes, Unavailable) and "nvidia-uvm" not in nodes:
        return Finding(
            ID,
            Status.WARN,
            f"{count} and libcuda.so.1 were passed into this {_name(c)}, but /dev/nvidia-uvm is missing: CUDA "
            "usually fails to initialise without it ('CUDA unknown error').",
            details="The host's nvidia_uvm module was not loaded when the container started. On the host run "
            "`sudo modprobe nvidia-uvm` (or `nvidia-modprobe -u -c=0`), then restart the container.",
            evidence=ev,
        )
    return Finding(
        ID,
        Status.PASS,
        f"{count} and the driver's libcuda.so.1 were passed into this {_name(c)}.",
        evidence=ev,
    )


def _no_libraries(c: ContainerFacts, gpu_nodes: list[str], dxg: bool, ev: tuple[Evidence, ...]) -> Finding:
    what = "/dev/dxg" if dxg and not gpu_nodes else ", ".join(f"/dev/{n}" for n in gpu_nodes)
    if c.runtime not in SHARED_DEV and _lacks_compute(c):
        value = c.driver_capabilities or "unset (the toolkit's default: utility)"
        why = (
            f"NVIDIA_DRIVER_CAPABILITIES is {value}: without `compute` the NVIDIA Container Toolkit mounts "
            "nvidia-smi and NVML but not libcuda.so.1."
        )
        remediation = pass_gpus(c.runtime, add_compute=True)
    else:
        why = (
            "The device nodes are here (passed by hand with `--device`, or shared by `--privileged`), but neither "
            "the NVIDIA Container Toolkit nor CDI injected the driver's libraries."
        )
        remediation = pass_gpus(c.runtime)
    return Finding(
        ID,
        Status.FAIL,
        f"{what} {'is' if ',' not in what else 'are'} in this {_name(c)}, but the driver's libcuda.so.1 is not: "
        "CUDA cannot start.",
        details=why,
        evidence=ev,
        remediation=remediation,
    )


def _visible_devices_note(value: str | None) -> str:
    """hardware.md §8 trap 4: the variable is the toolkit's input, not proof that it ran."""
    if value in ("void", "none"):
        return f" NVIDIA_VISIBLE_DEVICES={value} asks the toolkit for no GPU."
    if value:
        return f" NVIDIA_VISIBLE_DEVICES={value} is set, but CUDA images set it themselves: it does not mean a GPU was passed."
    return ""


def _not_passed(c: ContainerFacts, facts: Facts, ev: tuple[Evidence, ...]) -> Finding:
    on_bus = [g for g in facts.nvidia_gpus if g.on_pci_bus]
    trap = _visible_devices_note(c.visible_devices)
    missing = (
        "none of the host driver's libraries (Apptainer binds them with --nv)"
        if c.runtime in SHARED_DEV
        else "no /dev/nvidia* GPU device node"
    )
    if on_bus:
        return Finding(
            ID,
            Status.FAIL,
            f"No GPU was passed into this {_name(c)}, though the host has {len(on_bus)} NVIDIA "
            f"GPU{'s' if len(on_bus) > 1 else ''} on its PCI bus ({', '.join(gpu_label(g) for g in on_bus)}).",
            details=f"The container has {missing}; the PCI bus is the host's, not the container's.{trap}",
            evidence=ev,
            remediation=pass_gpus(c.runtime),
        )
    if isinstance(facts.pci, Unavailable):
        return Finding(
            ID,
            Status.WARN,
            f"No GPU was passed into this {_name(c)}, and the host's PCI bus could not be read to tell whether it "
            f"has one ({facts.pci}).",
            details=f"The container has {missing}.{trap}",
            evidence=ev,
            remediation=pass_gpus(c.runtime),
        )
    return Finding(
        ID,
        Status.SKIP,
        f"This {_name(c)} has no GPU, and the host has no NVIDIA GPU on its PCI bus to pass in (see gpu.present).",
        evidence=ev,
    )
