# The smoke test's compute steps (matmuls checked against float64, a cuDNN convolution, a mixed-precision
# training step, the CPU fallback), mixed into the Smoke class of doctor/probes/smoke.py. Run beside it by the
# *target* interpreter as gpu_doctor_smoke_compute.py; standard library and torch only; Python 3.7+ syntax.
import statistics
import time

from gpu_doctor_smoke_common import MATMUL_TOLERANCE, StepFailed

BATCH_MS = 20.0  # the work one pair of events times: launch and event jitter (microseconds) stay below 0.1%
MAX_BATCH = 100


class ComputeSteps(object):
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
            ms, calls = self.timed_for(index, lambda: torch.matmul(a, b, out=out), self.sizes["matmul_min_s"])
        finally:
            torch.set_float32_matmul_precision(previous)
        tflops = 2.0 * n**3 / statistics.median(ms) / 1e9
        # four significant digits: a fixed 3 decimals gives 0.0 for a slow device or a small matrix
        values = {"n": n, "iterations": calls, "tflops": float("%.4g" % tflops)}
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
        """Per-call milliseconds of `fn` and the number of calls: batches of calls, each timed by one pair of
        CUDA events behind a held stream, until `min_s` has passed (at least 5 batches), after a warm-up that
        loads the kernels. A batch holds about BATCH_MS of work, so a small matrix on a fast GPU is timed over
        many calls instead of one call plus its launch."""
        torch = self.torch
        for _ in range(2):
            fn()
        self.sync(index)
        times, spent, calls, batch = [], 0.0, 0, 1
        while len(times) < 5 or spent < min_s * 1000:
            self.hold(batch)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(batch):
                fn()
            end.record()
            end.synchronize()
            elapsed = max(start.elapsed_time(end), 1e-6)
            times.append(elapsed / batch)
            spent += elapsed
            calls += batch
            batch = max(1, min(MAX_BATCH, int(BATCH_MS / times[-1])))
            # it ends at min_s and 5 batches, or at 1000 calls (a tiny matrix on a fast GPU)
            self.progress(max(min(spent / (min_s * 1000), len(times) / 5.0), calls / 1000.0))
            if calls >= 1000:
                break
        return times, calls

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


def grad_scaler(torch, device_type):
    try:
        return torch.amp.GradScaler(device_type)
    except (AttributeError, TypeError):  # torch < 2.3
        return torch.cuda.amp.GradScaler()
