"""The memory test leaves room for its own verify pass (issue 22, defect 11): at 85% of a GPU's free memory the
block plus the verify pass's temporaries (576 MiB at 64 rows of 4 MiB) ran a GPU with a few GiB free out of
memory, and the finding blamed another process."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest

from torch_gpu_doctor.probes import smoke_common

# the probe runs in the diagnosed interpreter (Python 3.7+, no annotations): typed here for the tests
memory_rows = cast(Callable[[int, float], int], smoke_common.memory_rows)
GIB = 1 << 30
ROW = 4 * smoke_common.MEMORY_COLS
VERIFY = smoke_common.MEMORY_BATCH_ROWS * smoke_common.MEMORY_COLS * 9  # int32 pattern + complement + bool


@pytest.mark.parametrize("free_gib", [1.0, 2.0, 3.0, 4.0, 8.0, 80.0, 140.0])
@pytest.mark.parametrize("share", [0.10, 0.50, 0.85])
def test_the_block_and_the_verify_pass_fit_in_free_memory(free_gib: float, share: float) -> None:
    free = int(free_gib * GIB)
    rows = memory_rows(free, share)
    assert rows >= 1
    assert rows * ROW + VERIFY <= free, (rows, free)
    assert rows * ROW <= free * share


def test_the_deep_mode_on_a_3_gib_gpu_was_the_case_that_broke() -> None:
    """85% of 3 GiB is 2611 MiB, and 2611 + 576 MiB does not fit in 3072 MiB; the share is cut instead."""
    assert int(3 * GIB * 0.85) // ROW * ROW + VERIFY > 3 * GIB
    assert memory_rows(3 * GIB, 0.85) * ROW == 2432 << 20


def test_a_large_gpu_keeps_its_full_share() -> None:
    assert memory_rows(140 * GIB, 0.85) == int(140 * GIB * 0.85) // ROW
