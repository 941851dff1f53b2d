"""Everything read in a paste → one partial Facts, for the same checks the live doctor runs.

The collect_env report gives the base (triage/facts.py); nvidia-smi, package lists, the kernel log and the known
error messages add what the report lacks or cannot say. Where sources disagree, the more direct one wins: torch's
own warning over nvidia-smi's header over the compat table for the driver's CUDA; a warning's compute capability
over the GPU table. A fact no part of the paste gives stays `not_recorded`, so a missing line never reads as "no
GPU" or "no driver".
"""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.checks.nccl_communication import P2P_TEST_SLOW
from torch_gpu_doctor.checks.support.signatures import Hit
from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.builds import Build
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.driver import DriverFacts, DriverVersionReading
from torch_gpu_doctor.facts.driver_libraries import LibraryFile
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.jetson import JetsonFacts
from torch_gpu_doctor.facts.kernel import KernelFacts, KernelModule
from torch_gpu_doctor.facts.model import FACTS_SCHEMA_VERSION, Facts
from torch_gpu_doctor.facts.nvml import NvmlErrorInfo, NvmlFacts
from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.facts.python_env import PythonFacts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.facts.topology import LEVEL_WORDS, GpuLinks, GpuPair, NvLink, TopologyFacts
from torch_gpu_doctor.facts.torch import (
    CompanionPackage,
    Distribution,
    MappedLibrary,
    TorchRuntime,
)
from torch_gpu_doctor.facts.wsl import WSL_GPU_MIN_BUILD
from torch_gpu_doctor.fixes.container_gpus import COMPOSE_WITHOUT_GPUS
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.host.nvml import ERROR_CODES
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.build_env import REQUIRES_CUDA
from torch_gpu_doctor.triage.facts import (
    NOT_IN_REPORT,
    PYTHON,
    is_xpu_build,
    listed_build,
    listed_torch,
    report_facts,
    said_linux,
    shown_packages,
    wsl_of_kernel,
    wsl_without_gpu,
)
from torch_gpu_doctor.triage.ggml_devices import GGML_DEVICES, ggml_devices
from torch_gpu_doctor.triage.model import Library
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, ProseFacts, line_around
from torch_gpu_doctor.triage.tool_output import PackageListing
from torch_gpu_doctor.unavailable import Reason, Unavailable

NOT_IN_PASTE = Unavailable(Reason.NOT_RECORDED, "not in the paste")
UNNAMED_GPU = Unavailable(Reason.NOT_RECORDED, "the paste does not name the GPU")
TORCH_VERSION_UNSAID = "(version not in the paste)"
WORDS = "the paste's words"  # the source of a fact the person wrote (triage/prose.py), not a tool


def paste_facts(pasted: PastedText) -> Facts:
    facts = report_facts(pasted.collect_env) if pasted.collect_env is not None else _blank()
    facts = _with_smi(facts, pasted)
    facts = _with_packages(facts, pasted.packages, pasted.paste.text[:MAX_CHARS])
    if pasted.kernel_log is not None:
        facts = dataclasses.replace(facts, kernel_log=pasted.kernel_log)
    facts = _with_hits(facts, pasted)
    facts = _with_session(facts, pasted)
    facts = _with_xformers_info(facts, pasted)
    facts = _with_p2p_test(facts, pasted)
    facts = _with_runtime_lists(facts, pasted)
    facts = _with_shown_python(facts, pasted)
    facts = _with_conda(facts, pasted)
    facts = _with_interpreter(facts, pasted)
    facts = _with_shown_environment(facts, pasted)
    facts = _with_ggml_devices(facts, pasted)
    facts = _with_words(facts, pasted)
    facts = _with_windows_build(facts, pasted)
    facts = _with_wsl1_said(facts, pasted)
    facts = _with_linux_driver_in_wsl(facts, pasted)
    facts = _with_listed_distributions(facts, pasted.packages)
    facts = _with_topology(facts, pasted)
    return _with_unnamed_gpu(facts, pasted)


TOPO_P2P = Unavailable(
    Reason.NOT_RECORDED, "`nvidia-smi topo -m` does not show it: `nvidia-smi topo -p2p rw` does"
)
_ANCESTORS = {word: level for level, (word, _) in LEVEL_WORDS.items()}  # "PHB" -> Ancestor.HOSTBRIDGE


def _with_topology(facts: Facts, pasted: PastedText) -> Facts:
    """A pasted `nvidia-smi topo -m`: each pair's PCIe level or NVLinks, as NVML's answers would give them, so
    that gpu.topology judges it as on the machine. Its NVLinks are joined by the matrix's GPU names (no PCI
    address is shown); peer-to-peer is not in the matrix."""
    shown = pasted.topology
    if shown is None or not shown.complete:  # a cut matrix would count a GPU's links short
        return facts
    links: dict[int, list[NvLink]] = {i: [] for i in shown.gpus}
    pairs = []
    for (first, second), cell in sorted(shown.cells.items()):
        count = int(cell[2:]) if cell.startswith("NV") else 0
        links[first] += [NvLink(f"GPU{second}", "gpu")] * count
        links[second] += [NvLink(f"GPU{first}", "gpu")] * count
        level = _ANCESTORS.get(cell, Unavailable(Reason.NOT_RECORDED, "NVLink, not the PCIe path, is shown"))
        pairs.append(GpuPair(first, second, level, TOPO_P2P, TOPO_P2P))
    gpus = tuple(GpuLinks(i, f"GPU{i}", tuple(links[i])) for i in shown.gpus)
    return dataclasses.replace(facts, topology=TopologyFacts(gpus, tuple(pairs)))


def _with_listed_distributions(facts: Facts, listings: tuple[PackageListing, ...]) -> Facts:
    """The pip list's packages beside a torch another part named (an untagged `torch 1.5.1` row says no build,
    so the words or a traceback give torch): an extension's fix installs the version listed (mmcv-full 1.2.3)."""
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.distributions:
        return facts
    listed = tuple(
        Distribution(lib.name, lib.version, None, ())
        for listing in listings
        for lib in listing.packages
        if lib.manager == "pip"
    )
    if not listed:
        return facts
    return dataclasses.replace(facts, torch_packages=dataclasses.replace(packages, distributions=listed))


