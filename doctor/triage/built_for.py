"""The torch an extension says it was built for. xFormers prints it when its C++/CUDA part does not load:
"xFormers was built for: PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.0+cpu)". Where the fix installs
another torch (the installed version rebuilt for CUDA), the extension still does not match it; the torch it
names, from that CUDA's index, fits both (blind set 26: xformers#971, a CPU torch 2.1.0 beside xFormers built
for 2.1.2+cu121)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import INDEX_URL
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, XFORMERS_BUILT_FOR, line_number

_CUDA_VARIANT = lazy(r"cu\d{3}")


def extension_built_for(pasted: PastedText) -> tuple[str, str, int] | None:
    """(version, variant, line) of the torch build the paste's xFormers names, where it is not the one installed."""
    text = pasted.paste.text
    if "you have" not in text[:MAX_CHARS]:
        return None
    found = XFORMERS_BUILT_FOR.search(
        text, 0, MAX_CHARS
    )  # "PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.0+cpu)"
    variant = found["variant"] if found is not None else None
    if found is None or variant is None or _CUDA_VARIANT.fullmatch(variant) is None:
        return None  # a CUDA build named: the only kind a download.pytorch.org/whl/cuXXX index serves
    if found["have"] == f"{found['version']}+{variant}":
        return None
    return found["version"], variant, line_number(text, found)


def torch_the_extension_was_built_for(verdict: Verdict, built: tuple[str, str, int]) -> Verdict:
    """The fix's torch install, moved to the version and CUDA the extension was built for, with its companions."""
    fix = verdict.finding.remediation
    version, variant, line = built
    data = load_torch_releases()
    release = data.release(version)
    if fix is None or release is None or release.variant(variant) is None:
        return verdict  # a build the data does not know: the fix keeps what it can vouch for
    companions = release.companions.for_version(version)
    pins = {"torch": version, "torchvision": companions.torchvision, "torchaudio": companions.torchaudio}
    commands = []
    moved = False
    for command in fix.commands:
        argv = list(command.argv)
        if "install" in argv and any(a.split("==")[0] == "torch" for a in argv):
            argv = [_pinned(a, pins, variant) for a in argv]
            argv = [f"{INDEX_URL}{variant}" if a.startswith(INDEX_URL) else a for a in argv]
            moved = moved or tuple(argv) != command.argv
        commands.append(dataclasses.replace(command, argv=tuple(argv)))
    if not moved:
        return verdict
    cuda = f"{variant[2:-1]}.{variant[-1]}"  # cu121 -> 12.1
    driver = data.min_driver_for_cuda(cuda)
    text = (
        f"Line {line} of the paste says xFormers was built for torch {version}+{variant}: install that build into "
        f"the same Python, so torch and xFormers match (or an xFormers built for the torch you keep). It runs on "
        f"an NVIDIA driver that runs CUDA {cuda}" + (f" (≥ {driver})." if driver else ".")
    )
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=text, commands=tuple(commands))
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


def _pinned(arg: str, pins: Mapping[str, str | None], variant: str) -> str:
    """`torch==2.1.0` -> `torch==2.1.2`; a local tag (`+cu126`) follows the new variant."""
    name, _, old = arg.partition("==")
    new = pins.get(name)
    if not old or not new:
        return arg
    return f"{name}=={new}" + (f"+{variant}" if "+" in old else "")
