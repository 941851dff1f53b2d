"""What the paste shows of the machine's GPUs and of what runs on them, beyond the facts the checks read: an
idle GPU beside words that say the job is slow, one GPU full of another job beside free ones, the smaller of two
named models, mixed models, a table cut inside a GPU's block, GPUs on different sockets. Each moves a verdict's
next step to the GPU the job should run on."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.checks.env import NOT_A_GPU_INDEX
from torch_gpu_doctor.checks.torch_out_of_memory import sized, stated_most
from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.precision import capability
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.gpu_access import tcc_fix
from torch_gpu_doctor.fixes.hidden_gpu import (
    asked_for_a_missing_gpu,
    run_on_a_free_gpu,
    run_on_the_larger_gpu,
)
from torch_gpu_doctor.fixes.out_of_memory import HOLDER_QUERY, invisible_holder
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.triage.job_size import OOM
from torch_gpu_doctor.triage.outcome import TOPOLOGY, Kind, Verdict
from torch_gpu_doctor.triage.paste import INFORMATIONAL, PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS
from torch_gpu_doctor.triage.told import CUDA_INIT
from torch_gpu_doctor.triage.topology import slow_across_sockets
from torch_gpu_doctor.unavailable import Unavailable


def gpus_past_the_cut(verdict: Verdict, cut: int) -> Verdict:
    """An index past the GPUs of an nvidia-smi table cut after its row `cut` may well exist (blind set 17: "'1'
    is not a GPU index (0-0)" read from a table cut after GPU 0): what is known is only that the program asked
    CUDA for one it does not see."""
    finding = verdict.finding
    if finding.check_id != "env.cuda_visible_devices" or NOT_A_GPU_INDEX not in finding.summary:
        return verdict
    summary = (
        f"The program asked CUDA for a GPU it does not see; the paste's nvidia-smi table stops after the GPU on "
        f"line {cut}, so how many GPUs the machine has is not shown."
    )
    finding = dataclasses.replace(finding, summary=summary, remediation=asked_for_a_missing_gpu())
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, cut}))
    )


IDLE_MIB, IDLE_SHARE = 512, 0.05  # memory a desktop or an idle context holds, not a job's


IDLE_PCT = 1  # GPU-Util at or below this, in the table pasted beside "slow": the job is not running there


def idle_while_slow(
    verdicts: tuple[Verdict, ...], pasted: PastedText, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """The person says the job is slow and the pasted nvidia-smi shows its largest GPU idle (GPU-Util 0%, next to
    no memory used): the job is not running on the GPU, whatever the driver's health (blind set 19: training
    'very slow', the TITAN V at 0% in P8 beside a display card). Only where nothing else was found."""
    smi, slow = pasted.smi, pasted.prose.slow
    if smi is None or slow is None or any(v.kind == Kind.PROBLEM for v in verdicts):
        return verdicts
    sized = [g for g in smi.gpus if g.memory_total_mib is not None and g.utilization_pct is not None]
    if not sized:
        return verdicts
    largest = max(sized, key=lambda g: g.memory_total_mib or 0)
    used, total = largest.memory_used_mib or 0, largest.memory_total_mib or 1
    if (largest.utilization_pct or 0) > IDLE_PCT or used > max(IDLE_MIB, total * IDLE_SHARE):
        return verdicts  # busy, or holding a job's memory (a model loaded, waiting): not idle
    finding = Finding(
        CUDA_INIT,
        Status.WARN,
        f"The job is slow (line {slow}) while nvidia-smi shows {largest.name} idle ({largest.utilization_pct}% "
        f"busy, {largest.memory_used_mib} MiB used): the job is most likely not running on the GPU.",
        details="The driver answers and the GPU is there; a job that ran on it would keep it busy and hold its "
        "memory. The framework runs on the CPU (a CPU-only build, no device chosen) or another GPU, or the job "
        "spends its time loading data.",
        remediation=Remediation(
            text="While the job runs, see which processes use the GPU: the job's own process must be listed "
            "with memory on it. If it is not, check that its framework sees the GPU (torch: "
            "torch.cuda.is_available() and the model's device; TensorFlow: tf.config.list_physical_devices('GPU')) "
            "and install its CUDA build; if it is there but idle, the input pipeline is the bottleneck (more "
            "DataLoader workers, data on a local disk).",
            commands=(
                Command(
                    HOLDER_QUERY,
                    note="while the job runs: it must be listed",
                ),
            ),
            target=Target.SYSTEM,
        ),
    )
    lines = tuple(sorted({slow, *smi.lines}))
    added = Verdict(finding, titles.get(CUDA_INIT, CUDA_INIT), Kind.PROBLEM, (), None, lines)
    return (added, *verdicts)


def slow_between_sockets(verdict: Verdict, pasted: PastedText) -> Verdict:
    finding = slow_across_sockets(verdict.finding, pasted) if verdict.finding.check_id == TOPOLOGY else None
    if finding is None or pasted.topology is None or pasted.prose.slow is None:
        return verdict
    lines = {*verdict.lines, pasted.prose.slow, *pasted.topology.lines}
    return dataclasses.replace(
        verdict, finding=finding, kind=Kind.PROBLEM, missing=(), find_out=None, lines=tuple(sorted(lines))
    )


def on_the_smaller_gpu(verdict: Verdict, pasted: PastedText) -> Verdict:
    """Out of memory where the words name two different NVIDIA GPUs ("two GPUs: A6000 and GT1030"): the job most
    likely runs on the smaller one (blind set 18: bitsandbytes saw compute capability 6.1 beside an A6000), so
    pinning it to the larger comes before any smaller job. The larger is the newer architecture."""
    finding = verdict.finding
    if (
        finding.check_id != "torch.out_of_memory"
        or finding.status is not Status.FAIL
        or len(pasted.prose.gpus) < 2
    ):
        return verdict
    matrix = load_matrix()
    known = [(g, matrix.gpu_by_name(g.value)) for g in pasted.prose.gpus]
    rated = sorted(
        ((tuple(int(p) for p in m.compute_capability.split(".")), g) for g, m in known if m is not None),
        key=lambda r: r[0],
    )
    if len(rated) < 2 or rated[0][0] == rated[-1][0]:
        return verdict  # the same generation, or a name the table lacks: nothing says which is smaller
    smaller, larger = rated[0][1], rated[-1][1]
    finding = dataclasses.replace(
        finding,
        summary=f"{finding.summary.removesuffix('.')}: most likely on the {smaller.value}, the smaller of the "
        f"machine's GPUs (the paste names {larger.value} and {smaller.value}).",
        remediation=run_on_the_larger_gpu(larger.value, smaller.value),
    )
    lines = tuple(sorted({*verdict.lines, smaller.line, larger.line}))
    return dataclasses.replace(verdict, finding=finding, lines=lines, find_out=None)


FULL_SHARE = 0.8  # a GPU this full of another job's memory has no room for a second one
HELD_SHARE = 0.25  # memory in use beyond a desktop's and a stray context's: a job's, if nvidia-smi lists none
IDLE_UTIL_PCT = 5


def on_a_full_gpu_beside_free_ones(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """Out of memory where the pasted nvidia-smi shows one GPU (mostly) full and others holding nothing: another
    job fills that GPU, and this one belongs on a free one (blind set 21: GPU 0 running a TensorFlow job at
    15514 of 16130 MiB, GPUs 1-3 at 0 MiB, and `--device 0`)."""
    finding, smi = verdict.finding, pasted.smi
    if finding.check_id != OOM or finding.status is not Status.FAIL or smi is None:
        return verdict
    listed = [
        g for g in smi.gpus if g.index is not None and g.memory_total_mib and g.memory_used_mib is not None
    ]
    full = [g for g in listed if (g.memory_used_mib or 0) >= FULL_SHARE * (g.memory_total_mib or 1)]
    # free: no more than a desktop's share, as idle_while_slow counts it (a display holds a few hundred MiB)
    free = [
        g.index
        for g in listed
        if (g.memory_used_mib or 0) <= max(IDLE_MIB, (g.memory_total_mib or 0) * IDLE_SHARE)
        and g.index is not None
    ]
    busy = full[0] if len(full) == 1 else None
    if busy is None or busy.index is None or not free:
        return verdict
    reported = facts.reported_errors
    error = stated_most(reported) if not isinstance(reported, Unavailable) else None
    if error is not None and sized(error):
        return verdict  # the error's own figures say whose memory fills it: torch.out_of_memory weighed them
    finding = dataclasses.replace(
        finding,
        summary=f"{finding.summary.removesuffix('.')}: GPU {busy.index} is already {busy.memory_used_mib} of "
        f"{busy.memory_total_mib} MiB full (another job), while "
        + (
            f"GPUs {', '.join(map(str, free))} hold nothing."
            if len(free) > 1
            else f"GPU {free[0]} holds nothing."
        ),
        remediation=run_on_a_free_gpu(busy.index, [i for i in free if i is not None]),
    )
    lines = tuple(sorted({*verdict.lines, *smi.lines}))
    return dataclasses.replace(verdict, finding=finding, lines=lines, find_out=None)


def held_out_of_sight(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """Out of memory where the pasted nvidia-smi shows a GPU with much of its memory used while its Processes
    block lists no process: the holder is out of nvidia-smi's sight (another container or PID namespace, another
    user, a process that never exited), and no batch size gives that memory back (blind set 23: CrossE#2, a
    P100 at 12799 of 16280 MiB, 0%, no process listed)."""
    finding, smi = verdict.finding, pasted.smi
    if finding.check_id != OOM or finding.status is not Status.FAIL or smi is None or smi.processes != 0:
        return verdict
    held = [
        g
        for g in smi.gpus
        if g.memory_total_mib
        and g.memory_used_mib is not None
        and g.memory_used_mib >= HELD_SHARE * g.memory_total_mib
        # idle: a GPU at work is the job itself, seen from inside its container (no process listed there)
        and (g.utilization_pct is None or g.utilization_pct <= IDLE_UTIL_PCT)
    ]
    if not held:
        return verdict
    reported = facts.reported_errors
    error = stated_most(reported) if not isinstance(reported, Unavailable) else None
    if error is not None and sized(error):
        return verdict  # the error's own figures say whose memory it is: torch.out_of_memory weighed them
    gpu = held[0]
    finding = dataclasses.replace(
        finding,
        summary=f"GPU memory is held out of nvidia-smi's sight: {gpu.memory_used_mib} of {gpu.memory_total_mib} MiB "
        f"{'of GPU ' + str(gpu.index) + ' ' if gpu.index is not None else ''}is in use while nvidia-smi lists no "
        "process, so the program runs out of what is left.",
        details="",
        remediation=invisible_holder(),
    )
    lines = tuple(sorted({*verdict.lines, *smi.lines}))
    return dataclasses.replace(verdict, finding=finding, lines=lines, find_out=None)


VISIBLE = "env.cuda_visible_devices"


MIXED = "The machine mixes GPU models"  # how mixed_gpus' answer starts: the usual cause, not one shown


def mixed_gpus(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """A failure said or shown on a machine that mixes GPU models of different compute capabilities, where
    nothing else was found: a job spread over all of them runs at the oldest one's features, or fails where the
    program needs more (blind set 20: vLLM#19045, 'vllm serve can not work on two 3090' beside two GTX 1080 Ti,
    Pascal, under vLLM's 7.0 floor). The step runs it on the newest model's GPUs, by the indices the paste shows:
    a report lists them in CUDA's own order, nvidia-smi in PCI bus order."""
    failed = pasted.prose.fails is not None or any(h.signature.id not in INFORMATIONAL for h in pasted.hits)
    if any(v.kind == Kind.PROBLEM for v in verdicts) or not failed:
        return verdicts
    named = [
        (g.name, g.compute_capability, g.nvml_index)
        for g in facts.nvidia_gpus
        if isinstance(g.name, str) and isinstance(g.compute_capability, str) and isinstance(g.nvml_index, int)
    ]
    if len(named) < len(facts.nvidia_gpus) or len({cc for _, cc, _ in named}) < 2:
        return verdicts
    newest = max((cc for _, cc, _ in named), key=capability)
    chosen = [(name, index) for name, cc, index in named if cc == newest]
    counts: dict[str, int] = {}
    for name, cc, _ in named:
        counts[f"{name} ({cc})"] = counts.get(f"{name} ({cc})", 0) + 1
    listed = ", ".join(f"{n}x {label}" for label, n in counts.items())
    lowered = pasted.paste.text[:MAX_CHARS].lower()
    data = load_torch_releases()
    oldest = min(capability(cc) for _, cc, _ in named)
    below = [
        f"{data.program_names.get(program, program)} needs compute capability {major}.{minor} or newer"
        for program, (major, minor) in data.program_floors.items()
        if program in lowered and oldest < (major, minor)
    ]
    indices = ",".join(str(index) for _, index in chosen)
    # nvidia-smi numbers the GPUs in PCI bus order, and collect_env lists them with `nvidia-smi -L`: CUDA's own
    # default is fastest first, so the numbers hold only with CUDA_DEVICE_ORDER=PCI_BUS_ID
    argv = ("env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", f"CUDA_VISIBLE_DEVICES={indices}", "PROGRAM")
    finding = Finding(
        VISIBLE,
        Status.WARN,
        f"{MIXED} ({listed}): a job over all of them runs at the oldest one's features or "
        "fails where the program needs more"
        + (f" ({'; '.join(below)})" if below else "")
        + f"; run it on the "
        f"{chosen[0][0]} GPUs only.",
        details="CUDA numbers the GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi, and "
        "collect_env through it, number them in PCI bus order: the indices below are those.",
        remediation=Remediation(
            text=f"Make only the {chosen[0][0]} GPUs visible to the program (and set its GPU count, a "
            "tensor-parallel size, to theirs).",
            commands=(Command(argv, note="PROGRAM: the failing command", runs_here=False),),
            target=Target.PYTHON_ENV,
        ),
    )
    lines = tuple(sorted({pasted.prose.fails.line} if pasted.prose.fails is not None else set()))
    added = Verdict(finding, titles.get(VISIBLE, VISIBLE), Kind.PROBLEM, (), None, lines)
    return (added, *verdicts)


# a vGPU profile's series letter: A (virtual applications) and B (virtual PC) profiles offer no CUDA; Q and C do
# (NVIDIA vGPU software user guide, "NVIDIA CUDA Toolkit and OpenCL Support on NVIDIA vGPU Software")
_NO_CUDA_SERIES = {"A": "virtual applications", "B": "virtual PC"}
_PROFILE_SERIES = lazy(r"-\d{1,3}(?P<series>[AB])$")


def no_cuda_on_the_gpus_shown(
    verdicts: tuple[Verdict, ...], pasted: PastedText, titles: dict[str, str], wsl: bool
) -> tuple[Verdict, ...]:
    """What the pasted nvidia-smi table itself says no CUDA program can get past, whatever else is found: a GPU
    whose compute mode is Prohibited (its Compute M. column: no process may create a CUDA context; a vGPU 'A' or
    'B' profile always shows it, ollama#8980), and under WSL a GPU in Windows' TCC driver model, which WSL's GPU
    paravirtualisation cannot reach (it needs WDDM or MCDM; microsoft/WSL#11865). Put first: each blocks CUDA
    on that GPU before any library or build matters."""
    smi = pasted.smi
    if smi is None:
        return verdicts
    added: list[Verdict] = []
    prohibited = [g for g in smi.gpus if g.compute_mode == "Prohibited"]
    if prohibited:
        gpu = prohibited[0]
        index = gpu.index if gpu.index is not None else 0
        series = _PROFILE_SERIES.search(gpu.name)
        if series is not None:
            kind = _NO_CUDA_SERIES[series["series"]]
            summary = (
                f"{gpu.name} is a vGPU '{series['series']}' profile ({kind}), which offers no CUDA: nvidia-smi "
                "shows its compute mode as Prohibited, so every CUDA program falls back to the CPU or fails."
            )
            fix = Remediation(
                text="Give the VM a vGPU profile that supports CUDA: a Q-series (RTX Virtual Workstation) or "
                "C-series (compute) profile of the same board, with its licence, in the hypervisor's VM settings "
                "(vSphere: edit the VM's PCI device); then restart the VM. The guest cannot change the profile.",
                commands=(
                    Command(("nvidia-smi", "-q"), note="'vGPU Software Licensed Product' after the change"),
                ),
                target=Target.SYSTEM,
            )
        else:
            summary = (
                f"GPU {index} ({gpu.name}) is in compute mode Prohibited: no program may create a CUDA context "
                "on it, so CUDA sees no usable GPU there."
            )
            fix = Remediation(
                text="Set the GPU's compute mode back to Default (an administrator or a cluster prolog set it; it "
                "returns at reboot unless set again).",
                commands=(Command(("sudo", "nvidia-smi", "-i", str(index), "-c", "DEFAULT")),),
                requires_root=True,
                target=Target.SYSTEM,
            )
        finding = Finding(CUDA_INIT, Status.FAIL, summary, remediation=fix)
        added.append(Verdict(finding, titles.get(CUDA_INIT, CUDA_INIT), Kind.PROBLEM, (), None, smi.lines))
    tcc = [g for g in smi.gpus if g.driver_model == "TCC"]
    if wsl and tcc:
        gpu = tcc[0]
        index = gpu.index if gpu.index is not None else 0
        finding = Finding(
            CUDA_INIT,
            Status.FAIL,
            f"{gpu.name} runs in Windows' TCC driver model, which WSL cannot use: WSL reaches a GPU only through "
            "the WDDM (or MCDM) driver model, so WSL has no GPU ('GPU access blocked by the operating system').",
            remediation=tcc_fix(index),
        )
        added.append(Verdict(finding, titles.get(CUDA_INIT, CUDA_INIT), Kind.PROBLEM, (), None, smi.lines))
    return (*added, *verdicts)
