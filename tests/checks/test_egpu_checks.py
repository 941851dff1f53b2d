"""egpu.* over the Thunderbolt sysfs trees of tests/fixtures/sysfs-trees (provenance in its README)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.factories import facts, gpu
from torch_gpu_doctor.checks.egpu import egpu_authorized, egpu_tunnel
from torch_gpu_doctor.facts.boltctl import gather_boltctl
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import gather_pcie_links
from torch_gpu_doctor.facts.thunderbolt import TbSecurity, gather_thunderbolt
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs-trees"


def machine(scenario: str, bdfs: tuple[str, ...] = ()) -> Facts:
    host = RecordedHost(TREES / scenario)
    return facts(
        gpus=tuple(replace(gpu(bdf=b), vendor="amd") for b in bdfs),
        pcie=gather_pcie_links(host, bdfs),
        thunderbolt=gather_thunderbolt(host),
        boltctl=gather_boltctl(host),
    )


def test_unauthorized_enclosure_fails_with_the_boltctl_command() -> None:
    # kernel-doc: an AKiTiO Thunder3 PCIe Box with authorized = 0 under security 'secure'
    f = egpu_authorized(machine("egpu-thunderbolt-unauthorized"))
    assert f.status is Status.FAIL
    assert "Not authorized:" in f.summary and "no PCIe device behind it" in f.summary
    assert f.remediation is not None
    assert all(c.argv[:4] == ("boltctl", "enroll", "--policy", "auto") for c in f.remediation.commands)
    assert f.remediation.commands, "the device's unique_id is in the sample"


def test_only_the_enclosure_is_enrolled_and_the_other_device_is_named() -> None:
    # tests/fixtures/hosts/egpu-not-authorized: an Apple Thunderbolt-to-FireWire adapter at 0-1 (first in
    # sysfs) and the AKiTiO PCIe box at 0-3, both waiting. Enrolling is a lasting trust with DMA access: only
    # the box the GPU sits in.
    host = RecordedHost(TREES.parent / "hosts" / "egpu-not-authorized")
    f = egpu_authorized(facts(thunderbolt=gather_thunderbolt(host), boltctl=gather_boltctl(host)))
    assert f.remediation is not None
    commands = f.remediation.commands
    assert [c.argv[-1] for c in commands] == ["dc010000-0000-8508-a22d-32ca6421cb16"]
    assert commands[0].note == "authorize inXtron AKiTiO Thunder3 PCIe Box (0-3) now and on every plug"
    assert "Apple, Inc. Thunderbolt to FireWire Adapter (0-1) is not needed for a GPU" in f.remediation.text


def test_authorized_enclosure_passes_and_its_gpu_is_behind_a_tunnel() -> None:
    m = machine("egpu-thunderbolt-authorized", ("0000:66:00.0",))
    assert egpu_authorized(m).status is Status.PASS
    t = egpu_tunnel(m)
    assert t.status is Status.PASS
    assert "0000:66:00.0 is behind a Thunderbolt/USB4 tunnel: at most about 3.9 GB/s" in t.summary


def test_firmware_security_that_forbids_pcie_fails() -> None:
    m = machine("egpu-thunderbolt-unauthorized")
    assert not isinstance(m.thunderbolt, Unavailable)
    domains = tuple(replace(d, security=TbSecurity.DPONLY) for d in m.thunderbolt.domains)
    f = egpu_authorized(replace(m, thunderbolt=replace(m.thunderbolt, domains=domains)))
    assert f.status is Status.FAIL and "'dponly'" in f.summary and "no PCIe tunnels" in f.summary
    assert f.remediation is not None and f.remediation.requires_reboot


def test_no_thunderbolt_bus_skips_and_internal_gpus_are_not_tunnelled() -> None:
    none = facts(thunderbolt=Unavailable(Reason.NOT_FOUND, "/sys/bus/thunderbolt"), pcie=())
    assert egpu_authorized(none).status is Status.SKIP
    internal = machine("rtx3090-x8-slot-idle", ("0000:0b:00.0",))
    assert egpu_tunnel(internal).summary == "No GPU is behind a Thunderbolt/USB4 tunnel."
