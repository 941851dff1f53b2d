"""CollectEnvReport → partial Facts. What a report never says is `not_recorded`; what it says is used as the
live gatherers would (the driver's CUDA from the compat table, each GPU's compute capability by name)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.builds import UNKNOWN_DEFAULT, Build, companion_default_cuda, tag_build
from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.facts.driver import DriverFacts, DriverVersionReading
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.jetson import JetsonFacts
from torch_gpu_doctor.facts.model import FACTS_SCHEMA_VERSION, Facts
from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.facts.python_env import PythonFacts
from torch_gpu_doctor.facts.torch import CompanionPackage, Distribution, TorchPackages, TorchRuntime
from torch_gpu_doctor.facts.wsl import WslFacts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.model import CollectEnvReport, Library
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

NOT_IN_REPORT = Unavailable(Reason.NOT_RECORDED, "not in the collect_env report")
SOURCE = "collect_env"
PYTHON = "python"  # the interpreter that ran collect_env; its path is not in the report
_DISTROS = {  # first words of collect_env's OS line → os-release ID and ID_LIKE
    "ubuntu": ("ubuntu", ("debian",)),
    "debian": ("debian", ()),
    "red hat": ("rhel", ("fedora",)),
    "centos": ("centos", ("rhel", "fedora")),
    "rocky": ("rocky", ("rhel", "fedora")),
    "almalinux": ("almalinux", ("rhel", "fedora")),
    "fedora": ("fedora", ()),
    "arch": ("arch", ()),
    "manjaro": ("manjaro", ("arch",)),
    "opensuse": ("opensuse", ("suse",)),
    "gentoo": ("gentoo", ()),
    "linux mint": ("linuxmint", ("ubuntu", "debian")),
    "pop!_os": ("pop", ("ubuntu", "debian")),
}
_MACHINE = lazy(r"(x86_64|amd64|aarch64|arm64|ppc64le|s390x)", re.IGNORECASE)
_SYS_PLATFORM = {"linux": "Linux", "win32": "Windows", "cygwin": "Windows", "darwin": "Darwin"}
# A package list's words for torch's build: local version tags, conda build strings (pytorch channel
# "py3.7_cuda10.2.89_cudnn7.6.5_0", "py3.9_cpu_0"; torchvision "py37_cu102"; conda-forge "cuda118py310h…")
_CONDA_CUDA = lazy(r"cuda(\d+\.\d+)|_cu(\d+)(\d)\b|cuda(\d{1,2})(\d)(?=_|py)")
_CONDA_CPU = lazy(r"(?:^|_)cpu(?:_|$)")
# NVIDIA's Jetson builds of torch: "1.12.0a0+2c916ef.nv22.3", "2.0.0a0+ec3941ad.nv23.02"
_JETSON_TORCH = lazy(r"\.nv\d{2}\.\d{1,2}$")


def report_facts(report: CollectEnvReport) -> Facts:
    os_facts = _os(report)
    packages = _packages(report)
    system = os_facts.system if not isinstance(os_facts, Unavailable) else None
    wsl = not isinstance(os_facts, Unavailable) and os_facts.is_wsl
    return Facts(
        schema_version=FACTS_SCHEMA_VERSION,
        host="collect_env report",
        os=os_facts,
        cpu=NOT_IN_REPORT,
        memory=NOT_IN_REPORT,
        python=_python(report, system),
        driver=_driver(report, "windows" if system == "Windows" or wsl else "linux"),
        kernel=NOT_IN_REPORT,
        nvml=NOT_IN_REPORT,
        pci=NOT_IN_REPORT,
        proc_gpus=NOT_IN_REPORT,
        gpus=_gpus(report),
        torch_packages=packages,
        torch=_runtime(report, packages),
        pcie=NOT_IN_REPORT,
        thunderbolt=NOT_IN_REPORT,
        boltctl=NOT_IN_REPORT,
        memory_limits=NOT_IN_REPORT,
        storage=NOT_IN_REPORT,
        measurements=NOT_IN_REPORT,
        container=NOT_IN_REPORT,
        wsl=_wsl(os_facts),
        iommu=NOT_IN_REPORT,
        nvidia_module=NOT_IN_REPORT,
        secure_boot=NOT_IN_REPORT,
        kernel_log=NOT_IN_REPORT,
        gpu_health=NOT_IN_REPORT,
        rocm=NOT_IN_REPORT,
        virtualization=NOT_IN_REPORT,
        jetson=_jetson(report),
    )


def report_system(report: CollectEnvReport) -> str | None:
    """ "Linux", "Windows" or "Darwin", from the platform line, else from the OS line, else from the
    wrappers' `sys.platform`."""
    platform = (report.python_platform or "").lower()
    name = (report.os_name or "").lower()
    if platform.startswith("windows") or "windows" in name:
        return "Windows"
    if platform.startswith(("macos", "darwin")) or "mac os" in name or "macos" in name:
        return "Darwin"
    if platform.startswith("linux") or report.os_name:
        return "Linux"
    sys_platform = report.lines.get("sys_platform")
    return _SYS_PLATFORM.get(sys_platform.value.strip().lower()) if sys_platform else None


