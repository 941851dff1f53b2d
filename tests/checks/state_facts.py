"""In-memory facts for the driver-state and GPU-health checks, next to tests/factories.py's healthy machine.

Values follow the captures in tests/fixtures/driver-state-trees (README there): an Ubuntu 24.04 machine on
6.8.0-49-generic with a DKMS-built nvidia module, and A100 health answers from the nvidia-smi -q sample.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from torch_gpu_doctor.facts.dkms import DkmsEntry
from torch_gpu_doctor.facts.gpu_health import GpuHealth
from torch_gpu_doctor.facts.kernel_log import KernelLogFacts, parse_xid
from torch_gpu_doctor.facts.modinfo import ModuleInfo
from torch_gpu_doctor.facts.nvidia_module import NO_MODULE, InstalledKernel, NvidiaModuleFacts
from torch_gpu_doctor.facts.secure_boot import MokCertificate, SecureBootFacts
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

RELEASE = "6.8.0-49-generic"
NOT_SUPPORTED = Unavailable(Reason.NOT_SUPPORTED, "NVMLError_NotSupported")
MISSING_MODULE = Unavailable(Reason.NOT_FOUND, NO_MODULE)


def module_info(
    version: str = "550.120", signed: bool = True, signer: str | None = "DKMS module signing key"
) -> ModuleInfo:
    return ModuleInfo(
        filename=f"/lib/modules/{RELEASE}/updates/dkms/nvidia.ko.zst",
        version=version,
        vermagic=RELEASE,
        signed=signed,
        signer=signer if signer else Unavailable(Reason.NOT_FOUND, "modinfo has no signer line"),
    )


def kernel(
    release: str = RELEASE, modules: bool = True, headers: bool = True, installed: bool = True
) -> InstalledKernel:
    files = (f"/lib/modules/{release}/updates/dkms/nvidia.ko.zst",) if modules else ()
    return InstalledKernel(release, installed, headers, files)


def module_facts(
    modinfo: Maybe[ModuleInfo] | None = None,
    kernels: Maybe[tuple[InstalledKernel, ...]] | None = None,
    dkms: Maybe[tuple[DkmsEntry, ...]] | None = None,
    running: Maybe[str] = RELEASE,
) -> NvidiaModuleFacts:
    return NvidiaModuleFacts(
        running_kernel=running,
        modinfo=module_info() if modinfo is None else modinfo,
        kernels=(kernel(),) if kernels is None else kernels,
        dkms=(DkmsEntry("nvidia", "550.120", RELEASE, "x86_64", "installed", ""),) if dkms is None else dkms,
    )


def secure_boot(
    on: Maybe[bool] = True,
    efi: bool = True,
    certificates: tuple[MokCertificate, ...] = (),
    shim_disabled: Maybe[bool] = False,
) -> SecureBootFacts:
    return SecureBootFacts(
        efi=efi,
        secure_boot=on,
        source="efivars",
        setup_mode=False,
        shim_validation_disabled=shim_disabled,
        lockdown="integrity" if on is True else "none",
        sig_enforce=False,
        certificates=certificates,
    )


def kernel_log(
    xid_lines: tuple[str, ...] = (), signature_lines: tuple[str, ...] = (), source: Maybe[str] = "dmesg"
) -> KernelLogFacts:
    events = tuple(e for e in (parse_xid(line) for line in xid_lines) if e is not None)
    return KernelLogFacts(
        source=source,
        dmesg_restrict=False,
        lines_read=900 if isinstance(source, str) else 0,
        xid_events=events,
        xid_events_total=len(events),
        signature_lines=signature_lines,
    )


def unreadable_log() -> KernelLogFacts:
    denied = Unavailable(
        Reason.PERMISSION_DENIED,
        "dmesg: dmesg: read kernel buffer failed: Operation not permitted (exit 1); kernel.dmesg_restrict = 1 "
        "lets only root (CAP_SYSLOG) read it",
    )
    return replace(kernel_log(source=denied), dmesg_restrict=True)


def health(index: int = 0, bdf: str = "0000:01:00.0", **fields: Any) -> GpuHealth:
    """An ECC GPU at idle with clean counters (thamada-A100SXMx4-q.txt, GPU 68)."""
    base = GpuHealth(
        index=index,
        bdf=bdf,
        clocks_event_reasons=0x1,
        display_active=False,
        ecc_enabled=True,
        ecc_pending=True,
        ecc_corrected_volatile=0,
        ecc_uncorrected_volatile=0,
        ecc_corrected_aggregate=0,
        ecc_uncorrected_aggregate=0,
        retired_pages_single_bit=NOT_SUPPORTED,
        retired_pages_double_bit=NOT_SUPPORTED,
        retired_pages_pending=NOT_SUPPORTED,
        remapped_rows_correctable=0,
        remapped_rows_uncorrectable=0,
        remapped_rows_pending=False,
        remapping_failed=False,
    )
    return replace(base, **fields)


def geforce_health(index: int = 0, bdf: str = "0000:01:00.0", **fields: Any) -> GpuHealth:
    """A GeForce RTX 3090: ECC mode, error counts, retired pages and remapped rows all N/A
    (thamada-RTX3090-q.txt)."""
    unsupported = dict.fromkeys(
        (
            "ecc_enabled",
            "ecc_pending",
            "ecc_corrected_volatile",
            "ecc_uncorrected_volatile",
            "ecc_corrected_aggregate",
            "ecc_uncorrected_aggregate",
            "remapped_rows_correctable",
            "remapped_rows_uncorrectable",
            "remapped_rows_pending",
            "remapping_failed",
        ),
        NOT_SUPPORTED,
    )
    return health(index, bdf, **{**unsupported, **fields})


def rtx4090_health(index: int = 0, bdf: str = "0000:01:00.0") -> GpuHealth:
    """A GeForce RTX 4090: ECC off and its counters N/A, but remapped rows answered (thamada-RTX4090-q.txt)."""
    return geforce_health(
        index,
        bdf,
        ecc_enabled=False,
        ecc_pending=False,
        remapped_rows_correctable=0,
        remapped_rows_uncorrectable=0,
        remapped_rows_pending=False,
        remapping_failed=False,
    )
