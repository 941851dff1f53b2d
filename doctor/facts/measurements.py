"""Opt-in timed measurements (`--measure`): RAM copy bandwidth and the data directory's sequential read.

They run on the live machine through `Host.measure` (only when it was created with `measure=True`), after
every other probe (a torch import or an NVML scan
running beside them would steal the bandwidth they measure); a capture replays their recorded results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from torch_gpu_doctor.host.base import Host, Measurement
from torch_gpu_doctor.measure.disk_read import DiskRead
from torch_gpu_doctor.measure.ram_bandwidth import RamBandwidth
from torch_gpu_doctor.serialize import DecodeError, from_json
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class Measurements:
    ram: Maybe[RamBandwidth]
    disk: Maybe[DiskRead]


def gather_measurements(host: Host, data_dir: str) -> Measurements:
    """What the host answers: a live machine measures only when it was created with `measure=True`
    (`--measure`), a capture replays what was recorded."""
    ram = host.measure(Measurement.RAM_BANDWIDTH, "")
    disk = host.measure(Measurement.DISK_READ, data_dir)
    return Measurements(_decode(RamBandwidth, ram), _decode(DiskRead, disk))


def _decode(kind: type[Any], data: Mapping[str, Any] | Unavailable) -> Any:
    if isinstance(data, Unavailable):
        return data
    try:
        return from_json(kind, dict(data))
    except DecodeError as exc:
        return Unavailable(Reason.UNPARSEABLE, f"{kind.__name__}: {exc}")


def not_measured(what: str, why: Unavailable) -> str:
    """One sentence for a measurement that is missing: not asked for, not in the capture, or failed."""
    if why.reason is Reason.NOT_RECORDED:
        return f"{what} was not measured when this capture was made."
    if why.reason is Reason.NOT_APPLICABLE and "--measure" in why.detail:
        return f"{what} not measured (run with --measure)."
    return f"{what} not measured: {why.detail or why.reason.value}."
