"""platform.container_gpus with in-memory Facts, and end to end on tests/fixtures/platform-trees."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.factories import facts, gpu, kernel, nvml_error, os_facts
from tests.facts.platform_tree import build, tree
from torch_gpu_doctor.checks.platform_container import container_gpus
from torch_gpu_doctor.facts.container import ContainerFacts, ContainerRuntime, gather_container
from torch_gpu_doctor.facts.driver_libraries import LibraryFile
from torch_gpu_doctor.facts.gpus import join_gpus
from torch_gpu_doctor.facts.kernel import gather_kernel
from torch_gpu_doctor.facts.model import NOT_GATHERED, Facts
from torch_gpu_doctor.facts.pci import gather_pci
from torch_gpu_doctor.facts.platform import gather_os
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

PASSED_NODES = ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")
LIBCUDA = LibraryFile(
    "libcuda.so.1",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05",
    True,
    "550.127.05",
)
LIBNVML = replace(LIBCUDA, name="libnvidia-ml.so.1", path="/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")


def container(
    runtime: ContainerRuntime | None = ContainerRuntime.DOCKER,
    libs: tuple[LibraryFile, ...] = (LIBCUDA, LIBNVML),
    visible: str | None = "all",
    caps: str | None = "compute,utility",
) -> ContainerFacts:
    return ContainerFacts(
        runtime=runtime,
        markers=("/.dockerenv exists",),
        engine=Unavailable(Reason.NOT_FOUND, "/run/.containerenv"),
        driver_libraries=libs,
        visible_devices=visible,
        driver_capabilities=caps,
    )


def machine(
    c: ContainerFacts | Unavailable, nodes: tuple[str, ...] | Unavailable = PASSED_NODES, **kw: object
) -> Facts:
    return facts(container=c, kernel=replace(kernel(), device_nodes=nodes), **kw)


def commands(f: object) -> list[str]:
    remediation = getattr(f, "remediation", None)
    assert remediation is not None
    return [c.display() for c in remediation.commands]


def test_gpus_and_libcuda_passed_in() -> None:
    f = container_gpus(machine(container()))
    assert f.status is Status.PASS
    assert f.summary == "1 GPU and the driver's libcuda.so.1 were passed into this docker container."


def test_not_a_container_skips() -> None:
    assert container_gpus(machine(container(runtime=None))).status is Status.SKIP


@pytest.mark.parametrize(("why", "status"), [(Reason.PERMISSION_DENIED, Status.UNKNOWN), (None, Status.SKIP)])
def test_unreadable_or_ungathered_container_facts(why: Reason | None, status: Status) -> None:
    value = NOT_GATHERED if why is None else Unavailable(why, "/run/.containerenv")
    assert container_gpus(machine(value)).status is status


def test_missing_uvm_node_warns() -> None:
    f = container_gpus(machine(container(), nodes=("nvidia0", "nvidiactl")))
    assert f.status is Status.WARN and "/dev/nvidia-uvm is missing" in f.summary


def test_utility_only_capabilities_leave_libcuda_out() -> None:
    f = container_gpus(machine(container(libs=(LIBNVML,), caps="utility")))
    assert f.status is Status.FAIL
    assert "/dev/nvidia0 is in this docker container, but the driver's libcuda.so.1 is not" in f.summary
    assert "NVIDIA_DRIVER_CAPABILITIES is utility" in f.details
    assert commands(f)[0] == "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility IMAGE"


def test_unset_capabilities_mean_the_toolkit_default() -> None:
    f = container_gpus(machine(container(libs=(), caps=None)))
    assert f.status is Status.FAIL and "the toolkit's default: utility" in f.details


def test_device_nodes_passed_by_hand_without_libraries() -> None:
    f = container_gpus(machine(container(libs=())))
    assert f.status is Status.FAIL
    assert "passed by hand with `--device`" in f.details
    assert commands(f)[0] == "docker run --gpus all IMAGE"


def test_cuda_image_without_gpus_fails_and_explains_the_variable() -> None:
    f = container_gpus(machine(container(libs=()), nodes=("null", "zero", "tty")))
    assert f.status is Status.FAIL
    assert f.summary.startswith(
        "No GPU was passed into this docker container, though the host has 1 NVIDIA GPU"
    )
    assert "CUDA images set it themselves" in f.details
    assert commands(f) == [
        "docker run --gpus all IMAGE",
        "sudo nvidia-ctk runtime configure --runtime=docker",
        "sudo systemctl restart docker",
    ]


def test_visible_devices_void_is_named() -> None:
    f = container_gpus(machine(container(libs=(), visible="void"), nodes=("null",)))
    assert f.status is Status.FAIL and "NVIDIA_VISIBLE_DEVICES=void asks the toolkit for no GPU" in f.details


def test_podman_gets_the_cdi_device_and_spec() -> None:
    f = container_gpus(machine(container(ContainerRuntime.PODMAN, libs=()), nodes=("null",)))
    assert f.status is Status.FAIL
    assert commands(f) == [
        "podman run --device nvidia.com/gpu=all IMAGE",
        "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
    ]


def test_kubernetes_gets_the_resource_limit() -> None:
    f = container_gpus(machine(container(ContainerRuntime.KUBERNETES, libs=()), nodes=("null",)))
    assert f.status is Status.FAIL and f.remediation is not None
    assert "resources:\n  limits:\n    nvidia.com/gpu: 1" in f.remediation.text
    assert "kubernetes container" in f.summary


def test_apptainer_shares_dev_so_only_the_libraries_count() -> None:
    without = container_gpus(machine(container(ContainerRuntime.APPTAINER, libs=())))
    assert without.status is Status.FAIL
    assert "none of the host driver's libraries" in without.details
    assert commands(without) == ["apptainer run --nv IMAGE.sif"]
    nv = replace(LIBCUDA, path="/.singularity.d/libs/libcuda.so.1", is_symlink=False)
    with_nv = container_gpus(machine(container(ContainerRuntime.APPTAINER, libs=(nv,))))
    assert with_nv.status is Status.PASS and "with --nv" in with_nv.summary


def test_lxd_gets_the_gpu_device() -> None:
    f = container_gpus(machine(container(ContainerRuntime.LXC, libs=()), nodes=()))
    assert commands(f)[0] == "lxc config device add CONTAINER gpu gpu"


def test_container_on_wsl2_uses_dxg() -> None:
    wsl_lib = replace(LIBCUDA, path="/usr/lib/wsl/lib/libcuda.so.1", resolved="/usr/lib/wsl/lib/libcuda.so.1")
    f = container_gpus(machine(container(libs=(wsl_lib,)), nodes=(), os=os_facts(wsl=True)))
    assert f.status is Status.PASS and "through /dev/dxg" in f.summary


def test_no_gpu_on_the_host_is_not_the_containers_fault() -> None:
    f = container_gpus(machine(container(libs=()), nodes=("null",), gpus=(), pci=()))
    assert f.status is Status.SKIP


def test_unreadable_pci_bus_only_warns() -> None:
    gone = Unavailable(Reason.PERMISSION_DENIED, "/sys/bus/pci/devices")
    f = container_gpus(machine(container(libs=()), nodes=("null",), gpus=(), pci=gone))
    assert f.status is Status.WARN and "could not be read" in f.summary


def test_unreadable_dev_is_unknown() -> None:
    f = container_gpus(machine(container(), nodes=Unavailable(Reason.PERMISSION_DENIED, "/dev")))
    assert f.status is Status.UNKNOWN


def test_host_gpus_count_even_when_nvml_is_missing() -> None:
    gone = gpu(nvml_index=None)
    f = container_gpus(
        machine(container(libs=()), nodes=("null",), gpus=(gone,), nvml=nvml_error("LibraryNotFound", 12))
    )
    assert f.status is Status.FAIL


def _tree_facts(name: str) -> Facts:
    return _host_facts(tree(name))


def _host_facts(host: RecordedHost) -> Facts:
    pci = gather_pci(host)
    return facts(
        os=gather_os(host),
        container=gather_container(host),
        kernel=gather_kernel(host),
        pci=pci,
        gpus=join_gpus(pci, Unavailable(Reason.NOT_FOUND, "no NVML"), Unavailable(Reason.NOT_FOUND, "")),
    )


@pytest.mark.parametrize(
    ("scenario", "status", "phrase"),
    [
        (
            "docker-gpus-not-passed",
            Status.FAIL,
            "though the host has 1 NVIDIA GPU on its PCI bus (GeForce RTX 4090",
        ),
        ("docker-gpus-passed", Status.PASS, "1 GPU and the driver's libcuda.so.1 were passed"),
        ("podman-privileged-cdi", Status.PASS, "passed into this podman container"),
        ("ci-vm-dockerenv", Status.SKIP, "Not running in a container."),
    ],
)
def test_platform_trees(scenario: str, status: Status, phrase: str) -> None:
    f = container_gpus(_tree_facts(scenario))
    assert f.status is status, f.summary
    assert phrase in f.summary


def test_a_leftover_dockerenv_is_explained_not_taken_for_a_container() -> None:
    f = container_gpus(_tree_facts("ci-vm-dockerenv"))
    assert f.details.startswith("/.dockerenv exists, but PID 2 is the kernel's kthreadd")
    assert f.details.endswith("a file left in the image this machine booted from.")
    assert [e.label for e in f.evidence] == ["container marker set aside"]


def test_a_docker_container_on_a_host_without_gpus_skips(tmp_path: Path) -> None:
    # the CI VM's files, but in a container's own PID namespace: the GPUs of a host that has none
    f = container_gpus(_host_facts(build(tmp_path, {"/proc/2/comm": "python3\n"}, base="ci-vm-dockerenv")))
    assert f.status is Status.SKIP
    assert "This docker container has no GPU, and the host has no NVIDIA GPU on its PCI bus" in f.summary
