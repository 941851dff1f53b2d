"""The engine under bad input: hung and missing commands, probes and checks that raise or hang, unreadable
files, every NVML error, a broken pynvml, garbled capture files and a bad --root. Never a traceback, never
a hang past its budget, and every failure says truthfully why."""

from __future__ import annotations

import json
import stat
import sys
import threading
import time
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import facts as healthy_facts
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.facts.driver import gather_driver
from torch_gpu_doctor.facts.memory import MemoryFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.nvml import NvmlFacts, gather_nvml
from torch_gpu_doctor.facts.pci import gather_proc_gpus
from torch_gpu_doctor.facts.python_env import gather_python
from torch_gpu_doctor.gather import Probe, gather
from torch_gpu_doctor.host.base import DEFAULT_TIMEOUT_S, CommandResult, CommandStatus, Host
from torch_gpu_doctor.host.nvml import (
    DEVICE_QUERIES,
    ERROR_CODES,
    SYSTEM_QUERIES,
    Nvml,
    NvmlError,
    RealNvml,
    RecordedNvml,
)
from torch_gpu_doctor.host.real import MAX_OUTPUT_BYTES, RealHost, run_command
from torch_gpu_doctor.host.recorded import CaptureError, RecordedHost
from torch_gpu_doctor.judge import run_check
from torch_gpu_doctor.model import CheckSpec, Explanation, Finding, Status
from torch_gpu_doctor.registry import RegisteredCheck
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.unavailable import Reason, Unavailable

# --- a tiny capture directory ---------------------------------------------------------------------------------

GPU_DEVICE = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
GPU_LINK = "/sys/bus/pci/devices/0000:01:00.0"


def make_capture(
    directory: Path,
    *,
    gpu: bool = False,
    host: dict[str, Any] | None = None,
    nvml: Any = None,
    probes: Any = None,
    files: dict[str, str] | None = None,
) -> Path:
    """A capture in the fixture layout; `gpu` puts an RTX 4090 (10de:2684, VGA class) on the PCI bus."""
    root = directory / "root"
    root.mkdir(parents=True)
    if gpu:
        device = root / GPU_DEVICE.lstrip("/")
        device.mkdir(parents=True)
        (device / "vendor").write_text("0x10de\n")
        (device / "device").write_text("0x2684\n")
        (device / "class").write_text("0x030000\n")
        link = root / GPU_LINK.lstrip("/")
        link.parent.mkdir(parents=True)
        link.symlink_to("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0")
    for path, text in (files or {}).items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (directory / "host.json").write_text(json.dumps({"description": "bad-input test", **(host or {})}))
    if nvml is not None:
        (directory / "nvml.json").write_text(nvml if isinstance(nvml, str) else json.dumps(nvml))
    if probes is not None:
        (directory / "probes.json").write_text(json.dumps(probes))
    return directory


class CountingHost(RecordedHost):
    """A capture that remembers every command gpu-doctor asked it to run."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.ran: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult:
        self.ran.append(tuple(argv))
        return super().run(argv, timeout)


def finding(findings: Sequence[Finding], check_id: str) -> Finding:
    matches = [f for f in findings if f.check_id == check_id]
    assert len(matches) == 1, matches
    return matches[0]


def no_crashes(findings: Sequence[Finding]) -> None:
    crashed = [(f.check_id, f.summary, f.traceback) for f in findings if f.status is Status.CRASH]
    assert crashed == []


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so that a deliberately hung thread ends with the test."""
    event = threading.Event()
    yield event
    event.set()


# --- run_command ------------------------------------------------------------------------------------------------


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")  # a zombie waits for a reaper that may never come in a container: it is dead


def test_hung_command_times_out_quickly() -> None:
    result = run_command(["sleep", "30"], timeout=0.3)
    assert result.status is CommandStatus.TIMED_OUT
    assert result.unavailable().reason is Reason.TIMED_OUT