def _jetson(report: CollectEnvReport) -> Maybe[JetsonFacts]:
    """A Jetson as a report shows one: the GPU's name ("Orin (nvgpu)") and the JetPack family its CUDA toolkit
    (or NVIDIA's Jetson torch's CUDA) belongs to; the exact L4T release and the board are not in a report."""
    if not report_is_jetson(report):
        return Unavailable(
            Reason.NOT_APPLICABLE, "the report shows no Jetson (no -tegra kernel, no nvgpu GPU)"
        )
    cuda = report.cuda_runtime or (
        report.cuda_build if _JETSON_TORCH.search(report.torch_version or "") else None
    )
    release = next(
        (r for r in load_jetson().releases if cuda and (cuda == r.cuda or cuda.startswith(r.cuda + "."))),
        None,
    )
    names = [gpu.name for gpu in report.gpus or ()]
    return JetsonFacts(
        model=names[0] if names else None,
        compatible=(),
        l4t=release.l4t if release is not None else None,
        board=None,
        nvgpu=True,
    )


def report_is_jetson(report: CollectEnvReport) -> bool:
    """A Jetson (L4T): its kernel ("5.10.120-tegra"), its GPU as nvidia-smi names it on JetPack 6 ("Orin
    (nvgpu)"), or NVIDIA's Jetson torch ("….nv23.02") on aarch64."""
    platform = (report.python_platform or "").lower()
    machine = (report_machine(report, report_system(report)) or "").lower()
    return (
        "-tegra" in platform
        or any("(nvgpu)" in gpu.name.lower() for gpu in report.gpus or ())
        or (machine in ("aarch64", "arm64") and bool(_JETSON_TORCH.search(report.torch_version or "")))
    )


def report_machine(report: CollectEnvReport, system: str | None) -> str | None:
    for text in (report.python_platform, report.os_name):
        found = _MACHINE.search(text or "")
        if found is not None:
            return found.group(1)
    python_line = report.lines.get("python_version")
    if system == "Windows" and python_line is not None and "64 bit (AMD64)" in python_line.value:
        return "AMD64"
    if system == "Windows" and python_line is not None and "64-bit runtime" in python_line.value:
        return "AMD64"  # the only 64-bit Windows that PyTorch publishes CUDA wheels for
    return None


def wsl_of_kernel(kernel: str) -> tuple[bool, bool]:
    """Whether a Linux kernel release (or Python's platform string around it) is WSL's, and whether that WSL
    has the GPU's /dev/dxg: WSL 1's kernel is Windows' own ("4.4.0-19041-Microsoft"), with no GPU."""
    wsl = "microsoft" in kernel.lower()
    return wsl, wsl and _WSL1.search(kernel) is None


def _os(report: CollectEnvReport) -> Maybe[OsFacts]:
    system = report_system(report)
    if system is None:
        return NOT_IN_REPORT
    platform = report.python_platform or ""
    wsl, dxg = wsl_of_kernel(platform) if system == "Linux" else (False, False)
    release = platform.split("-")[1] if system == "Linux" and platform.count("-") >= 2 else None
    name = report.os_name
    distro_id, like = _distro(name) if system == "Linux" else (None, ())
    version = re.search(r"\d+(?:\.\d+)*", name or "")
    return OsFacts(
        system=system,
        kernel_release=release if release else NOT_IN_REPORT,
        kernel_version=NOT_IN_REPORT,
        distro_id=distro_id if distro_id else NOT_IN_REPORT,
        distro_name=re.sub(r"\s*\((x86_64|aarch64|arm64|ppc64le)\)$", "", name) if name else NOT_IN_REPORT,
        distro_version=version.group(0) if version and system == "Linux" else NOT_IN_REPORT,
        distro_like=like,
        is_wsl=wsl,
        has_dxg=dxg,  # collect_env listed the GPU through the Windows driver only if /dev/dxg worked
    )


