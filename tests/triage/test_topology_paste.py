"""A pasted `nvidia-smi topo -m` is read as the machine's GPU topology: gpu.topology judges it as it judges
NVML's answers, and words that say the work between GPUs is slow make the pairs that cross CPU sockets the
cause (blind set 17: both topology pastes were "nothing it knows" or "No problem found"). Real pastes; the
single-GPU matrix is the H200 device machine's own output of 2026-11-27, underline escapes included."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.facts.topology import Ancestor, GpuPair, P2pStatus, TopologyFacts
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.tool_output import parse_topology
from torch_gpu_doctor.unavailable import Reason, Unavailable

HERE = Path(__file__).parent
CROSS_NUMA = "pastes/go-gpuallocator-17-topology-cross-numa.txt"  # 8x RTX 4090, all SYS, NUMA 0 and 1
T4_SYS = "pastes/nccl-428-topology-sys-allreduce.txt"  # GPU0 SYS to the rest, no NUMA column, "performance"
PXB_HANG = "pastes/nccl-667-topo-pxb-hang.txt"  # a hang, not slowness: no socket is crossed
CUT_MATRIX = "reports/c05_sglang_nvcc117_flashinfer_jit.txt"  # 8 GPUs in the header, 2 rows, NV12
H200_SINGLE = (
    "\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \t0-15\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
)


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((HERE / name).read_bytes(), name)


def test_the_matrix_gives_each_pair_and_each_gpus_socket() -> None:
    shown = parse_topology((HERE / CROSS_NUMA).read_text().split("\n"))
    assert shown is not None and shown.complete
    assert shown.gpus == tuple(range(8)) and len(shown.cells) == 28 and set(shown.cells.values()) == {"SYS"}
    assert shown.numa == {i: "0" if i < 4 else "1" for i in range(8)}
    assert shown.cpus[7] == "56-111,168-223"  # the NIC columns are not GPUs
    t4 = parse_topology((HERE / T4_SYS).read_text().split("\n"))
    assert t4 is not None and t4.numa == {} and t4.cells[0, 1] == "SYS" and t4.cells[1, 2] == "NODE"


def test_one_gpu_or_a_cut_matrix_is_no_topology_to_judge() -> None:
    single = diagnose_paste(H200_SINGLE.encode(), "h200-topo.txt")  # decoded first: the underline goes
    assert single.pasted.topology is None and parse_topology(single.pasted.paste.text.split("\n")) is None
    cut = diagnosed(CUT_MATRIX)
    assert cut.pasted.topology is not None and not cut.pasted.topology.complete
    # counting the NVLinks of a GPU whose row is missing would call a link down
    assert isinstance(cut.facts.topology, Unavailable)
    assert all(v.finding.check_id != "gpu.topology" for v in cut.result.verdicts)


def test_a_pasted_matrix_is_judged_by_the_same_check() -> None:
    pxb = diagnosed(PXB_HANG)
    topology = pxb.facts.topology
    assert isinstance(topology, TopologyFacts) and len(topology.gpus) >= 2
    verdict = next(v for v in pxb.result.verdicts if v.finding.check_id == "gpu.topology")
    # peer-to-peer is not in the matrix: below the sockets' link the path is not known, and the command that
    # shows it is the fix
    assert verdict.finding.status is Status.UNKNOWN
    assert "nvidia-smi topo -p2p rw" in verdict.finding.summary
    assert pxb.result.cause is None or pxb.result.cause.finding.check_id != "gpu.topology"


def test_slow_words_make_the_socket_crossing_the_cause() -> None:
    numa = diagnosed(CROSS_NUMA)
    cause = numa.result.cause
    assert cause is not None and cause.finding.check_id == "gpu.topology" and cause.kind == Kind.PROBLEM
    assert cause.finding.summary.startswith("GPUs 0-3 and GPUs 4-7 sit on different CPU sockets")
    assert cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv[:2] == ("env", "CUDA_VISIBLE_DEVICES=0,1,2,3")
    assert numa.result.exit_problem()
    t4 = diagnosed(T4_SYS).result.cause
    assert t4 is not None and t4.finding.summary.startswith("GPUs 1-3 and GPU 0 sit on different CPU sockets")
    assert t4.finding.remediation is not None
    assert t4.finding.remediation.commands[0].argv[1] == "CUDA_VISIBLE_DEVICES=1,2,3"


def test_without_slow_words_crossing_sockets_is_the_hardware_not_a_fault() -> None:
    text = (HERE / CROSS_NUMA).read_text().replace("very slower", "different").replace("speed", "output")
    quiet = diagnose_paste(text.encode(), "quiet.txt")
    assert quiet.pasted.prose.slow is None
    verdict = next(v for v in quiet.result.verdicts if v.finding.check_id == "gpu.topology")
    assert verdict.finding.status is Status.PASS and verdict.kind == Kind.FINE
    assert verdict.finding.summary == "8 GPUs: all 28 pairs through host memory."


def test_across_sockets_without_a_peer_to_peer_answer_is_host_memory() -> None:
    """NCCL's default cutoff (NCCL_P2P_LEVEL) stops peer-to-peer before the link between sockets."""
    from torch_gpu_doctor.checks.gpu_topology import path

    unknown = Unavailable(Reason.NOT_RECORDED, "not in the matrix")
    for level, want in ((Ancestor.SYSTEM, "host memory"), (Ancestor.NODE, "unknown")):
        pair = GpuPair(0, 1, level, unknown, unknown)
        assert path(TopologyFacts((), (pair,)), pair) == want
    ok = GpuPair(0, 1, Ancestor.SYSTEM, P2pStatus.OK, P2pStatus.OK)
    assert path(TopologyFacts((), (ok,)), ok) == "peer-to-peer over PCIe"


def test_gpus_in_a_matrix_are_no_jetson() -> None:
    assert all(v.finding.check_id != "platform.jetson" for v in diagnosed(CROSS_NUMA).result.verdicts)


def test_the_header_counts_the_gpus_a_matrix_shows() -> None:
    import io

    from torch_gpu_doctor.triage.render import render_text

    out = io.StringIO()
    render_text(diagnosed(CROSS_NUMA), "paste", out)
    assert "GPUs: 8 in the topology matrix (their names are not in the paste)" in out.getvalue()