def _with_words(facts: Facts, pasted: PastedText) -> Facts:
    """The GPU, the driver and the platform the person names in words (triage/prose.py), where no tool output
    in the paste gives them: a named GPU has a compute capability, a driver version its CUDA."""
    prose = pasted.prose
    if isinstance(facts.os, Unavailable) and (prose.wsl is not None or prose.macos is not None):
        system, wsl = ("Linux", True) if prose.wsl is not None else ("Darwin", False)
        facts = dataclasses.replace(facts, os=_pasted_os(system, wsl=wsl))
    driver = facts.driver
    if prose.driver is not None and (isinstance(driver, Unavailable) or not isinstance(driver.version, str)):
        version = prose.driver.value
        if isinstance(driver, Unavailable) or isinstance(driver.cuda_version, Unavailable):
            cuda, source = _table_cuda(version, _system(facts))
            facts = dataclasses.replace(facts, driver=pasted_driver(version, cuda, source, WORDS))
        else:  # torch's own warning said the driver's CUDA: it stays
            reading = DriverVersionReading("nvidia-smi", WORDS, version)
            said_driver = dataclasses.replace(driver, version=version, readings=(reading,))
            facts = dataclasses.replace(facts, driver=said_driver)
    if (
        isinstance(facts.os, Unavailable) and prose.runs_on_windows is not None
    ):  # "OS: Windows-11-10.0.26200-SP0"
        facts = dataclasses.replace(facts, os=_pasted_os("Windows", wsl=False))
    if (
        isinstance(facts.os, Unavailable)
        and prose.linux_kernel is not None
        and prose.runs_on_windows is None
        and prose.macos is None
    ):  # an environment report's "Platform: Linux-3.10.0-1160.102.1.el7.x86_64-x86_64-with-glibc2.17"
        facts = dataclasses.replace(facts, os=_linux_of_kernel(prose.linux_kernel.value, prose))
    if (
        isinstance(facts.os, Unavailable)
        and prose.distro is not None
        and prose.runs_on_windows is None
        and prose.macos is None
    ):  # "I run ollama serve on Ubuntu 22.04.5 LTS": the driver's install commands are that distribution's
        facts = dataclasses.replace(facts, os=said_linux(prose.distro.value, wsl=prose.wsl is not None))
    if prose.torch is not None and isinstance(facts.torch_packages, Unavailable):
        facts = _with_said_torch(facts, prose.torch.value, prose.torch.line)
    facts = _with_said_jetson(facts, prose)
    facts = _with_said_failure(facts, pasted)
    named = any(isinstance(g.name, str) for g in facts.gpus)
    if named or facts.jetson_board is not None or (facts.gpus and facts.gpus[0].vendor != "nvidia"):
        return facts
    if prose.gpu is None and prose.amd_gpu is not None:  # its gfx target comes from its name (amd.gfx_target)
        return dataclasses.replace(facts, gpus=(_said_gpu("amd", f"AMD {prose.amd_gpu.value}", None),))
    if prose.gpu is None and prose.tool_gpu is not None:  # "- GPU type: NVIDIA A100-PCIE-40GB"
        return dataclasses.replace(facts, gpus=(_named_nvidia_gpu(prose.tool_gpu.value),))
    if (
        prose.gpu is None and prose.gpu_cc is not None
    ):  # "GM630m => cuda capability 2.1": the capability decides
        return dataclasses.replace(facts, gpus=(_said_gpu("nvidia", "an NVIDIA GPU", prose.gpu_cc.value),))
    if prose.gpu is None:
        return facts
    gpu = _named_nvidia_gpu(prose.gpu.value)
    if prose.gpu_cc is not None and isinstance(gpu.compute_capability, Unavailable):  # a name the table lacks
        gpu = _said_gpu("nvidia", prose.gpu.value, prose.gpu_cc.value)
    return dataclasses.replace(facts, gpus=(gpu,))


def _with_said_torch(facts: Facts, version: str, line: int) -> Facts:
    """torch's version in words or an app's system-info line, where its tag says the build ("2.9.1+cu130").
    An untagged one says no build: people drop the tag of the wheel they installed from PyTorch's index
    ("PyTorch: 2.7.1" for a cu128 build), so it is not taken as PyPI's default (render.py shows it)."""
    return _with_shown_torch(facts, version, f"(line {line} of the paste: torch {version})")


# a Linux driver's own copy of libcuda or libnvidia-ml, by its version ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.
# 535.104.05"), outside WSL's projected folder, whose copies carry no driver version
_LINUX_DRIVER_LIBRARY = lazy(
    r"(?<![\w/.-])(?P<path>/(?:usr/)?lib(?:64)?/(?:[\w-]+-linux-gnu/)?(?P<name>libcuda|libnvidia-ml)\.so\."
    r"(?P<version>\d{3}\.\d{1,3}(?:\.\d{1,3})?))(?![\w.])"
)


# a library file found in WSL's projected folder ("/usr/lib/wsl/lib/libnvidia-ml.so.1"), not a glob of it
_WSL_LIBRARY = lazy(r"/usr/lib/wsl/lib/lib[\w.-]*?\.so\.\d")


def _with_linux_driver_in_wsl(facts: Facts, pasted: PastedText) -> Facts:
    """A Linux NVIDIA driver's libraries beside WSL's projected ones in the same paste (a loader's or Ollama's
    list of found libraries): the driver installed inside WSL that shadows the Windows one, for
    platform.wsl_linux_driver to judge (blind set 28: ollama#1940, libnvidia-ml.so.535.104.05 beside
    /usr/lib/wsl/lib/libnvidia-ml.so.1)."""
    text = pasted.paste.text[:MAX_CHARS]
    if "/usr/lib/wsl/" not in text or not isinstance(facts.wsl, Unavailable):
        return facts
    os_known = facts.os
    if (
        not isinstance(os_known, Unavailable)
        and not os_known.is_wsl
        and isinstance(os_known.kernel_release, str)
    ):
        return facts  # a kernel release that is not WSL's: a search list naming WSL's folder says nothing
    if not any("glob" not in line_around(text, m) for m in _WSL_LIBRARY.finditer(text)):
        return facts  # WSL's folder only in a library search's glob ("/usr/lib/wsl/lib/libnvidia-ml.so*")
    found = {m["path"]: m for m in _LINUX_DRIVER_LIBRARY.finditer(text)}
    if not found:
        return facts
    libraries = tuple(
        LibraryFile(f"{m['name']}.so.1", path, path, False, m["version"]) for path, m in found.items()
    )
    wsl = dataclasses.replace(wsl_without_gpu(2, NOT_IN_PASTE), has_dxg=True, linux_libraries=libraries)
    os_facts = facts.os
    if isinstance(os_facts, Unavailable):
        os_facts = _pasted_os("Linux", wsl=True)
    elif not os_facts.is_wsl:
        os_facts = dataclasses.replace(os_facts, is_wsl=True)
    return dataclasses.replace(facts, os=os_facts, wsl=wsl)


def _with_wsl1_said(facts: Facts, pasted: PastedText) -> Facts:
    """WSL 1, said in words ("I'm using wsl 1 on windows 10"): it has no GPU support at all, whatever the
    Windows driver (blind set 32: text-generation-webui#458 was told to update the driver). A kernel release
    the paste shows decides instead."""
    said = pasted.prose.wsl1
    os_facts = facts.os
    if said is None or not isinstance(facts.wsl, Unavailable):
        return facts
    if "microsoft-standard" in pasted.paste.text[:MAX_CHARS].lower():  # a WSL 2 kernel's release shown
        return facts
    if not isinstance(os_facts, Unavailable) and isinstance(os_facts.kernel_release, str):
        return facts
    os_facts = _pasted_os("Linux", wsl=True) if isinstance(os_facts, Unavailable) else os_facts
    if not os_facts.is_wsl:
        os_facts = dataclasses.replace(os_facts, is_wsl=True)
    return dataclasses.replace(
        facts, os=dataclasses.replace(os_facts, has_dxg=False), wsl=wsl_without_gpu(1, NOT_IN_PASTE)
    )