_WSL1 = lazy(r"\d-Microsoft(?:-|$)")  # WSL 2's kernels say "microsoft-standard", in lower case


def _wsl(os_facts: Maybe[OsFacts]) -> Maybe[WslFacts]:
    """WSL 1, told by its kernel release: the one WSL fact a report settles (WSL 2's libraries it does not show)."""
    if isinstance(os_facts, Unavailable) or not os_facts.is_wsl or os_facts.has_dxg:
        return NOT_IN_REPORT
    return wsl_without_gpu(1, NOT_IN_REPORT)


def wsl_without_gpu(version: int, unsaid: Unavailable) -> WslFacts:
    """A WSL that a paste shows cannot reach the GPU (WSL 1, or WSL 2 on a Windows build without GPU support):
    no /dev/dxg; what it does not show is `unsaid`."""
    return WslFacts(
        version=version,
        distro_name=None,
        has_dxg=False,
        projected=unsaid,
        projected_libcuda=None,
        linux_libraries=(),
        nvidia_smi=None,
        nvidia_smi_target=unsaid,
        driver_packages=unsaid,
        dkms_nvidia=False,
    )


def said_linux(name: str, *, wsl: bool = False) -> OsFacts:
    """A Linux distribution named in the paste's words ("Ubuntu 22.04"), as far as the words say it."""
    distro_id, like = _distro(name)
    version = re.search(r"\d+(?:\.\d+)*", name)
    return OsFacts(
        system="Linux",
        kernel_release=NOT_IN_REPORT,
        kernel_version=NOT_IN_REPORT,
        distro_id=distro_id if distro_id else NOT_IN_REPORT,
        distro_name=name,
        distro_version=version.group(0) if version else NOT_IN_REPORT,
        distro_like=like,
        is_wsl=wsl,
        has_dxg=False,
    )


def _distro(name: str | None) -> tuple[str | None, tuple[str, ...]]:
    lowered = (name or "").lower()
    for prefix, (distro_id, like) in _DISTROS.items():
        if lowered.startswith(prefix):
            return distro_id, like
    first = lowered.split()[0] if lowered.split() else None
    return first, ()


def _python(report: CollectEnvReport, system: str | None) -> Maybe[PythonFacts]:
    if report.python_version is None and system is None:
        return NOT_IN_REPORT
    machine = report_machine(report, system)
    return PythonFacts(
        executable=PYTHON,
        version=report.python_version or NOT_IN_REPORT,
        implementation=NOT_IN_REPORT,
        machine=machine or _unsaid("the machine", report, ("os", "python_platform")),
        system=system or _unsaid("the OS", report, ("os", "python_platform")),
        prefix=NOT_IN_REPORT,
        base_prefix=NOT_IN_REPORT,
        in_virtualenv=NOT_IN_REPORT,
        conda_prefix=NOT_IN_REPORT,
        user_site_enabled=NOT_IN_REPORT,
    )


def _unsaid(what: str, report: CollectEnvReport, keys: tuple[str, ...]) -> Unavailable:
    """A fact the report does not give, naming the report lines that would (and those it has)."""
    labels = {"os": "OS:", "python_platform": "Python platform:"}
    present = [report.lines[k] for k in keys if k in report.lines]
    if not present:
        named = " or ".join(f"`{labels[k]}`" for k in keys)
        return Unavailable(Reason.NOT_RECORDED, f"the collect_env report has no {named} line")
    lines = " or ".join(f"line {p.line} (`{p.raw.strip()}`)" for p in present)
    return Unavailable(Reason.NOT_RECORDED, f"the collect_env report does not name {what}: {lines}")


