"""Time and JSON size per GPU of judging a machine with 1, 8, 32 and 128 GPUs (issue 21: linear in GPUs).

The machines are synthetic facts, built as an 8-GPU HGX server's are (NVML devices, the joined GPUs, IOMMU
groups four GPUs to a root port, NVLink through NVSwitch, topology pairs up to 32 GPUs), repeated: gathering
reads each GPU's files once, so what can grow with the square of the GPUs is judging and the report, and that
is what is timed here (every check, the derived install recommendation, the JSON envelope).

    python benchmarks/gpu_scaling.py --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # run as a script: find tests/ and the package
from tests.factories import facts, gpu, nvml_device, nvml_ok
from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.facts.iommu import GpuIommu, IommuFacts, routes_below_shared_ports
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.topology import (
    MAX_TOPOLOGY_GPUS,
    Ancestor,
    GpuLinks,
    GpuPair,
    NvLink,
    P2pStatus,
    TopologyFacts,
)
from torch_gpu_doctor.judge import judge
from torch_gpu_doctor.render.json_report import render_json
from torch_gpu_doctor.unavailable import Reason, Unavailable


def machine(n: int) -> Facts:
    bdfs = [f"0000:{(i // 32) + 1:02x}:{i % 32:02x}.0" for i in range(n)]
    devices = tuple(
        nvml_device(i, bdf=b, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{i:08x}-0000-0000-0000-000000000000")
        for i, b in enumerate(bdfs)
    )
    gpus = tuple(gpu(bdf=b, name="NVIDIA H100 80GB HBM3", cc="9.0", nvml_index=i) for i, b in enumerate(bdfs))
    ports = [f"0000:00:{i // 4:02x}.0" for i in range(n)]
    iommu_gpus = tuple(
        GpuIommu(b, (p, f"0000:{0x80 + i // 4:02x}:00.0"), str(i), "DMA-FQ", (b,))
        for i, (b, p) in enumerate(zip(bdfs, ports, strict=True))
    )
    iommu = IommuFacts(
        ("dmar0",), n, ("intel_iommu=on",), iommu_gpus, routes_below_shared_ports(iommu_gpus, False)
    )
    links = tuple(
        GpuLinks(i, b, tuple(NvLink("0000:f0:00.0", "switch") for _ in range(18))) for i, b in enumerate(bdfs)
    )
    pairs: tuple[GpuPair, ...] | Unavailable = (
        tuple(
            GpuPair(a, b, Ancestor.NODE, P2pStatus.OK, P2pStatus.OK)
            for a in range(n)
            for b in range(a + 1, n)
        )
        if n <= MAX_TOPOLOGY_GPUS
        else Unavailable(Reason.NOT_APPLICABLE, f"{n} GPUs")
    )
    base = facts(nvml=nvml_ok(devices=devices), gpus=gpus)
    return replace(base, iommu=iommu, topology=TopologyFacts(links, pairs))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    checks = load_checks(plugins=False).checks
    print(f"{'GPUs':>5} {'judge+JSON ms':>14} {'JSON KB':>8}   per added GPU since the row above")
    previous: tuple[int, float, int] | None = None
    for n in (1, 8, 32, 128):
        f = machine(n)
        times, size = [], 0
        for _ in range(args.runs):
            started = time.perf_counter()
            size = len(render_json(judge(f, checks)).encode())
            times.append(time.perf_counter() - started)
        ms = statistics.median(times) * 1000
        added = ""
        if previous is not None:
            gpus = n - previous[0]
            added = f"   {(ms - previous[1]) / gpus:6.2f} ms  {(size - previous[2]) / 1024 / gpus:6.2f} KB"
        print(f"{n:>5} {ms:>14.1f} {size / 1024:>8.1f}{added}")
        previous = (n, ms, size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