def _with_windows_build(facts: Facts, pasted: PastedText) -> Facts:
    """WSL 2 on a Windows build without GPU support (older than Windows 10 21H2): no /dev/dxg, whatever the
    driver. Windows 11 (22000 on) and the Server and Insider builds in between are left as they are."""
    said = pasted.prose.windows_build
    os_facts = facts.os
    if said is None or isinstance(os_facts, Unavailable) or not os_facts.is_wsl:
        return facts
    if int(said.value) >= WSL_GPU_MIN_BUILD:
        return facts
    wsl = wsl_without_gpu(2, NOT_IN_PASTE)
    return dataclasses.replace(facts, os=dataclasses.replace(os_facts, has_dxg=False), wsl=wsl)


# torch installed from PyPI by name ("pip3 install torch", "pip install torch==1.9.0"): not NVIDIA's Jetson build
_PYPI_TORCH = lazy(r"\bpip3?\s+install\s+(?:-\S+\s+)*torch\b(?![\w./-]*\.whl)")


def _with_said_failure(facts: Facts, pasted: PastedText) -> Facts:
    """torch's failure said in words, where no message or report line gives torch's state: CUDA is not available
    ("is_available() returns False"), or, on a Jetson, import killed by an illegal instruction."""
    fails = pasted.prose.torch_fails
    if fails is None or not pasted.said_torch_fails or not isinstance(facts.torch, Unavailable):
        return facts
    if fails.value == "illegal_instruction" and _PYPI_TORCH.search(pasted.paste.text, 0, MAX_CHARS) is None:
        # on a Jetson: the import died as the live probe sees it, by SIGILL (numpy's OpenBLAS, platform.jetson);
        # beside `pip3 install torch` the words name PyPI's aarch64 torch, not NVIDIA's build, as what runs
        crashed = dataclasses.replace(
            _runtime(facts), outcome="crashed", failed_stage="import", message="killed by SIGILL (signal 4)"
        )
        return dataclasses.replace(facts, torch=crashed)
    # no message to keep: the person's sentence is not torch's, and says nothing of why
    return dataclasses.replace(facts, torch=dataclasses.replace(_runtime(facts), cuda_available=False))


def _with_said_jetson(facts: Facts, prose: ProseFacts) -> Facts:
    """A Jetson named in words ("Jetson orin agx", "Jetpack 6.2"): its board fact, with the L4T release its
    JetPack ships, so that its torch comes from NVIDIA's Jetson builds, never PyPI's."""
    if (
        prose.jetson is None
        or prose.gpu
        is not None  # "fine on our Jetson, fails on the new RTX 5090": the desktop GPU is the one
        or facts.jetson_board is not None
        or any(isinstance(g.name, str) for g in facts.gpus)
    ):
        return facts
    from torch_gpu_doctor.compat.jetson import load_jetson  # the Jetson data loads for a Jetson only

    l4t = prose.l4t.value if prose.l4t is not None else None
    if l4t is None and prose.jetpack is not None:
        release = load_jetson().release_of_jetpack(prose.jetpack.value)
        l4t = release.l4t if release is not None else None
    model = f"NVIDIA Jetson {prose.jetson.value}" if prose.jetson.value != "Jetson" else None
    board = JetsonFacts(model=model, compatible=(), l4t=l4t, board=None, nvgpu=True)
    return dataclasses.replace(facts, jetson=board, gpus=())


# Enterprise Linux kernels name their release: "3.10.0-1160.102.1.el7.x86_64" is RHEL (or CentOS) 7
_EL_KERNEL = lazy(r"\.el(?P<major>\d+)(?:_\d+)?(?:\.|$)")


def _linux_of_kernel(kernel: str, prose: ProseFacts) -> OsFacts:
    """Linux from its platform string's kernel release: WSL's own kernel, an Enterprise Linux release, or the
    distribution the words name; the rest is not in the paste."""
    wsl, dxg = wsl_of_kernel(kernel)
    if prose.distro is not None:
        said = said_linux(prose.distro.value, wsl=wsl)
        return dataclasses.replace(said, kernel_release=kernel, has_dxg=dxg)
    enterprise = _EL_KERNEL.search(kernel)
    return OsFacts(
        "Linux",
        kernel,
        NOT_IN_PASTE,
        "rhel" if enterprise else NOT_IN_PASTE,
        f"Enterprise Linux {enterprise['major']}" if enterprise else NOT_IN_PASTE,
        enterprise["major"] if enterprise else NOT_IN_PASTE,
        (),
        wsl,
        dxg,
    )


def _pasted_os(system: str, *, wsl: bool) -> OsFacts:
    """The system a paste shows (a Windows path, WSL, a macOS path): its release and distribution it does not."""
    return OsFacts(system, NOT_IN_PASTE, NOT_IN_PASTE, NOT_IN_PASTE, NOT_IN_PASTE, NOT_IN_PASTE, (), wsl, wsl)


def _pasted_gpu(
    name: str | Unavailable,
    name_source: str | None,
    capability: str | Unavailable,
    capability_source: str | None,
    *,
    vendor: str = "nvidia",
    kernel_driver: str | None = "nvidia",
    index: int | None = 0,
    bdf: str | Unavailable = NOT_IN_PASTE,
    memory_bytes: int | Unavailable = NOT_IN_PASTE,
) -> Gpu:
    """A GPU as a paste shows it: what a live machine would read from PCI, NVML and sysfs is not in it."""
    return Gpu(
        bdf=bdf,
        vendor=vendor,
        device_id=NOT_IN_PASTE,
        name=name,
        name_source=name_source,
        compute_capability=capability,
        compute_capability_source=capability_source,
        memory_total_bytes=memory_bytes,
        uuid=NOT_IN_PASTE,
        kernel_driver=kernel_driver,
        on_pci_bus=False,
        nvml_index=index,
        excluded=None,
    )


def _named_nvidia_gpu(name: str) -> Gpu:
    """An NVIDIA GPU a paste names (words, a session's get_device_name, xformers.info), with the compute
    capability of its row in the GPU table."""
    model = load_matrix().gpu_by_name(name)
    return _said_gpu("nvidia", name, model.compute_capability if model else None)


def _with_shown_torch(facts: Facts, version: str, source: str, untagged: Build | None = None) -> Facts:
    """torch's version as a tool's own line shows it, where no report said it: its build from the version's
    tag, else `untagged` (what the same output says of it); left unknown when neither says."""
    if not isinstance(facts.torch_packages, Unavailable):
        return facts
    build = listed_build(version, None) or untagged
    if build is None:
        return facts
    return dataclasses.replace(facts, torch_packages=shown_packages(source, version, build))


def _with_ggml_devices(facts: Facts, pasted: PastedText) -> Facts:
    """The AMD GPUs llama.cpp's ROCm backend lists as it starts (triage/ggml_devices.py), where no other tool's
    output names a GPU: a program's own list outweighs the words ("RTX 9070" written for an RX 9070)."""
    if any(isinstance(g.name, str) for g in facts.gpus):
        return facts
    devices = ggml_devices(pasted.paste.text)
    if not devices:
        return facts
    gpus = tuple(
        _pasted_gpu(d.name, GGML_DEVICES, NOT_IN_PASTE, None, vendor="amd", kernel_driver=None, index=None)
        for d in devices
    )
    return dataclasses.replace(facts, gpus=gpus)


