# The smoke test's steps for two or more GPUs (peer access, peer copies, an all-reduce over one process per
# GPU), mixed into the Smoke class of doctor/probes/smoke.py. Run beside it by the *target* interpreter as
# gpu_doctor_smoke_multi.py; standard library and torch only; Python 3.7+ syntax.
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from gpu_doctor_smoke_common import MIB, StepFailed

# One rank of the all-reduce; the parent writes it beside this file (doctor/probes/smoke_worker.py).
PORT_ATTEMPTS = 3
OUTPUT_TAIL_BYTES = 1 << 20  # of each worker's stdout and stderr: the report line and the error at the end
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_doctor_smoke_worker.py")


class MultiGpuSteps(object):
    def peer_access(self, count):
        values = {}
        for i in range(count):
            for j in range(count):
                if i != j:
                    values["%d->%d" % (i, j)] = bool(self.torch.cuda.can_device_access_peer(i, j))
        return values

    def peer_copy(self, src, dst):
        """GPU-to-GPU copies, timed, then checked: a peer path that corrupts data (an IOMMU or ACS setting in
        the way) must not pass as fast. The source holds a random pattern; the copy is compared on the
        destination with the pattern brought there from the host, not over the path under test."""
        torch = self.torch
        nbytes = self.sizes["peer_bytes"]
        block = min(nbytes, MIB)
        gen = torch.Generator().manual_seed(2718)
        pattern = torch.randint(0, 256, (block,), dtype=torch.uint8, generator=gen)
        a = torch.empty(nbytes, dtype=torch.uint8, device=self.dev(src))
        a.view(-1, block).copy_(pattern.to(self.dev(src)).expand(nbytes // block, block))
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
        wrong = int((b.view(-1, block) != pattern.to(self.dev(dst))).sum().item())
        values = {
            "bytes": nbytes,
            "gbytes_per_s": round(nbytes / statistics.median(times) / 1e9, 3),
            "mismatched_bytes": wrong,
        }
        if wrong:
            raise StepFailed(
                "wrong",
                "%d of %d bytes copied from GPU %d to GPU %d arrived wrong" % (wrong, nbytes, src, dst),
                values,
            )
        return values

    def all_reduce(self, count):
        nbytes = self.sizes["allreduce_bytes"]
        config = {
            "worker": "all_reduce",
            "world": count,
            "bytes": nbytes,
            "iters": self.sizes["allreduce_iters"],
            "device_type": self.device_type,
        }
        # The port is free when chosen and bound again by rank 0 seconds later, after every rank imported
        # torch: another program can take it in between. That shows as EADDRINUSE: try another port.
        for attempt in range(PORT_ATTEMPTS):
            config["port"] = free_port()
            results, errors = self.run_ranks(config, count)
            if not (errors and any(port_taken(e) for e in errors)) or attempt == PORT_ATTEMPTS - 1:
                break
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

    def run_ranks(self, config, count):
        """One worker process per GPU; each rank's report, and the errors of those that failed."""
        config = dict(config)
        workers, outputs = [], []
        for rank in range(count):
            config["rank"] = rank
            # Files, not pipes: NCCL logs to stdout (NCCL_DEBUG=INFO writes megabytes), and a rank whose pipe
            # is full blocks in the middle of the collective until someone reads it.
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            outputs.append((out, err))
            workers.append(
                subprocess.Popen([sys.executable, WORKER, json.dumps(config)], stdout=out, stderr=err)
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
            try:
                proc.wait(timeout=10)  # killed above if it ran on; one stuck in the driver may never exit
            except subprocess.TimeoutExpired:
                hung.append(rank)
            out, err = (tail(f, OUTPUT_TAIL_BYTES) for f in outputs[rank])
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
        return results, errors


def stderr_reason(err, returncode):
    """The exception line of a worker's stderr (libraries print warnings after it, too), or its exit code."""
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", line)]
    if errors:
        return errors[-1]
    return lines[-1] if lines else "exit %s" % returncode


def tail(handle, limit):
    """The last `limit` bytes a worker wrote (its report is its last line), and the file closed."""
    try:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - limit))
        return handle.read()
    finally:
        handle.close()


def port_taken(error):
    """A rank that could not bind the rendezvous port (c10d's TCPStore: "EADDRINUSE", "address already in use")."""
    text = error.lower()
    return "eaddrinuse" in text or "address already in use" in text


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port
