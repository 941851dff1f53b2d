"""File names of a captured machine (a `capture` directory, a test fixture, the inside of a bundle)."""

from __future__ import annotations

ROOT_DIR = "root"  # the fake filesystem: sys/, proc/, dev/, etc/, usr/ ... with real relative symlinks
HOST_FILE = "host.json"  # description, env, file errors ({path: reason}), the diagnosed python
COMMANDS_FILE = "commands.json"  # [{argv, status, returncode, stdout, stderr}] matched by exact argv
PROBES_FILE = "probes.json"  # {probe name: command result} for scripts run by the target interpreter
NVML_FILE = "nvml.json"  # NVML answers, see torch_gpu_doctor.host.nvml.RecordedNvml
MEASUREMENTS_FILE = (
    "measurements.json"  # {"disk_space": {path: {free_bytes, total_bytes}}, "ram_bandwidth": {...},
)
#                                         "disk_read": {directory: {...}}}: live-only answers, replayed
SMOKE_FILE = (
    "smoke.json"  # the smoke test's streamed run: {argv, status, returncode, lines, stderr, watchdog}
)
EXPECTED_FILE = "expected.json"  # fixtures only: {check id: status}
CAPTURE_SCHEMA = 1