def _said_gpu(vendor: str, name: str, capability: str | None) -> Gpu:
    """A GPU named in words, with the capability of its row in the GPU table."""
    return _pasted_gpu(
        name,
        WORDS,
        capability or Unavailable(Reason.NOT_FOUND, f"{name} is not in gpu-doctor's GPU table"),
        "compat table" if capability else None,
        vendor=vendor,
        kernel_driver=None if vendor == "amd" else "nvidia",
        index=0 if vendor == "nvidia" else None,
    )


# CUDA_VISIBLE_DEVICES as a command sets it: `CUDA_VISIBLE_DEVICES=2 python main.py`, `export
# CUDA_VISIBLE_DEVICES=0,1`, `os.environ["CUDA_VISIBLE_DEVICES"] = "2"` (a value in quotes or up to a space)
_VISIBLE_SET = lazy(
    r"""(?:^|(?<=[\s$>;(]))(?:export\s+)?CUDA_VISIBLE_DEVICES=(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s;'"`]*))"""
    r"""|os\.environ\[\s*["']CUDA_VISIBLE_DEVICES["']\s*\]\s*=\s*["'](?P<py>[^"']*)["']"""
    r"""|^\s*CUDA_VISIBLE_DEVICES:\s*["']?(?P<yaml>[\w,-]+)["']?\s*$""",  # a compose file's environment map
    re.MULTILINE,
)


def _with_shown_environment(facts: Facts, pasted: PastedText) -> Facts:
    """CUDA_VISIBLE_DEVICES where the paste shows it set for the program (its command line, an export, the
    script's os.environ): the last setting is the one the failing run had. env.cuda_visible_devices then
    judges it against the GPUs the paste lists."""
    text = pasted.paste.text
    if "CUDA_VISIBLE_DEVICES" not in text or "CUDA_VISIBLE_DEVICES" in facts.env:  # most pastes: no scan
        return facts
    value = None
    for found in _VISIBLE_SET.finditer(text):
        value = next(v for v in found.groupdict().values() if v is not None)
    if value is None:
        return facts
    # A word ("all") hides every GPU whatever they are; indices are judged against the GPUs the paste lists
    # (a paste rarely shows UUIDs), and only with a list
    word = re.fullmatch(r"[A-Za-z]\w*", value.split(",")[0].strip()) is not None
    if not word and (
        not re.fullmatch(r"\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?", value)
        or not any(isinstance(g.name, str) and g.nvml_index is not None for g in facts.gpus)
    ):
        return facts
    return dataclasses.replace(facts, env={**facts.env, "CUDA_VISIBLE_DEVICES": value})


def _with_shown_python(facts: Facts, pasted: PastedText) -> Facts:
    """What paths and banners show where no collect_env line says it: a Windows machine (`C:\\...`), and the
    Python version (`/lib/python3.10/`, `Python-3.10.11`, `py3.9_cpu_0`): the wheel chooser needs both."""
    if pasted.windows_line is not None and isinstance(facts.os, Unavailable):
        facts = dataclasses.replace(facts, os=_pasted_os("Windows", wsl=False))
    shown, r = pasted.python_shown, pasted.collect_env
    python = facts.python
    if shown is None or (r is not None and r.has("python_version")):
        return facts
    if not isinstance(python, Unavailable):
        if isinstance(python.version, str):
            return facts
        return dataclasses.replace(facts, python=dataclasses.replace(python, version=shown.version))
    return dataclasses.replace(facts, python=_pasted_python(facts, shown.version))


def _pasted_python(facts: Facts, version: str | Unavailable) -> PythonFacts:
    """An interpreter the paste shows only in part (its version, its conda environment)."""
    return PythonFacts(
        executable=PYTHON,
        version=version,
        implementation=NOT_IN_PASTE,
        machine=NOT_IN_PASTE,
        system=facts.os.system if not isinstance(facts.os, Unavailable) else NOT_IN_PASTE,
        prefix=NOT_IN_PASTE,
        base_prefix=NOT_IN_PASTE,
        in_virtualenv=NOT_IN_PASTE,
        conda_prefix=NOT_IN_PASTE,
        user_site_enabled=NOT_IN_PASTE,
    )


def _with_conda(facts: Facts, pasted: PastedText) -> Facts:
    """A conda environment that paths or a package list show. Its own interpreter is the one to name when the
    path shows it; conda's own torch is changed through conda (the fix reads conda_prefix), a pip wheel (a
    `+cu121` tag, a pip line) or one of unknown origin through that interpreter's pip."""
    conda = pasted.conda
    if conda is None:
        return facts
    python = (
        facts.python if not isinstance(facts.python, Unavailable) else _pasted_python(facts, NOT_IN_PASTE)
    )
    windows = "\\" in conda.prefix or on_windows(facts)
    executable = (
        python.executable
        if not conda.prefix
        else f"{conda.prefix}\\python.exe"
        if windows
        else f"{conda.prefix}/bin/python"
    )
    packages = facts.torch_packages
    tagged = not isinstance(packages, Unavailable) and "+" in (packages.version or "")
    owned = conda.owns_torch is True and not tagged
    return dataclasses.replace(
        facts,
        python=dataclasses.replace(
            python, conda_prefix=conda.prefix if owned else python.conda_prefix, executable=executable
        ),
    )


def _with_interpreter(facts: Facts, pasted: PastedText) -> Facts:
    """The interpreter a site-packages path shows (a portable ComfyUI's python_embeded, a project's venv) is the
    one whose pip the fix names, where no conda environment already named it: a bare `python` on PATH is often
    another Python, and the reinstall would land there."""
    shown = pasted.interpreter
    if shown is None or (pasted.conda is not None and pasted.conda.prefix):
        return facts
    python = (
        facts.python if not isinstance(facts.python, Unavailable) else _pasted_python(facts, NOT_IN_PASTE)
    )
    if python.executable != PYTHON:  # a report or an earlier reading named it already
        return facts
    return dataclasses.replace(facts, python=dataclasses.replace(python, executable=shown.path))


def _with_session(facts: Facts, pasted: PastedText) -> Facts:
    """torch's own answers in a pasted Python session: its version and CUDA, is_available(), the GPU's name and
    the arch list, where nothing else in the paste says them."""
    session = pasted.session
    if session is None:
        return facts
    if session.version is not None:
        # an untagged version: torch.version.cuda's answer says the build
        untagged = (session.cuda or None, None) if session.cuda is not None else None
        facts = _with_shown_torch(facts, session.version, "(the paste: torch.__version__)", untagged)
    if session.built is False:  # a check script's "PyTorch built with CUDA: False"
        facts = _the_cpu_build(facts, "(the paste: PyTorch built with CUDA: False)")
    available = session.available
    started = pasted.no_gpus_line
    if started is not None and any(
        w == "available" and v is False and n > started for n, w, v in session.every
    ):
        # True on the host, then False inside a container started with no GPUs: the container's is the question
        available = False
    if available is not None or session.arch_list:
        runtime = facts.torch if not isinstance(facts.torch, Unavailable) else _runtime(facts)
        if available is not None and runtime.cuda_available is None:
            runtime = dataclasses.replace(runtime, cuda_available=available)
        if session.arch_list and not runtime.arch_list:
            runtime = dataclasses.replace(runtime, arch_list=session.arch_list)
        facts = dataclasses.replace(facts, torch=runtime)
    if session.device_name is not None and not any(isinstance(g.name, str) for g in facts.gpus):
        facts = dataclasses.replace(facts, gpus=(_named_nvidia_gpu(session.device_name),))
    return facts


