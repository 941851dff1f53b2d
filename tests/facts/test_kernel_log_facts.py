"""Kernel log facts: Xid lines in every format the samples show, signature refusals, and a log that cannot
be read (never an empty one). Trees: tests/fixtures/driver-state-trees (provenance in its README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_gpu_doctor.facts.kernel_log import (
    DMESG_ARGV,
    JOURNAL_ARGV,
    MAX_XID_EVENTS,
    KernelLogFacts,
    XidEvent,
    gather_kernel_log,
    parse_kernel_log,
    parse_xid,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "driver-state-trees"
SAMPLE = TREES / "a100x4-remap-pending-xid-log"


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


@pytest.mark.parametrize(
    ("line", "xid", "bdf", "detail"),
    [
        # samples/dmesg/xid-samples.txt, one per format
        (
            "May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
            79,
            "0000:2b:00.0",
            "GPU has fallen off the bus.",
        ),
        (
            "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
            63,
            "0000:10:1c.0",
            "pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
        ),
        (
            "Nov 22 18:29:55 hostname kernel: [ 966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000",
            31,
            "0000:01:00.0",
            "Ch 0000000b, engmask 00000120, intr 10000000",
        ),
    ],
)
def test_xid_line_formats(line: str, xid: int, bdf: str, detail: str) -> None:
    event = parse_xid(line)
    assert event == XidEvent(xid, bdf, detail, line)


@pytest.mark.parametrize(
    "line",
    [
        "May 18 19:02:39 kernel: NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae",
        "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:2b:00): seventy-nine",
        "",
    ],
)
def test_lines_that_are_not_xids(line: str) -> None:
    assert parse_xid(line) is None


def test_garbled_address_keeps_the_event_with_an_unparseable_gpu() -> None:
    event = parse_xid("NVRM: Xid (PCI:zz:zz:zz): 48, DBE")
    assert event is None or reason(event.bdf) is Reason.UNPARSEABLE
    event = parse_xid("NVRM: Xid (PCI:1:2:3:4:5): 48, DBE")
    assert event is not None and event.xid == 48 and reason(event.bdf) is Reason.UNPARSEABLE


def test_the_sample_log_read_by_dmesg() -> None:
    host = RecordedHost(SAMPLE)
    log = gather_kernel_log(host)
    assert log.source == "dmesg" and log.dmesg_restrict is False
    assert [e.xid for e in log.xid_events] == [79, 63, 32, 69, 31]
    assert log.xid_events_total == 5 and log.lines_read == 8
    assert log.signature_lines == ()
    assert host.unexpected_commands == []
    assert from_json(KernelLogFacts, json.loads(json.dumps(to_json(log)))) == log


def test_signature_refusals_and_the_taint_notice_are_collected() -> None:
    log = gather_kernel_log(RecordedHost(TREES / "fedora-akmods-unsigned-secure-boot"))
    assert log.xid_events == ()
    assert log.signature_lines == (
        "[    5.102344] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
        "[    5.734021] Lockdown: systemd-udevd: unsigned module loading is restricted; see man kernel_lockdown.7",
    )
    text = (
        "[    4.812733] desktop kernel: Loading of unsigned module is rejected\n"
        "[   12.1] nvidia: module verification failed: signature and/or required key missing - tainting kernel\n"
        "[   13.2] Loading of module with unavailable key is rejected\n"
    )
    assert len(parse_kernel_log(text, "dmesg", False).signature_lines) == 3


def test_restricted_dmesg_and_no_journal_access_is_unreadable_not_empty() -> None:
    host = RecordedHost(TREES / "dmesg-restricted-no-journal-access")
    log = gather_kernel_log(host)
    assert reason(log.source) is Reason.PERMISSION_DENIED
    assert log.dmesg_restrict is True
    assert "kernel.dmesg_restrict = 1" in str(log.source)
    assert (log.lines_read, log.xid_events) == (0, ())
    assert host.unexpected_commands == []


def _capture(
    tmp_path: Path, commands: list[dict[str, Any]], tools: tuple[str, ...] = ("dmesg", "journalctl")
) -> RecordedHost:
    root = tmp_path / "root"
    for tool in tools:
        (root / "usr/bin").mkdir(parents=True, exist_ok=True)
        (root / "usr/bin" / tool).write_text("")
    root.mkdir(exist_ok=True)
    (tmp_path / "host.json").write_text(json.dumps({"description": "test"}))
    (tmp_path / "commands.json").write_text(json.dumps(commands))
    return RecordedHost(tmp_path)


def _cmd(
    argv: tuple[str, ...], stdout: str = "", stderr: str = "", status: str = "ok", rc: int = 0
) -> dict[str, Any]:
    return {"argv": list(argv), "stdout": stdout, "stderr": stderr, "status": status, "returncode": rc}


def test_journal_with_only_its_own_header_lines_is_not_a_clean_log(tmp_path: Path) -> None:
    header = "-- Logs begin at Wed 2025-06-18 07:04:44 GMT, end at Wed 2026-05-06 08:18:29 GMT. --\n"
    commands = [
        _cmd(
            DMESG_ARGV,
            stderr="dmesg: read kernel buffer failed: Operation not permitted\n",
            status="nonzero",
            rc=1,
        ),
        _cmd(JOURNAL_ARGV, stdout=header),
    ]
    log = gather_kernel_log(_capture(tmp_path, commands))
    assert isinstance(log.source, Unavailable)
    assert reason(log.source) is Reason.PERMISSION_DENIED  # dmesg's refusal is the more telling reason


def test_journal_answers_when_dmesg_is_refused(tmp_path: Path) -> None:
    journal = "[ 179.437933] gpu kernel: NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000005 intr 00008000\n"
    commands = [
        _cmd(
            DMESG_ARGV,
            stderr="dmesg: read kernel buffer failed: Operation not permitted\n",
            status="nonzero",
            rc=1,
        ),
        _cmd(JOURNAL_ARGV, stdout="-- Boot 3fa81c22d94b4e6f8b07a1c5de930f44 --\n" + journal),
    ]
    log = gather_kernel_log(_capture(tmp_path, commands))
    assert log.source == " ".join(JOURNAL_ARGV)
    assert [e.xid for e in log.xid_events] == [32]


def test_empty_dmesg_output_is_unreadable(tmp_path: Path) -> None:
    log = gather_kernel_log(_capture(tmp_path, [_cmd(DMESG_ARGV, stdout="\n")], tools=("dmesg",)))
    assert reason(log.source) is Reason.FAILED


def test_no_tools_is_not_found(tmp_path: Path) -> None:
    log = gather_kernel_log(_capture(tmp_path, [], tools=()))
    assert reason(log.source) is Reason.NOT_FOUND
    assert reason(log.dmesg_restrict) is Reason.NOT_FOUND


def test_hung_dmesg_is_timed_out(tmp_path: Path) -> None:
    log = gather_kernel_log(_capture(tmp_path, [_cmd(DMESG_ARGV, status="timed_out")], tools=("dmesg",)))
    assert reason(log.source) is Reason.TIMED_OUT


def test_only_the_newest_events_are_kept_but_all_are_counted() -> None:
    line = "NVRM: Xid (PCI:0000:01:00): 13, Graphics SM Warp Exception\n"
    log = parse_kernel_log(line * (MAX_XID_EVENTS + 50), "dmesg", False)
    assert len(log.xid_events) == MAX_XID_EVENTS
    assert log.xid_events_total == MAX_XID_EVENTS + 50


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("NVRM: Xid (PCI:0000:2b:00): 79, \nLockdown [] ."), max_size=400))
def test_any_log_text_gives_typed_events(text: str) -> None:
    log = parse_kernel_log(text, "dmesg", False)
    assert log.xid_events_total >= len(log.xid_events)
    for event in log.xid_events:
        assert isinstance(event.xid, int) and 0 <= event.xid < 10_000
        assert isinstance(event.bdf, str | Unavailable)
