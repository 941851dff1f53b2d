"""gpu-doctor's smoke-test figures as ratios of independent reference measurements (target: within 10%).

References, run by the same interpreter on the same GPU, written without any of gpu-doctor's code:
- host↔device: a plain loop of pinned `copy_(non_blocking=True)` calls between two CUDA events (one timing
  for the whole loop, as NVIDIA's bandwidthTest does), 256 MiB buffers;
- matmul: `torch.utils.benchmark.Timer(...).blocked_autorange()` on the same sizes and precisions.
Then `gpu-doctor smoke --json` runs and its GPU 0 figures are divided by the references.

    python benchmarks/smoke_accuracy.py --python /opt/torch/.venv/bin/python --doctor .venv/bin/gpu-doctor
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REFERENCE = r"""
import json, sys, torch
from torch.utils import benchmark
if not torch.cuda.is_available():
    print(json.dumps({"error": "torch.cuda.is_available() is False"})); sys.exit(0)
out = {"gpu": torch.cuda.get_device_name(0)}
nbytes, loops = 256 << 20, 20
host = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
for name, dst, src in (("h2d_pinned", dev, host), ("d2h_pinned", host, dev)):
    dst.copy_(src, non_blocking=True); torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(loops):
        dst.copy_(src, non_blocking=True)
    end.record(); end.synchronize()
    out[name] = nbytes * loops / (start.elapsed_time(end) / 1000) / 1e9
major = torch.cuda.get_device_properties(0).major
for precision in ("fp32", "tf32", "fp16", "bf16"):
    if precision in ("tf32", "bf16") and major < 8:
        continue
    dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
    n = int(sys.argv[1])
    a, b = torch.randn(n, n, device="cuda", dtype=dtype), torch.randn(n, n, device="cuda", dtype=dtype)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    timer = benchmark.Timer(stmt="torch.matmul(a, b, out=c)", globals={"torch": torch, "a": a, "b": b, "c": c})
    m = timer.blocked_autorange(min_run_time=1.0)
    out["matmul_" + precision] = 2 * n ** 3 / m.median / 1e12
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter with a CUDA torch")
    parser.add_argument("--doctor", default=str(Path(sys.executable).parent / "gpu-doctor"))
    parser.add_argument("--matmul-n", type=int, default=8192, help="the smoke test's standard size")
    args = parser.parse_args()
    ref_proc = subprocess.run(
        [args.python, "-c", REFERENCE, str(args.matmul_n)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = [line for line in ref_proc.stdout.splitlines() if line.startswith("{")]
    if ref_proc.returncode != 0 or not lines:
        print(f"reference failed (exit {ref_proc.returncode}): {ref_proc.stderr[-800:]}")
        return 2
    reference = json.loads(lines[-1])
    if "error" in reference:
        print(f"no GPU to measure: {reference['error']}")
        return 2
    smoke_proc = subprocess.run(
        [args.doctor, "smoke", "--mode", "standard", "--json", "--python", args.python, "--yes"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    document = json.loads(smoke_proc.stdout)
    smoke = document.get("smoke") or {}
    ours = {f["key"]: f for f in smoke.get("figures", []) if f["device"] in (0, None)}
    print(
        f"GPU: {reference['gpu']} · smoke outcome: {smoke.get('outcome')} in {smoke.get('duration_ms', 0) / 1000:.1f} s"
    )
    print(f"{'figure':<14} {'gpu-doctor':>12} {'reference':>12} {'ratio':>7}  within 10%")
    worst = 0.0
    for key in ("h2d_pinned", "d2h_pinned", "matmul_fp32", "matmul_tf32", "matmul_fp16", "matmul_bf16"):
        if key not in reference or key not in ours:
            continue
        mine, ref = ours[key]["value"], reference[key]
        ratio = mine / ref
        worst = max(worst, abs(ratio - 1))
        unit = ours[key]["unit"]
        print(
            f"{key:<14} {mine:>8.2f} {unit:<4}{ref:>8.2f} {unit:<4}{ratio:>6.3f}  {'yes' if abs(ratio - 1) <= 0.10 else 'NO'}"
        )
        print(f"{'':<14} {ours[key]['sentence']}")
    print(f"largest deviation: {worst:.1%}")
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