def test_timeout_kills_the_whole_process_group() -> None:
    # The grandchild `sleep` keeps the stdout pipe open: if it survived, communicate() would wait 30 s.
    result = run_command(["sh", "-c", "echo $$; sleep 30 & echo $!; wait"], timeout=0.3)
    assert result.status is CommandStatus.TIMED_OUT
    pids = [int(word) for word in result.stdout.split()]
    assert len(pids) == 2, result
    deadline = time.monotonic() + 2
    while not all(_dead(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert all(_dead(pid) for pid in pids), pids


@pytest.mark.parametrize("argv0", ["gpu-doctor-no-such-command-4f1c", "/nonexistent/dir/nvidia-smi"])
def test_missing_command_is_not_found(argv0: str) -> None:
    result = run_command([argv0, "-q"], timeout=5)
    assert result.status is CommandStatus.NOT_FOUND
    assert result.returncode is None
    assert result.unavailable().reason is Reason.NOT_FOUND


def test_file_without_exec_permission_is_permission_denied(tmp_path: Path) -> None:
    script = tmp_path / "nvidia-smi"
    script.write_text("#!/bin/sh\necho should not run\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)  # 0644: no x bit for anyone
    # execve(2) refuses a file with no execute bit at all with EACCES, even to root.
    result = run_command([str(script)], timeout=5)
    assert result.status is CommandStatus.PERMISSION_DENIED
    assert result.stdout == ""
    assert result.unavailable().reason is Reason.PERMISSION_DENIED
    # A directory cannot be executed either.
    assert run_command([str(tmp_path)], timeout=5).status is CommandStatus.PERMISSION_DENIED


def test_nonzero_exit_keeps_returncode_and_output() -> None:
    result = run_command(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=5)
    assert result.status is CommandStatus.NONZERO
    assert result.returncode == 3
    assert (result.stdout, result.stderr) == ("out\n", "err\n")
    why = result.unavailable()
    assert why.reason is Reason.FAILED
    assert "err" in why.detail and "(exit 3)" in why.detail


def test_killed_by_signal_is_nonzero() -> None:
    result = run_command(["sh", "-c", "kill -TERM $$"], timeout=5)
    assert result.status is CommandStatus.NONZERO
    assert result.returncode == -15


def test_binary_output_is_decoded_with_replacement() -> None:
    code = (
        "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe\\x80 end'); sys.stderr.buffer.write(b'\\xc3(')"
    )
    result = run_command([sys.executable, "-c", code], timeout=10)
    assert result.status is CommandStatus.OK
    assert result.stdout == "ok \ufffd\ufffd\ufffd end"
    assert result.stderr == "\ufffd("


# --- gather: probes that hang or raise --------------------------------------------------------------------------


@pytest.fixture
def empty_host(tmp_path: Path) -> RecordedHost:
    return RecordedHost(make_capture(tmp_path / "cap"))


def test_a_flooding_command_costs_at_most_the_cap_and_says_it_was_cut() -> None:
    """Issue 21: output was read whole with communicate() and cut after, so a `--python` that floods stdout grew
    gpu-doctor to 23.8 GB. It is streamed now: 64 MiB written, at most MAX_OUTPUT_BYTES kept, the cut said."""
    code = "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(64):\n    sys.stdout.buffer.write(block)\nprint('end', file=sys.stderr)"
    result = run_command([sys.executable, "-c", code], timeout=60)
    assert result.status is CommandStatus.OK
    assert len(result.stdout) == MAX_OUTPUT_BYTES
    assert result.stderr.startswith("end\n")
    assert "kept the first 8 MiB of its stdout; the rest was cut" in result.stderr


def test_a_command_that_floods_forever_is_stopped_with_its_output_capped() -> None:
    code = "import sys\nblock = b'y' * (1 << 16)\nwhile True:\n    sys.stdout.buffer.write(block)"
    result = run_command([sys.executable, "-c", code], timeout=1.0)
    assert result.status is CommandStatus.TIMED_OUT
    assert len(result.stdout) <= MAX_OUTPUT_BYTES
    assert "the rest was cut" in result.stderr


def test_hung_probe_is_abandoned_after_its_budget(empty_host: RecordedHost, release: threading.Event) -> None:
    def hang(host: Host, got: dict[str, Any]) -> Any:
        release.wait(30)
        return "too late"

    gathered = gather(empty_host, (Probe("os", hang, 0.3),), deadline_s=20)
    assert isinstance(gathered.facts.os, Unavailable)
    assert gathered.facts.os.reason is Reason.TIMED_OUT
    crash = finding(gathered.problems, "probe.os")
    assert crash.status is Status.CRASH
    assert "0.3 s" in crash.summary


def test_hung_probe_is_abandoned_at_the_overall_deadline(
    empty_host: RecordedHost, release: threading.Event
) -> None:
    def hang(host: Host, got: dict[str, Any]) -> Any:
        release.wait(30)

    gathered = gather(empty_host, (Probe("cpu", hang, 60.0),), deadline_s=0.4)
    assert isinstance(gathered.facts.cpu, Unavailable) and gathered.facts.cpu.reason is Reason.TIMED_OUT
    assert "deadline" in finding(gathered.problems, "probe.cpu").summary


def test_hung_dependency_does_not_hold_up_its_dependents(tmp_path: Path, release: threading.Event) -> None:
    """A wedged NVML (the classic hang) must not cost the driver facts, nor keep the run to the deadline."""
    host = RecordedHost(
        make_capture(tmp_path / "cap", files={"/sys/module/nvidia/version": "550.54.15\n"}, gpu=True)
    )

    def hung_nvml(host: Host, got: dict[str, Any]) -> Any:
        release.wait(30)

    probes = (
        Probe("nvml", hung_nvml, 0.3),
        Probe("driver", lambda h, got: gather_driver(h, got["nvml"]), 5.0, needs=("nvml",)),
    )
    gathered = gather(host, probes, deadline_s=20)
    assert isinstance(gathered.facts.nvml, Unavailable) and gathered.facts.nvml.reason is Reason.TIMED_OUT
    driver = gathered.facts.driver
    assert not isinstance(driver, Unavailable), driver
    assert driver.version == "550.54.15"
    nvml_reading = driver.readings[0]
    assert nvml_reading.source == "nvml"
    assert isinstance(nvml_reading.version, Unavailable) and nvml_reading.version.reason is Reason.TIMED_OUT
    assert [p.check_id for p in gathered.problems] == ["probe.nvml"]


def _boom(host: Host, got: dict[str, Any]) -> Any:
    raise RuntimeError("boom in the probe")


def test_raising_probe_is_failed_with_its_traceback(empty_host: RecordedHost) -> None:
    memory = MemoryFacts(2**30, 2**29, 0)
    gathered = gather(empty_host, (Probe("cpu", _boom, 5.0), Probe("memory", lambda h, _: memory, 5.0)), 20)
    assert isinstance(gathered.facts.cpu, Unavailable) and gathered.facts.cpu.reason is Reason.FAILED
    assert gathered.facts.memory == memory
    crash = finding(gathered.problems, "probe.cpu")
    assert crash.status is Status.CRASH
    assert "RuntimeError: boom in the probe" in crash.summary
    assert "Traceback" in crash.traceback and "_boom" in crash.traceback
    assert "RuntimeError: boom in the probe" in crash.traceback


def test_raising_dependency_leaves_dependents_running(tmp_path: Path) -> None:
    host = RecordedHost(make_capture(tmp_path / "cap", files={"/sys/module/nvidia/version": "550.54.15\n"}))
    probes = (
        Probe("nvml", _boom, 5.0),
        Probe("driver", lambda h, got: gather_driver(h, got["nvml"]), 5.0, needs=("nvml",)),
    )
    gathered = gather(host, probes, deadline_s=20)
    driver = gathered.facts.driver
    assert not isinstance(driver, Unavailable) and driver.version == "550.54.15"
    assert [p.check_id for p in gathered.problems] == ["probe.nvml"]


# --- run_check: checks that raise, hang or return nonsense -----------------------------------------------------


def registered(check_id: str, fn: Any) -> RegisteredCheck:
    spec = CheckSpec(check_id, "test check", "test", Explanation("what", "why", "fix"))
    return RegisteredCheck(spec, fn, __name__)


def test_raising_check_is_one_crash_finding() -> None:
    def broken(facts: Facts) -> Finding:
        raise KeyError("no such GPU")

    findings = run_check(registered("test.raises", broken), healthy_facts())
    assert len(findings) == 1
    crash = findings[0]
    assert (crash.check_id, crash.status) == ("test.raises", Status.CRASH)
    assert "KeyError" in crash.summary
    assert "Traceback" in crash.traceback and "broken" in crash.traceback


def test_hanging_check_is_one_crash_finding(release: threading.Event) -> None:
    def stuck(facts: Facts) -> Finding:
        release.wait(30)
        return Finding("test.hangs", Status.PASS, "never seen")

    findings = run_check(registered("test.hangs", stuck), healthy_facts(), timeout_s=0.2)
    assert [(f.check_id, f.status) for f in findings] == [("test.hangs", Status.CRASH)]
    assert "0.2 s" in findings[0].summary


def _generator_that_raises(facts: Facts) -> Iterator[Finding]:
    yield Finding("test.bad", Status.PASS, "first")
    raise ValueError("second finding failed")


@pytest.mark.parametrize(
    "fn",
    [
        lambda facts: None,
        lambda facts: [],
        lambda facts: "a string",
        lambda facts: Finding("other.id", Status.PASS, "not mine"),
        lambda facts: [Finding("test.bad", Status.PASS, "mine"), "not a finding"],
        _generator_that_raises,
    ],
    ids=["none", "empty", "string", "other-id", "mixed", "generator-raises"],
)
def test_check_returning_nonsense_is_one_crash_finding(fn: Any) -> None:
    findings = run_check(registered("test.bad", fn), healthy_facts())
    assert [(f.check_id, f.status) for f in findings] == [("test.bad", Status.CRASH)]


# --- unreadable files, missing tools --------------------------------------------------------------------------

PERMISSION_DENIED_FILES = {
    "file_errors": {
        "/proc/driver/nvidia/version": "permission_denied",
        "/sys/module/nvidia/version": "permission_denied",
    }
}


def test_permission_denied_driver_files_make_the_driver_unknown(tmp_path: Path) -> None:
    host = CountingHost(make_capture(tmp_path / "cap", gpu=True, host=PERMISSION_DENIED_FILES))
    driver = gather_driver(host, gather_nvml(host))
    assert isinstance(driver.version, Unavailable)
    assert driver.version.reason is Reason.PERMISSION_DENIED
    by_source = {r.source: r.version for r in driver.readings}
    for source in ("sysfs", "procfs"):
        reading = by_source[source]
        assert isinstance(reading, Unavailable) and reading.reason is Reason.PERMISSION_DENIED
    assert isinstance(driver.kernel_module_flavor, Unavailable)

    report = diagnose(host, "python3", plugins=False)
    no_crashes(report.findings)
    assert len(report.facts.nvidia_gpus) == 1
    installed = finding(report.findings, "driver.installed")
    assert installed.status is Status.UNKNOWN, installed
    assert "permission denied" in installed.summary


def test_missing_nvidia_smi_is_not_found_and_runs_nothing(tmp_path: Path) -> None:
    host = CountingHost(make_capture(tmp_path / "cap", gpu=True, host={"env": {"PATH": "/usr/bin:/bin"}}))
    driver = gather_driver(host, gather_nvml(host))
    smi = [r for r in driver.readings if r.source == "nvidia-smi"]
    assert len(smi) == 1
    assert isinstance(smi[0].version, Unavailable) and smi[0].version.reason is Reason.NOT_FOUND
    assert driver.nvidia_smi is None
    assert host.ran == []
    assert host.unexpected_commands == []


L4_INFORMATION = (  # /proc/driver/nvidia/gpus/0000:70:00.0/information of an NVIDIA L4 (snapd #14893)
    "Model: \t\t NVIDIA L4\nIRQ:   \t\t 16\nGPU UUID: \t GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689\n"
    "Video BIOS: \t 95.04.65.00.13\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
    "Bus Location: \t 0000:70:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n"
)


def test_garbled_proc_gpu_information_is_unparseable(tmp_path: Path) -> None:
    gpus = "/proc/driver/nvidia/gpus"
    garbled = L4_INFORMATION.replace("Device Minor: \t 0", "Device Minor: \t ²").replace("No\n", "Maybe\n")
    files = {
        f"{gpus}/0000:70:00.0/information": L4_INFORMATION,
        f"{gpus}/0000:71:00.0/information": garbled,
        f"{gpus}/0000:72:00.0/information": "\x00\ufffd\ufffd",
    }
    host = RecordedHost(make_capture(tmp_path / "cap", files=files))
    gathered = gather(host, (Probe("proc_gpus", lambda h, _: gather_proc_gpus(h), 5.0),), deadline_s=20)
    assert gathered.problems == ()
    infos = gathered.facts.proc_gpus
    assert not isinstance(infos, Unavailable)
    good, bad, empty = infos
    assert (good.bdf, good.model, good.device_minor, good.excluded) == ("0000:70:00.0", "NVIDIA L4", 0, False)
    assert bad.model == "NVIDIA L4"
    assert _unparseable(bad.device_minor)
    assert isinstance(bad.excluded, Unavailable)
    assert _unparseable(empty.model) and _unparseable(empty.uuid) and _unparseable(empty.device_minor)


# --- NVML: every error class, per-field NotSupported -----------------------------------------------------------


@pytest.mark.parametrize("gpu_on_bus", [True, False], ids=["gpu", "no-gpu"])
@pytest.mark.parametrize("name", sorted(ERROR_CODES))
def test_every_nvml_init_error(tmp_path: Path, name: str, gpu_on_bus: bool) -> None:
    host = RecordedHost(make_capture(tmp_path / "cap", gpu=gpu_on_bus, nvml={"init": {"error": name}}))
    nvml = gather_nvml(host)
    assert nvml.init_error is not None
    assert (nvml.init_error.name, nvml.init_error.code) == (name, ERROR_CODES[name])
    assert nvml.devices == ()
    for value in (nvml.driver_version, nvml.nvml_version, nvml.cuda_driver_version, nvml.device_count):
        assert isinstance(value, Unavailable)

    report = diagnose(host, "python3", plugins=False)
    no_crashes(report.findings)
    verdict = finding(report.findings, "driver.nvml")
    assert verdict.status in (Status.FAIL, Status.SKIP), verdict
    if gpu_on_bus:  # a GPU on the bus and NVML broken is never "not applicable"
        assert verdict.status is Status.FAIL, verdict
    report.summary()  # the summary (exit code, counts) is computable


def test_not_supported_on_every_device_field(tmp_path: Path) -> None:
    nvml_json = {
        "init": None,
        "system": {
            "driver_version": "550.54.15",
            "nvml_version": "12.550.54.15",
            "cuda_driver_version": 12040,
        },
        "devices": [{query: {"error": "NotSupported", "code": 3} for query in DEVICE_QUERIES}],
    }
    host = RecordedHost(make_capture(tmp_path / "cap", nvml=nvml_json))
    nvml = gather_nvml(host)
    assert nvml.init_error is None and nvml.device_count == 1
    device = nvml.devices[0]
    for field, value in vars(device).items():
        if field == "index":
            continue
        assert isinstance(value, Unavailable), field
        assert value.reason is Reason.NOT_SUPPORTED, field

    report = diagnose(host, "python3", plugins=False)
    no_crashes(report.findings)
    assert finding(report.findings, "driver.nvml").status is Status.PASS


# --- RealNvml with a broken pynvml -----------------------------------------------------------------------------


class FakeNVMLError(Exception):
    """What pynvml raises: an NVMLError subclass carrying the numeric code as `.value`."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


def fake_pynvml(monkeypatch: pytest.MonkeyPatch, **functions: Any) -> types.ModuleType:
    module = types.ModuleType("pynvml")
    for name, fn in functions.items():
        setattr(module, name, fn)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    return module


def _raiser(exc: BaseException) -> Any:
    def fn(*args: Any) -> Any:
        raise exc

    return fn


def test_real_nvml_translates_pynvml_error_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_pynvml(monkeypatch, nvmlInit=_raiser(FakeNVMLError(18)))
    with pytest.raises(NvmlError) as caught:
        RealNvml().init()
    assert (caught.value.name, caught.value.code) == ("LibRmVersionMismatch", 18)


def test_real_nvml_oserror_is_library_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_pynvml(monkeypatch, nvmlInit=_raiser(OSError("libnvidia-ml.so.1: cannot open shared object file")))
    with pytest.raises(NvmlError) as caught:
        RealNvml().init()
    assert caught.value.name == "LibraryNotFound"


def test_real_nvml_unknown_code_and_foreign_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_pynvml(monkeypatch, nvmlInit=_raiser(FakeNVMLError(4242)))
    with pytest.raises(NvmlError) as caught:
        RealNvml().init()
    assert (caught.value.name, caught.value.code) == ("Unknown", 4242)
    fake_pynvml(monkeypatch, nvmlInit=_raiser(ZeroDivisionError("inside the binding")))
    with pytest.raises(NvmlError) as caught:
        RealNvml().init()
    assert caught.value.name == "Unknown" and "ZeroDivisionError" in caught.value.message


def test_real_nvml_not_importable_is_library_not_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    nvml = gather_nvml(RealHost(str(tmp_path)))
    assert nvml.init_error is not None and nvml.init_error.name == "LibraryNotFound"


def test_gather_nvml_through_real_nvml_with_init_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_pynvml(monkeypatch, nvmlInit=_raiser(FakeNVMLError(9)))
    nvml = gather_nvml(RealHost(str(tmp_path)))
    assert nvml.init_error is not None
    assert (nvml.init_error.name, nvml.init_error.code) == ("DriverNotLoaded", 9)


def test_gather_nvml_through_a_partly_broken_pynvml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Old bindings lack functions, some GPUs refuse some queries, shutdown may fail: facts, never a crash."""
    pci = types.SimpleNamespace(busId=b"00000000:0A:00.0", pciDeviceId=0x268410DE)
    fake_pynvml(
        monkeypatch,
        nvmlInit=lambda: None,
        nvmlShutdown=_raiser(FakeNVMLError(1)),
        nvmlSystemGetDriverVersion=lambda: b"550.54.15",
        nvmlSystemGetNVMLVersion=lambda: "12.550.54.15",
        nvmlSystemGetCudaDriverVersion=lambda: 12040,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda index: object(),
        nvmlDeviceGetName=lambda h: b"NVIDIA GeForce RTX 4090",
        nvmlDeviceGetUUID=lambda h: "GPU-00000000-0000-0000-0000-000000000000",
        nvmlDeviceGetPciInfo=lambda h: pci,
        nvmlDeviceGetMemoryInfo=_raiser(FakeNVMLError(3)),
        nvmlDeviceGetCudaComputeCapability=lambda h: (8, 9),
        nvmlDeviceGetPersistenceMode=_raiser(FakeNVMLError(4)),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: 1,
        nvmlDeviceGetMaxPcieLinkGeneration=lambda h: 4,
        # nvmlDeviceGetGpuMaxPcieLinkGeneration: missing, as in old nvidia-ml-py releases
        nvmlDeviceGetCurrPcieLinkWidth=lambda h: 16,
        nvmlDeviceGetMaxPcieLinkWidth=_raiser(RuntimeError("binding bug")),
    )
    nvml = gather_nvml(RealHost(str(tmp_path)))
    assert nvml.init_error is None
    assert (nvml.driver_version, nvml.cuda_driver_version, nvml.device_count) == ("550.54.15", 12040, 1)
    device = nvml.devices[0]
    assert device.name == "NVIDIA GeForce RTX 4090"
    assert device.bdf == "0000:0a:00.0"
    assert device.compute_capability == "8.9"
    assert (device.pcie_link_gen_current, device.pcie_link_gen_max, device.pcie_link_width_current) == (
        1,
        4,
        16,
    )
    assert device.memory_total_bytes == Unavailable(Reason.NOT_SUPPORTED, "NVMLError_NotSupported")
    assert device.persistence_mode == Unavailable(Reason.PERMISSION_DENIED, "NVMLError_NoPermission")
    assert isinstance(device.pcie_link_gen_gpu_max, Unavailable)
    assert isinstance(device.pcie_link_width_max, Unavailable)


# --- garbled capture files -------------------------------------------------------------------------------------

WRONG_TYPES_NVML = {
    "init": None,
    "system": {"driver_version": 550, "nvml_version": ["12", "550"], "cuda_driver_version": "12040"},
    "device_count": 1,
    "devices": [
        {
            "name": 4090,
            "uuid": None,
            "pci_bus_id": 1,
            "pci_device_id": "0x268410de",
            "memory_total_bytes": "24GB",
            "compute_capability": "8.9",
            "persistence_mode": "Enabled",
            "pcie_link_gen_current": "4",
            "pcie_link_gen_max": 4.0,
            "pcie_link_gen_gpu_max": True,
            "pcie_link_width_current": "x16",
            "pcie_link_width_max": [16],
        }
    ],
}


def _unparseable(value: object) -> bool:
    return isinstance(value, Unavailable) and value.reason is Reason.UNPARSEABLE


def test_nvml_json_with_wrong_types_is_unparseable(tmp_path: Path) -> None:
    host = RecordedHost(make_capture(tmp_path / "cap", gpu=True, nvml=WRONG_TYPES_NVML))
    nvml = gather_nvml(host)
    assert nvml.init_error is None
    for value in (nvml.driver_version, nvml.nvml_version, nvml.cuda_driver_version):
        assert _unparseable(value), value
    for field, value in vars(nvml.devices[0]).items():
        if field != "index":
            assert _unparseable(value), (field, value)
    report = diagnose(host, "python3", plugins=False)
    no_crashes(report.findings)


@pytest.mark.parametrize("count", ["1", "two", 1.0, None, [1], True, -1, 10**12])
def test_nvml_json_with_a_garbled_device_count(tmp_path: Path, count: Any) -> None:
    nvml_json = {"init": None, "device_count": count, "devices": [{"name": "NVIDIA L4"}]}
    host = RecordedHost(make_capture(tmp_path / "cap", nvml=nvml_json))
    nvml = gather_nvml(host)
    assert _unparseable(nvml.device_count), nvml.device_count
    assert nvml.devices == ()
    no_crashes(diagnose(host, "python3", plugins=False).findings)


@pytest.mark.parametrize(
    "nvml_json",
    [
        {"init": None, "system": "550.54.15"},
        {"init": None, "devices": "NVIDIA L4"},
        {"init": None, "devices": {"0": {"name": "NVIDIA L4"}}},
        {"init": None, "devices": ["NVIDIA L4", None]},
        {"init": {"error": ["LibRmVersionMismatch"], "code": "18", "message": None}},
    ],
    ids=["system-string", "devices-string", "devices-object", "device-not-object", "error-garbled"],
)
def test_nvml_json_with_garbled_structure(tmp_path: Path, nvml_json: dict[str, Any]) -> None:
    host = RecordedHost(make_capture(tmp_path / "cap", nvml=nvml_json))
    nvml = gather_nvml(host)
    _assert_nvml_typed(nvml)
    # A value found in a garbled structure is never taken for a fact.
    values = [nvml.driver_version, nvml.nvml_version, *(v for d in nvml.devices for v in vars(d).values())]
    assert "550.54.15" not in values and "NVIDIA L4" not in values
    no_crashes(diagnose(host, "python3", plugins=False).findings)


@pytest.mark.parametrize("text", ["[1, 2]", '"nvml"', "{not json"])
def test_nvml_json_that_is_not_an_object_is_not_a_capture(tmp_path: Path, text: str) -> None:
    with pytest.raises(CaptureError):
        RecordedHost(make_capture(tmp_path / "cap", nvml=text))


def _assert_nvml_typed(nvml: NvmlFacts) -> None:
    """Every fact has its documented type or is unavailable."""

    def ok(value: object, kind: type) -> bool:
        return isinstance(value, Unavailable) or (type(value) is kind)

    if nvml.init_error is not None:
        assert isinstance(nvml.init_error.name, str)
        assert type(nvml.init_error.code) is int
        assert isinstance(nvml.init_error.message, str)
    assert ok(nvml.driver_version, str) and ok(nvml.nvml_version, str)
    assert ok(nvml.cuda_driver_version, int) and ok(nvml.device_count, int)
    if isinstance(nvml.device_count, int):
        assert 0 <= nvml.device_count == len(nvml.devices)
    for device in nvml.devices:
        for field in ("name", "uuid", "bdf", "compute_capability"):
            assert ok(getattr(device, field), str), field
        assert ok(device.persistence_mode, bool)
        for field in ("pci_device_id", "memory_total_bytes", "pcie_link_gen_current", "pcie_link_gen_max",
                      "pcie_link_gen_gpu_max", "pcie_link_width_current", "pcie_link_width_max"):  # fmt: skip
            assert ok(getattr(device, field), int), field


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
nvml_answers: st.SearchStrategy[Any] = json_values | st.fixed_dictionaries(
    {"error": st.sampled_from(sorted(ERROR_CODES)) | json_values},
    optional={"code": json_values, "message": json_values},
)
nvml_captures: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "init": nvml_answers,
        "system": st.dictionaries(st.sampled_from(SYSTEM_QUERIES), nvml_answers) | json_values,
        "device_count": st.integers(-2, 4) | nvml_answers,
        "devices": st.lists(
            st.dictionaries(st.sampled_from(DEVICE_QUERIES), nvml_answers) | json_values, max_size=3
        )
        | json_values,
    },
)


class NvmlOnlyHost:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def nvml(self) -> Nvml:
        return RecordedNvml(self.data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nvml_captures)
def test_any_nvml_json_gives_typed_facts(data: dict[str, Any]) -> None:
    _assert_nvml_typed(gather_nvml(cast(Host, NvmlOnlyHost(data))))


@pytest.mark.parametrize(
    "stdout", ["Traceback (most recent call last):\n  boom", "", "[" * 100_000, "[1, 2]"]
)
def test_probe_output_that_is_not_json_leaves_python_unavailable(tmp_path: Path, stdout: str) -> None:
    probes = {"python_env": {"status": "ok", "returncode": 0, "stdout": stdout, "stderr": ""}}
    host = RecordedHost(make_capture(tmp_path / "cap", probes=probes))
    python = gather_python(host, "/usr/bin/python3")
    assert python.executable == "/usr/bin/python3"
    for field, value in vars(python).items():
        if field != "executable":
            assert _unparseable(value), (field, value)
    no_crashes(diagnose(host, "/usr/bin/python3", plugins=False).findings)


def test_probe_json_with_wrong_types_is_unparseable_per_field(tmp_path: Path) -> None:
    info = {"version": 3.12, "implementation": "CPython", "in_virtualenv": "yes", "conda_prefix": None}
    probes = {"python_env": {"status": "ok", "stdout": json.dumps(info)}}
    python = gather_python(RecordedHost(make_capture(tmp_path / "cap", probes=probes)), "python3")
    assert python.implementation == "CPython"
    assert _unparseable(python.version) and _unparseable(python.in_virtualenv)
    assert (
        isinstance(python.conda_prefix, Unavailable) and python.conda_prefix.reason is Reason.NOT_APPLICABLE
    )


# --- the CLI on a bad --root -------------------------------------------------------------------------------------


def _one_line_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_cli_root_without_root_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "host.json").write_text("{}")
    line = _one_line_usage_error(capsys, ["--root", str(tmp_path)])
    assert str(tmp_path) in line and "root/" in line


