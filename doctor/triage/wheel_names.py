"""What an extension's wheel file name in the paste says of its build, against the torch installed: flash-attn's
release wheels name the torch minor, the CUDA and the C++ ABI they were built for
("flash_attn-2.3.4+cu122torch2.1cxx11abiTRUE-cp39-cp39-linux_x86_64.whl"), and PyPI's torch was built with the old
ABI before 2.7 and the new one from 2.7 on (blind set 23: flash-attention#680, a cxx11abiTRUE wheel beside PyPI's
torch 2.1.0)."""

from __future__ import annotations

import dataclasses

from packaging.version import InvalidVersion, Version

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import installed_torch, pip_reinstall
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

_FLASH_ATTN_WHEEL = lazy(
    r"\bflash_attn-(?P<version>\d+\.\d+\.\d+(?:\.post\d+)?)\+cu(?P<cuda>\d{2,3})torch(?P<torch>\d+\.\d+)"
    r"cxx11abi(?P<abi>TRUE|FALSE)-(?P<tags>cp\d+-cp\d+-linux_(?:x86_64|aarch64))\.whl"
)
# PyPI's torch builds with _GLIBCXX_USE_CXX11_ABI=1 from 2.7, and 2.6's CUDA 12.6 build already did
# (pytorch/pytorch#143962, #143423: the move to manylinux 2.28)
NEW_ABI_FROM = Version("2.7")
NEW_ABI_EARLY = ("2.6", "cu126")
RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download"


def abi_from_the_wheel_name(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A flash-attn extension that does not load beside a pip-installed torch, where the paste shows the wheel's
    name: a C++ ABI other than that torch's is the one mismatch to name, and the wheel of the same release built
    with torch's ABI the fix."""
    finding = verdict.finding
    if (
        finding.status is not Status.FAIL
        or "C++ ABI" not in finding.summary
        or "flash" not in finding.summary
    ):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    wheel = _FLASH_ATTN_WHEEL.search(text)
    listed = (lib.version for listing in pasted.packages for lib in listing.packages if lib.name == "torch")
    torch = installed_torch(facts) or next(listed, None)  # a `torch==2.1.0` line alone is torch's version
    if wheel is None or torch is None or ("+" in torch and not torch.split("+", 1)[1].startswith("cu")):
        return verdict
    try:
        release = Version(torch.split("+")[0])
        early = ".".join(map(str, release.release[:2])) == NEW_ABI_EARLY[0] and torch.endswith(
            "+" + NEW_ABI_EARLY[1]
        )
        torch_abi = "TRUE" if release >= NEW_ABI_FROM or early else "FALSE"
        same_minor = Version(torch.split("+")[0]).release[:2] == Version(wheel["torch"]).release[:2]
    except InvalidVersion:
        return verdict
    if torch_abi == wheel["abi"] or not same_minor:
        return verdict  # the ABI matches, or the torch release differs too: the general answer stands
    name = wheel[0].replace(f"cxx11abi{wheel['abi']}", f"cxx11abi{torch_abi}")
    finding = dataclasses.replace(
        finding,
        summary=f"The flash-attn wheel installed (line {line_number(text, wheel)} of the paste) was built with the "
        f"{'new' if wheel['abi'] == 'TRUE' else 'old'} C++ ABI (cxx11abi{wheel['abi']}), and PyPI's torch {torch} with "
        f"the {'new' if torch_abi == 'TRUE' else 'old'} one: its compiled extension cannot find torch's functions.",
        details="",
        remediation=Remediation(
            text=f"Install the wheel of the same flash-attn release built with torch's ABI, cxx11abi{torch_abi} "
            f"(PyPI's torch uses the old ABI before 2.7 and the new one from 2.7 on; torch._C._GLIBCXX_USE_CXX11_ABI "
            "says which).",
            commands=(
                pip_reinstall(
                    facts,
                    "--no-deps",
                    f"{RELEASES}/v{wheel['version']}/{name}",
                    note="the same release, built with torch's C++ ABI",
                ),
            ),
            target=Target.PYTHON_ENV,
        ),
    )
    return dataclasses.replace(verdict, finding=finding)