def _driver(report: CollectEnvReport, system: str) -> Maybe[DriverFacts]:
    version = report.driver_version
    warned = report.warnings.driver_cuda
    if version is None and warned is None:
        return _unanswered_driver(report)
    cuda: Maybe[str] = NOT_IN_REPORT
    cuda_source = None
    if warned is not None:  # what the driver itself told torch: better than a table
        cuda, cuda_source = warned, "torch warning (cudaDriverGetVersion)"
    elif version is not None:
        table = load_matrix().max_cuda_for_driver(version, system)
        cuda = table or Unavailable(Reason.NOT_SUPPORTED, f"driver {version} is older than the compat table")
        cuda_source = "compat table" if table else None
    line = report.lines.get("driver_version")
    readings = (
        (DriverVersionReading("nvidia-smi", f"{SOURCE}: {line.raw.strip()}", version),)
        if line and version
        else ()
    )
    return DriverFacts(
        version=version or NOT_IN_REPORT,
        version_source="nvidia-smi" if version else None,
        readings=readings,
        kernel_module_flavor=NOT_IN_REPORT,
        is_jetson=report_is_jetson(report),
        cuda_version=cuda,
        cuda_version_source=cuda_source,
        userspace_version=NOT_IN_REPORT,
        userspace_library=NOT_IN_REPORT,
        installed_module_version=NOT_IN_REPORT,
        nvidia_smi="nvidia-smi" if version else None,
    )


def _unanswered_driver(report: CollectEnvReport) -> Maybe[DriverFacts]:
    """The driver when the report gives no version. collect_env's "No CUDA" / "Could not collect" GPU lines say
    only that nvidia-smi printed nothing: no NVIDIA driver answers on that machine, unless torch reached one
    anyway (Is CUDA available: True; a Jetson, whose L4T driver has no nvidia-smi). Where torch did not import
    (PyTorch version: N/A) they say the same: collect_env asks nvidia-smi for the GPU list and the driver
    version without torch (get_gpu_info, get_nvidia_driver_version; blind set 26: vllm#3721, WSL with neither).
    Not on macOS or a ROCm build, where collect_env does not ask nvidia-smi."""
    if report_is_jetson(report):
        return _driver_unsaid(
            "a Jetson (L4T): its driver comes with the L4T release, and collect_env cannot read its version",
            jetson=True,
        )
    amd = report.rocm_build is not None or report.hip_runtime is not None
    if not report.smi_failed or amd or report_system(report) == "Darwin":
        return NOT_IN_REPORT
    line = report.lines["gpu_models"]
    said = f"collect_env, line {line.line}: `{line.raw.strip()}`"
    if report.cuda_available:
        return _driver_unsaid(
            f"nvidia-smi listed nothing ({said}), yet torch reached a driver (Is CUDA available: True)"
        )
    gone = Unavailable(Reason.NOT_FOUND, f"nvidia-smi listed nothing on that machine ({said})")
    return _driver_unsaid(gone)


def _driver_unsaid(version: str | Unavailable, jetson: bool = False) -> DriverFacts:
    """A driver whose version the report does not give: `version` says why."""
    return DriverFacts(
        version=version if isinstance(version, Unavailable) else Unavailable(Reason.NOT_RECORDED, version),
        version_source=None,
        readings=(),
        kernel_module_flavor=NOT_IN_REPORT,
        is_jetson=jetson,
        cuda_version=NOT_IN_REPORT,
        cuda_version_source=None,
        userspace_version=NOT_IN_REPORT,
        userspace_library=NOT_IN_REPORT,
        installed_module_version=NOT_IN_REPORT,
        nvidia_smi=None,
    )


def _gpus(report: CollectEnvReport) -> tuple[Gpu, ...]:
    amd = report.rocm_build is not None or report.hip_runtime is not None
    matrix = load_matrix()
    gpus = []
    tool = f"{report.wrapper} collect_env" if report.wrapper else SOURCE
    for position, line in enumerate(report.gpus or ()):
        model = None if amd else matrix.gpu_by_name(line.name)
        capability: Maybe[str] = (
            line.capability
            or (model.compute_capability if model else None)
            or Unavailable(Reason.NOT_FOUND, f"{line.name} is not in gpu-doctor's GPU table")
        )
        gpus.append(
            Gpu(
                bdf=NOT_IN_REPORT,
                vendor="amd" if amd else "nvidia",
                device_id=NOT_IN_REPORT,
                name=line.name,
                name_source=f"torch ({tool})"  # the wrappers ask torch, ROCm's line is torch's
                if report.wrapper or line.index is None
                else f"nvidia-smi -L ({tool})",
                compute_capability=capability,
                compute_capability_source=f"torch ({tool})"
                if line.capability
                else "compat table"
                if model
                else None,
                memory_total_bytes=NOT_IN_REPORT,
                uuid=NOT_IN_REPORT,
                kernel_driver=None if amd else "nvidia",
                on_pci_bus=False,
                nvml_index=None if amd else (line.index if line.index is not None else position),
                excluded=None,
            )
        )
    return tuple(gpus)


