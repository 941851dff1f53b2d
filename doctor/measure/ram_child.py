"""The child that measures RAM bandwidth: `python -m torch_gpu_doctor.measure.ram_child [--threads N] [--budget S]`.

It is started by `host.real.measure_ram_in_child` with glibc's non-temporal threshold set (measure/ram_bandwidth.py
says why a child) and prints the result as one JSON document. Nothing imports this module.
"""

from __future__ import annotations

import argparse
import json

from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.measure.ram_bandwidth import cpuid_l3_bytes, measure_ram_bandwidth
from torch_gpu_doctor.serialize import to_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ram_child")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--budget", type=float, default=2.5)
    args = parser.parse_args(argv)
    result = measure_ram_bandwidth(
        RealHost(), threads=args.threads, time_budget_s=args.budget, cpuid_cache_bytes=cpuid_l3_bytes()
    )
    print(json.dumps(to_json(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
