"""The torch an extension says it was built for. xFormers prints it when its C++/CUDA part does not load:
"xFormers was built for: PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.0+cpu)". Where the fix installs
another torch (the installed version rebuilt for CUDA), the extension still does not match it; the torch it
names, from that CUDA's index, fits both (blind set 26: xformers#971, a CPU torch 2.1.0 beside xFormers built
for 2.1.2+cu121)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

# "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.0+cpu)"
_BUILT_FOR = lazy(
    r"^\s*PyTorch[ \t]+(?P<version>\d+\.\d+\.\d+)\+(?P<variant>cu\d{3})[ \t]+with[ \t]+CUDA[ \t]+\d+[ \t]+"
    r"\(you[ \t]+have[ \t]+(?P<have>[^)\s]+)\)",
    re.MULTILINE,
)
INDEX = "https://download.pytorch.org/whl/"


def extension_built_for(pasted: PastedText) -> tuple[str, str, int] | None:
    """(version, variant, line) of the torch build the paste's xFormers names, where it is not the one installed."""
    text = pasted.paste.text
    if "you have" not in text[:MAX_CHARS]:
        return None
    found = _BUILT_FOR.search(text, 0, MAX_CHARS)
    if found is None or found["have"] == f"{found['version']}+{found['variant']}":
        return None
    return found["version"], found["variant"], text.count("\n", 0, found.start()) + 1


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
            argv = [f"{INDEX}{variant}" if a.startswith(INDEX) else a for a in argv]
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
