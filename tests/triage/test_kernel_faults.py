"""An illegal memory access, with what its paste already shows: a Triton kernel's launcher reported it (Inductor's
kernel or a library's), a rerun with CUDA_LAUNCH_BLOCKING=1 was made, a torch nightly is installed. Each on its
real paste (tests/triage/pastes, MANIFEST.json); torch's own hint to pass CUDA_LAUNCH_BLOCKING=1 is no run."""

from __future__ import annotations

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from tests.triage.test_blind25_classes import said
from torch_gpu_doctor.triage.kernel_fault import stable_for_nightly

BARE = "evo-136-illegal-address-bare.txt"
# stylegan2-pytorch#187, a comment under the same error (krips89, 2021-07-01), as posted
TRIED = "I have the same problem and export CUDA_LAUNCH_BLOCKING=1 didn't resolve the issue for me. \n"


def _commands(name_or_text: str, *, text: bool = False) -> tuple[str, str, list[str]]:
    d = said(name_or_text) if text else diagnosed(name_or_text)
    check, summary, _ = cause_of(d)
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    return check, summary, [" ".join(c.argv) for c in cause.finding.remediation.commands]


def test_an_inductor_kernels_fault_is_the_compiler_s_and_compile_off_comes_first() -> None:
    """torchdynamo#1365: 'Triton Error [CUDA]: an illegal memory access' under --inductor: the kernel torch.compile
    generated, not the program's code; the run without torch.compile decides it."""
    check, summary, commands = _commands(
        "torchdynamo-1365-inductor-triton-illegal-address-launch-blocking-set.txt"
    )
    assert check == "driver.xid_errors" and summary.startswith("A kernel compiled by Triton read or wrote")
    assert commands[0] == "env TORCH_COMPILE_DISABLE=1 python SCRIPT.py"
    assert not any("CUDA_LAUNCH_BLOCKING" in c for c in commands)


def test_a_librarys_triton_kernel_without_torch_compile_is_the_librarys() -> None:
    """lightning-attention#19: the same launcher error from the library's kernel in Megatron's backward, with no
    torch.compile anywhere: turning compile off cannot help, the library and its versions come first."""
    d = diagnosed("lightning-attention-19-library-triton-kernel-illegal-address.txt")
    _, _, commands = _commands("lightning-attention-19-library-triton-kernel-illegal-address.txt")
    assert not any("TORCH_COMPILE_DISABLE" in c for c in commands)
    assert commands[0].endswith("-m pip list") and commands[-1].startswith("compute-sanitizer")
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "library's own Triton kernel" in d.result.cause.finding.remediation.text


def test_a_fault_in_a_nightly_build_retests_on_the_stable_release_of_its_cuda_first() -> None:
    """pytorch#166070: flex attention's compiled block mask faults on torch 2.6.0.dev20241112+cu121; a stable
    2.6.0 of the nearest CUDA at or above 12.1 (cu124) comes before any other step."""
    _, _, commands = _commands("pytorch-166070-flex-attention-illegal-memory-access.txt")
    assert commands[0] == (
        "python -m pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu124"
    )
    assert commands[1] == "env TORCH_COMPILE_DISABLE=1 python SCRIPT.py"


def test_torchs_hint_is_no_rerun_but_a_rerun_said_moves_to_the_sanitizer() -> None:
    """evo#136: torch's own 'For debugging consider passing CUDA_LAUNCH_BLOCKING=1' only: the rerun comes first.
    With a person's line that says they exported it already, the rerun is not asked for again."""
    _, _, bare = _commands(BARE)
    assert bare[0] == "env CUDA_LAUNCH_BLOCKING=1 python SCRIPT.py"
    text = (PASTES / BARE).read_text(encoding="utf-8")
    _, _, tried = _commands(TRIED + text, text=True)
    assert tried[0] == "compute-sanitizer --tool memcheck PROGRAM"
    assert not any("CUDA_LAUNCH_BLOCKING" in c for c in tried)


def test_the_stable_release_of_a_nightly_is_its_own_version_or_the_next() -> None:
    assert stable_for_nightly("2.6.0", "12.1") == ("2.6.0", "cu124")
    assert stable_for_nightly("2.6.0", "11.8") == ("2.6.0", "cu118")
    assert stable_for_nightly("2.6.0", "13.0") is not None  # no CUDA 13 build of 2.6.0: one of its own
    assert stable_for_nightly("99.0.0", "12.1") is None  # a nightly newer than every release in the data