def test_cli_root_that_does_not_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _one_line_usage_error(capsys, ["--root", str(tmp_path / "missing")])


def test_cli_root_with_broken_capture_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capture = make_capture(tmp_path / "cap", nvml="{truncated")
    line = _one_line_usage_error(capsys, ["--root", str(capture)])
    assert "nvml.json" in line


def test_cli_on_a_garbled_but_readable_capture_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = make_capture(tmp_path / "cap", gpu=True, nvml=WRONG_TYPES_NVML, host=PERMISSION_DENIED_FILES)
    code = main(["--root", str(capture), "--json", "--no-plugins"])
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert code == document["summary"]["exit_code"]
    assert code in (0, 1, 3)
    assert not [f for f in document["findings"] if f["status"] == "crash"]
    assert "Traceback" not in err


def test_a_plugin_finding_with_a_string_status_is_a_crash_not_a_broken_run() -> None:
    from tests.factories import facts
    from torch_gpu_doctor.judge import run_check
    from torch_gpu_doctor.registry import RegisteredCheck

    def bad(_: object) -> Finding:
        return Finding("lab.bad", "pass", "s")  # type: ignore[arg-type]

    spec = CheckSpec("lab.bad", "t", "lab", Explanation("w", "y", "f"))
    (finding,) = run_check(RegisteredCheck(spec, bad, "lab"), facts())
    assert finding.status is Status.CRASH


