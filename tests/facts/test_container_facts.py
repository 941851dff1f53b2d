"""Container facts from the trees of tests/fixtures/platform-trees (provenance in its README) and variations."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.facts.platform_tree import build, tree
from torch_gpu_doctor.facts.container import (
    ContainerFacts,
    ContainerRuntime,
    cgroup_runtime,
    gather_container,
    parse_containerenv,
    runtime_from_word,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

# Its /proc/1/cgroup is docker/for-linux#1293's: a Docker container on a cgroup v1 host.
DOCKER_V1 = "docker-gpus-not-passed"
# containers/podman libpod/container_internal_common.go: the --privileged .containerenv format.
PODMAN_PRIVILEGED = 'engine="podman-4.9.3"\nname="torch-dev"\nid="8c2b"\nimage="docker.io/pytorch/pytorch"\nimageid="3f0c"\nrootless=1\n'


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


def test_the_ci_vm_is_no_container_though_its_image_left_a_dockerenv() -> None:
    c = gather_container(tree("ci-vm-dockerenv"))
    assert c.runtime is None and c.markers == ()
    assert c.set_aside == (
        "/.dockerenv exists, but PID 2 is the kernel's kthreadd (no container's PID namespace) and / is ext4 on "
        "/dev/vda: a file left in the image this machine booted from",
    )
    assert reason(c.engine) is Reason.NOT_FOUND
    assert c.driver_libraries == ()
    assert c.visible_devices is None and c.driver_capabilities is None


OVERLAY_ROOT = (
    "456 375 0:143 / / rw,relatime master:175 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/37L57D2I,"
    "upperdir=/var/lib/docker/overlay2/4e82c300/diff,workdir=/var/lib/docker/overlay2/4e82c300/work\n"
)


@pytest.mark.parametrize(
    ("files", "errors"),
    [
        ({"/proc/2/comm": "bash\n"}, None),  # a container's own PID namespace: PID 2 is one of its processes
        ({"/proc/self/mountinfo": OVERLAY_ROOT}, None),  # `docker run --pid=host`: / is still the overlay
        ({}, {"/proc/2/comm": "permission_denied"}),  # cannot be shown otherwise: the marker stands
        ({}, {"/proc/self/mountinfo": "not_found"}),
        ({"/proc/self/mountinfo": b"\xff garbage"}, None),
    ],
    ids=["own-pid-namespace", "overlay-root", "pid2-unreadable", "no-mountinfo", "garbled-mountinfo"],
)
def test_a_dockerenv_is_a_docker_container_unless_the_machine_shows_otherwise(
    tmp_path: Path, files: dict[str, str | bytes], errors: dict[str, str] | None
) -> None:
    c = gather_container(build(tmp_path, files, file_errors=errors, base="ci-vm-dockerenv"))
    assert c.runtime is ContainerRuntime.DOCKER
    assert c.markers == ("/.dockerenv exists",) and c.set_aside == ()


def test_a_dockerenv_beside_another_marker_is_never_set_aside(tmp_path: Path) -> None:
    c = gather_container(
        build(tmp_path, {"/proc/1/cgroup": "4:devices:/docker/a2ffe0e9\n"}, base="ci-vm-dockerenv")
    )
    assert c.runtime is ContainerRuntime.DOCKER and c.set_aside == ()
    assert c.markers == ("/.dockerenv exists", "/proc/1/cgroup names a docker cgroup")


def test_the_os_facts_agree_about_a_leftover_dockerenv(tmp_path: Path) -> None:
    from torch_gpu_doctor.facts.platform import detect_container

    assert detect_container(tree("ci-vm-dockerenv")) is None
    assert detect_container(build(tmp_path, {"/proc/2/comm": "sh\n"}, base="ci-vm-dockerenv")) == "docker"


def test_cuda_image_without_gpus_still_says_all_in_its_environment() -> None:
    c = gather_container(tree(DOCKER_V1))
    assert c.runtime is ContainerRuntime.DOCKER
    assert "/proc/1/cgroup names a docker cgroup" in c.markers
    assert c.visible_devices == "all" and c.driver_capabilities == "compute,utility"
    assert c.driver_libraries == ()


def test_injected_driver_libraries_are_found_with_their_version() -> None:
    c = gather_container(tree("docker-gpus-passed"))
    found = {lib.name: lib for lib in c.driver_libraries}
    assert set(found) == {"libcuda.so.1", "libnvidia-ml.so.1"}
    cuda = found["libcuda.so.1"]
    assert cuda.path == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    assert cuda.resolved == "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05"
    assert cuda.is_symlink and cuda.version == "550.127.05"


def test_privileged_podman_names_its_engine() -> None:
    c = gather_container(tree("podman-privileged-cdi"))
    assert c.runtime is ContainerRuntime.PODMAN
    assert c.engine == "podman-4.9.3"
    assert "$container=podman" in c.markers
    assert {lib.path for lib in c.driver_libraries} == {
        "/usr/lib64/libcuda.so.1",
        "/usr/lib64/libnvidia-ml.so.1",
    }


def test_unprivileged_podman_writes_an_empty_containerenv(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, {"/run/.containerenv": ""}))
    assert c.runtime is ContainerRuntime.PODMAN
    assert reason(c.engine) is Reason.NOT_SUPPORTED


def test_buildah_is_another_engine(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, {"/run/.containerenv": 'engine="buildah-1.33.7"\n'}))
    assert c.runtime is ContainerRuntime.OTHER and c.engine == "buildah-1.33.7"


def test_kubernetes_wins_over_the_engine_below_it(tmp_path: Path) -> None:
    cgroup = "11:devices:/kubepods/besteffort/pod0d7f/3c5e\n0::/\n"
    host = build(
        tmp_path,
        {
            "/proc/1/cgroup": cgroup,
            "/.dockerenv": "",
            "/var/run/secrets/kubernetes.io/serviceaccount/token": "x",
        },
        env={"KUBERNETES_SERVICE_HOST": "10.96.0.1"},
    )
    c = gather_container(host)
    assert c.runtime is ContainerRuntime.KUBERNETES
    assert c.markers[0] == "KUBERNETES_SERVICE_HOST is set"
    assert "/proc/1/cgroup names a kubernetes cgroup" in c.markers


def test_apptainer_with_nv_binds_the_libraries_into_singularity_d(tmp_path: Path) -> None:
    host = build(
        tmp_path,
        {"/.singularity.d/libs/libcuda.so.1": "", "/.singularity.d/libs/libnvidia-ml.so.1": ""},
        env={"APPTAINER_CONTAINER": "/home/u/pytorch.sif", "APPTAINER_NAME": "pytorch.sif"},
    )
    c = gather_container(host)
    assert c.runtime is ContainerRuntime.APPTAINER
    cuda = next(lib for lib in c.driver_libraries if lib.name == "libcuda.so.1")
    assert cuda.path == "/.singularity.d/libs/libcuda.so.1" and not cuda.is_symlink
    assert reason(cuda.version) is Reason.NOT_SUPPORTED


def test_singularity_variables(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, env={"SINGULARITY_NAME": "old.simg"}))
    assert c.runtime is ContainerRuntime.SINGULARITY


def test_systemd_inside_lxc_names_it(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, {"/run/systemd/container": "lxc\n"}))
    assert c.runtime is ContainerRuntime.LXC


def test_wsl_is_not_a_container_though_systemd_says_so(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, {"/run/systemd/container": "wsl\n"}))
    assert c.runtime is None and c.markers == ()


def test_plain_host_has_no_runtime(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, {"/proc/1/cgroup": "0::/init.scope\n"}))
    assert c.runtime is None


def test_denied_containerenv_still_marks_podman(tmp_path: Path) -> None:
    host = build(
        tmp_path, {"/run/.containerenv": ""}, file_errors={"/run/.containerenv": "permission_denied"}
    )
    c = gather_container(host)
    assert c.runtime is ContainerRuntime.PODMAN
    assert reason(c.engine) is Reason.PERMISSION_DENIED


@pytest.mark.parametrize(
    "text",
    [b"\xff\xfe\x00garbage", b'engine="podman-4.9.3', b"=\n==\n", b"engine"],
    ids=["binary", "unbalanced-quote", "only-equals", "no-equals"],
)
def test_garbled_containerenv_names_no_engine(tmp_path: Path, text: bytes) -> None:
    c = gather_container(build(tmp_path, {"/run/.containerenv": text}))
    assert c.runtime is ContainerRuntime.PODMAN
    assert reason(c.engine) is Reason.NOT_SUPPORTED


def test_garbled_cgroup_file_names_nothing(tmp_path: Path) -> None:
    c = gather_container(build(tmp_path, {"/proc/1/cgroup": b"\x00\x01:::\n\xff"}))
    assert c.runtime is None


def test_parse_containerenv_real_format() -> None:
    values = parse_containerenv(PODMAN_PRIVILEGED + "graphRootMounted=1\n")
    assert values["engine"] == "podman-4.9.3"
    assert values["rootless"] == "1" and values["graphRootMounted"] == "1"
    assert parse_containerenv("") == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7:devices:/docker/a2ffe0e97ac2\n1:name=systemd:/docker/a2ffe0e97ac2\n", ContainerRuntime.DOCKER),
        ("5:devices:/system.slice/docker-0bd31f558c42.scope\n", ContainerRuntime.DOCKER),
        ("11:devices:/kubepods.slice/kubepods-burstable.slice/x\n", ContainerRuntime.KUBERNETES),
        ("4:memory:/machine.slice/libpod-8c2b.scope\n", ContainerRuntime.PODMAN),
        ("3:cpuset:/lxc/web01\n", ContainerRuntime.LXC),
        ("0::/\n", None),
        ("1:name=systemd:/init.scope\n0::/init.scope\n", None),
        ("", None),
    ],
)
def test_cgroup_runtime(text: str, expected: ContainerRuntime | None) -> None:
    assert cgroup_runtime(text) is expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("podman", ContainerRuntime.PODMAN),
        ("docker\n", ContainerRuntime.DOCKER),
        ("lxc-libvirt", ContainerRuntime.LXC),
        ("systemd-nspawn", ContainerRuntime.OTHER),
        ("wsl", None),
        ("", None),
    ],
)
def test_runtime_from_word(word: str, expected: ContainerRuntime | None) -> None:
    assert runtime_from_word(word) is expected


@pytest.mark.parametrize(
    "scenario", ["ci-vm-dockerenv", "docker-gpus-not-passed", "docker-gpus-passed", "podman-privileged-cdi"]
)
def test_container_facts_round_trip_through_json(scenario: str) -> None:
    c = gather_container(tree(scenario))
    assert from_json(ContainerFacts, to_json(c)) == c


@pytest.mark.parametrize(
    ("env", "runtime"),
    [
        ({"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, ContainerRuntime.KUBERNETES),
        (
            {"APPTAINER_CONTAINER": "/home/u/torch.sif", "APPTAINER_NAME": "torch.sif"},
            ContainerRuntime.APPTAINER,
        ),
        ({"SINGULARITY_NAME": "torch.sif"}, ContainerRuntime.SINGULARITY),
    ],
)
def test_a_capture_made_in_a_container_replays_as_that_container(
    tmp_path: Path, env: dict[str, str], runtime: ContainerRuntime
) -> None:
    """The runtimes' variables are among those a capture keeps (facts/environment.py), so a bundle made in a
    pod or an Apptainer container says so when it is replayed elsewhere."""
    from torch_gpu_doctor.host.recording import RecordingHost

    live = build(tmp_path / "live", {"/proc/1/cgroup": "0::/\n"}, env={**env, "PATH": "/usr/bin"})
    recorder = RecordingHost(
        live, local_root=tmp_path / "live" / "root"
    )  # shapes from the tree, not this machine
    assert gather_container(recorder).runtime is runtime
    recorder.write(tmp_path / "capture", "/usr/bin/python3")
    replayed = gather_container(RecordedHost(tmp_path / "capture"))
    assert replayed.runtime is runtime and replayed.markers == gather_container(live).markers
