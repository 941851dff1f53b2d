"""A Jetson without the L4T driver's libcuda.so.1: "cannot open shared object file" on a Jetson, where no check
fails (a Jetson has no driver module or nvidia-smi to judge), so the paste read "No problem found". In a container
it was started without NVIDIA's runtime, which mounts the L4T libraries (blind set 32: jetson-containers#196,
docker compose on an Orin, while `docker run` of the same image worked); on the board itself the L4T folder is
missing from the loader cache (as in nvidia-container-toolkit#231's minimal rootfs)."""

from __future__ import annotations

import re

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.container_gpus import jetson_runtime, l4t_driver_for_toolkit
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

CHECK = "platform.container_gpus"
ON_THE_BOARD = "platform.jetson"
LIBCUDA = "no_driver_libcuda_not_found"
# a container named: docker, compose, a container's words or a Jetson image's name ("l4t-base", "dustynv/")
_CONTAINER = lazy(r"\bdocker(?:-compose)?\b|\bcompose\b|\bcontainers?\b|\bl4t-\w+|\bdustynv/", re.IGNORECASE)


def jetson_container_without_runtime(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """A verdict of its own where no other problem was found: on a Jetson, a container without libcuda.so.1."""
    if facts.jetson_board is None or any(v.kind == Kind.PROBLEM for v in verdicts):
        return verdicts
    hit = next((h for h in pasted.hits if h.signature.id == LIBCUDA), None)
    if hit is None:
        return verdicts
    if _CONTAINER.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        finding = Finding(
            CHECK,
            Status.FAIL,
            f"The container has no libcuda.so.1 (line {hit.line} of the paste): on a Jetson only NVIDIA's runtime "
            "mounts the driver's libraries, and this container was started without it.",
            remediation=jetson_runtime(),
        )
    else:  # on the board itself: the L4T driver's folder is not in the loader cache
        finding = Finding(
            ON_THE_BOARD,
            Status.FAIL,
            f"The L4T driver's libcuda.so.1 is not found (line {hit.line} of the paste): its folder is not in this "
            "Jetson's loader cache.",
            remediation=l4t_driver_for_toolkit(toolkit=False),
        )
    check = finding.check_id
    return (*verdicts, Verdict(finding, titles.get(check, check), Kind.PROBLEM, (), None, (hit.line,)))
