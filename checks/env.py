"""env.library_path and env.cuda_visible_devices: what the process environment does to torch's CUDA."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from torch_gpu_doctor.checks.support.jetson import CUDSS, own_cuda_library_missing
from torch_gpu_doctor.checks.support.signatures import reported, reported_evidence
from torch_gpu_doctor.compat.torch_releases import version_key
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.fixes.hidden_gpu import asked_for_a_missing_gpu
from torch_gpu_doctor.fixes.jetson import board_cuda_missing_fix, cudss_fix, jetson_torch_remediation
from torch_gpu_doctor.fixes.library_path import (
    ctranslate2_cublas_fix,
    driver_library_fix,
    extension_abi_fix,
    extension_cuda_fix,
    extension_name,
    foreign_version_fix,
    in_place_rebuild_fix,
    native_libcuda_fix,
    page_file_fix,
    procedure_not_found_fix,
    program_library_fix,
    soversion_major,
    split_site_packages_fix,
    system_cuda_library_fix,
    torch_cublas_fix,
    torch_cuda_dll,
    torch_wheel_library_fix,
    unpinned_extension,
    wheel_of,
    windows_dll_fix,
    wsl_libcuda_fix,
)
from torch_gpu_doctor.fixes.target import installed_torch, installed_variant, python_command, python_minor
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

DRIVER_LIBRARIES = ("libcuda", "libnvidia-ml")  # come from the driver, wherever it is installed
# torch's own folders: site-packages (pip, venv) or dist-packages (Debian/Ubuntu system Python)
OWN_LIBRARY = lazy(r"/(site|dist)-packages/(nvidia|torch)/")


@check("env.library_path", "torch and its extensions load the CUDA libraries they were built with", "env")
def library_path(facts: Facts) -> Finding:
    """
    ## What it checks
    The CUDA libraries actually mapped into the torch process (from `/proc/self/maps` of the child), and
    whether any comes from outside torch's own `torch/lib` and `nvidia/` wheel folders (the driver's
    `libcuda` and `libnvidia-ml` excepted).

    ## Why it matters
    `LD_LIBRARY_PATH` pointing at a system CUDA toolkit, or a conda `cudatoolkit`, makes torch load another
    cuBLAS or cuDNN than it was built with: crashes, "CUBLAS_STATUS_NOT_INITIALIZED", or silently slower code.

    ## How to fix
    Remove the CUDA toolkit folders from `LD_LIBRARY_PATH` for this environment (torch's wheels bring their
    own libraries), or use a conda build of torch with conda's CUDA libraries, not a mix.
    """
    cid = "env.library_path"
    failed = reported(facts, "missing_library", "undefined_symbol", "cudnn", "cublas")
    if failed:
        return _library_failure(cid, facts, failed)
    runtime = facts.torch
    packages = facts.torch_packages
    if (
        not isinstance(packages, Unavailable)
        and packages.version
        and packages.cuda is None
        and packages.hip is None
    ):
        return Finding(
            cid, Status.SKIP, f"torch {packages.version} is a CPU build: it loads no CUDA libraries."
        )
    if isinstance(runtime, Unavailable) or runtime.outcome != "ok":
        return Finding(cid, Status.SKIP, "torch was not imported, so no library was loaded to inspect.")
    foreign = [
        lib
        for lib in runtime.mapped_libraries
        if lib.name not in DRIVER_LIBRARIES and not OWN_LIBRARY.search(lib.realpath)
    ]
    evidence = tuple(
        Evidence(lib.name, lib.realpath, "/proc/self/maps of the torch process")
        for lib in runtime.mapped_libraries
    )
    if foreign:
        ld = facts.env.get("LD_LIBRARY_PATH")
        folders = sorted({lib.realpath.rsplit("/", 1)[0] for lib in foreign})
        return Finding(
            cid,
            Status.WARN,
            "torch loaded "
            + ", ".join(f"{lib.name} from {lib.realpath}" for lib in foreign)
            + " instead of its own wheels.",
            details=f"LD_LIBRARY_PATH={ld!r}." if ld else "",
            evidence=evidence,
            remediation=Remediation(
                text=f"Take {', '.join(folders)} out of the library search path for this environment: run the "
                "program with LD_LIBRARY_PATH unset (or without those folders) and, if they come from "
                "/etc/ld.so.conf.d, remove that file and run `sudo ldconfig`. torch's wheels bring their own CUDA "
                "libraries; a system CUDA toolkit or a conda cudatoolkit first on the path replaces them with "
                "another version.",
                commands=(
                    Command(
                        (
                            "env",
                            "-u",
                            "LD_LIBRARY_PATH",
                            python_command(facts),
                            "-c",
                            "import torch; torch.zeros(1).cuda(); print(torch.backends.cudnn.version())",
                        ),
                        note="works once the override is gone (cuDNN included)",
                    ),
                ),
                target=Target.SYSTEM,
            ),
        )
    if not runtime.mapped_libraries:
        return Finding(cid, Status.SKIP, "torch loaded no CUDA library to inspect (CUDA did not start).")
    count = len(runtime.mapped_libraries)
    return Finding(
        cid,
        Status.PASS,
        f"{count} CUDA librar{'y' if count == 1 else 'ies'}, all from torch's own wheels or the driver.",
        evidence=evidence,
    )


NOT_A_GPU_INDEX = "is not a GPU index"  # triage reads it: an index past a cut nvidia-smi table may exist


def visible_devices(value: str, count: int, uuids: list[str]) -> tuple[list[int], str | None]:
    """The GPU indices CUDA will expose for CUDA_VISIBLE_DEVICES=value, and the first problem if any.

    CUDA reads the list left to right and stops at the first entry that is not a valid device (an index out
    of range, an unknown UUID, a repeat): everything after it is silently dropped.
    """
    shown: list[int] = []
    for raw in value.split(","):
        token = raw.strip()
        if token.lstrip("-").isdigit():
            index = int(token)
            if not 0 <= index < count:
                return (
                    shown,
                    f"{token!r} {NOT_A_GPU_INDEX} (0-{count - 1}); it and everything after it are ignored",
                )
        elif token.startswith(("GPU-", "MIG-")):
            matches = [i for i, u in enumerate(uuids) if u.startswith(token)]
            if len(matches) != 1:
                return shown, f"{token!r} matches {len(matches)} GPUs; it and everything after it are ignored"
            index = matches[0]
        else:
            return (
                shown,
                f"{token!r} is neither an index nor a GPU UUID; it and everything after it are ignored",
            )
        if index in shown:
            return shown, f"GPU {index} is listed twice; the list stops there"
        shown.append(index)
    return shown, None


@check("env.cuda_visible_devices", "CUDA_VISIBLE_DEVICES does not hide the GPUs by mistake", "env")
def cuda_visible_devices(facts: Facts) -> Finding:
    """
    ## What it checks
    Parses `CUDA_VISIBLE_DEVICES` the way CUDA does (indices or GPU/MIG UUIDs, read until the first invalid
    entry) and says which GPUs torch will see.

    ## Why it matters
    An empty value, `-1`, a typo or an index that does not exist hides GPUs without any error: torch simply
    reports fewer devices, or none ("no CUDA GPUs are available").

    ## How to fix
    Unset the variable (`unset CUDA_VISIBLE_DEVICES`) or list only valid indices or UUIDs, separated by commas.
    """
    cid = "env.cuda_visible_devices"
    value = facts.env.get("CUDA_VISIBLE_DEVICES")
    wrong = reported(facts, "visible_devices", "mig")
    if wrong and value is None:
        return Finding(
            cid,
            Status.FAIL,
            f"The program asked CUDA for a GPU that it does not see ({wrong[0].where}).",
            details=wrong[0].means,
            evidence=reported_evidence(wrong),
            remediation=asked_for_a_missing_gpu(),
        )
    usable = [g for g in facts.nvidia_gpus if g.nvml_index is not None]
    if value is None:
        return Finding(cid, Status.PASS, "CUDA_VISIBLE_DEVICES is not set: every GPU is visible to torch.")
    evidence = (Evidence("CUDA_VISIBLE_DEVICES", repr(value), "environment"),)
    first = value.split(",")[0].strip()
    if first and not first.lstrip("-").isdigit() and not first.startswith(("GPU-", "MIG-")):
        # a word such as "all": CUDA reads no device from it, whatever the GPUs (NVIDIA_VISIBLE_DEVICES takes "all")
        return Finding(
            cid,
            Status.FAIL,
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from torch: CUDA takes GPU indices or UUIDs only.",
            details="'all' is a value of NVIDIA_VISIBLE_DEVICES (the NVIDIA Container Toolkit's variable, which "
            "chooses the GPUs a container gets), not of CUDA_VISIBLE_DEVICES: CUDA reads the list up to the first "
            "entry that is not a device, so a word hides them all.",
            evidence=evidence,
            remediation=Remediation(
                text="Remove CUDA_VISIBLE_DEVICES (every GPU is then visible), or set it to indices such as 0,1; in a "
                "container choose its GPUs with NVIDIA_VISIBLE_DEVICES=all or the compose file's device reservation.",
                target=Target.SYSTEM,
            ),
        )
    if not usable:
        return Finding(
            cid,
            Status.SKIP,
            f"CUDA_VISIBLE_DEVICES={value!r}, but no usable NVIDIA GPU here.",
            evidence=evidence,
        )
    ordered = sorted(usable, key=lambda g: g.nvml_index or 0)
    uuids = [g.uuid if isinstance(g.uuid, str) else "" for g in ordered]
    shown, problem = visible_devices(value, len(ordered), uuids)
    fix = Remediation(  # the environment, not the packages: a reinstall would change nothing
        text="Unset CUDA_VISIBLE_DEVICES where Python is started, or set it to GPUs that exist (`nvidia-smi -L` "
        "lists them; indices count from 0). Look where it is set: the shell profile, the job scheduler (Slurm "
        "sets it per job), the container's environment, or the program's own os.environ.",
        commands=(
            Command(
                ("env", "-u", "CUDA_VISIBLE_DEVICES", python_command(facts), "-c", VISIBLE),
                note="the GPUs torch sees without it",
            ),
            Command(("nvidia-smi", "-L"), note="the GPUs (and MIG instances) that exist"),
        ),
        target=Target.SYSTEM,
    )
    if not shown:
        return Finding(
            cid,
            Status.FAIL,
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from torch.",
            details=problem or "",
            evidence=evidence,
            remediation=fix,
        )
    if problem:
        return Finding(
            cid,
            Status.WARN,
            f"CUDA_VISIBLE_DEVICES={value!r} exposes only GPU {', '.join(map(str, shown))}: {problem}.",
            evidence=evidence,
            remediation=fix,
        )
    return Finding(
        cid,
        Status.PASS,
        f"CUDA_VISIBLE_DEVICES={value!r}: torch sees GPU {', '.join(map(str, shown))}.",
        evidence=evidence,
    )


VISIBLE = "import torch; print(torch.cuda.device_count())"


@dataclass(frozen=True)
class _Cause:
    """Which sub-cause a library failure is: the error that shows it, the first line, the fix."""

    error: ReportedError
    summary: str
    fix: Remediation
    details: str = (
        ""  # where the error's catalogue meaning is another sub-cause's (WinError 1455 under 126's)
    )


def _library_failure(cid: str, facts: Facts, failed: list[ReportedError]) -> Finding:
    """A program could not load a CUDA library, or loaded one of another version (a missing symbol). The same
    words have several causes: the first that the errors and the facts show decides the summary and the fix."""
    cause = (
        _windows_dll(facts, failed)
        or _extension_abi(failed, python_command(facts), _installed_versions(facts), _torch_build(facts))
        or _driver_library(facts, failed)
        or _missing_library(facts, failed)
        or _cublas_status(facts, failed)
        or _Cause(
            failed[0],
            "A CUDA library of another version was loaded before the one torch was built with",
            foreign_version_fix(
                _on_windows(facts, failed), " ".join(f"{e.text} {e.context}".lower() for e in failed)
            ),
        )
    )
    shown = [cause.error, *(e for e in failed if e is not cause.error)]
    return Finding(
        cid,
        Status.FAIL,
        f"{cause.summary} ({cause.error.where}).",
        details=cause.details or cause.error.means,
        evidence=reported_evidence(shown),
        remediation=cause.fix,
    )


def _library(error: ReportedError) -> str:
    """The library the message names, with its version suffix ("libcudnn.so" + ".8")."""
    name = error.values.get("library") or error.values.get("cudnn_library") or ""
    return name + error.values.get("soversion", "") if name else ""


def _said(error: ReportedError) -> str:
    return f"{error.text} {error.context}"


# a Windows path to a DLL, as WinError 126 names it: "Error loading "C:\...\torch\lib\fbgemm.dll" or ..."
_DLL_PATH = lazy(r"(?P<path>[A-Za-z]:\\[^\"<>|\n]*?\\(?P<dll>[\w.-]+\.dll))", re.IGNORECASE)
_USER_SITE = lazy(r"^(?P<site>.*\\AppData\\Roaming\\Python\\Python\d+\\site-packages)\\", re.IGNORECASE)
_IN_TORCH_LIB = lazy(r"\\site-packages\\torch\\lib\\[^\\]+$", re.IGNORECASE)  # torch's own DLL folder
_WINDOWS_PATH = lazy(r"(?<![\w/])[A-Za-z]:\\[\w$ .-]+\\")
# a python.org install used directly, not a venv or conda env: ...\Programs\Python\Python310\, C:\Python310\
_GLOBAL_PYTHON = lazy(
    r"^(?P<python>.*\\Programs\\Python\\Python\d+|[A-Za-z]:\\Python\d+)\\Lib\\site-packages\\", re.IGNORECASE
)


def _on_windows(facts: Facts, failed: list[ReportedError]) -> bool:
    """Windows (not WSL): the facts say so, or the program reported Windows paths or WinError codes."""
    os_facts = facts.os
    if not isinstance(os_facts, Unavailable):
        return os_facts.system == "Windows"
    return any("WinError" in e.text or _WINDOWS_PATH.search(_said(e)) for e in failed)


def _windows_dll(facts: Facts, failed: list[ReportedError]) -> _Cause | None:
    """WinError 126 and DLLs: Windows, where only a runtime DLL, another torch copy or the torch release help."""
    errors = [
        e
        for e in failed
        if e.kind == "missing_library"
        and (_library(e).lower().endswith(".dll") or "WinError" in e.text or _on_windows(facts, [e]))
    ]
    if not errors:
        return None
    paging = next(
        (e for e in errors if "WinError 1455" in _said(e) or "paging file is too small" in _said(e)), None
    )
    if paging is not None:  # "the paging file is too small": memory, not a missing DLL
        return _Cause(
            paging,
            "Windows ran out of virtual memory while loading torch's CUDA DLLs (WinError 1455: the page file "
            "is too small)",
            page_file_fix(),
            details="WinError 1455 is not a missing DLL: Windows could not commit the virtual memory that mapping "
            "torch's CUDA DLLs needs, and every process that imports torch with CUDA (each DataLoader worker too) "
            "maps them again, backed by the page file.",
        )
    found = next((m for e in errors if (m := _DLL_PATH.search(_said(e))) is not None), None)
    path = found["path"] if found is not None else ""
    dll = found["dll"] if found is not None else next((_library(e) for e in errors if _library(e)), "")
    in_user_site = _USER_SITE.match(path)
    user_site = in_user_site["site"] if in_user_site is not None else _torch_in_user_site(facts)
    python = _GLOBAL_PYTHON.match(path)
    package = _site_package(path)
    whose = f"{package}'s " if package else ""
    init_failed = any("WinError 1114" in _said(e) for e in errors)
    if not init_failed and torch_cuda_dll(dll) and all("WinError 127" in _said(e) for e in errors):
        # found, and a function it calls is missing: another version of a DLL it needs was loaded first (or,
        # for cuDNN's DLLs inside torch\lib, the set there was mixed by a copy over it)
        mixed = _IN_TORCH_LIB.search(path) is not None and dll.lower().startswith("cudnn")
        return _Cause(
            next((e for e in errors if dll in _said(e)), errors[0]),
            f"Windows found {whose}{dll}, but a function it needs is missing (WinError 127): "
            + (
                "the cuDNN DLLs in torch\\lib are of mixed versions"
                if mixed
                else "another version of a DLL it depends on is found first"
            ),
            procedure_not_found_fix(
                dll, in_torch_lib=mixed, installed=installed_torch(facts), variant=installed_variant(facts)
            ),
            details="WinError 127 (the specified procedure could not be found) is no missing file: the DLL loaded, "
            "and a function it imports is not in the copy of a dependency that Windows found first.",
        )
    summary = (
        f"Windows loaded {whose}{dll or 'a DLL'}, but its start-up failed (WinError 1114)"
        if init_failed
        else f"Windows could not load {whose}{dll or 'a DLL'} or a DLL it needs"
    )
    if user_site is not None:
        summary += f", from a per-user torch in {user_site}"
    error = next((e for e in errors if dll and dll in _said(e)), errors[0])
    fix = windows_dll_fix(
        dll,
        user_site,
        python["python"] if python else None,
        init_failed,
        installed=installed_torch(facts),
        variant=installed_variant(facts),
    )
    return _Cause(error, summary, fix)


def _torch_in_user_site(facts: Facts) -> str | None:
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or not packages.user_site or not packages.torch_paths:
        return None
    return packages.user_site if packages.torch_paths[0].startswith(packages.user_site) else None


# the package folder a file belongs to: .../site-packages/vllm/_C.abi3.so -> vllm; an .egg folder's name too
_PACKAGE = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<package>[A-Za-z_][\w]*)")
# an undefined C++ symbol of torch's own namespaces (at::, c10::, torch::): the caller was built for another torch
_TORCH_SYMBOL = lazy(r"^_ZNK?(?:2at|3c10|5torch)")
_OLD_ABI_STRING = lazy(r"(?<![a-z])Ss(?![a-z])")  # the pre-C++11 ABI's std::string in a mangled name
# the path as the loader prints it, or as a markdown link an editor made of it ("[/opt/.../x.so](https://...)")
_SO_PATH = lazy(r"(?P<path>/[^\s\[\]()]+?\.so(?:\.\d+)*)(?:\]\([^)\s]*\))?: ?undefined symbol")
# the module file alone, as Python's ImportError names one loaded by its name: "flash_attn_2_cuda.cpython-310-
# x86_64-linux-gnu.so: undefined symbol: ..." (flash-attn 2 installs that module at site-packages' top level)
_SO_MODULE = lazy(
    r"(?<![\w/\\.-])(?P<module>[A-Za-z_]\w*)(?P<file>\.(?:cpython-\w+|abi3)[\w.-]*\.so): ?undefined symbol"
)


def _installed_versions(facts: Facts) -> dict[str, str]:
    packages = facts.torch_packages
    listed = () if isinstance(packages, Unavailable) else packages.distributions
    return {d.name: d.version for d in listed}


def _site_package(path: str) -> str | None:
    found = _PACKAGE.search(path)
    return found["package"] if found is not None else None


def _source_checkout(path: str) -> tuple[str, str] | None:
    """A compiled module inside a source tree, not an installed package ("/data/levi/segment-anything-2/sam2/
    _C.so"): the tree's root and the package's name; None for a system or environment folder."""
    parts = path.split("/")
    system = ("lib", "lib64", "usr", "site-packages", "dist-packages", ".cache", "torch_extensions")
    if len(parts) < 4 or any(p in system or p.startswith("build") for p in parts[:-1]):
        return None  # an installed package, a JIT cache (torch_extensions), a build folder's copy
    module = parts[-2]
    if not module.isidentifier():
        return None
    if parts[-3].lower() in _EXTENSION_FOLDERS:  # "extensions/sgutils/sgutilslib.so": each its own project
        return "/".join(parts[:-1]), module
    return "/".join(parts[:-2]), module


# folders that hold several extension projects side by side, each with its own setup.py (blind set 21 #15:
# gaussian-mesh-splatting's extensions/sgutils, gaussian-splatting's submodules/simple-knn)
_EXTENSION_FOLDERS = frozenset({"extensions", "submodules", "third_party", "externals", "ext", "exts"})


def _torch_build(facts: Facts) -> tuple[str, str] | None:
    """The installed torch's major.minor and build as wheel pages name them ("2.1", "cu121"), where known."""
    version, variant = installed_torch(facts), installed_variant(facts)
    if version is None or variant is None:
        return None
    return ".".join(version.split(".")[:2]), variant


def _extension_abi(
    failed: list[ReportedError],
    python: str,
    installed: dict[str, str],
    torch_build: tuple[str, str] | None = None,
) -> _Cause | None:
    """An extension module compiled against another torch release: torch's C++ symbols are missing.
    `installed`: the versions of the packages the facts list (name -> version); `torch_build`: torch's
    major.minor and build, for an extension's page of wheels per torch."""
    for error in failed:
        if error.kind != "undefined_symbol" or not _TORCH_SYMBOL.match(error.values.get("symbol", "")):
            continue
        so = _SO_PATH.search(error.text)
        package = _site_package(so["path"]) if so is not None else None
        if package == "torch":
            return None  # torch's own libraries disagree: two torch releases mixed, another version first
        checkout = _source_checkout(so["path"]) if so is not None and package is None else None
        if checkout is not None:  # built in place in a source tree (`pip install -e .`, build_ext --inplace)
            root, module = checkout
            summary = (
                f"{module}'s compiled extension, built in its source folder, was built for another torch"
            )
            return _Cause(error, summary, in_place_rebuild_fix(module, root, python))
        file = so["path"].rsplit("/", 1)[-1] if so is not None else ""
        # a module at site-packages' top level (flash-attn 2's flash_attn_2_cuda.so) is its own package
        extension = (file if file.startswith(package + ".") else f"{package}/{file}") if package else None
        bare = _SO_MODULE.search(error.text) if package is None else None
        if (
            bare is not None and unpinned_extension(bare["module"]) is not None
        ):  # a known extension by its module
            package, extension = bare["module"], bare["module"] + bare["file"]
        stem = file.split(".", 1)[0]
        if package is None and stem and unpinned_extension(stem) is not None:
            # a path cut short ("/.../flash_attn_2_cuda.so"): its file names the extension
            package, extension = stem, file
        symbol = error.values.get("symbol", "")
        cxx11 = "__cxx11" in symbol  # std::__cxx11::basic_string: the C++ ABI differs
        # the old ABI's std::string ("Ss": ..._14SourceLocationESs) also marks a build for a torch whose pip
        # wheels used that ABI (before 2.7): the summary says both; a rebuild against the installed torch, or
        # the torch an extension pins, fixes either
        old_abi = _OLD_ABI_STRING.search(symbol) is not None
        built_for = (
            "another torch release, or the other C++ ABI, than the installed torch"
            if cxx11 or old_abi
            else "another torch release than the one installed"
        )
        shown = extension_name(package)
        summary = (
            f"{shown}'s compiled extension ({extension}) was built for {built_for}"
            if package
            else f"A compiled extension was built for {built_for}"
        )
        return _Cause(
            error, summary, extension_abi_fix(package, extension, cxx11, python, installed, torch_build)
        )
    return None


def _driver_library(facts: Facts, failed: list[ReportedError]) -> _Cause | None:
    """libcuda is the driver's: on WSL2 it lives in /usr/lib/wsl/lib, elsewhere the driver installs it."""
    error = next((e for e in failed if _library(e).startswith("libcuda.so")), None)
    if error is None:
        return None
    library = _library(error)
    os_facts = facts.os
    wsl = None if isinstance(os_facts, Unavailable) else os_facts.is_wsl
    asker = error.values.get("cudnn_library")
    who = f"{asker} (cuDNN) could not open" if asker else "The loader could not find"
    if wsl or (wsl is None and library == "libcuda.so"):
        where = "WSL2 keeps it only in /usr/lib/wsl/lib" if wsl else "on WSL2 it is only in /usr/lib/wsl/lib"
        summary = f"{who} the driver library {library}, which is not on the loader path ({where})"
        return _Cause(error, summary, wsl_libcuda_fix(library, wsl_known=bool(wsl)))
    if library == "libcuda.so":
        summary = f"{who} the unversioned driver library libcuda.so: only libcuda.so.1 is installed"
        return _Cause(error, summary, native_libcuda_fix(library))
    return _Cause(error, f"{who} the NVIDIA driver's {library}", driver_library_fix(library))


# a library opened at run time by cuDNN's loader, CTranslate2's or TensorFlow's, not linked when torch imports
_DLOPEN = lazy(r"Could not load (?:dynamic )?library")
_LIB64_SITE = lazy(r"(?P<prefix>[^\s\"'`]*?)/lib64/(?P<python>python\d+\.\d+)/site-packages/torch(?:/|\b)")


def _missing_library(facts: Facts, failed: list[ReportedError]) -> _Cause | None:
    """A CUDA library not found: who asked for it (torch while importing, or a program of its own) and where
    torch's wheels are decide the fix."""
    missing = [e for e in failed if e.kind == "missing_library"]
    if not missing:
        return None
    error = next((e for e in missing if _library(e)), missing[0])
    library = _library(error) or "a CUDA library"
    if _torch_import_failed(facts):
        split = _lib64_split(facts, failed)
        if split is not None:
            torch_site, wheels_site = split
            summary = (
                f"torch in {torch_site} cannot find {library}: its nvidia-* wheels went to {wheels_site}, "
                "outside torch's RPATH"
            )
            return _Cause(error, summary, split_site_packages_fix(library, torch_site, wheels_site))
        if facts.jetson_board is not None and library.startswith(CUDSS):
            summary = f"torch's import could not find {library}: NVIDIA's torch 2.8 for JetPack needs cuDSS"
            return _Cause(error, summary, cudss_fix(facts.jetson_board.l4t))
        own = own_cuda_library_missing(facts) if facts.jetson_board is not None else None
        if own is not None:  # the board's own CUDA names it so: its libraries are missing (platform.jetson)
            summary = (
                f"torch's import could not find {library}, a library of CUDA {own[1]}, this Jetson's own"
            )
            return _Cause(error, summary, board_cuda_missing_fix(*own))
        if facts.jetson_board is not None:  # its CUDA is the JetPack's: no nvidia-* wheels (platform.jetson)
            summary = f"torch's import could not find {library}: torch was built for another JetPack's CUDA"
            return _Cause(error, summary, jetson_torch_remediation(facts))
        if _before_nvidia_wheels(facts):
            summary = (
                f"torch's import could not find {library}: this torch (older than 1.13) does not take it from "
                "nvidia-* wheels, but from its own folder (a pip wheel) or the CUDA installed on the machine"
            )
            return _Cause(error, summary, system_cuda_library_fix(library))
        summary = f"torch's import could not find {library}, one of its own nvidia-* wheel libraries"
        return _Cause(error, summary, torch_wheel_library_fix(library))
    dlopened = any(_DLOPEN.search(e.text) for e in failed)
    other_cuda = _other_cuda_runtime(library, facts)
    if other_cuda is not None and not dlopened:
        library_cuda, torch_cuda = other_cuda
        summary = (
            f"{library} is CUDA {library_cuda}'s runtime, and torch is a CUDA {torch_cuda} build: a compiled "
            f"extension built for CUDA {library_cuda} asked for it, not torch"
        )
        return _Cause(
            error, summary, extension_cuda_fix(library, library_cuda, torch_cuda, python_command(facts))
        )
    summary = (
        f"A program with its own CUDA build (CTranslate2/faster-whisper, TensorFlow, ONNX Runtime) asked for "
        f"{library}, which is not on the loader path; torch is not the one asking"
        if dlopened
        else f"{library} could not be found, and torch's import is not what failed: the program that asked for "
        "it needs that version on the loader path"
    )
    return _Cause(
        error, summary, program_library_fix(library, _cuda_major(facts, failed), _torch_cudnn(facts))
    )


def _before_nvidia_wheels(facts: Facts) -> bool:
    """A torch older than 1.13, the first whose Linux wheels depend on nvidia-* packages: its version, or a
    Python older than 3.7, which no later torch supports."""
    version = installed_torch(facts)
    if version is not None:
        try:
            return Version(version) < Version("1.13")
        except InvalidVersion:
            return False
    minor = python_minor(facts)
    return minor is not None and version_key(minor) < (3, 7)


_CUDART = lazy(r"^libcudart\.so\.(?P<version>\d+(?:\.\d+)?)$")


def _other_cuda_runtime(library: str, facts: Facts) -> tuple[str, str] | None:
    """(the library's CUDA, torch's CUDA) where a CUDA runtime torch's import did not ask for is another
    release's than torch's: cudart's soname is major.minor before CUDA 11 (libcudart.so.10.1), the major after
    (libcudart.so.11.0 serves every 11.x)."""
    found = _CUDART.match(library)
    packages = facts.torch_packages
    if found is None or isinstance(packages, Unavailable) or not packages.cuda:
        return None
    version, torch_cuda = found["version"], packages.cuda
    major = version.split(".")[0]
    same = torch_cuda.split(".")[0] == major if int(major) >= 11 else torch_cuda == version
    return None if same else (version, torch_cuda)


def _torch_import_failed(facts: Facts) -> bool:
    runtime = facts.torch
    return (
        not isinstance(runtime, Unavailable)
        and runtime.outcome == "failed"
        and runtime.failed_stage == "import"
    )


def _lib64_split(facts: Facts, failed: list[ReportedError]) -> tuple[str, str] | None:
    """(torch's site-packages, the nvidia wheels' site-packages) when torch sits under <venv>/lib64."""
    places: list[str] = [_said(e) for e in failed]
    packages, runtime = facts.torch_packages, facts.torch
    if not isinstance(packages, Unavailable):
        places += packages.torch_paths
    if not isinstance(runtime, Unavailable):
        places += [lib.realpath for lib in runtime.mapped_libraries]
        places += [runtime.message, runtime.stderr_tail]
    for place in places:
        found = _LIB64_SITE.search(place)
        if found is not None:
            prefix, python = found["prefix"], found["python"]
            return f"{prefix}/lib64/{python}/site-packages", f"{prefix}/lib/{python}/site-packages"
    return None


def _cuda_major(facts: Facts, failed: list[ReportedError]) -> str | None:
    """The CUDA major a program was built for: a CUDA library it asked for (libcublas.so.11), else torch's."""
    for error in failed:
        wheel, major = wheel_of(_library(error)), soversion_major(_library(error))
        if wheel is not None and wheel.soversion_is_cuda and major is not None:
            return major
    packages = facts.torch_packages
    if not isinstance(packages, Unavailable) and packages.cuda:
        return packages.cuda.split(".")[0]
    return None


def _torch_cudnn(facts: Facts) -> str | None:
    """The cuDNN major of the torch in this environment, when the facts say (90100 -> 9, 8902 -> 8)."""
    runtime = facts.torch
    if isinstance(runtime, Unavailable) or runtime.cudnn_version is None:
        return None
    version = runtime.cudnn_version
    return str(version // 10000 if version >= 10000 else version // 1000)


_STATUS = lazy(r"CUBLAS_STATUS_(?P<status>[A-Z_]+)")
# CTranslate2's own words for a cuBLAS failure (torch says "CUDA error: CUBLAS_STATUS_... when calling `...`")
_CTRANSLATE2_CUBLAS = lazy(r"cuBLAS failed with status")
# packages that bring their own CUDA libraries into the process: in the failing stack, a foreign cuBLAS suspect
OWN_CUDA_PACKAGES = frozenset(
    {"bitsandbytes", "ctranslate2", "tensorflow", "onnxruntime", "jaxlib", "cupy", "paddle"}
)


def _cublas_status(facts: Facts, failed: list[ReportedError]) -> _Cause | None:
    """INVALID_VALUE / NOT_SUPPORTED on an ordinary call: the cuBLAS build itself, unless another CUDA's
    libraries are in sight (LD_LIBRARY_PATH, a foreign mapped library, a package with its own CUDA)."""
    for error in failed:
        found = _STATUS.search(error.text)
        if (
            error.kind != "cublas"
            or found is None
            or found["status"] not in ("INVALID_VALUE", "NOT_SUPPORTED")
        ):
            continue
        status = f"CUBLAS_STATUS_{found['status']}"
        if _CTRANSLATE2_CUBLAS.search(error.text):
            summary = f"CTranslate2's own cuBLAS cannot run this on this GPU ({status})"
            return _Cause(error, summary, ctranslate2_cublas_fix(status))
        if _foreign_cuda_in_sight(facts, failed):
            return None
        summary = f"cuBLAS refused an ordinary matrix multiply ({status}): the cuBLAS of this torch build is the suspect"
        return _Cause(error, summary, torch_cublas_fix(status, _on_windows(facts, failed)))
    return None


def _foreign_cuda_in_sight(facts: Facts, failed: list[ReportedError]) -> bool:
    if facts.env.get("LD_LIBRARY_PATH") or facts.env.get("LD_PRELOAD"):
        return True
    runtime = facts.torch
    if not isinstance(runtime, Unavailable) and any(
        lib.name not in DRIVER_LIBRARIES and not OWN_LIBRARY.search(lib.realpath)
        for lib in runtime.mapped_libraries
    ):
        return True
    return any(m["package"].lower() in OWN_CUDA_PACKAGES for e in failed for m in _PACKAGE.finditer(_said(e)))
