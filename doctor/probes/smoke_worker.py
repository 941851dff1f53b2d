# One rank of the smoke test's all-reduce, started by doctor/probes/smoke.py once per GPU (each in its own
# process, as torch.distributed needs). Standard library and torch only; Python 3.7+ syntax. It prints one JSON
# line: {"rank", "seconds", "correct", "backend"} or {"rank", "error"}.
import json
import sys
import time


def emit(item):
    sys.stdout.write(json.dumps(item) + "\n")
    sys.stdout.flush()


def first_line(exc):
    """The error's first line, and NCCL's real cause where it gives one: PyTorch's DistBackendError puts it
    after "Last error:", on the same line or the next ("Error while creating shared memory segment ...")."""
    text = [line.strip() for line in str(exc).strip().splitlines()]
    if not text:
        return type(exc).__name__
    for i, line in enumerate(text):
        if line.startswith("Last error:"):
            cause = line[len("Last error:") :].strip() or next((t for t in text[i + 1 :] if t), "")
            if cause:
                return "%s; last error: %s" % (text[0], cause)
    return text[0]


def worker(config):
    """One rank of the all-reduce: sums `bytes` of float32 ones times (rank + 1) across all ranks."""
    import torch
    import torch.distributed as dist

    hooks = getattr(torch, "_gpu_doctor_smoke_test", {})
    device_type = config["device_type"]
    rank, world = config["rank"], config["world"]
    try:
        all_reduce_rank(torch, dist, hooks, config, device_type, rank, world)
    except Exception as exc:  # the parent smoke step reports it; a traceback would be noise
        emit({"rank": rank, "error": "%s: %s" % (type(exc).__name__, first_line(exc))})
        sys.exit(1)


def all_reduce_rank(torch, dist, hooks, config, device_type, rank, world):
    backend = "nccl" if device_type == "cuda" else "gloo"
    if device_type == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(
        backend, init_method="tcp://127.0.0.1:%d" % config["port"], rank=rank, world_size=world
    )
    try:
        hooks.get("worker_start", lambda _rank: None)(rank)
        tensor = torch.full((config["bytes"] // 4,), float(rank + 1), device=torch.device(device_type, rank))
        for _ in range(2):
            dist.all_reduce(tensor)
        tensor.fill_(float(rank + 1))
        dist.all_reduce(tensor)
        expected = world * (world + 1) / 2.0
        correct = bool((tensor == expected).all().item())
        dist.barrier()
        if device_type == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(config["iters"]):
            dist.all_reduce(tensor)
        if device_type == "cuda":
            torch.cuda.synchronize()
        seconds = (time.perf_counter() - started) / config["iters"]
        emit({"rank": rank, "seconds": seconds, "correct": correct, "backend": backend})
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    worker(json.loads(sys.argv[1]))
