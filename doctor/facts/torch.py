"""The torch the target interpreter would import: from package metadata (fast, never imports torch) and from a
child process that imports it (slow, may crash or hang; every such outcome is a fact, not an error)."""

from __future__ import annotations

import json
import signal
from typing import Any

from torch_gpu_doctor.compat.builds import tag_build
from torch_gpu_doctor.host.base import CommandResult, CommandStatus, Host, MalformedAnswer
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

PACKAGES_TIMEOUT_S = 20.0
RUNTIME_TIMEOUT_S = 60.0  # CUDA initialisation can be slow (lazy module loading, many GPUs)
STDERR_TAIL_LINES = 12


@dataclass(frozen=True)
class Distribution:
    name: str  # normalised: lower case, dashes
    version: str
    location: str | None
    requires: tuple[str, ...]  # nvidia-*/triton/torch requirements only


@dataclass(frozen=True)
class CompanionPackage:
    name: str  # torchvision | torchaudio
    paths: tuple[str, ...]
    version: str | None  # from its version.py
    cuda: str | None  # its local tag's CUDA (`+cu130`); None for `+cpu`, untagged and source builds


@dataclass(frozen=True)
class TorchPackages:
    torch_paths: tuple[str, ...]  # every importable copy on sys.path, in import order (first wins)
    version: str | None  # torch/version.py of the first copy; None when torch is not importable
    cuda: str | None  # torch.version.cuda: None for CPU and ROCm builds
    hip: str | None
    debug: bool | None
    companions: tuple[CompanionPackage, ...]
    distributions: tuple[Distribution, ...]
    sys_path: tuple[str, ...]
    user_site: str | None
    user_site_enabled: bool
    externally_managed: bool


@dataclass(frozen=True)
class MappedLibrary:
    name: str  # libcudart, libcudnn, ...
    path: str
    realpath: str


@dataclass(frozen=True)
class TorchDevice:
    index: int
    name: str
    capability: str
    total_memory_bytes: int


@dataclass(frozen=True)
class TorchRuntime:
    outcome: str  # "ok" | "failed" (exception) | "crashed" (signal) | "timed_out" | "garbage"
    failed_stage: str | None  # import, arch_list, cuda_init, devices, cudnn, nccl, libraries
    message: str  # the exception text, or which signal, or what was printed
    stderr_tail: str
    version: str | None
    cuda: str | None
    hip: str | None
    arch_list: tuple[str, ...] | None
    cuda_available: bool | None
    cuda_warnings: tuple[str, ...]
    cuda_init_error: str | None
    devices: tuple[TorchDevice, ...]
    cudnn_available: bool | None
    cudnn_version: int | None
    nccl_version: str | None
    mapped_libraries: tuple[MappedLibrary, ...]


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-STDERR_TAIL_LINES:])


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    items = []
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            items.append(item)
    return items


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _tag_cuda(version: str | None) -> str | None:
    """A companion's CUDA from its local tag (`0.26.0+cu130` -> "13.0"): its version.py has none."""
    build = tag_build(version) if version else None
    return build[0] if build is not None else None


def _shaped(data: dict[str, Any], key: str, kind: type) -> Any:
    """data[key] when it is a `kind` (or absent: empty); a MalformedAnswer naming the key otherwise."""
    value = data.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        shape = "an object" if kind is dict else "a list"
        raise MalformedAnswer(f"'{key}' is {type(value).__name__} {str(value)[:40]!r}, not {shape}")
    return value


def parse_packages(stdout: str) -> TorchPackages | Unavailable:
    lines = _json_lines(stdout)
    data = lines[-1] if lines else None
    if data is None or not isinstance(data.get("torch_paths"), list):
        return Unavailable(Reason.UNPARSEABLE, f"torch_packages probe printed {stdout[:160]!r}")
    for key, kind in (("companions", dict), ("distributions", list), ("sys_path", list)):
        _shaped(data, key, kind)
    raw_info = data.get("torch_version_py")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    companions = []
    for name, entry in sorted((data.get("companions") or {}).items()):
        if not isinstance(entry, dict):
            continue
        raw_vpy = entry.get("version_py")
        vpy: dict[str, Any] = raw_vpy if isinstance(raw_vpy, dict) else {}
        companions.append(
            CompanionPackage(
                name=str(name),
                paths=tuple(str(p) for p in entry.get("paths") or [] if isinstance(p, str)),
                version=_str(vpy.get("__version__")),
                cuda=_str(vpy.get("cuda")) or _tag_cuda(_str(vpy.get("__version__"))),
            )
        )
    dists = []
    for d in data.get("distributions") or []:
        if isinstance(d, dict) and isinstance(d.get("name"), str) and isinstance(d.get("version"), str):
            dists.append(
                Distribution(
                    name=d["name"],
                    version=d["version"],
                    location=_str(d.get("location")),
                    requires=tuple(r for r in d.get("requires") or [] if isinstance(r, str)),
                )
            )
    debug = info.get("debug")
    return TorchPackages(
        torch_paths=tuple(p for p in data["torch_paths"] if isinstance(p, str)),
        version=_str(info.get("__version__")),
        cuda=_str(info.get("cuda")),
        hip=_str(info.get("hip")),
        debug=debug if isinstance(debug, bool) else None,
        companions=tuple(companions),
        distributions=tuple(dists),
        sys_path=tuple(p for p in data.get("sys_path") or [] if isinstance(p, str)),
        user_site=_str(data.get("user_site")),
        user_site_enabled=bool(data.get("user_site_enabled")),
        externally_managed=bool(data.get("externally_managed")),
    )


