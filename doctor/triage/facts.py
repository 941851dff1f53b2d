"""CollectEnvReport → partial Facts. What a report never says is `not_recorded`; what it says is used as the
live gatherers would (the driver's CUDA from the compat table, each GPU's compute capability by name)."""

from __future__ import annotations

import re

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import (
    FACTS_SCHEMA_VERSION,
    DriverFacts,
    DriverVersionReading,
    Facts,
    Gpu,
    OsFacts,
    PythonFacts,
)
from torch_gpu_doctor.facts.torch import CompanionPackage, Distribution, TorchPackages, TorchRuntime
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
_MACHINE = re.compile(r"(x86_64|amd64|aarch64|arm64|ppc64le|s390x)", re.IGNORECASE)


def report_facts(report: CollectEnvReport) -> Facts:
    os_facts = _os(report)
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
        torch_packages=_packages(report),
        torch=_runtime(report),
        pcie=NOT_IN_REPORT,
        thunderbolt=NOT_IN_REPORT,
        boltctl=NOT_IN_REPORT,
        memory_limits=NOT_IN_REPORT,
        storage=NOT_IN_REPORT,
        measurements=NOT_IN_REPORT,
        container=NOT_IN_REPORT,
        wsl=NOT_IN_REPORT,
        iommu=NOT_IN_REPORT,
        nvidia_module=NOT_IN_REPORT,
        secure_boot=NOT_IN_REPORT,
        kernel_log=NOT_IN_REPORT,
        gpu_health=NOT_IN_REPORT,
        rocm=NOT_IN_REPORT,
        virtualization=NOT_IN_REPORT,
    )


def report_system(report: CollectEnvReport) -> str | None:
    """ "Linux", "Windows" or "Darwin", from the platform line, else from the OS line."""
    platform = (report.python_platform or "").lower()
    name = (report.os_name or "").lower()
    if platform.startswith("windows") or "windows" in name:
        return "Windows"
    if platform.startswith(("macos", "darwin")) or "mac os" in name or "macos" in name:
        return "Darwin"
    if platform.startswith("linux") or report.os_name:
        return "Linux"
    return None


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


def _os(report: CollectEnvReport) -> Maybe[OsFacts]:
    system = report_system(report)
    if system is None:
        return NOT_IN_REPORT
    platform = report.python_platform or ""
    wsl = "microsoft" in platform.lower() and system == "Linux"
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
        has_dxg=wsl,  # collect_env listed the GPU through the Windows driver only if /dev/dxg worked
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
        return _no_driver_answer(report) or NOT_IN_REPORT
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
        is_jetson=False,
        cuda_version=cuda,
        cuda_version_source=cuda_source,
        userspace_version=NOT_IN_REPORT,
        userspace_library=NOT_IN_REPORT,
        installed_module_version=NOT_IN_REPORT,
        nvidia_smi="nvidia-smi" if version else None,
    )


def _no_driver_answer(report: CollectEnvReport) -> DriverFacts | None:
    """collect_env ran nvidia-smi and it answered nothing ("No CUDA", "Could not collect"): no NVIDIA driver
    answers on that machine. Not on macOS or a ROCm build, where collect_env does not ask nvidia-smi."""
    amd = report.rocm_build is not None or report.hip_runtime is not None
    if not report.smi_failed or amd or report_system(report) == "Darwin":
        return None
    line = report.lines["gpu_models"]
    gone = Unavailable(
        Reason.NOT_FOUND,
        f"nvidia-smi listed nothing on that machine (collect_env, line {line.line}: `{line.raw.strip()}`)",
    )
    return DriverFacts(
        version=gone,
        version_source=None,
        readings=(),
        kernel_module_flavor=NOT_IN_REPORT,
        is_jetson=False,
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
    for position, line in enumerate(report.gpus or ()):
        model = None if amd else matrix.gpu_by_name(line.name)
        gpus.append(
            Gpu(
                bdf=NOT_IN_REPORT,
                vendor="amd" if amd else "nvidia",
                device_id=NOT_IN_REPORT,
                name=line.name,
                name_source="nvidia-smi -L (collect_env)"
                if line.index is not None
                else "torch (collect_env)",
                compute_capability=model.compute_capability
                if model
                else Unavailable(Reason.NOT_FOUND, f"{line.name} is not in gpu-doctor's GPU table"),
                compute_capability_source="compat table" if model else None,
                memory_total_bytes=NOT_IN_REPORT,
                uuid=NOT_IN_REPORT,
                kernel_driver=None if amd else "nvidia",
                on_pci_bus=False,
                nvml_index=None if amd else (line.index if line.index is not None else position),
                excluded=None,
            )
        )
    return tuple(gpus)


def _local_cuda(version: str) -> str | None:
    """`0.16.0+cu121` → "12.1"; `+cpu` → None."""
    match = re.search(r"\+cu(\d+)(\d)$", version)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _conda_cuda(build: str | None) -> str | None:
    match = re.search(r"cuda(\d+\.\d+)|_cu(\d+)(\d)", build or "")
    if match is None:
        return None
    return match.group(1) or f"{match.group(2)}.{match.group(3)}"


def _packages(report: CollectEnvReport) -> Maybe[TorchPackages]:
    if report.torch_missing:
        return TorchPackages((), None, None, None, None, (), _distributions(report), (), None, False, False)
    if report.torch_version is None:
        return NOT_IN_REPORT
    return TorchPackages(
        torch_paths=(f"(the torch collect_env imported: {report.torch_version})",),
        version=report.torch_version,
        cuda=report.cuda_build,
        hip=report.rocm_build,
        debug=report.debug_build,
        companions=_companions(report),
        distributions=_distributions(report),
        sys_path=(),
        user_site=None,
        user_site_enabled=False,
        externally_managed=False,
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
        tagged = "+" in lib.version or _conda_cuda(lib.build) is not None or "cpu" in (lib.build or "")
        if tagged:
            cuda = _local_cuda(lib.version) or _conda_cuda(lib.build)
        else:
            default = untagged_default(name, lib.version, report)
            cuda = report.cuda_build if default is UNKNOWN_DEFAULT else default
        companions.append(CompanionPackage(name, (), lib.version, cuda))
    return tuple(companions)


UNKNOWN_DEFAULT = "unknown"


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
    if platform is None:
        return UNKNOWN_DEFAULT
    base = version.split("+", maxsplit=1)[0]
    for release in load_torch_releases().releases:
        for torch_version in release.all_versions:
            pair = release.companions.for_version(torch_version)
            if (pair.torchvision if name == "torchvision" else pair.torchaudio) == base:
                variant = release.pypi_default.get(platform)
                if variant is None:
                    return UNKNOWN_DEFAULT
                found = release.variant(variant)
                return found.cuda if found is not None else None
    return UNKNOWN_DEFAULT


def _runtime(report: CollectEnvReport) -> Maybe[TorchRuntime]:
    """What collect_env saw when it imported torch: is_available(), and the warnings pasted with it."""
    if report.torch_version is None or report.cuda_available is None:
        return NOT_IN_REPORT
    return TorchRuntime(
        outcome="ok",
        failed_stage=None,
        message="",
        stderr_tail="\n".join(report.warnings.cuda_init),
        version=report.torch_version,
        cuda=report.cuda_build,
        hip=report.rocm_build,
        arch_list=report.warnings.arch_list or None,
        cuda_available=report.cuda_available,
        cuda_warnings=report.warnings.cuda_init,
        cuda_init_error=None,
        devices=(),
        cudnn_available=None,
        cudnn_version=None,
        nccl_version=None,
        mapped_libraries=(),
    )
