# The smoke test's memory steps (device memory pattern test, host<->device and device copies, the PCIe link
# sampled under load), mixed into the Smoke class of doctor/probes/smoke.py. Run beside it by the *target*
# interpreter as gpu_doctor_smoke_memory.py; standard library and torch only; Python 3.7+ syntax.
import os
import statistics
import threading
import time

from gpu_doctor_smoke_common import (
    BDF,
    MEMORY_BATCH_ROWS,
    MEMORY_COLS,
    MIB,
    WARM_UP_S,
    StepFailed,
    first_line,
    is_oom,
    memory_rows,
    pci_address,
)


class MemorySteps(object):
    def memory(self, index):
        """Fill a large share of free memory with an address pattern and its complement; read both back."""
        torch = self.torch
        free, total = torch.cuda.mem_get_info(index)
        cols = MEMORY_COLS  # int32 elements per row: 4 MiB
        rows = memory_rows(free, self.sizes["memory_share"])
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
        batch = MEMORY_BATCH_ROWS  # rows per pass: what memory_rows leaves room for
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
        copies = self.sizes["transfer_copies"]
        # Written, not just allocated: an untouched pageable buffer is the kernel's shared zero page, which
        # copies faster than the memory a DataLoader hands over.
        host = torch.empty(nbytes, dtype=torch.uint8).fill_(0x5A)
        pinned = kind.endswith("pinned")
        if pinned:
            host = host.pin_memory()
        gpu = torch.empty(nbytes, dtype=torch.uint8, device=self.dev(index))
        if kind.startswith("h2d"):
            copy = lambda: gpu.copy_(host, non_blocking=True)  # noqa: E731
        else:
            copy = lambda: host.copy_(gpu, non_blocking=True)  # noqa: E731
        link = self.warm_up(index, copy, copies) if pinned else {}
        # A pageable copy waits for its staging on the CPU: that wait is part of what it measures (no hold).
        ms = self.timed(index, copy, copies, hold=pinned)
        values = {
            "bytes": nbytes,
            "copies": len(ms),
            "gbytes_per_s": round(nbytes / statistics.median(ms) / 1e6, 3),
            "best_gbytes_per_s": round(nbytes / min(ms) / 1e6, 3),
        }
        if kind == "h2d_pinned":  # the link is judged from the host-to-device copies
            values.update(link)
        return values

    def warm_up(self, index, copy, copies):
        """Untimed rounds of copies until two rounds in a row run at the same rate and the link has reached the
        top speed of the GPU and its slot (an idle link naps at a lower speed), or WARM_UP_S passes; the link's
        speed is read from sysfs meanwhile, never beside the timed copies. Measured on an H200 (VM, 2026-11-26):
        right after the memory step, host-to-device copies into freshly allocated buffers ran at 26.5 GB/s for
        a few rounds and then at 55.4, on a link at Gen5 throughout; timed at once, they read half the link.
        The verdict on the link also reads the timed batch's best copy (checks/support/smoke_figures.py)."""
        torch = self.torch
        sampler = LinkSampler(self.bus_id(index))
        sampler.start()
        started, rates = time.time(), []
        try:
            while True:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(copies):
                    copy()
                end.record()
                end.synchronize()
                rates.append(copies / max(start.elapsed_time(end), 1e-6))
                # Steady: two rounds in a row alike, and neither slower than a round already seen (copies
                # that ran fast and then slowed down have not settled; 2026-11-27, the same H200: 45 GB/s).
                steady = (
                    len(rates) >= 2
                    and abs(rates[-1] - rates[-2]) <= 0.05 * max(rates[-2:])
                    and min(rates[-2:]) >= 0.95 * max(rates)
                )
                linked = sampler.top is None or sampler.reached_top()
                if (steady and linked) or time.time() - started > WARM_UP_S:
                    break
        finally:
            sampler.stop()
        values = sampler.values()
        values["warm_up_rounds"] = len(rates)
        return values

    def bus_id(self, index):
        try:
            return pci_address(self.torch.cuda.get_device_properties(index), index, self.known)
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


class LinkSampler(object):
    """Reads the GPU's PCIe link speed from sysfs while copies run: an idle link naps at a lower speed, a loaded
    one should train up. Plain file reads; the copies run on the GPU's copy engine meanwhile (GIL released)."""

    def __init__(self, bus_id):
        self.base = "/sys/bus/pci/devices/%s/" % bus_id if bus_id and BDF.match(bus_id) else None
        self.samples = []  # (seconds since start, speed text, width text)
        self.top = top_speed(self.base) if self.base else None
        self.running = False
        self.started = time.time()
        self.thread = threading.Thread(target=self.run)
        self.thread.daemon = True

    def start(self):
        self.started = time.time()
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
            self.samples.append((time.time() - self.started, speed, width))
            time.sleep(0.002)

    def reached_top(self):
        return any(gts(s[1]) >= self.top for s in list(self.samples))

    def stop(self):
        self.running = False
        if self.thread.is_alive():
            self.thread.join(1.0)

    def values(self):
        if not self.samples:
            return {"link_samples": 0}
        fastest = max(self.samples, key=lambda s: gts(s[1]))
        ramp = next((s[0] for s in self.samples if gts(s[1]) >= gts(fastest[1])), None)
        return {
            "link_samples": len(self.samples),
            "link_speed_under_load": fastest[1],
            "link_width_under_load": fastest[2],
            "link_speed_first": self.samples[0][1],
            "link_ramp_ms": round(ramp * 1000, 1) if ramp is not None else None,
        }


def top_speed(base):
    """The fastest the link can train to: the lower of the GPU's and its upstream port's max_link_speed (a VM's
    root bus has none), in GT/s; None where sysfs does not say."""
    speeds = []
    for folder in (base, os.path.join(os.path.realpath(base), os.pardir) + os.sep):
        try:
            with open(folder + "max_link_speed") as f:
                value = gts(f.read().strip())
        except (IOError, OSError):
            continue
        if value > 0:
            speeds.append(value)
    return min(speeds) if speeds else None


def gts(text):
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return 0.0
