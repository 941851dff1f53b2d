"""How to start a container with the GPUs passed in, per runtime: the run flag or the manifest change.

Docker: `--gpus all` (needs the NVIDIA Container Toolkit on the host, `nvidia-ctk runtime configure`);
Podman: CDI, `--device nvidia.com/gpu=all` (needs a CDI spec: `nvidia-ctk cdi generate`); Kubernetes: a
`nvidia.com/gpu` limit (needs the NVIDIA device plugin or GPU Operator on the node); Apptainer/Singularity:
`--nv`; LXD/Incus: a `gpu` device plus `nvidia.runtime`. IMAGE and CONTAINER stand for the user's own names.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.container import ContainerRuntime
from torch_gpu_doctor.facts.wsl import WSL_GPU_MIN_BUILD
from torch_gpu_doctor.model import Command, Remediation, Target

CDI_SPEC = "/etc/cdi/nvidia.yaml"
CAPABILITIES = "NVIDIA_DRIVER_CAPABILITIES=compute,utility"
K8S_LIMIT = "resources:\n  limits:\n    nvidia.com/gpu: 1"
COMPOSE_GPUS = (
    "deploy:\n  resources:\n    reservations:\n      devices:\n"
    "        - driver: nvidia\n          count: all\n          capabilities: [gpu]"
)
_ON_HOST = "on the host"
# a pasted Docker Compose service that requests no GPU (triage reads it from the file, not from a message)
COMPOSE_WITHOUT_GPUS = "compose_service_without_gpus"


# a plain container with the GPUs: where nvidia-smi lists them, the host's driver and toolkit work
GPU_TEST = ("docker", "run", "--rm", "--gpus", "all", "ubuntu", "nvidia-smi")


def pass_gpus(runtime: ContainerRuntime | None, add_compute: bool = False) -> Remediation:
    """Recreate the container with the GPUs (and, with `add_compute`, CUDA's libraries) passed in."""
    if runtime is ContainerRuntime.DOCKER:
        return _docker(add_compute)
    if runtime is ContainerRuntime.PODMAN:
        return _podman()
    if runtime is ContainerRuntime.KUBERNETES:
        env = "\n    env:\n      - name: NVIDIA_DRIVER_CAPABILITIES\n        value: compute,utility"
        return Remediation(
            text="Request a GPU in the pod's container spec:\n"
            + K8S_LIMIT
            + (env if add_compute else "")
            + "\nThe node needs the NVIDIA device plugin (or the GPU Operator): `kubectl describe node` must list "
            "nvidia.com/gpu under Allocatable.",
            target=Target.SYSTEM,
        )
    if runtime in (ContainerRuntime.APPTAINER, ContainerRuntime.SINGULARITY):
        tool = runtime.value
        return Remediation(
            text=f"Run the image with `--nv`: {tool} binds the host driver's libraries (libcuda.so.1, "
            "libnvidia-ml.so.1) into /.singularity.d/libs. `--nvccli` uses the NVIDIA Container Toolkit instead.",
            commands=(
                Command(
                    (tool, "run", "--nv", "IMAGE.sif"), note="or `exec --nv`/`shell --nv`", runs_here=False
                ),
            ),
            target=Target.SYSTEM,
        )
    if runtime is ContainerRuntime.LXC:
        return Remediation(
            text="LXD/Incus: add a gpu device and let the NVIDIA runtime inject the driver's libraries, then restart "
            "the container (`incus` takes the same arguments). Plain LXC: allow and bind /dev/nvidia* and the host's "
            "libcuda.so.1 in the container config.",
            commands=(
                Command(
                    ("lxc", "config", "device", "add", "CONTAINER", "gpu", "gpu"),
                    note=_ON_HOST,
                    runs_here=False,
                ),
                Command(
                    ("lxc", "config", "set", "CONTAINER", "nvidia.runtime=true"),
                    note=_ON_HOST,
                    runs_here=False,
                ),
                Command(("lxc", "restart", "CONTAINER"), note=_ON_HOST, runs_here=False),
            ),
            target=Target.SYSTEM,
        )
    return Remediation(
        text="Pass /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidia0 (one per GPU) into the container and bind the "
        "host driver's libcuda.so.1 and libnvidia-ml.so.1, or start it through the NVIDIA Container Toolkit (CDI).",
        target=Target.SYSTEM,
    )


def _docker(add_compute: bool) -> Remediation:
    env = ("-e", CAPABILITIES) if add_compute else ()
    return Remediation(
        text="Recreate the container with the GPUs passed in (IMAGE is your image). With Docker Compose, add to the "
        "service:\n"
        + COMPOSE_GPUS
        + "\nIn Kubernetes (a pod, a Helm chart, a KServe or Seldon deployment), the "
        "container's resources request them instead (limits: nvidia.com/gpu: 1), served by NVIDIA's device plugin "
        "or GPU Operator on the node. `--gpus` needs the NVIDIA Container Toolkit on the host; Docker's "
        "'could not select device driver \"\" with capabilities: [[gpu]]' means it is missing or not configured.",
        commands=(
            Command(
                ("docker", "run", "--gpus", "all", *env, "IMAGE"),
                note="replaces your `docker run`",
                runs_here=False,
            ),
            Command(
                ("sudo", "nvidia-ctk", "runtime", "configure", "--runtime=docker"),
                note="on the host, once, after installing the NVIDIA Container Toolkit",
                runs_here=False,
            ),
            Command(("sudo", "systemctl", "restart", "docker"), note=_ON_HOST, runs_here=False),
        ),
        target=Target.SYSTEM,
    )


def compose_gpus() -> Remediation:
    """The GPUs requested in the Docker Compose service that had none (blind set 31: docker-faster-whisper#56)."""
    return Remediation(
        text="Request the GPUs in the compose service, beside its image:\n"
        + COMPOSE_GPUS
        + "\nthen recreate it (`docker compose up -d`). This needs the NVIDIA Container Toolkit on the host: a plain "
        "CUDA container that lists the GPU proves it works there.",
        commands=(
            Command(
                GPU_TEST, note="on the host: the GPU listed means Docker can pass it in", runs_here=False
            ),
            Command(
                ("docker", "compose", "up", "-d", "--force-recreate"),
                note="after adding the GPU request to the service",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def _podman() -> Remediation:
    return Remediation(
        text="Recreate the container with the GPUs passed in through CDI (IMAGE is your image). The device name "
        "comes from a CDI spec the NVIDIA Container Toolkit writes on the host.",
        commands=(
            Command(
                ("podman", "run", "--device", "nvidia.com/gpu=all", "IMAGE"),
                note="replaces your `podman run`",
                runs_here=False,
            ),
            Command(
                ("sudo", "nvidia-ctk", "cdi", "generate", f"--output={CDI_SPEC}"),
                note="on the host, when `nvidia-ctk cdi list` shows no nvidia.com/gpu devices, and after every "
                "driver upgrade",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def host_driver_for_toolkit(*, reregister: bool = False) -> Remediation:
    """The NVIDIA Container Toolkit runs but cannot load the host driver's libraries (libnvidia-ml.so.1).
    `reregister`: Docker does not know the nvidia runtime either, so the toolkit's setup is redone after."""
    again = (
        " Docker no longer knows the nvidia runtime either (an upgrade cut short, by a power loss for one, "
        "leaves both): once nvidia-smi works, reinstall nvidia-container-toolkit, register it with Docker and "
        "restart Docker."
        if reregister
        else ""
    )
    return Remediation(
        text="The NVIDIA Container Toolkit is installed (its nvidia-container-cli ran) but cannot load the host "
        "driver's NVML library: the host has no NVIDIA driver installed, or its libraries are not in the "
        "loader cache. On the host, `nvidia-smi` must work first: install the driver if it fails, run `sudo "
        f"ldconfig` if it works, then start the container with `--gpus all` again.{again}",
        commands=(
            Command(
                ("nvidia-smi",), note=_ON_HOST + ": it fails too when the driver is missing", runs_here=False
            ),
            Command(("sudo", "ldconfig"), note=_ON_HOST + ", when nvidia-smi works", runs_here=False),
            *(
                (
                    Command(
                        ("sudo", "nvidia-ctk", "runtime", "configure", "--runtime=docker"),
                        note=_ON_HOST + ", after reinstalling nvidia-container-toolkit",
                        runs_here=False,
                    ),
                    Command(("sudo", "systemctl", "restart", "docker"), note=_ON_HOST, runs_here=False),
                )
                if reregister
                else ()
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def l4t_driver_for_toolkit(toolkit: bool = True) -> Remediation:
    """On a Jetson the toolkit (or, `toolkit` False, a program on the board itself) loads the L4T driver's
    libcuda.so.1, which the loader cache lacks: a minimal root file system without nvidia-l4t-core's
    /etc/ld.so.conf.d/nvidia-tegra.conf (there is no nvidia-smi to check first on a Jetson;
    NVIDIA/nvidia-container-toolkit#231)."""
    who = "the NVIDIA Container Toolkit loads" if toolkit else "programs load"
    then = "start the container again" if toolkit else "start the program again"
    where = _ON_HOST if toolkit else "on the Jetson"
    return Remediation(
        text=f"On a Jetson {who} the L4T driver's libcuda.so.1 from "
        "/usr/lib/aarch64-linux-gnu/tegra, which must be in the loader cache: the nvidia-l4t-core package "
        "lists that folder in /etc/ld.so.conf.d/nvidia-tegra.conf. A root file system built without it (a "
        "minimal rootfs), or with that file removed, leaves the driver's library unfound. Reinstall "
        "nvidia-l4t-core (or list the folder in a file under /etc/ld.so.conf.d), run ldconfig, and check that "
        f"libcuda.so.1 is in the cache; then {then}.",
        commands=(
            Command(
                ("sudo", "apt", "install", "--reinstall", "nvidia-l4t-core"), note=where, runs_here=False
            ),
            Command(("sudo", "ldconfig"), note=where, runs_here=False),
            Command(
                ("ldconfig", "-p"),
                note=where + ": libcuda.so.1 must be listed, from /usr/lib/aarch64-linux-gnu/tegra",
                runs_here=False,
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def docker_desktop_on_windows_fix(windows_build: int | None = None) -> Remediation:
    """GPU containers on a Windows host: Docker Desktop's WSL 2 engine and the Windows NVIDIA driver, never a
    toolkit or a Linux driver on Windows (blind set 20: nvidia-docker#1352). A Windows 10 build older than 21H2
    (19044) gives WSL 2 no GPU at all: Windows itself is updated first (blind set 32: docker/for-win#13835,
    build 19042, where the toolkit in Docker Desktop's VM found no libnvidia-ml.so.1)."""
    old = windows_build is not None and windows_build < WSL_GPU_MIN_BUILD
    first = (
        f"Windows build {windows_build} is older than Windows 10 21H2 (build {WSL_GPU_MIN_BUILD}), the first whose "
        "WSL 2 gives Linux the GPU: no driver or Docker setting can change that. Update Windows (Windows Update, to "
        "21H2 or newer, or Windows 11), then update WSL. "
        if old
        else ""
    )
    return Remediation(
        text=first
        + "On Windows, Docker Desktop gives containers the GPU only through its WSL 2 engine (Settings > "
        "General > 'Use the WSL 2 based engine'), with a current NVIDIA driver for Windows, which brings CUDA into "
        "WSL 2; no NVIDIA Container Toolkit and no Linux driver are installed on Windows. Hyper-V's engine "
        "(Windows containers, or Linux ones without WSL 2) has no GPU support.",
        commands=(
            Command(
                ("wsl.exe", "--update"),
                note="in PowerShell"
                + (", after Windows Update brings build 19044 or newer" if old else "")
                + ": WSL 2 with GPU support, then Docker Desktop's WSL 2 engine",
                runs_here=False,
            ),
            Command(
                (
                    "docker",
                    "run",
                    "--rm",
                    "--gpus",
                    "all",
                    "nvcr.io/nvidia/k8s/cuda-sample:nbody",
                    "nbody",
                    "-gpu",
                    "-benchmark",
                ),
                note="Docker's own GPU check for Docker Desktop",
            ),
        ),
        target=Target.SYSTEM,
    )


def toolkit_on_host() -> Remediation:
    """The host's container engine cannot hand out GPUs: the NVIDIA Container Toolkit is missing or not set up."""
    return Remediation(
        text="On the host, install the NVIDIA Container Toolkit (package nvidia-container-toolkit from NVIDIA's "
        "repository for your distribution), register it with the container engine and restart the engine; "
        "then start the container with `--gpus all`. The host's own `nvidia-smi` must work first.",
        commands=(
            Command(
                ("sudo", "nvidia-ctk", "runtime", "configure", "--runtime=docker"),
                note=_ON_HOST,
                runs_here=False,
            ),
            Command(("sudo", "systemctl", "restart", "docker"), note=_ON_HOST, runs_here=False),
            Command(
                ("docker", "run", "--rm", "--gpus", "all", "IMAGE", "nvidia-smi"),
                note="the check",
                runs_here=False,
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


# whether a GPU node offers its GPUs to pods: what every Kubernetes fix here ends with
_NODE_ADVERTISES = Command(
    ("kubectl", "describe", "node", "NODE"),
    note="NODE: a GPU node; its Capacity and Allocatable must list nvidia.com/gpu",
    runs_here=False,
)


def _nvidia_default_runtime(note: str, here: bool = True) -> Command:
    return Command(
        ("sudo", "nvidia-ctk", "runtime", "configure", "--runtime=docker", "--set-as-default"),
        note=note,
        runs_here=here,
    )


def _restart_docker(note: str, here: bool = True) -> Command:
    return Command(("sudo", "systemctl", "restart", "docker"), note=note, runs_here=here)


def _default_runtime_shown(note: str, here: bool = True) -> Command:
    return Command(("docker", "info"), note=note, runs_here=here)


def default_runtime_for_builds() -> Remediation:
    """An image built on a Jetson before JetPack 5: `docker build` uses Docker's default runtime, and only
    NVIDIA's mounts the host's CUDA into the build's steps."""
    return Remediation(
        text='Make NVIDIA\'s runtime Docker\'s default: add "default-runtime": "nvidia" to /etc/docker/daemon.json '
        '(beside its "runtimes": {"nvidia": ...} entry), restart Docker, and build again.',
        commands=(
            _restart_docker('after adding "default-runtime": "nvidia"'),
            _default_runtime_shown("'Default Runtime: nvidia' confirms it"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def jetson_runtime() -> Remediation:
    """A container on a Jetson without L4T's CUDA libraries: only NVIDIA's runtime mounts them (libcuda.so.1,
    libnvdla_compiler.so, CUDA itself on JetPack 4), and docker compose, a `docker run` without `--runtime nvidia`
    or a build step start containers with runc (blind set 32: jetson-containers#196, compose on an Orin)."""
    return Remediation(
        text="On a Jetson the NVIDIA runtime mounts the driver's libraries (libcuda.so.1 and the L4T ones) into "
        "a container; a container started without it has none. Start it with the NVIDIA runtime: `docker run "
        "--runtime nvidia`, `runtime: nvidia` in each docker compose service, or, for everything including "
        'compose and builds, "default-runtime": "nvidia" in /etc/docker/daemon.json (then restart Docker).',
        commands=(
            _nvidia_default_runtime(
                "NVIDIA's runtime as Docker's default (older toolkits: edit /etc/docker/daemon.json)"
            ),
            _restart_docker("then recreate the containers"),
            _default_runtime_shown("'Default Runtime: nvidia' confirms it"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def kubernetes_runtime(docker_default: bool = False, through_docker: bool = False) -> Remediation:
    """Pods without GPUs where the node's own `docker run --gpus` has them: the device plugin and the pods go
    through the runtime Kubernetes uses (containerd or CRI-O, not the docker CLI's), which must have NVIDIA's
    runtime as its default (NVIDIA Container Toolkit's install guide, "Configuring containerd (for Kubernetes)").
    `docker_default`: the node's /etc/docker/daemon.json already names nvidia its default runtime, so the node
    runs pods through Docker (dockershim, before Kubernetes 1.24), and dockerd reads that file only when it
    starts (k8s-device-plugin#60). `through_docker`: a Kubernetes before 1.24 and no other runtime said: its
    pods go through Docker, whose default runtime must be nvidia (k8s-device-plugin's README of that time)."""
    if through_docker and not docker_default:
        return Remediation(
            text="Before Kubernetes 1.24 a node runs its pods through Docker (dockershim), and the device plugin "
            'sees the GPUs only where Docker\'s default runtime is NVIDIA\'s: "default-runtime": "nvidia" in '
            "/etc/docker/daemon.json on each GPU node, then restart Docker and the device plugin's pod; the node "
            "then advertises nvidia.com/gpu and the Pending pod is scheduled.",
            commands=(
                _nvidia_default_runtime(
                    "on each GPU node (older toolkits: edit /etc/docker/daemon.json by hand)", here=False
                ),
                _restart_docker("on each GPU node", here=False),
                _NODE_ADVERTISES,
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    if docker_default:
        return Remediation(
            text="This node runs its pods through Docker (dockershim, before Kubernetes 1.24), and its "
            '/etc/docker/daemon.json already makes "nvidia" the default runtime; dockerd reads that file only '
            "when it starts, so restart Docker, check that its default runtime is nvidia, then delete the device "
            "plugin's pod so that it starts again under that runtime.",
            commands=(
                _restart_docker("on each GPU node", here=False),
                _default_runtime_shown("'Default Runtime: nvidia'", here=False),
                Command(
                    ("kubectl", "-n", "kube-system", "delete", "pod", "-l", "name=nvidia-device-plugin-ds"),
                    note="the device plugin's pods start again (the label of its DaemonSet manifest)",
                    runs_here=False,
                ),
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    return Remediation(
        text="Kubernetes starts pods through its own container runtime (containerd or CRI-O), not the docker "
        "command on the node, so `docker run --gpus all` working there proves only the driver and the toolkit. "
        "Make NVIDIA's runtime that runtime's default on each GPU node, restart it, then restart the device "
        "plugin's pod: the node then advertises nvidia.com/gpu and pods that request it get the GPU. Before "
        "Kubernetes 1.24 a node could run pods through Docker itself (dockershim): there the default is Docker's, "
        '"default-runtime": "nvidia" in /etc/docker/daemon.json (`nvidia-ctk runtime configure --runtime=docker '
        "--set-as-default`).",
        commands=(
            Command(
                ("sudo", "nvidia-ctk", "runtime", "configure", "--runtime=containerd", "--set-as-default"),
                note="on each GPU node (CRI-O: --runtime=crio)",
                runs_here=False,
            ),
            Command(("sudo", "systemctl", "restart", "containerd"), note="on each GPU node", runs_here=False),
            _NODE_ADVERTISES,
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def k3s_runtime() -> Remediation:
    """K3s (and RKE2) run pods through a containerd of their own, configured from their own template, never the
    system containerd that `nvidia-ctk runtime configure` edits: K3s adds NVIDIA's runtime to it when it finds
    nvidia-container-runtime on the node as it starts, and pods that use it name its RuntimeClass (K3s docs,
    "NVIDIA Container Runtime Support"; blind set 30: k8s-device-plugin#585 on K3s)."""
    return Remediation(
        text="K3s runs pods through its own containerd (/var/lib/rancher/k3s/agent/etc/containerd/), not the system "
        "containerd, so configuring that one changes nothing. With the NVIDIA Container Toolkit installed on the "
        "node, restart K3s there: it finds nvidia-container-runtime and adds an 'nvidia' runtime. Then give the "
        "device plugin's DaemonSet and the GPU pods `runtimeClassName: nvidia` (a RuntimeClass named nvidia, "
        "handler nvidia, must exist), restart the device plugin's pod, and the node advertises nvidia.com/gpu.",
        commands=(
            Command(
                ("sudo", "systemctl", "restart", "k3s"),
                note="on each GPU node (k3s-agent on agents; rke2-server or rke2-agent for RKE2)",
                runs_here=False,
            ),
            Command(
                ("sudo", "grep", "-n", "nvidia", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
                note="K3s's own containerd config: it must list the nvidia runtime",
                runs_here=False,
            ),
            _NODE_ADVERTISES,
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def pod_without_driver_libraries() -> Remediation:
    """NVML's library missing inside a pod (KAI-Scheduler#261 on GKE): the pod's GPU request and runtime bring
    the node driver's libraries, not a driver install on the node."""
    return Remediation(
        text="A pod gets the node driver's libraries (libnvidia-ml.so.1 among them) only from NVIDIA's container "
        "runtime, which runs the pods that request GPUs: give the pod a GPU request (resources.limits "
        "nvidia.com/gpu) and the nvidia runtime (runtimeClassName: nvidia, or nvidia as the node runtime's "
        "default, which the NVIDIA GPU Operator or the device plugin's setup configures). A pod a scheduler "
        "creates (a reservation pod) needs the same in its template.",
        commands=(
            Command(
                ("kubectl", "describe", "pod", "POD"),
                note="POD: the failing pod; its Limits must list nvidia.com/gpu",
                runs_here=False,
            ),
            _NODE_ADVERTISES,
        ),
        target=Target.SYSTEM,
    )


def rocm_container_on_windows_fix() -> Remediation:
    """docker's missing /dev/kfd on a Windows host: Docker Desktop's Linux VM has no AMD GPU device at all."""
    return Remediation(
        text="Docker on Windows runs Linux containers in a virtual machine (Docker Desktop's WSL 2 or Hyper-V "
        "engine) that has no AMD GPU device, so a ROCm container cannot reach the GPU from a Windows host. Run the "
        "container on a Linux machine whose amdgpu driver provides /dev/kfd, or use ROCm inside WSL 2 itself (no "
        "container) for the Radeon GPUs AMD supports there.",
        target=Target.SYSTEM,
    )


def docker_desktop_on_linux_fix(amd: bool) -> Remediation:
    """Docker Desktop for Linux runs its containers in a virtual machine that has no GPU device, NVIDIA's or AMD's
    (docker/roadmap#497, docker/docs#19366): the host's own Docker Engine, reached through the `default` context,
    is the one that can pass the GPU."""
    needs = (
        "/dev/kfd and /dev/dri come from the host's amdgpu driver"
        if amd
        else "the host's engine needs the NVIDIA Container Toolkit (`sudo nvidia-ctk runtime configure "
        "--runtime=docker`, then `sudo systemctl restart docker`)"
    )
    return Remediation(
        text="Docker Desktop for Linux runs containers in its own virtual machine, which has no GPU: switch the "
        "docker CLI to the host's Docker Engine (the `default` context; install Docker Engine if only Docker "
        f"Desktop is there) and start the container again; {needs}.",
        commands=(
            Command(("docker", "context", "use", "default"), note="desktop-linux is Docker Desktop's VM"),
            Command(
                GPU_TEST
                if not amd
                else (
                    "docker",
                    "run",
                    "--rm",
                    "--device=/dev/kfd",
                    "--device=/dev/dri",
                    "rocm/rocm-terminal",
                    "rocminfo",
                ),
                note="the check, through the host's engine",
            ),
        ),
        target=Target.SYSTEM,
    )


def libcuda_link_in_container(cdi: bool) -> Remediation:
    """cuDNN 8 (or another program) opens the bare libcuda.so inside a container whose runtime mounted only the
    driver's libcuda.so.1: the NVIDIA Container Toolkit's CDI spec adds that link from its newer releases on."""
    if cdi:
        return Remediation(
            text="The container gets the host driver's libraries from the CDI spec of the NVIDIA Container Toolkit, "
            "which mounts libcuda.so.1 but, when generated by an older toolkit, not the bare libcuda.so link "
            "that cuDNN 8 and others open. Update nvidia-container-toolkit on the host, generate the spec again and restart "
            "the container; or add the link in the image (`ln -s libcuda.so.1 libcuda.so` in the folder that "
            "holds libcuda.so.1, then `ldconfig`).",
            commands=(
                Command(
                    ("sudo", "nvidia-ctk", "cdi", "generate", "--output=/etc/cdi/nvidia.yaml"),
                    note="on the host, after updating nvidia-container-toolkit",
                    runs_here=False,
                ),
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    return Remediation(
        text="The NVIDIA Container Toolkit mounted the host driver's libcuda.so.1 into the container, not the bare "
        "libcuda.so link that cuDNN 8 and others open: create the link inside the container (or in its image) beside "
        "libcuda.so.1 and refresh the loader's cache; a current toolkit on the host creates it itself.",
        commands=(
            Command(
                ("ldconfig", "-p"),
                note="inside the container: the folder of libcuda.so.1, for `ln -s libcuda.so.1 libcuda.so`",
            ),
        ),
        target=Target.SYSTEM,
    )


def kubernetes_shm() -> Remediation:
    """A pod's shared memory too small: the runtime's 64 MB default, raised by a memory-backed emptyDir."""
    return Remediation(
        text="In Kubernetes a pod's /dev/shm is the container runtime's 64 MB default: mount a memory-backed "
        "emptyDir there in the pod spec (Kubeflow's PyTorchJob takes it in each replica's template):\n"
        "volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory\n      sizeLimit: 16Gi\n"
        "and in the container:\nvolumeMounts:\n  - name: dshm\n    mountPath: /dev/shm",
        commands=(
            Command(
                ("kubectl", "exec", "POD", "--", "df", "-h", "/dev/shm"),  # noqa: S108 - shown, not written
                note="POD: the job's pod; after the change it shows the new size",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def driver_libraries_in_image() -> Remediation:
    """NVML's library/module mismatch inside a container: the image brings NVIDIA driver libraries of its own,
    another version than the host's kernel module; the host's driver is fine and needs no reboot."""
    return Remediation(
        text="The mismatch is inside the container: its image carries NVIDIA driver libraries (libnvidia-ml, "
        "libcuda, nvidia-utils) of another version than the host's kernel module, which a reboot of the host does "
        "not change. Remove them from the image (never install a driver inside a container) and let the NVIDIA "
        "Container Toolkit mount the host's own libraries (`docker run --gpus all`, or the nvidia runtime / GPU "
        "operator on Kubernetes); then rebuild the image and start the container again.",
        commands=(
            Command(
                ("ls", "-l", "/usr/lib/x86_64-linux-gnu/"),
                note="inside the container: libnvidia-ml.so.VERSION other than the host's driver is the image's own",
            ),
            Command(
                ("nvidia-smi",), note="on the host: the driver version the container's libraries must match"
            ),
        ),
        target=Target.SYSTEM,
    )


def user_space_for_the_module(version: str) -> Remediation:
    """The mismatch inside an LXC container (Proxmox, LXD), whose NVIDIA user-space libraries are installed by
    hand: they must be the host kernel module's exact version; the host needs no reboot."""
    exact = version or "VERSION"
    return Remediation(
        text="An LXC container uses the host's kernel module with NVIDIA libraries installed inside it, and the two "
        f"must be the same version to the last digit{f' ({version})' if version else ''}. Install the driver's "
        "user-space of exactly the host module's version in the container, without its kernel module (NVIDIA's "
        ".run installer with --no-kernel-module, the same file the host was installed from); a host reboot "
        "changes nothing. (A vGPU host's package is for the hypervisor: a guest driver belongs in a VM.)",
        commands=(
            Command(
                ("sh", f"NVIDIA-Linux-x86_64-{exact}.run", "--no-kernel-module"),
                note="inside the container"
                + ("" if version else "; VERSION: the host's, from cat /proc/driver/nvidia/version there"),
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


TOOLKIT_CONFIG = "/etc/nvidia-container-runtime/config.toml"


def new_containers_without_devices() -> Remediation:
    """NVML's Unknown Error in a container started just now while the host's nvidia-smi works: the toolkit gives
    new containers the driver's libraries but not the GPUs' device files. Its usual causes: `no-cgroups = true`
    (a rootless setting) under Docker run as root, toolkit 1.14.0 ignoring config.toml, an old toolkit's cgroup
    handling on a cgroup v2 host, SELinux on Fedora and RHEL (NVIDIA/nvidia-container-toolkit#115, #381;
    ublue-os/bluefin#3883). CDI sets the devices up without the hook's cgroup handling."""
    return Remediation(
        text="Every new container fails alike, so the NVIDIA Container Toolkit gives containers the driver's "
        "libraries but not the GPUs' device files: not a daemon-reload, which takes them from containers that "
        f"already ran. Most often `no-cgroups = true` in {TOOLKIT_CONFIG}, a setting for rootless Docker or "
        "Podman only: set it to false where Docker runs as root (toolkit 1.14.0 ignored the file, so an old "
        "`no-cgroups = true` takes effect only after an upgrade from it). "
        "Otherwise pass the GPUs by CDI, which sets the devices up without the hook's cgroup handling (an old "
        "toolkit on a cgroup v2 host): generate the spec once, and again after each driver update. On Fedora, "
        "RHEL and their atomic variants SELinux can block the devices too: `--security-opt label=disable` on a "
        "test run tells whether it does.",
        commands=(
            Command(
                ("grep", "-n", "no-cgroups", TOOLKIT_CONFIG),
                note="true is for rootless containers only; false where Docker runs as root",
            ),
            Command(
                ("sudo", "nvidia-ctk", "cdi", "generate", f"--output={CDI_SPEC}"),
                note="the CDI spec of this host's GPUs and driver",
            ),
            Command(
                ("docker", "run", "--rm", "--device", "nvidia.com/gpu=all", "ubuntu", "nvidia-smi"),
                note="the GPUs by CDI (Podman; Docker with CDI turned on): it must list them",
                runs_here=False,
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )
