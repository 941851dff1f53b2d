"""What a bundle holds, in words: the files with their sizes and what was redacted (shown before writing, by
`gpu-doctor bundle` and by the TUI's bundle key alike)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import IO

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.bundle.build import Bundle
from torch_gpu_doctor.bundle.model import human_size


def redaction_line(bundle: Bundle) -> str:
    if bundle.identifiers_included:
        head = "identifiers kept (--include-identifiers)"
    else:
        kinds = Counter(bundle.redactor.legend().values())
        named = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in sorted(kinds.items()))
        head = f"replaced with pseudonyms: {named}" if named else "no identifiers of this machine found"
    secrets = bundle.redactor.replaced.get("secret", 0)
    return f"{head}; secrets removed: {secrets}"


def show_contents(bundle: Bundle, output: Path, out: IO[str]) -> None:
    """What will be written: the top-level members one by one, the captured tree per top folder."""
    print(f"{TOOL_NAME} bundle → {output}\n", file=out)
    groups: dict[str, list[int]] = {}
    for member in bundle.members:
        if member.data is None:
            continue
        parts = member.path.split("/")
        if len(parts) <= 2:
            mark = f"  ({', '.join(sorted(member.redaction))} redacted)" if member.redaction else ""
            print(f"  {member.path:<28} {human_size(member.size):>10}{mark}", file=out)
        else:
            groups.setdefault("/".join(parts[:2]) + "/", []).append(member.size)
    for folder, sizes in sorted(groups.items()):
        print(f"  {folder:<28} {human_size(sum(sizes)):>10}  ({len(sizes)} captured files)", file=out)
    print(f"\n{redaction_line(bundle)[0].upper()}{redaction_line(bundle)[1:]}.", file=out)
    print(
        "Environment variables: only the GPU/Python ones (CUDA_*, NCCL_*, PATH, ...), never secrets.\n",
        file=out,
    )
