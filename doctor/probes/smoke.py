# The GPU smoke test, run by the *target* interpreter from a file (the all-reduce workers re-run this file).
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
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import traceback

PROTOCOL = 1
MIB = 1 << 20
PROGRESS_EVERY_S = 0.1
# One rank of the all-reduce; the parent writes it beside this file (doctor/probes/smoke_worker.py).
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_doctor_smoke_worker.py")
# Relative error bound per element, as a multiple of the sum of |a_ik * b_kj| (a rounding-error bound that
# holds for any summation order): generous, because a broken GPU is wrong by whole values, not by ulps.
MATMUL_TOLERANCE = {"fp32": 1e-5, "tf32": 4e-3, "fp16": 4e-3, "bf16": 3e-2}
STICKY = (
    "illegal memory access",
    "unspecified launch failure",
    "device-side assert",
    "ECC error",
    "uncorrectable",
    "fell off the bus",
    "misaligned address",
    "illegal instruction",
)
BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def emit(item):
    sys.stdout.write(json.dumps(item) + "\n")
    sys.stdout.flush()


class StepFailed(Exception):
    def __init__(self, status, message, values=None):
        Exception.__init__(self, message)
        self.status = status
        self.values = values or {}


class Smoke(object):
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

    # --- step plumbing -------------------------------------------------------------------------------------

    def step(self, name, device, variant, fn):
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

    def timed(self, index, fn, repeats):
        """Per-call milliseconds of `fn` measured with CUDA events, after one untimed warm-up call."""
        torch = self.torch
        fn()
        self.sync(index)
        pairs = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
        self.sync(index)
        return [max(s.elapsed_time(e), 1e-6) for s, e in pairs]

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
        for index in range(count):
            props = torch.cuda.get_device_properties(index)
            free, total = torch.cuda.mem_get_info(index)
            emit(
                {
                    "event": "device",
                    "index": index,
                    "name": props.name,
                    "capability": "%d.%d" % (props.major, props.minor),
                    "total_memory_bytes": int(props.total_memory),
                    "free_memory_bytes": int(free),
                    "multi_processor_count": getattr(props, "multi_processor_count", None),
                    "pci_bus_id": pci_bus_id(props),
                    "uuid": uuid_text(props),
                }
            )
        return {"cuda_available": True, "device_count": count}

    def memory(self, index):
        """Fill a large share of free memory with an address pattern and its complement; read both back."""
        torch = self.torch
        free, total = torch.cuda.mem_get_info(index)
        cols = 1 << 20  # int32 elements per row: 4 MiB
        rows = max(1, int(free * self.sizes["memory_share"]) // (4 * cols))
        requested = rows * cols * 4
        try:
            block = torch.empty((rows, cols), dtype=torch.int32, device=self.dev(index))
        except Exception as exc:
            if not is_oom(exc):
                raise
            raise StepFailed(
                "error",
                "out of memory allocating %d MiB of the %d MiB reported free: %s"
                % (requested // MIB, free // MIB, first_line(exc)),
                {"requested_bytes": requested, "free_bytes": int(free), "oom": True},
            ) from None
        col = torch.arange(cols, dtype=torch.int32, device=self.dev(index))
        batch = 64  # rows per pass: 256 MiB of temporaries
        mismatches, first_bad = 0, None
        for invert in (False, True):
            if invert:
                block.bitwise_not_()  # in place: every word flips, so stuck bits show in one of the passes
            else:
                for r0 in range(0, rows, batch):
                    block[r0 : min(rows, r0 + batch)].copy_(
                        self.pattern(index, col, r0, min(rows, r0 + batch))
                    )
            self.sync(index)
            for r0 in range(0, rows, batch):
                r1 = min(rows, r0 + batch)
                want = self.pattern(index, col, r0, r1)
                if invert:
                    want = torch.bitwise_not(want)
                bad = block[r0:r1] != want
                count = int(bad.sum().item())
                if count and first_bad is None:
                    first_bad = (r0 * cols + int(bad.flatten().nonzero()[0].item())) * 4
                mismatches += count
                self.progress((rows * invert + r1) / (2.0 * rows))
        del block
        self.empty_cache()
        values = {
            "tested_bytes": requested,
            "free_bytes": int(free),
            "total_bytes": int(total),
            "mismatches": mismatches,
            "first_bad_offset": first_bad,
        }
        if mismatches:
            raise StepFailed("wrong", "%d of %d words read back wrong" % (mismatches, rows * cols), values)
        return values

    def pattern(self, index, col, r0, r1):
        """Rows r0..r1 of the test pattern: each word differs from its neighbours in both directions."""
        torch = self.torch
        tag = torch.arange(r0, r1, dtype=torch.int32, device=self.dev(index)).unsqueeze(1) * 40503
        return torch.bitwise_xor(col.unsqueeze(0), tag)

    def transfer(self, index, kind):
        torch = self.torch
        nbytes = self.sizes["transfer_bytes"]
        host = torch.empty(nbytes, dtype=torch.uint8)
        if kind.endswith("pinned"):
            host = host.pin_memory()
        gpu = torch.empty(nbytes, dtype=torch.uint8, device=self.dev(index))
        if kind.startswith("h2d"):
            copy = lambda: gpu.copy_(host, non_blocking=True)  # noqa: E731
        else:
            copy = lambda: host.copy_(gpu, non_blocking=True)  # noqa: E731
        sampler = LinkSampler(self.bus_id(index)) if kind == "h2d_pinned" else None
        if sampler:
            sampler.start()
        try:
            ms = self.timed(index, copy, self.sizes["transfer_copies"])
        finally:
            if sampler:
                sampler.stop()
        values = {
            "bytes": nbytes,
            "copies": len(ms),
            "gbytes_per_s": round(nbytes / statistics.median(ms) / 1e6, 3),
            "best_gbytes_per_s": round(nbytes / min(ms) / 1e6, 3),
        }
        if sampler:
            values.update(sampler.values())
        return values

    def bus_id(self, index):
        try:
            return pci_bus_id(self.torch.cuda.get_device_properties(index))
        except Exception:
            return None

    def device_copy(self, index):
        torch = self.torch
        nbytes = self.sizes["copy_bytes"]
        src = torch.empty(nbytes, dtype=torch.uint8, device=self.dev(index))
        dst = torch.empty_like(src)
        ms = self.timed(index, lambda: dst.copy_(src), self.sizes["copy_repeats"])
        # Each byte is read once and written once: the figure bandwidthTest and datasheets compare with.
        return {
            "bytes": nbytes,
            "copies": len(ms),
            "gbytes_per_s": round(2 * nbytes / statistics.median(ms) / 1e6, 3),
        }

    def matmul(self, index, precision):
        torch = self.torch
        props = torch.cuda.get_device_properties(index)
        if precision in ("tf32", "bf16") and props.major < 8:
            raise StepFailed(
                "skipped",
                "%s needs compute capability 8.0 or newer (this GPU: %d.%d)"
                % (precision, props.major, props.minor),
            )
        dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[
            precision
        ]
        previous = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
        try:
            error = self.matmul_error(index, dtype, precision)
            n = self.matmul_size(index, dtype)
            a = torch.randn(n, n, device=self.dev(index), dtype=dtype)
            b = torch.randn(n, n, device=self.dev(index), dtype=dtype)
            out = torch.empty(n, n, device=self.dev(index), dtype=dtype)
            ms = self.timed_for(index, lambda: torch.matmul(a, b, out=out), self.sizes["matmul_min_s"])
        finally:
            torch.set_float32_matmul_precision(previous)
        tflops = 2.0 * n**3 / statistics.median(ms) / 1e9
        # four significant digits: a fixed 3 decimals gives 0.0 for a slow device or a small matrix
        values = {"n": n, "iterations": len(ms), "tflops": float("%.4g" % tflops)}
        values.update(error)
        if not error["correct"]:
            raise StepFailed(
                "wrong",
                "%s matmul differs from the float64 CPU result (worst element: %s times "
                "its error bound)" % (precision, error["worst_error_ratio"]),
                values,
            )
        return values

    def matmul_size(self, index, dtype):
        free, _ = self.torch.cuda.mem_get_info(index)
        n = self.sizes["matmul_n"]
        element = self.torch.empty((), dtype=dtype).element_size()
        while n > 256 and 3 * n * n * element > free // 4:
            n //= 2
        return n

    def timed_for(self, index, fn, min_s):
        """Event-timed calls until `min_s` has passed (at least 5), after a warm-up that loads the kernels."""
        torch = self.torch
        for _ in range(2):
            fn()
        self.sync(index)
        times, spent = [], 0.0
        while len(times) < 5 or spent < min_s * 1000:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            elapsed = max(start.elapsed_time(end), 1e-6)
            times.append(elapsed)
            spent += elapsed
            # it ends at min_s and 5 calls, or at 1000 calls (a tiny matrix on a fast GPU)
            self.progress(max(min(spent / (min_s * 1000), len(times) / 5.0), len(times) / 1000.0))
            if len(times) >= 1000:
                break
        return times

    def matmul_error(self, index, dtype, precision):
        torch = self.torch
        n = self.sizes["matmul_check_n"]
        gen = torch.Generator().manual_seed(1234)
        a = torch.randn(n, n, generator=gen).to(dtype)
        b = torch.randn(n, n, generator=gen).to(dtype)
        got = torch.matmul(a.to(self.dev(index)), b.to(self.dev(index))).cpu().double()
        exact = torch.matmul(a.double(), b.double())
        bound = torch.matmul(a.double().abs(), b.double().abs()) * MATMUL_TOLERANCE[precision]
        ratio = (got - exact).abs() / bound.clamp_min(1e-30)
        finite = bool(torch.isfinite(got).all().item())
        worst = float(ratio.max().item()) if finite else None
        return {
            "check_n": n,
            "worst_error_ratio": round(worst, 4) if worst is not None else None,
            "correct": finite and worst is not None and worst <= 1.0,
        }

    def conv(self, index):
        """A cuDNN convolution forward and backward, checked against the float64 CPU convolution."""
        torch = self.torch
        backend = torch.backends.cudnn
        if self.device_type == "cuda" and not backend.is_available():
            raise StepFailed("error", "cuDNN is not available to this torch")
        gen = torch.Generator().manual_seed(4321)
        weight = torch.randn(64, 32, 3, 3, generator=gen) * 0.1
        x = torch.randn(8, 32, 56, 56, generator=gen)
        conv = torch.nn.Conv2d(32, 64, 3, padding=1, bias=False).to(self.dev(index))
        with torch.no_grad():
            conv.weight.copy_(weight)
        xd = x.to(self.dev(index)).requires_grad_(True)
        started = time.time()
        out = conv(xd)
        out.square().mean().backward()
        self.sync(index)
        elapsed = (time.time() - started) * 1000
        ref_x = x.double().requires_grad_(True)
        ref = torch.nn.functional.conv2d(ref_x, weight.double(), padding=1)
        ref.square().mean().backward()
        scale = float(ref.abs().max().item()) or 1.0
        fwd_error = float((out.detach().cpu().double() - ref.detach()).abs().max().item()) / scale
        gscale = float(ref_x.grad.abs().max().item()) or 1.0
        bwd_error = float((xd.grad.cpu().double() - ref_x.grad).abs().max().item()) / gscale
        version = backend.version() if backend.is_available() else None
        values = {
            "forward_error": round(fwd_error, 6),
            "backward_error": round(bwd_error, 6),
            "first_call_ms": round(elapsed, 1),
            "cudnn_version": version,
        }
        if not (fwd_error <= 1e-2 and bwd_error <= 1e-2):  # TF32 convolutions are allowed by default
            raise StepFailed(
                "wrong",
                "the convolution differs from the CPU result (relative error forward %.3g, "
                "backward %.3g)" % (fwd_error, bwd_error),
                values,
            )
        return values

    def train(self, index):
        """A few mixed-precision steps (autocast + GradScaler) on a solvable regression: the loss must fall."""
        torch = self.torch
        props = torch.cuda.get_device_properties(index)
        dtype = torch.bfloat16 if props.major >= 8 else torch.float16
        gen = torch.Generator().manual_seed(99)
        x = torch.randn(512, 64, generator=gen)
        y = x @ torch.randn(64, 1, generator=gen)
        x, y = x.to(self.dev(index)), y.to(self.dev(index))
        torch.manual_seed(7)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))
        model = model.to(self.dev(index))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        scaler = grad_scaler(torch, self.device_type)
        losses = []
        for _ in range(self.sizes["train_steps"]):
            optimizer.zero_grad()
            with torch.autocast(device_type=self.device_type, dtype=dtype):
                loss = torch.nn.functional.mse_loss(model(x).float(), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(float(loss.item()))
            self.progress(len(losses) / float(self.sizes["train_steps"]))
        values = {
            "steps": len(losses),
            "dtype": str(dtype).replace("torch.", ""),
            "first_loss": round(losses[0], 6),
            "last_loss": round(losses[-1], 6),
        }
        if not all(x == x and abs(x) != float("inf") for x in losses) or not losses[-1] < 0.5 * losses[0]:
            raise StepFailed(
                "wrong", "the loss did not go down (%.4g -> %.4g)" % (losses[0], losses[-1]), values
            )
        return values

    def peer_access(self, count):
        values = {}
        for i in range(count):
            for j in range(count):
                if i != j:
                    values["%d->%d" % (i, j)] = bool(self.torch.cuda.can_device_access_peer(i, j))
        return values

    def peer_copy(self, src, dst):
        torch = self.torch
        nbytes = self.sizes["peer_bytes"]
        a = torch.empty(nbytes, dtype=torch.uint8, device=self.dev(src))
        b = torch.empty(nbytes, dtype=torch.uint8, device=self.dev(dst))
        b.copy_(a)
        self.sync(src)
        self.sync(dst)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            b.copy_(a)
            self.sync(src)
            self.sync(dst)
            times.append(time.perf_counter() - started)
            self.progress(len(times) / 5.0)
        return {"bytes": nbytes, "gbytes_per_s": round(nbytes / statistics.median(times) / 1e9, 3)}

    def all_reduce(self, count):
        port = free_port()
        nbytes = self.sizes["allreduce_bytes"]
        config = {
            "worker": "all_reduce",
            "world": count,
            "port": port,
            "bytes": nbytes,
            "iters": self.sizes["allreduce_iters"],
            "device_type": self.device_type,
        }
        workers = []
        for rank in range(count):
            config["rank"] = rank
            workers.append(
                subprocess.Popen(
                    [sys.executable, WORKER, json.dumps(config)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            )
        results, errors = [], []
        stop_at, failed_at = time.time() + 100, None
        while any(proc.poll() is None for proc in workers) and time.time() < stop_at:
            if failed_at is None and any(proc.poll() not in (None, 0) for proc in workers):
                failed_at = time.time()
                stop_at = min(
                    stop_at, failed_at + 5
                )  # the others wait for the dead rank forever: 5 s, then go
            time.sleep(0.05)
        hung = [rank for rank, proc in enumerate(workers) if proc.poll() is None]
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
        for rank, proc in enumerate(workers):
            out, err = proc.communicate()
            if rank in hung:
                why = "stopped after another rank failed" if failed_at else "did not finish within 100 s"
                errors.append("rank %d: %s" % (rank, why))
                continue
            lines = [line for line in out.decode("utf-8", "replace").splitlines() if line.startswith("{")]
            report = json.loads(lines[-1]) if lines else {}
            if proc.returncode != 0 or not report or "error" in report:
                errors.append(
                    "rank %d: %s" % (rank, report.get("error") or stderr_reason(err, proc.returncode))
                )
            else:
                results.append(report)
        if errors:
            raise StepFailed("error", "; ".join(errors))
        seconds = max(r["seconds"] for r in results)
        algbw = nbytes / seconds / 1e9
        values = {
            "world_size": count,
            "bytes": nbytes,
            "backend": results[0]["backend"],
            "algbw_gbytes_per_s": round(algbw, 3),
            "busbw_gbytes_per_s": round(algbw * 2 * (count - 1) / count, 3),
            "correct": all(r["correct"] for r in results),
        }
        if not values["correct"]:
            raise StepFailed("wrong", "the all-reduce returned a wrong sum", values)
        return values

    def cpu_matmul(self):
        torch = self.torch
        n = self.sizes["cpu_n"]
        gen = torch.Generator().manual_seed(5)
        a, b = torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)
        torch.matmul(a, b)
        times = []
        while len(times) < 3 or sum(times) < 0.3:
            started = time.perf_counter()
            torch.matmul(a, b)
            times.append(time.perf_counter() - started)
            self.progress(min(sum(times) / 0.3, len(times) / 3.0))
        small = 128
        exact = torch.matmul(a[:small, :].double(), b[:, :small].double())
        got = torch.matmul(a[:small, :], b[:, :small]).double()
        bound = (
            torch.matmul(a[:small, :].double().abs(), b[:, :small].double().abs()) * MATMUL_TOLERANCE["fp32"]
        )
        correct = bool(((got - exact).abs() <= bound).all().item())
        values = {
            "n": n,
            "gflops": round(2.0 * n**3 / statistics.median(times) / 1e9, 2),
            "threads": torch.get_num_threads(),
            "correct": correct,
        }
        if not correct:
            raise StepFailed("wrong", "the CPU matmul differs from the float64 result", values)
        return values


class LinkSampler(object):
    """Reads the GPU's PCIe link speed from sysfs while copies run: an idle link naps at Gen1, a loaded one
    should train up. Plain file reads; the copies run on the GPU's copy engine meanwhile (GIL released)."""

    def __init__(self, bus_id):
        self.base = "/sys/bus/pci/devices/%s/" % bus_id if bus_id and BDF.match(bus_id) else None
        self.samples = []
        self.running = False
        self.thread = threading.Thread(target=self.run)
        self.thread.daemon = True

    def start(self):
        if self.base:
            self.running = True
            self.thread.start()

    def run(self):
        while self.running:
            try:
                with open(self.base + "current_link_speed") as f:
                    speed = f.read().strip()
                with open(self.base + "current_link_width") as f:
                    width = f.read().strip()
            except (IOError, OSError):
                return
            self.samples.append((speed, width))
            time.sleep(0.002)

    def stop(self):
        self.running = False
        if self.thread.is_alive():
            self.thread.join(1.0)

    def values(self):
        if not self.samples:
            return {"link_samples": 0}
        fastest = max(self.samples, key=lambda s: gts(s[0]))
        return {
            "link_samples": len(self.samples),
            "link_speed_under_load": fastest[0],
            "link_width_under_load": fastest[1],
        }


def gts(text):
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return 0.0


def pci_bus_id(props):
    domain, bus, device = (
        getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")
    )
    if all(isinstance(v, int) for v in (domain, bus, device)):
        return "%04x:%02x:%02x.0" % (domain, bus, device)
    return None


def uuid_text(props):
    value = getattr(props, "uuid", None)
    return str(value) if value is not None else None


def stderr_reason(err, returncode):
    """The exception line of a worker's stderr (libraries print warnings after it, too), or its exit code."""
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line)]
    if errors:
        return errors[-1]
    return lines[-1] if lines else "exit %s" % returncode


def is_oom(exc):
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def grad_scaler(torch, device_type):
    try:
        return torch.amp.GradScaler(device_type)
    except (AttributeError, TypeError):  # torch < 2.3
        return torch.cuda.amp.GradScaler()


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


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