def _with_p2p_test(facts: Facts, pasted: PastedText) -> Facts:
    """A p2pBandwidthLatencyTest: its GPUs where nothing else named them, and, where most pairs copy slower with
    peer-to-peer than through the host, the P2P path's failure (nccl.communication's P2P fix)."""
    test = pasted.p2p_test
    if test is None:
        return facts
    if test.names and not any(isinstance(g.name, str) for g in facts.gpus):
        facts = dataclasses.replace(
            facts, gpus=tuple(_named_nvidia_gpu(n) for _, n in sorted(test.names.items()))
        )
    slow = test.slow_pairs()
    if len(slow) * 2 < len(test.pairs):
        return facts
    off = sorted(test.pairs[p][0] for p in slow)[len(slow) // 2]
    on = sorted(test.pairs[p][1] for p in slow)[len(slow) // 2]
    error = ReportedError(
        "nccl_p2p",
        P2P_TEST_SLOW,
        "p2pBandwidthLatencyTest measured the copies between the GPUs: with peer-to-peer on they are slower than "
        "through the host's memory, so the P2P path exists but its traffic is redirected or throttled on the way "
        "(PCIe ACS on a bridge between the GPUs, an IOMMU not in passthrough) - NCCL over P2P then crawls or hangs.",
        f"{len(slow)} of {len(test.pairs)} pairs, the median: {on:g} GB/s with P2P, {off:g} GB/s without",
        f"line {test.lines[0]} of the paste",
        {"with_p2p": f"{on:g}", "without_p2p": f"{off:g}"},
    )
    reported = facts.reported_errors
    before = () if isinstance(reported, Unavailable) else reported
    return dataclasses.replace(facts, reported_errors=(*before, error))


XFORMERS_WITHOUT_KERNELS = "companion_xformers_no_cuda_operator"  # the catalogue's entry: its means and fix


def _with_xformers_info(facts: Facts, pasted: PastedText) -> Facts:
    """`python -m xformers.info`: the torch it runs with, whether CUDA works, the GPU; and when no attention
    operator loaded although CUDA works, or it names another torch than the one it runs with, the xFormers
    wheel is not built for this torch (a ROCm build's cutlass rows are unavailable by design, its ck rows are)."""
    info = pasted.xformers
    if info is None:
        return facts
    if info.torch_version is not None:
        facts = _with_shown_torch(facts, info.torch_version, "(python -m xformers.info)")
    if info.cuda is not None and isinstance(facts.torch, Unavailable):
        facts = dataclasses.replace(
            facts, torch=dataclasses.replace(_runtime(facts), cuda_available=info.cuda)
        )
    if info.gpu_name is not None and not facts.gpus:
        facts = dataclasses.replace(facts, gpus=(_named_nvidia_gpu(info.gpu_name),))
    other_torch = (
        info.built_for is not None
        and info.torch_version is not None
        and info.built_for.split("+")[0] != info.torch_version.split("+")[0]
    )
    if not (other_torch or (info.cuda is True and not info.attention_works)):
        return facts
    said = (
        f"xFormers {info.version} was built for torch {info.built_for}, and runs with torch {info.torch_version}."
        if other_torch
        else f"xFormers {info.version}: no memory_efficient_attention operator is available, although torch's "
        "CUDA is."
    )
    error = ReportedError(
        "companion_mismatch",
        XFORMERS_WITHOUT_KERNELS,
        "python -m xformers.info shows xFormers' compiled kernels did not load: the wheel was built for another "
        "torch (or CUDA) than the one installed.",
        said,
        f"line {info.lines[0]} of the paste",
    )
    known = facts.reported_errors if not isinstance(facts.reported_errors, Unavailable) else ()
    return dataclasses.replace(facts, reported_errors=(*known, error))


def _with_runtime_lists(facts: Facts, pasted: PastedText) -> Facts:
    """torch >= 2.10's list of the CCs it was built for, and the CUDA libraries `ldd` resolved: what the live
    probe reads from the torch process (its arch list, its mapped libraries)."""
    if not pasted.built_for and not pasted.linked:
        return facts
    runtime = facts.torch if not isinstance(facts.torch, Unavailable) else _runtime(facts)
    if pasted.built_for and not runtime.arch_list:
        runtime = dataclasses.replace(runtime, arch_list=pasted.built_for)
    if pasted.linked and not runtime.mapped_libraries:
        mapped = tuple(MappedLibrary(lib.name, lib.path, lib.path) for lib in pasted.linked)
        runtime = dataclasses.replace(runtime, mapped_libraries=mapped)
    return dataclasses.replace(facts, torch=runtime)


# Error classes that are about an NVIDIA GPU even when the paste names none
_NVIDIA_CLASSES = frozenset(
    {
        "arch", "driver_too_old", "forward_compat", "no_driver", "nvml", "driver_library_mismatch",
        "unknown_error", "cpu_build", "missing_library", "undefined_symbol", "cudnn", "cublas", "no_visible_gpu",
        "container", "mig", "oom", "xid", "gpu_lost", "ecc", "illegal_address", "secure_boot", "wsl",
        "driver_unsupported_gpu",
    }
)  # fmt: skip


def _with_unnamed_gpu(facts: Facts, pasted: PastedText) -> Facts:
    """A paste about CUDA on a machine whose GPU it does not name still has an NVIDIA GPU: an unnamed one, so
    the checks judge torch against a GPU rather than against none (a CPU build is then a problem, not fine).
    Not on macOS, not for a ROCm or an XPU build (Intel's GPU: it says which GPU the machine has), not when
    nvidia-smi or collect_env said there is no GPU, and not for a CPU build whose collect_env found no nvidia-smi
    answer ("No CUDA"): a CUDA build with that answer is about a GPU torch cannot see, a CPU build with it may be
    on a machine without one."""
    if facts.gpus or facts.jetson_board is not None:  # a Jetson's GPU is its SoC's
        return facts
    r = pasted.collect_env
    os_facts = facts.os
    packages = facts.torch_packages
    if (not isinstance(os_facts, Unavailable) and os_facts.system == "Darwin") or (
        r is not None and r.rocm_build
    ):
        return facts
    if is_xpu_build(packages) or (not isinstance(packages, Unavailable) and packages.hip is not None):
        return facts
    cuda_build = not isinstance(packages, Unavailable) and packages.cuda is not None
    # Hugging Face's template asks "Using GPU in script?": a yes means the GPU is the point
    asked = (
        r is not None
        and r.lines.get("gpu_in_script") is not None
        and r.lines["gpu_in_script"].value.lower().startswith(("yes", "true", "y "))
    )
    # a hit that says only the platform (the WSL2 kernel's release in a report) is no sign of a GPU
    # torch.cuda.is_available() answered False in a session or in words: the person expects an NVIDIA GPU there
    # (a report's "(False)" beside a CPU torch is not a question: Hugging Face's env lists it for every setup)
    said_false = (pasted.session is not None and pasted.session.available is False) or (
        pasted.said_torch_fails
        and pasted.prose.torch_fails is not None
        and pasted.prose.torch_fails.value in ("cuda_unavailable", "cpu_build")
    )
    about_nvidia = (
        cuda_build
        or asked
        or said_false
        or (pasted.prose.cuda is not None and pasted.prose.asks_build is not None)  # a build for their CUDA
        or any(
            h.signature.cls in _NVIDIA_CLASSES and not set(h.signature.implies) <= {"wsl"}
            for h in pasted.hits
        )
    )
    if not about_nvidia or (r is not None and r.has("gpu_models") and not r.gpus_unlisted):
        return facts
    if r is not None and r.smi_failed and not cuda_build:
        return facts  # a CPU build where nvidia-smi answered nothing: nothing shows an NVIDIA GPU is there
    nouveau = any(h.implies.get("nouveau_loaded") is True for h in pasted.hits)
    gpu = _pasted_gpu(
        UNNAMED_GPU,
        None,
        Unavailable(Reason.NOT_RECORDED, "the paste does not name the GPU"),
        None,
        kernel_driver="nouveau" if nouveau else "nvidia",
    )
    return dataclasses.replace(facts, gpus=(gpu,))


def _blank() -> Facts:
    return Facts(
        schema_version=FACTS_SCHEMA_VERSION,
        host="pasted text",
        os=NOT_IN_PASTE,
        cpu=NOT_IN_PASTE,
        memory=NOT_IN_PASTE,
        python=NOT_IN_PASTE,
        driver=NOT_IN_PASTE,
        kernel=NOT_IN_PASTE,
        nvml=NOT_IN_PASTE,
        pci=NOT_IN_PASTE,
        proc_gpus=NOT_IN_PASTE,
        gpus=(),
        torch_packages=NOT_IN_PASTE,
        torch=NOT_IN_PASTE,
        pcie=NOT_IN_PASTE,
        thunderbolt=NOT_IN_PASTE,
        boltctl=NOT_IN_PASTE,
        memory_limits=NOT_IN_PASTE,
        storage=NOT_IN_PASTE,
        measurements=NOT_IN_PASTE,
        container=NOT_IN_PASTE,
        wsl=NOT_IN_PASTE,
        iommu=NOT_IN_PASTE,
        nvidia_module=NOT_IN_PASTE,
        secure_boot=NOT_IN_PASTE,
        kernel_log=NOT_IN_PASTE,
        gpu_health=NOT_IN_PASTE,
        rocm=NOT_IN_PASTE,
        virtualization=NOT_IN_PASTE,
        jetson=NOT_IN_PASTE,
    )


def pasted_driver(
    version: str | Unavailable, cuda: str | Unavailable, source: str | None, origin: str
) -> DriverFacts:
    readings = (DriverVersionReading("nvidia-smi", origin, version),) if isinstance(version, str) else ()
    return DriverFacts(
        version=version,
        version_source="nvidia-smi" if isinstance(version, str) else None,
        readings=readings,
        kernel_module_flavor=NOT_IN_PASTE,
        is_jetson=False,
        cuda_version=cuda,
        cuda_version_source=source,
        userspace_version=NOT_IN_PASTE,
        userspace_library=NOT_IN_PASTE,
        installed_module_version=NOT_IN_PASTE,
        nvidia_smi="nvidia-smi" if isinstance(version, str) else None,
    )


def _system(facts: Facts) -> str:
    os_facts = facts.os
    windows = not isinstance(os_facts, Unavailable) and (os_facts.system == "Windows" or os_facts.is_wsl)
    return "windows" if windows else "linux"


def _table_cuda(version: str, system: str) -> tuple[str | Unavailable, str | None]:
    table = load_matrix().max_cuda_for_driver(version, system)
    if table is not None:
        return table, "compat table"
    return Unavailable(Reason.NOT_SUPPORTED, f"driver {version} is older than the compat table"), None


def _with_smi(facts: Facts, pasted: PastedText) -> Facts:
    smi = pasted.smi
    if smi is None:
        return facts
    driver = facts.driver
    if smi.driver_version is not None and (
        isinstance(driver, Unavailable) or not isinstance(driver.version, str)
    ):
        cuda, source = (
            (smi.cuda_version, "nvidia-smi (CUDA Version)")
            if smi.cuda_version
            else _table_cuda(smi.driver_version, _system(facts))
        )
        facts = dataclasses.replace(
            facts, driver=pasted_driver(smi.driver_version, cuda, source, "nvidia-smi (pasted)")
        )
    elif (
        smi.cuda_version
        and not isinstance(driver, Unavailable)
        and driver.cuda_version_source in (None, "compat table")
    ):
        facts = dataclasses.replace(
            facts,
            driver=dataclasses.replace(
                driver, cuda_version=smi.cuda_version, cuda_version_source="nvidia-smi (CUDA Version)"
            ),
        )
    if not facts.gpus and smi.gpus:
        matrix = load_matrix()
        gpus = []
        for position, g in enumerate(smi.gpus):
            model = matrix.gpu_by_name(g.name)
            bdf = normalize_bdf(g.bus_id) if g.bus_id else None
            gpus.append(
                _pasted_gpu(
                    g.name,
                    "nvidia-smi (pasted)",
                    model.compute_capability
                    if model
                    else Unavailable(Reason.NOT_FOUND, f"{g.name} is not in gpu-doctor's GPU table"),
                    "compat table" if model else None,
                    index=g.index if g.index is not None else position,
                    bdf=bdf or NOT_IN_PASTE,
                    memory_bytes=g.memory_total_mib << 20 if g.memory_total_mib else NOT_IN_PASTE,
                )
            )
        facts = dataclasses.replace(facts, gpus=tuple(gpus))
    return facts


def _with_packages(facts: Facts, listings: tuple[PackageListing, ...], text: str) -> Facts:
    """torch's build from a pip or conda list, when the report did not give it; the nvidia-* wheels always."""
    libraries = [lib for listing in listings for lib in listing.packages]
    if not libraries:
        return facts
    packages = facts.torch_packages
    torch = listed_torch(libraries)
    if torch is not None and torch[1] is None and torch[0].manager == "pip":
        torch = torch[0], _pypi_linux_build(torch[0].version, libraries, text)
    distributions = tuple(
        Distribution(lib.name, lib.version, None, ()) for lib in libraries if lib.manager == "pip"
    )
    if isinstance(packages, Unavailable) and torch is not None:
        lib, build = torch
        companions = tuple(
            CompanionPackage(c.name, (), c.version, (listed_build(c.version, c.build) or (None, None))[0])
            for c in libraries
            if c.name in ("torchvision", "torchaudio")
        )
        if build is None:  # an untagged pip wheel: the PyPI default of its release (Linux: CUDA)
            return dataclasses.replace(facts, torch_packages=NOT_IN_PASTE)
        listed = shown_packages(
            f"(the {lib.manager} list: {lib.name} {lib.version})",
            lib.version,
            build,
            companions=companions,
            distributions=distributions,
        )
        return dataclasses.replace(facts, torch_packages=listed)
    if not isinstance(packages, Unavailable) and not packages.distributions and distributions:
        return dataclasses.replace(
            facts, torch_packages=dataclasses.replace(packages, distributions=distributions)
        )
    return facts


def _pypi_linux_build(version: str, libraries: list[Library], text: str) -> Build | None:
    """An untagged torch from pip is PyPI's own build of its release for the platform; beside NVIDIA's CUDA
    wheels (in the same list, or in `pip show torch`'s Requires) that platform is Linux, whose PyPI build is a
    CUDA one (torch 2.2.1 is cu121: DeepSpeed#5312's pip show beside nvcc 11.8). None where nothing says so,
    or where the wheels' CUDA is not that build's (another index's untagged wheel)."""
    runtime = next((lib for lib in libraries if re.fullmatch(r"nvidia-cuda-runtime-cu1\d", lib.name)), None)
    required = REQUIRES_CUDA.search(text)
    major = runtime.name[-2:] if runtime is not None else required["major"] if required is not None else None
    if major is None:
        return None
    cuda = load_torch_releases().pypi_cuda(version)
    return (cuda, None) if cuda is not None and cuda.split(".")[0] == major else None


def _cc_of(implies: dict[str, str | bool]) -> str | None:
    cc = implies.get("gpu_cc")
    if isinstance(cc, str) and re.fullmatch(r"\d{1,2}\.\d", cc):
        return cc
    sm = implies.get("gpu_sm")
    digits = "".join(c for c in sm if c.isdecimal()) if isinstance(sm, str) else ""
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else None


# torch's own import on the stack: its frames, the line `import torch` that raised, or words that say so
# ("when I try to import torch, I get"); not "import torch works, but ..."
_IMPORTING_TORCH = lazy(
    r"torch[/\\]__init__\.py|from torch\._C import|^\s*(?:>>>\s*)?import torch\s*$|"
    r"\b(?:try(?:ing)? to|when(?: I)?|while|on)\s+import(?:ing)? torch\b",
    re.IGNORECASE | re.MULTILINE,
)


def _with_hits(facts: Facts, pasted: PastedText) -> Facts:
    """What the known error messages imply, added where the paste's other parts said nothing better."""
    errors: list[ReportedError] = []
    lines = pasted.paste.text.split("\n")
    for hit in pasted.hits:
        implies, where = hit.implies, f"line {hit.line} of the paste"
        kind = implies.get("error")
        if kind == "missing_library" and _IMPORTING_TORCH.search(_paragraph_before(lines, hit.line, 12)):
            # a traceback through torch/__init__.py, or "when I import torch" just above: torch's own import
            implies = {**implies, "torch_import_failed": True}
        if implies.get("container_without_gpus") is True:
            kind = "container_runtime"
        elif implies.get("visible_devices_problem") is True and kind is None:
            kind = "visible_devices"
        if isinstance(kind, str):
            context = _paragraph_after(lines, hit.line)
            errors.append(
                ReportedError(
                    kind, hit.signature.id, hit.signature.means, hit.text, where, hit.values, context
                )
            )
        facts = _os_hint(facts, implies)
        facts = _driver_hint(facts, implies, _quoted(hit), where)
        facts = _gpu_hint(facts, implies)
        facts = _torch_hint(facts, implies, hit.text, _paragraph_before(lines, hit.line))
        if implies.get("nouveau_loaded") is True and isinstance(facts.kernel, Unavailable):
            modules = (KernelModule("nouveau", True),)
            facts = dataclasses.replace(facts, kernel=KernelFacts(modules, NOT_IN_PASTE, (), NOT_IN_PASTE))
    errors.extend(_compose_without_gpus(pasted, lines))
    if errors:
        facts = dataclasses.replace(facts, reported_errors=tuple(errors))
    return facts


# the failures a container started without the GPUs gives: no driver, a driver "too old" (no libcuda at all), no GPU
_NO_DRIVER_INSIDE = frozenset({"no_driver", "driver_too_old", "no_visible_gpu"})


def _compose_without_gpus(pasted: PastedText, lines: list[str]) -> list[ReportedError]:
    """A Docker Compose service that requests no GPU, beside the failure that gives inside: the container got no
    NVIDIA driver (blind set 31: the CUDA runtime's "driver version is insufficient" in a compose service with no
    `deploy` devices). Not where the paste shows the driver's own CUDA or version (torch's "found version 11040",
    nvidia-smi): that driver answered, so the libraries were there."""
    line = pasted.compose_no_gpus_line
    if line is None or pasted.smi is not None:
        return []
    failing = [h for h in pasted.hits if h.signature.cls in _NO_DRIVER_INSIDE]
    if not failing or any("driver_cuda" in h.implies or "driver_version" in h.implies for h in pasted.hits):
        return []
    means = (
        "The Docker Compose service shown requests no GPU (no `deploy.resources.reservations.devices` with the "
        "nvidia driver, no `runtime: nvidia`, no `gpus:`), so its container starts with no NVIDIA driver "
        f"libraries in it, and CUDA fails there ({failing[0].signature.means})"
    )
    text = lines[line - 1].strip()
    return [
        ReportedError(
            "container_no_gpus", COMPOSE_WITHOUT_GPUS, means, text, f"line {line} of the paste", {}, ""
        )
    ]


def _paragraph_before(lines: list[str], number: int, most: int = 40) -> str:
    """Line `number` and the lines before it up to a blank one: a traceback's frames, as the live probe keeps
    the end of stderr (the paths in them say where torch and its libraries are)."""
    before: list[str] = []
    for line in reversed(lines[max(0, number - most) : number]):
        if not line.strip():
            break
        before.insert(0, line.rstrip())
    return "\n".join(before)


def _paragraph_after(lines: list[str], number: int, most: int = 6) -> str:
    """The lines after line `number` up to a blank one (a long message wrapped by the terminal or the paste)."""
    after = []
    for line in lines[number : number + most]:
        if not line.strip():
            break
        after.append(line.strip())
    return " ".join(after)


def _os_hint(facts: Facts, implies: dict[str, str | bool]) -> Facts:
    """A message only one platform prints: WSL's, or torch's MPS backend's (Apple's GPU, so a Mac)."""
    if not isinstance(facts.os, Unavailable):
        return facts
    if implies.get("wsl") is True:
        return dataclasses.replace(facts, os=_pasted_os("Linux", wsl=True))
    if implies.get("macos") is True:
        return dataclasses.replace(facts, os=_pasted_os("Darwin", wsl=False))
    return facts


QUOTED_MAX = (
    200  # a paragraph pasted as one line (blind set 25) is quoted by the message the signature matched
)


def _quoted(hit: Hit) -> str:
    """The line a message was found on, or, for a long one, the message alone."""
    if len(hit.text) <= QUOTED_MAX:
        return hit.text
    found = hit.signature.pattern.search(hit.text)
    return found.group(0) if found is not None else hit.text[:QUOTED_MAX] + "…"


def _the_cpu_build(facts: Facts, source: str) -> Facts:
    """torch as the CPU build, where the paste says so (its version and distributions kept where known)."""
    packages = facts.torch_packages
    if not isinstance(packages, Unavailable) and packages.cuda is None:
        return facts  # already no CUDA build
    cpu = shown_packages(
        source,
        packages.version
        if not isinstance(packages, Unavailable) and packages.version
        else TORCH_VERSION_UNSAID,
        (None, None),
        distributions=packages.distributions if not isinstance(packages, Unavailable) else (),
    )
    return dataclasses.replace(facts, torch_packages=cpu)


def _driver_hint(facts: Facts, implies: dict[str, str | bool], text: str, where: str) -> Facts:
    driver = facts.driver
    cuda = implies.get("driver_cuda")
    if isinstance(cuda, str):
        number = cuda if "." in cuda else f"{int(cuda) // 1000}.{(int(cuda) % 1000) // 10}"
        source = "torch warning (cudaDriverGetVersion)"
        if isinstance(driver, Unavailable):
            facts = dataclasses.replace(facts, driver=pasted_driver(NOT_IN_PASTE, number, source, where))
        elif driver.cuda_version_source != source:
            facts = dataclasses.replace(
                facts, driver=dataclasses.replace(driver, cuda_version=number, cuda_version_source=source)
            )
    if implies.get("driver_loaded") is False and isinstance(facts.driver, Unavailable):
        gone = Unavailable(Reason.NOT_FOUND, f'{where}: "{text}"')
        facts = dataclasses.replace(facts, driver=pasted_driver(gone, NOT_IN_PASTE, None, where))
    nvml_error = implies.get("nvml_error") or (
        "LibRmVersionMismatch" if implies.get("error") == "api_mismatch" else None
    )
    if isinstance(nvml_error, str) and isinstance(facts.nvml, Unavailable):
        code = ERROR_CODES.get(nvml_error, 999)
        why = Unavailable(Reason.FAILED, f"NVML: {text}")
        nvml = NvmlFacts(NvmlErrorInfo(nvml_error, code, text), why, why, why, why, ())
        facts = dataclasses.replace(facts, nvml=nvml)
    library = implies.get("driver_version")
    if isinstance(library, str) and not isinstance(facts.driver, Unavailable):
        facts = dataclasses.replace(
            facts, driver=dataclasses.replace(facts.driver, userspace_version=library)
        )
    return facts


# where an NVIDIA GPU's name starts, as torch.cuda.get_device_name() gives it
_BRAND = lazy(r"\b(?:NVIDIA|GeForce|Tesla|Quadro|TITAN|Graphics Device)\b")


def _gpu_hint(facts: Facts, implies: dict[str, str | bool]) -> Facts:
    name, cc = implies.get("gpu_name"), _cc_of(implies)
    if isinstance(
        name, str
    ):  # a warning quoted in the person's words: '"NVIDIA GeForce RTX 5060 Ti with ...'
        name = name.strip().strip("\"'`“”‘’").strip() or None
    if isinstance(name, str) and (brand := _BRAND.search(name)) is not None and brand.start() > 0:
        name = name[
            brand.start() :
        ]  # "Heya, get this error NVIDIA GeForce RTX 5080": the words before it cut
    if not isinstance(name, str) and cc is None:
        return facts
    listed = list(facts.gpus)
    for position, gpu in enumerate(listed):
        same = isinstance(name, str) and isinstance(gpu.name, str) and name.strip() in gpu.name
        if same or (not isinstance(name, str) and len(listed) == 1):
            if cc is not None and (
                not isinstance(gpu.compute_capability, str)
                or gpu.compute_capability_source != "torch warning"
            ):
                listed[position] = dataclasses.replace(
                    gpu, compute_capability=cc, compute_capability_source="torch warning"
                )
            return dataclasses.replace(facts, gpus=tuple(listed))
    model = load_matrix().gpu_by_name(name) if isinstance(name, str) else None
    capability = cc or (model.compute_capability if model else None)
    gpu = _pasted_gpu(
        name.strip() if isinstance(name, str) else UNNAMED_GPU,
        "torch warning" if isinstance(name, str) else None,
        capability or Unavailable(Reason.NOT_FOUND, "not in the paste nor the GPU table"),
        "torch warning" if cc else "compat table" if capability else None,
        index=len(listed),
    )
    return dataclasses.replace(facts, gpus=(*listed, gpu))


def _runtime(facts: Facts) -> TorchRuntime:
    packages = facts.torch_packages
    version, cuda, hip = (
        (None, None, None)
        if isinstance(packages, Unavailable)
        else (packages.version, packages.cuda, packages.hip)
    )
    return TorchRuntime(
        outcome="ok",
        failed_stage=None,
        message="",
        stderr_tail="",
        version=version,
        cuda=cuda,
        hip=hip,
        arch_list=None,
        cuda_available=None,
        cuda_warnings=(),
        cuda_init_error=None,
        devices=(),
        cudnn_available=None,
        cudnn_version=None,
        nccl_version=None,
        mapped_libraries=(),
    )


def _torch_hint(facts: Facts, implies: dict[str, str | bool], text: str, frames: str = "") -> Facts:
    named = implies.get("torch_version")
    if isinstance(named, str) and isinstance(facts.torch_packages, Unavailable):  # the message names torch
        build = listed_build(named, None)
        if build is not None:
            facts = dataclasses.replace(
                facts, torch_packages=shown_packages(f"(the paste: torch=={named})", named, build)
            )
    if implies.get("torch_cuda_build") is False:
        facts = _the_cpu_build(facts, "(the paste: torch was not compiled with CUDA)")
    arch = implies.get("arch_list")
    runtime = facts.torch
    if (
        isinstance(arch, str)
        or implies.get("cuda_init_error")
        or implies.get("cuda_available") is False
        or implies.get("torch_import_failed")
    ):
        runtime = runtime if not isinstance(runtime, Unavailable) else _runtime(facts)
        if isinstance(arch, str) and not runtime.arch_list:
            runtime = dataclasses.replace(runtime, arch_list=tuple(arch.split()))
        if implies.get("cuda_init_error") and runtime.cuda_init_error is None:
            runtime = dataclasses.replace(runtime, cuda_init_error=text, cuda_available=False)
        if implies.get("cuda_available") is False:
            runtime = dataclasses.replace(runtime, cuda_available=False)
            if not implies.get("cuda_init_error") and text not in runtime.cuda_warnings:
                runtime = dataclasses.replace(runtime, cuda_warnings=(*runtime.cuda_warnings, text))
        if implies.get("torch_import_failed") and runtime.outcome == "ok":
            runtime = dataclasses.replace(
                runtime, outcome="failed", failed_stage="import", message=text, stderr_tail=frames or text
            )
        facts = dataclasses.replace(facts, torch=runtime)
    return facts


__all__ = ["NOT_IN_PASTE", "NOT_IN_REPORT", "TORCH_VERSION_UNSAID", "paste_facts"]