def shown_packages(
    where: str,
    version: str | None,
    build: Build,
    debug: bool | None = None,
    companions: tuple[CompanionPackage, ...] = (),
    distributions: tuple[Distribution, ...] = (),
) -> TorchPackages:
    """torch as a paste shows it (`where`: which line or list said so): what only a live interpreter has
    (sys.path, the user site, PEP 668) is left empty."""
    return TorchPackages(
        torch_paths=(where,) if where else (),
        version=version,
        cuda=build[0],
        hip=build[1],
        debug=debug,
        companions=companions,
        distributions=distributions,
        sys_path=(),
        user_site=None,
        user_site_enabled=False,
        externally_managed=False,
    )


def listed_build(version: str, build: str | None) -> Build | None:
    """The build of torch (or torchvision, torchaudio) as a package list shows it: its local version tag
    (`+cu121`, `+rocm6.2`, `+cpu`, `+xpu`), else its conda build string. None: the line does not say (an
    untagged pip version, a `pypi_0` conda line)."""
    tagged = tag_build(version)
    if tagged is not None:
        return tagged
    conda = _CONDA_CUDA.search(build or "")
    if conda is not None:
        if conda.group(1):
            return conda.group(1), None
        digits = (conda.group(2), conda.group(3)) if conda.group(2) else (conda.group(4), conda.group(5))
        return f"{digits[0]}.{digits[1]}", None
    return (None, None) if _CONDA_CPU.search(build or "") else None


def _env_variant(libraries: Sequence[Library]) -> Build | None:
    """A conda environment's choice of variant, apart from torch's own line: `cpuonly`, `pytorch-mutex … cpu`,
    `_pytorch_select … cpu_0` pin the CPU build."""
    for lib in libraries:
        if lib.manager != "conda":
            continue
        if lib.name == "cpuonly" or (
            lib.name in ("pytorch-mutex", "-pytorch-select") and (lib.build or "").startswith("cpu")
        ):
            return None, None
    return None


def listed_torch(libraries: Sequence[Library]) -> tuple[Library, Build | None] | None:
    """torch in a package list, and its build: pip's line (what Python imports) before conda's; an untagged
    version takes its build from conda's line of the same version, else from the environment's variant
    packages. None: no torch in the list."""
    pip = [lib for lib in libraries if lib.manager == "pip" and lib.name == "torch"]
    conda = [lib for lib in libraries if lib.manager == "conda" and lib.name in ("pytorch", "torch")]
    if not pip and not conda:
        return None
    torch = (pip or conda)[0]
    build = listed_build(torch.version, torch.build)
    base = torch.version.split("+", maxsplit=1)[0]
    for same in (lib for lib in conda if lib.version.split("+", maxsplit=1)[0] == base):
        build = build or listed_build(same.version, same.build)
    return torch, build or _env_variant(libraries)


def is_xpu_build(packages: Maybe[TorchPackages]) -> bool:
    """torch's Intel GPU build (`+xpu`): no CUDA, yet not a CPU build the machine's NVIDIA GPU was meant for."""
    return not isinstance(packages, Unavailable) and "+xpu" in (packages.version or "")


def _packages(report: CollectEnvReport) -> Maybe[TorchPackages]:
    if report.torch_missing:
        return shown_packages("", None, (None, None), distributions=_distributions(report))
    if report.torch_version is None:
        return _listed_packages(report)
    tagged = listed_build(report.torch_version, None)
    cuda, hip = report.cuda_build, report.rocm_build
    unsaid = not report.has("cuda_build") and not report.has("rocm_build")
    if tagged is not None and unsaid:
        cuda, hip = tagged  # a wrapper (or a cut report) without the build lines: the local tag says it
    elif (
        unsaid and "+" in report.torch_version
    ):  # a source build's tag (NGC's 2.1.0a0+29c30b1): not a variant
        return Unavailable(
            Reason.NOT_RECORDED,
            f"the paste shows torch {report.torch_version}, a source build, but not how it was built (CUDA used "
            "to build PyTorch)",
        )
    return shown_packages(
        f"(the torch collect_env imported: {report.torch_version})",
        report.torch_version,
        (cuda, hip),
        report.debug_build,
        _companions(report),
        _distributions(report),
    )


