"""The header's machine line: one line wherever it can be, saying less as the terminal narrows."""

from __future__ import annotations

import pytest

from tests.tui.conftest import report_of
from torch_gpu_doctor.tui.machine_line import DETAIL_LEVELS, header_line, machine_line

HEADS = ("gpu-doctor 0.1.0 · replay of a capture", "gpu-doctor · replay", "replay")


def test_every_level_of_a_wsl2_machine() -> None:
    facts = report_of("wsl2").facts
    assert [machine_line(facts, level) for level in range(DETAIL_LEVELS)] == [
        "NVIDIA GeForce RTX 3080 (compute capability 8.6, 10 GiB) · driver 536.40 (CUDA ≤ 12.2) · "
        "torch 2.13.0+cpu · Python 3.10.12 /usr/bin/python3",
        "RTX 3080 (8.6, 10 GiB) · driver 536.40 (CUDA ≤ 12.2) · torch 2.13.0+cpu · Python 3.10.12 /usr/bin/python3",
        "RTX 3080 (8.6) · driver 536.40 · torch 2.13.0+cpu · Python 3.10.12 /usr/bin/python3",
        "RTX 3080 · driver 536.40 · torch 2.13.0+cpu · /usr/bin/python3",
    ]


@pytest.mark.parametrize("width", [200, 150, 120, 100, 98, 80, 78])
def test_the_most_detail_that_fits(width: int) -> None:
    facts = report_of("wsl2").facts
    head, rest = header_line(HEADS, facts, width)
    assert len(head) + len(rest) <= width
    fitting = [
        (h, level)
        for h in HEADS
        for level in range(DETAIL_LEVELS)
        if len(h) + 3 * bool(h) + len(machine_line(facts, level)) <= width
    ]
    assert (head, rest) == (
        fitting[0][0],
        (" · " if fitting[0][0] else "") + machine_line(facts, fitting[0][1]),
    )


def test_a_long_interpreter_path_is_cut_from_the_left_when_nothing_else_is_left() -> None:
    facts = report_of("egpu-not-authorized").facts  # /home/user/venv/bin/python
    head, rest = header_line(HEADS, facts, 78)  # 80 columns less the header's padding
    assert head == "replay"
    assert rest == " · no GPU found · no NVIDIA driver · torch 2.5.1+cu124 · …env/bin/python"
    assert len(head + rest) == 78


def test_a_line_that_cannot_fit_keeps_its_whole_short_path_and_wraps() -> None:
    facts = report_of("h100-sxm-x8-server").facts  # /usr/bin/python3: too short to cut and still say much
    head, rest = header_line(HEADS, facts, 78)
    assert (head, rest) == (
        "replay",
        " · 8× H100 80GB HBM3 · driver 565.57.01 · torch 2.13.0+cu130 · /usr/bin/python3",
    )


def test_before_the_facts_the_header_says_it_is_reading() -> None:
    assert header_line(HEADS, None, 80) == (
        HEADS[0],
        " · reading the capture…",
    )  # a replay: not "this machine"
    live = ("gpu-doctor 0.1.0", "gpu-doctor", "")
    assert header_line(live, None, 80) == (live[0], " · reading this machine…")
