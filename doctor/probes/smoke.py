# The GPU smoke test, run by the *target* interpreter from a file, with its step files beside it.
# Standard library and torch only; Python 3.7+ syntax. It prints one JSON object per stdout line:
#   {"event": "hello", "protocol": 1, "mode": M, "pid": P}
#   {"event": "start", "step": S, "device": I|null, "variant": V|null}   BEFORE the step touches anything
#   {"event": "device", "index": I, "name": ..., ...}                     during cuda_init, one per device
#   {"event": "progress", "step": S, "device": I|null, "variant": V|null, "done": 0..1}
#                                      part of a long step done, at most ten a second (the parent draws a bar)
#   {"event": "end", "step": S, "device": I|null, "variant": V|null, "status": "ok"|"wrong"|"error"|"skipped",
#    "message": TEXT|null, "oom": BOOL, "values": {NAME: number|string|bool|null}, "duration_ms": MS}
#   {"event": "done"}
# A step that starts and never ends is the one that hung or crashed: the parent arms a watchdog at each start
# and attributes a segfault or a hard lock to it.
# The steps live in sibling files, written beside this one by the parent (doctor/host/real.py):
# gpu_doctor_smoke_common.py, _memory.py, _compute.py, _multi.py and _worker.py.
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the siblings, even under PYTHONSAFEPATH
from gpu_doctor_smoke_common import (  # noqa: E402
    PROGRESS_EVERY_S,
    STICKY,
    StepFailed,
    emit,
    first_line,
    is_oom,
    pci_address,
    step_label,
    uuid_text,
    write_step,
)
from gpu_doctor_smoke_compute import ComputeSteps  # noqa: E402
from gpu_doctor_smoke_memory import MemorySteps  # noqa: E402
from gpu_doctor_smoke_multi import MultiGpuSteps  # noqa: E402

PROTOCOL = 1
# GPU clock cycles to hold the stream for per queued call: 0.1 ms at 2 GHz, above Python's launch of a
# matmul or copy (about 10-30 microseconds), below anything a person waits for.
HOLD_CYCLES_PER_CALL = 200000


class Smoke(MemorySteps, ComputeSteps, MultiGpuSteps):
    def __init__(self, torch, mode, sizes, device_type):
        self.torch = torch
        self.mode = mode
        self.sizes = sizes
        self.device_type = (
            device_type  # "cuda" (also ROCm builds); tests use "cpu" under a simulated torch.cuda
        )
        self.broken = {}  # device index -> why later steps on it are skipped
        self.current = None  # the running step's (name, device, variant)
        self.last_progress = 0.0
        self.step_file = None  # the parent's breadcrumb step file (doctor/smoke/breadcrumb.py)
        self.known = []  # the parent's NVML list of NVIDIA GPUs ({"uuid", "bdf"}): PCI addresses for old torch

    # --- step plumbing -------------------------------------------------------------------------------------

    def step(self, name, device, variant, fn):
        # The breadcrumb's step, on disk before the GPU is touched: the parent learns of the step from the
        # "start" line, too late when the machine locks up within milliseconds of it.
        if self.step_file:
            write_step(self.step_file, step_label(name, device, variant))
        emit({"event": "start", "step": name, "device": device, "variant": variant})
        started = self.last_progress = time.time()
        self.current = (name, device, variant)
        status, message, oom, values = "ok", None, False, {}
        if device is not None and device in self.broken:
            status, message = "skipped", "GPU %d failed earlier: %s" % (device, self.broken[device])
        else:
            try:
                values = fn() or {}
            except StepFailed as exc:
                status, message, values = exc.status, str(exc), exc.values
            except Exception as exc:  # a CUDA error is a finding, not a crash of the smoke test
                status, message = "error", "%s: %s" % (type(exc).__name__, exc)
                oom = is_oom(exc)
                if device is not None and any(word in str(exc) for word in STICKY):
                    self.broken[device] = message
                self.empty_cache()
        emit(
            {
                "event": "end",
                "step": name,
                "device": device,
                "variant": variant,
                "status": status,
                "message": message,
                "oom": oom,
                "values": values,
                "duration_ms": round((time.time() - started) * 1000, 1),
            }
        )
        self.current = None
        return status

    def progress(self, done):
        """How much of the running step is done (0..1), from a point where the GPU has caught up."""
        now = time.time()
        if self.current is None or now - self.last_progress < PROGRESS_EVERY_S:
            return
        self.last_progress = now
        name, device, variant = self.current
        done = round(min(max(float(done), 0.0), 1.0), 3)
        emit({"event": "progress", "step": name, "device": device, "variant": variant, "done": done})

    def empty_cache(self):
        try:
            self.torch.cuda.empty_cache()
        except Exception:
            pass

    def dev(self, index):
        return self.torch.device(self.device_type, index)

    def sync(self, index):
        self.torch.cuda.synchronize(index)

    def timed(self, index, fn, repeats, hold=True):
        """Per-call milliseconds of `fn` measured with CUDA events, after one untimed warm-up call. The pairs
        are recorded back to back behind a held stream (`hold`), so no start event waits for Python."""
        torch = self.torch
        fn()
        self.sync(index)
        if hold:
            self.hold(repeats)
        pairs = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
        self.sync(index)
        return [max(s.elapsed_time(e), 1e-6) for s, e in pairs]

    def hold(self, calls):
        """Keep the current stream busy while `calls` GPU calls are enqueued behind it. On an idle stream a start
        event fires at once and the interval then counts Python's launch of the call (tens of microseconds:
        most of a small matmul on a fast GPU); behind `torch.cuda._sleep` every call is queued before the first
        event fires. A private function: without it the figures keep the launch overhead."""
        sleep = getattr(self.torch.cuda, "_sleep", None)
        if sleep is None:
            return
        try:
            sleep(int(HOLD_CYCLES_PER_CALL * max(1, calls)))
        except Exception:
            pass

    # --- the steps -----------------------------------------------------------------------------------------

    def cuda_init(self):
        torch = self.torch
        build = getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None)
        available = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if available else 0
        if not available or count == 0:
            if not build:
                raise StepFailed("skipped", "this torch is a CPU-only build", {"cuda_available": False})
            try:
                torch.cuda.init()
                why = "torch.cuda.is_available() is False"
            except Exception as exc:
                why = "%s: %s" % (type(exc).__name__, exc)
            raise StepFailed("error", why, {"cuda_available": False, "device_count": count})
        failed = {}
        for index in range(count):
            # One GPU at a time: a GPU that is full, taken in exclusive-process mode or in an error state is
            # marked broken (its steps are skipped and named), and the others are still tested.
            item = {"event": "device", "index": index}
            try:
                props = torch.cuda.get_device_properties(index)
                item.update(
                    {
                        "name": props.name,
                        "capability": "%d.%d" % (props.major, props.minor),
                        "total_memory_bytes": int(props.total_memory),
                        "multi_processor_count": getattr(props, "multi_processor_count", None),
                        "pci_bus_id": pci_address(props, index, self.known),
                        "uuid": uuid_text(props),
                    }
                )
                free, _ = torch.cuda.mem_get_info(index)  # creates this GPU's context
                item["free_memory_bytes"] = int(free)
            except Exception as exc:
                failed[index] = item["error"] = "%s: %s" % (type(exc).__name__, first_line(exc))
                self.broken[index] = failed[index]
            emit(item)
        if failed and len(failed) == count:
            raise StepFailed(
                "error",
                "no GPU could be used: "
                + "; ".join("GPU %d: %s" % (i, why) for i, why in sorted(failed.items())),
                {"cuda_available": True, "device_count": count, "failed_devices": count},
            )
        if failed:
            return {"cuda_available": True, "device_count": count, "failed_devices": len(failed)}
        return {"cuda_available": True, "device_count": count}