def _listed_packages(report: CollectEnvReport) -> Maybe[TorchPackages]:
    """torch from the report's "Versions of relevant libraries" when its own lines are not in the paste."""
    listed = listed_torch(report.libraries or ())
    if listed is None:
        return NOT_IN_REPORT
    lib, build = listed
    if build is None:
        return Unavailable(
            Reason.NOT_RECORDED,
            f"the report lists {lib.name} {lib.version} without a build tag, and not the line that says how it "
            "was built (CUDA used to build PyTorch)",
        )
    return shown_packages(
        f"(the report's package list: {lib.name} {lib.version})",
        lib.version,
        build,
        companions=_companions(report),
        distributions=_distributions(report),
    )


def _distributions(report: CollectEnvReport) -> tuple[Distribution, ...]:
    return tuple(
        Distribution(lib.name, lib.version, None, ())
        for lib in report.libraries or ()
        if lib.manager == "pip"
    )


def _companions(report: CollectEnvReport) -> tuple[CompanionPackage, ...]:
    """torchvision and torchaudio from pip's list (what Python imports), else conda's. Their CUDA comes from the
    local version tag or the conda build. An untagged pip version is the PyPI default build of its release on
    that platform (a plain `pip install torchvision` of its time), which need not be torch's variant; when
    the compat data does not know that release, it is taken to match torch, so only versions are judged."""
    found: dict[str, Library] = {}
    for lib in report.libraries or ():
        if lib.name in ("torchvision", "torchaudio") and (lib.manager == "pip" or lib.name not in found):
            found[lib.name] = lib
    companions = []
    for name, lib in sorted(found.items()):
        build = listed_build(lib.version, lib.build)
        if build is not None:
            cuda = build[0]
        elif "+" in lib.version:  # a local tag that is not a variant (a source build): its CUDA is not said
            cuda = None
        else:
            default = untagged_default(name, lib.version, report)
            cuda = report.cuda_build if default is UNKNOWN_DEFAULT else default
        companions.append(CompanionPackage(name, (), lib.version, cuda))
    return tuple(companions)


def untagged_default(name: str, version: str, report: CollectEnvReport) -> str | None:
    """The CUDA of the PyPI default build of an untagged torchvision/torchaudio version on the report's
    platform: "12.1", None for a CPU default, UNKNOWN_DEFAULT when the release or the platform is unknown."""
    system = report_system(report)
    machine = (report_machine(report, system) or "").lower()
    platform = (
        "windows"
        if system == "Windows"
        else "linux_x86_64"
        if system == "Linux" and machine in ("x86_64", "amd64")
        else "linux_aarch64"
        if system == "Linux" and machine in ("aarch64", "arm64")
        else None
    )
    return companion_default_cuda(name, version, platform)


def _runtime(report: CollectEnvReport, packages: Maybe[TorchPackages]) -> Maybe[TorchRuntime]:
    """What collect_env saw when it imported torch: is_available(), and the warnings pasted with it. A report
    that starts after its torch lines still says whether CUDA was available."""
    if report.cuda_available is None or report.torch_missing:
        return NOT_IN_REPORT
    version, cuda, hip = (
        (report.torch_version, report.cuda_build, report.rocm_build)
        if isinstance(packages, Unavailable)
        else (packages.version, packages.cuda, packages.hip)
    )
    return TorchRuntime(
        outcome="ok",
        failed_stage=None,
        message="",
        stderr_tail="\n".join(report.warnings.cuda_init),
        version=version,
        cuda=cuda,
        hip=hip,
        arch_list=report.warnings.arch_list or report.arch_flags or None,
        cuda_available=report.cuda_available,
        cuda_warnings=report.warnings.cuda_init,
        cuda_init_error=None,
        devices=(),
        cudnn_available=None,
        cudnn_version=None,
        nccl_version=None,
        mapped_libraries=(),
    )