def test_escape_sequences_from_a_capture_are_shown_never_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21: a capture's description and a GPU name from NVML reached the terminal raw (a window title, a
    cleared screen, colours). The text report escapes every control character that came from data."""
    import shutil

    from torch_gpu_doctor.cli import main

    capture = tmp_path / "capture"
    hosts = Path(__file__).parent / "fixtures" / "hosts"
    shutil.copytree(hosts / "rtx4090-riser-idle", capture, symlinks=True)
    meta = json.loads((capture / "host.json").read_text(encoding="utf-8"))
    meta["description"] = "evil \x1b]0;pwned\x07 host \x1b[2J"
    (capture / "host.json").write_text(json.dumps(meta), encoding="utf-8")
    nvml = (capture / "nvml.json").read_text(encoding="utf-8")
    (capture / "nvml.json").write_text(
        nvml.replace("NVIDIA GeForce RTX 4090", "NVIDIA \\u001b[31mGeForce RTX 4090"), encoding="utf-8"
    )
    main(["--root", str(capture), "--plain"])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "evil \\x1b]0;pwned" in out and "NVIDIA \\x1b[31mGeForce RTX 4090" in out


def test_findings_and_the_tui_header_quote_data_with_its_controls_escaped(tmp_path: Path) -> None:
    """The TUI draws findings and the machine line itself (Textual, not the text console): escape sequences
    in a GPU name coloured its header. Findings are escaped once in the engine, the header where it is made."""
    import shutil

    from torch_gpu_doctor.host.recorded import RecordedHost
    from torch_gpu_doctor.runner import diagnose
    from torch_gpu_doctor.tui.machine_line import machine_line

    capture = tmp_path / "capture"
    shutil.copytree(
        Path(__file__).parent / "fixtures" / "hosts" / "rtx4090-riser-idle", capture, symlinks=True
    )
    nvml = (capture / "nvml.json").read_text(encoding="utf-8")
    (capture / "nvml.json").write_text(
        nvml.replace("NVIDIA GeForce RTX 4090", "NVIDIA \\u001b[31mGeForce RTX 4090"), encoding="utf-8"
    )
    host = RecordedHost(capture)
    report = diagnose(host, host.python or "python3", plugins=False)
    present = next(f for f in report.findings if f.check_id == "gpu.present")
    assert "\\x1b[31mGeForce RTX 4090" in present.summary
    for finding in report.findings:
        assert "\x1b" not in finding.summary + finding.details, finding.check_id
        assert not any("\x1b" in e.value for e in finding.evidence), finding.check_id
    line = machine_line(report.facts, 0)
    assert "\x1b" not in line and "\\x1b[31m" in line


def test_json_is_valid_utf8_with_a_lone_surrogate_in_the_data(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Issue 21: an undecodable byte (Python keeps it as a lone surrogate) in a capture's description or a path
    made --json write a byte no UTF-8 reader accepts. It is written as its \\u escape now."""
    import shutil

    from torch_gpu_doctor.cli import main
    from torch_gpu_doctor.serialize import json_document

    capture = tmp_path / "capture"
    shutil.copytree(
        Path(__file__).parent / "fixtures" / "hosts" / "rtx4090-riser-idle", capture, symlinks=True
    )
    meta = json.loads((capture / "host.json").read_text(encoding="utf-8"))
    meta["description"] = "bad \udcff byte, ok é"
    (capture / "host.json").write_text(json.dumps(meta), encoding="utf-8")
    main(["--root", str(capture), "--json"])
    raw = capsysbinary.readouterr().out
    document = json.loads(raw.decode("utf-8"))  # strict UTF-8: raises on a stray byte
    assert document["host"]["description"] == "bad \udcff byte, ok é"  # the escape round-trips
    assert b"\\udcff" in raw and "é".encode() in raw
    assert json_document({"path": "/data/\udc80x"}).encode("utf-8") == b'{\n  "path": "/data/\\udc80x"\n}\n'


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("nvml.json", "[" * 100_000 + "]" * 100_000, "nested too deep to be a capture file"),
        ("probes.json", '{"a":' * 100 + "1" + "}" * 100, "nested deeper than 64 levels"),
    ],
)
def test_json_nested_absurdly_deep_in_a_capture_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, said: str
) -> None:
    """Issue 21: JSON nested 100,000 deep gave "internal error: RecursionError"; deep but parseable JSON would
    overflow the code walking it later."""
    import shutil

    from torch_gpu_doctor.cli import main

    capture = tmp_path / "capture"
    shutil.copytree(
        Path(__file__).parent / "fixtures" / "hosts" / "rtx4090-riser-idle", capture, symlinks=True
    )
    (capture / name).write_text(text, encoding="utf-8")
    code = main(["--root", str(capture), "--plain"])
    err = capsys.readouterr().err
    assert code == 2 and said in err and "internal error" not in err, err