def run_all(smoke):
    torch = smoke.torch
    if smoke.step("cuda_init", None, None, smoke.cuda_init) != "ok":
        smoke.step("cpu_matmul", None, None, smoke.cpu_matmul)
        return
    count = torch.cuda.device_count()
    sizes = smoke.sizes
    for index in range(count):
        torch.cuda.set_device(index)
        smoke.step("memory", index, None, lambda i=index: smoke.memory(i))
        for kind in sizes["transfer_kinds"]:
            smoke.step("transfer", index, kind, lambda i=index, k=kind: smoke.transfer(i, k))
        smoke.step("device_copy", index, None, lambda i=index: smoke.device_copy(i))
        for precision in sizes["precisions"]:
            smoke.step("matmul", index, precision, lambda i=index, p=precision: smoke.matmul(i, p))
        if sizes["conv"]:
            smoke.step("conv", index, None, lambda i=index: smoke.conv(i))
        if sizes["train_steps"]:
            smoke.step("train", index, None, lambda i=index: smoke.train(i))
    if count < 2:
        return
    torch.cuda.set_device(0)
    smoke.step("peer_access", None, None, lambda: smoke.peer_access(count))
    pairs = (
        [(i, j) for i in range(count) for j in range(count) if i != j]
        if sizes["all_pairs"]
        else [(i, (i + 1) % count) for i in range(count)]
    )
    for src, dst in pairs:
        smoke.step("peer_copy", src, "to %d" % dst, lambda s=src, d=dst: smoke.peer_copy(s, d))
    smoke.step("all_reduce", None, None, lambda: smoke.all_reduce(count))


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    mode = config.get("mode", "standard")
    emit({"event": "hello", "protocol": PROTOCOL, "mode": mode, "pid": os.getpid()})
    holder = {}

    def import_torch():
        import torch

        holder["torch"] = torch
        return {
            "version": torch.__version__,
            "cuda": getattr(torch.version, "cuda", None),
            "hip": getattr(torch.version, "hip", None),
        }

    smoke = Smoke(None, mode, dict(config["sizes"]), "cuda")  # the mode's sizes: doctor/smoke/plan.py
    smoke.known = [g for g in config.get("gpus") or [] if isinstance(g, dict)]
    smoke.step_file = config.get("step_file") if isinstance(config.get("step_file"), str) else None
    if smoke.step("import", None, None, import_torch) != "ok":
        emit({"event": "done"})
        return
    torch = holder["torch"]
    hooks = getattr(torch, "_gpu_doctor_smoke_test", {})  # set only by the test suite's simulated torch.cuda
    smoke.torch = torch
    smoke.device_type = hooks.get("device_type", "cuda")
    smoke.sizes.update(hooks.get("sizes", {}))
    run_all(smoke)
    emit({"event": "done"})


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as exc:  # report, never a bare traceback
        emit(
            {
                "event": "fatal",
                "message": "%s: %s" % (type(exc).__name__, exc),
                "traceback": traceback.format_exc(),
            }
        )
        sys.exit(3)