def _signal_name(returncode: int | None) -> str:
    if returncode is None or returncode >= 0:
        return f"exit code {returncode}"
    try:
        return f"{signal.Signals(-returncode).name} (signal {-returncode})"
    except ValueError:
        return f"signal {-returncode}"


def _empty_runtime(outcome: str, stage: str | None, message: str, stderr: str) -> TorchRuntime:
    return TorchRuntime(
        outcome=outcome,
        failed_stage=stage,
        message=message,
        stderr_tail=_tail(stderr),
        version=None,
        cuda=None,
        hip=None,
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


def parse_runtime(result: CommandResult) -> TorchRuntime:
    """Interpret the torch_runtime child whatever happened to it: a result, an exception, a signal, a hang."""
    lines = _json_lines(result.stdout)
    stages = [line["stage"] for line in lines if isinstance(line.get("stage"), str)]
    last_stage = stages[-1] if stages else None
    final = next((line for line in reversed(lines) if "result" in line or "error" in line), None)
    if result.status is CommandStatus.TIMED_OUT:
        return _empty_runtime("timed_out", last_stage, "no answer within the time limit", result.stderr)
    if result.returncode is not None and result.returncode < 0:
        return _empty_runtime(
            "crashed", last_stage, f"killed by {_signal_name(result.returncode)}", result.stderr
        )
    if final is not None and isinstance(final.get("error"), str):
        return _empty_runtime("failed", last_stage, final["error"], result.stderr)
    if final is None or not isinstance(final.get("result"), dict):
        detail = result.unavailable() if not result.ok else None
        printed = (result.stdout or result.stderr).strip()[:200]
        message = str(detail) if detail else f"printed no result: {printed!r}"
        return _empty_runtime("garbage" if result.ok else "failed", last_stage, message, result.stderr)
    r = final["result"]
    devices = tuple(
        TorchDevice(int(d["index"]), str(d["name"]), str(d["capability"]), int(d["total_memory_bytes"]))
        for d in r.get("devices") or []
        if isinstance(d, dict) and {"index", "name", "capability", "total_memory_bytes"} <= d.keys()
    )
    libs = tuple(
        MappedLibrary(str(lib["name"]), str(lib["path"]), str(lib.get("realpath") or lib["path"]))
        for lib in r.get("mapped_libraries") or []
        if isinstance(lib, dict) and "name" in lib and "path" in lib
    )
    arch = r.get("arch_list")
    cudnn = r.get("cudnn_version")
    available = r.get("cuda_available")
    return TorchRuntime(
        outcome="ok",
        failed_stage=None,
        message="",
        stderr_tail=_tail(result.stderr),
        version=_str(r.get("version")),
        cuda=_str(r.get("cuda")),
        hip=_str(r.get("hip")),
        arch_list=tuple(str(a) for a in arch) if isinstance(arch, list) else None,
        cuda_available=available if isinstance(available, bool) else None,
        cuda_warnings=tuple(str(w) for w in r.get("cuda_warnings") or []),
        cuda_init_error=_str(r.get("cuda_init_error")),
        devices=devices,
        cudnn_available=r.get("cudnn_available") if isinstance(r.get("cudnn_available"), bool) else None,
        cudnn_version=cudnn if isinstance(cudnn, int) and not isinstance(cudnn, bool) else None,
        nccl_version=_str(r.get("nccl_version")),
        mapped_libraries=libs,
    )


def gather_torch_packages(host: Host, python: str) -> TorchPackages | Unavailable:
    result = host.run_probe(python, "torch_packages", PACKAGES_TIMEOUT_S)
    if not result.ok:
        return result.unavailable()
    try:
        return parse_packages(result.stdout)
    except MalformedAnswer as exc:
        where = f"{result.source}.stdout" if result.source else "the torch_packages probe's output"
        raise MalformedAnswer(f"{where}: {exc}") from exc


def gather_torch_runtime(host: Host, python: str, packages: Maybe[TorchPackages]) -> Maybe[TorchRuntime]:
    if isinstance(packages, TorchPackages):
        if not packages.torch_paths:
            return Unavailable(Reason.NOT_APPLICABLE, "torch is not installed in this environment")
        if packages.version is not None and packages.cuda is None and packages.hip is None:
            # A CPU build has no GPU runtime to initialise; its metadata says everything the checks need,
            # and skipping a 2-3 s `import torch` keeps the doctor fast (DESIGN §7).
            return Unavailable(Reason.NOT_APPLICABLE, f"CPU build {packages.version}: not imported")
    elif packages.reason is Reason.TIMED_OUT:
        # The interpreter did not answer a probe that only lists files: importing torch in it would wait
        # RUNTIME_TIMEOUT_S more for the same silence (a hung --python took 81 s to report).
        return Unavailable(
            Reason.TIMED_OUT,
            f"not tried: {python} did not answer the package probe within {PACKAGES_TIMEOUT_S:g} s",
        )
    result = host.run_probe(python, "torch_runtime", RUNTIME_TIMEOUT_S)
    if result.status is CommandStatus.NOT_RECORDED:  # a capture without it says nothing about the import
        return result.unavailable()
    return parse_runtime(result)
