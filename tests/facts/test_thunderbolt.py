"""Thunderbolt/USB4 facts: sysfs attributes, `boltctl list` text, and whether a GPU's path runs through a tunnel.

Trees: tests/fixtures/sysfs-trees/<scenario> (provenance in its README.md). boltctl texts: samples/boltctl/.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_gpu_doctor.facts.boltctl import (
    BOLTCTL_ARGV,
    BoltDevice,
    BoltStatus,
    gather_boltctl,
    parse_boltctl_list,
)
from torch_gpu_doctor.facts.pcie_link import PcieLinkPath, gather_pcie_link, narrowest_hop
from torch_gpu_doctor.facts.thunderbolt import (
    PCIE_BLOCKING_SECURITY,
    GpuTunnel,
    TbSecurity,
    ThunderboltFacts,
    TunnelRule,
    gather_thunderbolt,
    gpu_tunnel,
    parse_drom_id,
    parse_name,
    parse_security,
    parse_small_int,
    parse_tb_speed,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs-trees"
PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EGPU = "0000:66:00.0"


def host(scenario: str) -> RecordedHost:
    return RecordedHost(TREES / scenario)


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


# --- boltctl list: real texts (samples/boltctl/*.txt without their `# SOURCE:` line) ---------------------------

# samples/boltctl/hardinfo-649-razer-core.txt
RAZER_CORE = """\
 ● Razer Core
   ├─ type:          peripheral
   ├─ name:          Core
   ├─ vendor:        Razer
   ├─ uuid:          c0030000-00a2-8508-2219-f4d4d2c1a918
   ├─ generation:    Thunderbolt 3
   ├─ status:        authorized
   │  ├─ domain:     c6030000-0080-7518-2391-a4e51a82e819
   │  ├─ rx speed:   40 Gb/s = 2 lanes * 20 Gb/s
   │  ├─ tx speed:   40 Gb/s = 2 lanes * 20 Gb/s
   │  └─ authflags:  none
   ├─ authorized:    Wed 25 May 2022 23:13:43
   ├─ connected:     Wed 25 May 2022 23:13:43
   └─ stored:        Fri 27 Sep 2019 01:14:20
      ├─ policy:     iommu
      └─ key:        no
"""
# samples/boltctl/tsu-65-apple-display-authorization-error.txt (older bolt: no generation or speed lines)
APPLE_DISPLAY = """\
● Apple Thunderbolt Display
   ├─ type:          peripheral
   ├─ name:          Thunderbolt Display
   ├─ vendor:        Apple, Inc.
   ├─ uuid:          90ad5500-0100-0100-ffff-ffffffffffff
   ├─ status:        authorization error
   │  ├─ domain:     d0010000-0080-7f08-235f-4312aa32a021
   │  └─ authflags:  none
   ├─ authorized:    Sat 08 Dec 2018 23:38:56 UTC
   ├─ connected:     Sat 08 Dec 2018 23:38:56 UTC
   └─ stored:        no
"""
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "reference" / "samples" / "boltctl"


def to_ascii(text: str) -> str:
    """What boltctl prints when stdout is not a terminal: gicmo/bolt common/bolt-term.c ansi_glphys."""
    for utf8, ascii_ in (("│ ", "| "), ("├─", "|-"), ("└─", "`-"), ("●", "*"), ("○", "o")):
        text = text.replace(utf8, ascii_)
    return text


def test_parse_boltctl_authorized_enclosure() -> None:
    (device,) = parse_boltctl_list(RAZER_CORE)
    assert device.label == "Razer Core"
    assert (device.device_type, device.name, device.vendor) == ("peripheral", "Core", "Razer")
    assert device.uuid == "c0030000-00a2-8508-2219-f4d4d2c1a918"
    assert device.generation == "Thunderbolt 3"
    assert device.status is BoltStatus.AUTHORIZED
    assert device.domain == "c6030000-0080-7518-2391-a4e51a82e819"
    assert (device.rx_lanes, device.rx_lane_gbits_per_s, device.tx_lanes, device.tx_lane_gbits_per_s) == (
        2,
        20,
        2,
        20,
    )
    assert (device.authflags, device.stored, device.policy) == ("none", True, "iommu")


def test_parse_boltctl_authorization_error_from_an_older_bolt() -> None:
    (device,) = parse_boltctl_list(APPLE_DISPLAY)
    assert device.status is BoltStatus.AUTH_ERROR
    assert device.stored is False
    assert reason(device.generation) is Reason.NOT_FOUND
    assert reason(device.rx_lanes) is Reason.NOT_FOUND
    assert reason(device.policy) is Reason.NOT_FOUND


@pytest.mark.parametrize("text", [RAZER_CORE, APPLE_DISPLAY])
def test_ascii_glyphs_and_colours_parse_the_same(text: str) -> None:
    assert parse_boltctl_list(to_ascii(text)) == parse_boltctl_list(text)
    # on a terminal bolt colours the status circle: " %s%s%s %s" with ANSI codes (boltctl.c print_device)
    coloured = text.replace("● ", "\x1b[0;32m●\x1b[0m ", 1)
    assert parse_boltctl_list(coloured) == parse_boltctl_list(text)


def test_several_blocks_and_the_samples_on_disk_agree() -> None:
    both = parse_boltctl_list(RAZER_CORE + "\n" + APPLE_DISPLAY)
    assert [d.label for d in both] == ["Razer Core", "Apple Thunderbolt Display"]
    if SAMPLES.is_dir():  # the shared samples sit beside the repository in this workspace
        text = (SAMPLES / "hardinfo-649-razer-core.txt").read_text(encoding="utf-8").split("\n", 1)[1]
        assert parse_boltctl_list(text) == parse_boltctl_list(RAZER_CORE)


def test_a_speed_line_whose_total_disagrees_is_garbage() -> None:
    (device,) = parse_boltctl_list(RAZER_CORE.replace("40 Gb/s = 2 lanes", "30 Gb/s = 2 lanes", 1))
    assert reason(device.rx_lanes) is Reason.UNPARSEABLE
    assert device.tx_lanes == 2


def test_gather_boltctl_runs_the_recorded_command() -> None:
    hosted = host("egpu-thunderbolt-authorized")
    devices = gather_boltctl(hosted)
    assert isinstance(devices, tuple)
    (device,) = devices
    # samples/boltctl/egpu-switcher-60-razer-core-x-chroma.txt (ends before the "connected:" line)
    assert device.label == "Razer Core X Chroma"
    assert device.status is BoltStatus.AUTHORIZED
    assert device.uuid == "00f18224-bce3-2701-ffff-ffffffffffff"
    assert reason(device.stored) is Reason.NOT_FOUND
    assert hosted.unexpected_commands == []


def test_gather_boltctl_without_bolt_or_with_a_failing_daemon(tmp_path: Path) -> None:
    assert reason(gather_boltctl(host("egpu-thunderbolt-unauthorized"))) is Reason.NOT_FOUND
    shutil.copytree(TREES / "egpu-thunderbolt-authorized", tmp_path / "cap", symlinks=True)
    failing = {"argv": list(BOLTCTL_ARGV), "status": "nonzero", "returncode": 1, "stdout": "", "stderr": "x"}
    (tmp_path / "cap" / "commands.json").write_text(json.dumps([failing]))
    result = gather_boltctl(RecordedHost(tmp_path / "cap"))
    assert reason(result) is Reason.FAILED and "exit 1" in str(result)


# --- sysfs attribute parsers ----------------------------------------------------------------------------------


def test_parse_security_levels() -> None:
    # samples/sysfs-thunderbolt/tsu-24-domain-security-secure.txt: "secure"
    assert parse_security("secure\n") is TbSecurity.SECURE
    # Documentation/ABI/testing/sysfs-bus-thunderbolt (hardware.md §2.1): the six levels
    for word in ("none", "user", "secure", "dponly", "usbonly", "nopcie"):
        assert parse_security(word + "\n") is TbSecurity(word)
    assert {TbSecurity.DPONLY, TbSecurity.USBONLY, TbSecurity.NOPCIE} == PCIE_BLOCKING_SECURITY
    assert reason(parse_security("Secure")) is Reason.UNPARSEABLE


def test_parse_router_attributes() -> None:
    # samples/sysfs-thunderbolt/kernel-doc-unauthorized-pcie-box.txt: vendor 0x41, device 0x305, 0x1, 0x8004
    assert [parse_drom_id(t) for t in ("0x41\n", "0x305\n", "0x1\n", "0x8004\n", "0\n")] == [
        0x41,
        0x305,
        0x1,
        0x8004,
        0,
    ]
    assert parse_name("AKiTiO Thunder3 PCIe Box\n") == "AKiTiO Thunder3 PCIe Box"
    assert reason(parse_name("\n")) is Reason.UNPARSEABLE
    # switch.c "%u.0 Gb/s\n" (hardware.md §2.1) and the 20 Gb/s lanes boltctl reports
    assert parse_tb_speed("20.0 Gb/s\n") == 20.0
    assert parse_tb_speed("40.0 Gb/s\n") == 40.0
    for bad in ("20", "20.0 GT/s", "Gb/s", "", "20.0 Gb/s PCIe"):
        assert reason(parse_tb_speed(bad)) is Reason.UNPARSEABLE, bad
    assert parse_small_int("2\n", 2) == 2
    assert reason(parse_small_int("3\n", 2)) is Reason.UNPARSEABLE


@PROPS
@given(st.text(max_size=60))
def test_sysfs_parsers_are_total(text: str) -> None:
    security = parse_security(text)
    assert isinstance(security, TbSecurity | Unavailable)
    assert isinstance(security, Unavailable) or security.value == text.strip()
    speed = parse_tb_speed(text)
    assert isinstance(speed, Unavailable) or (isinstance(speed, float) and 0 <= speed < 1000)
    small = parse_small_int(text, 9)
    assert isinstance(small, Unavailable) or (isinstance(small, int) and 0 <= small <= 9)
    drom = parse_drom_id(text)
    assert isinstance(drom, Unavailable) or (isinstance(drom, int) and 0 <= drom < 1 << 32)
    name = parse_name(text)
    assert isinstance(name, Unavailable) or (name == name.strip() and name and name.isprintable())


_lines = st.sampled_from(
    [*RAZER_CORE.splitlines(), *APPLE_DISPLAY.splitlines(), "", " * x", "   |- status: bogus", "o", "●"]
)


@PROPS
@given(st.lists(_lines, max_size=30).map("\n".join) | st.text(max_size=200))
def test_parse_boltctl_list_is_total(text: str) -> None:
    devices = parse_boltctl_list(text)
    assert all(isinstance(d, BoltDevice) and d.label for d in devices)
    for device in devices:
        assert isinstance(device.status, BoltStatus | Unavailable)
        assert from_json(BoltDevice, json.loads(json.dumps(to_json(device)))) == device


# --- gather over captured trees -------------------------------------------------------------------------------


def test_unauthorized_pcie_box() -> None:
    facts = gather_thunderbolt(host("egpu-thunderbolt-unauthorized"))
    assert isinstance(facts, ThunderboltFacts)
    (domain,) = facts.domains
    assert domain.name == "domain0" and domain.security is TbSecurity.SECURE
    assert domain.controller_bdf == "0000:07:00.0"
    assert reason(domain.iommu_dma_protection) is Reason.NOT_FOUND
    by_name = {d.name: d for d in facts.devices}
    assert sorted(by_name) == ["0-0", "0-1", "0-3"]
    assert by_name["0-0"].is_host_router and reason(by_name["0-0"].authorized) is Reason.NOT_FOUND
    box = by_name["0-3"]
    assert (box.authorized, box.vendor_id, box.device_id) == (0, 0x41, 0x305)
    assert (box.vendor_name, box.device_name) == ("inXtron", "AKiTiO Thunder3 PCIe Box")
    assert box.unique_id == "dc010000-0000-8508-a22d-32ca6421cb16"
    assert reason(box.generation) is Reason.NOT_FOUND  # the listing predates kernel 5.5
    assert by_name["0-1"].vendor_name == "Apple, Inc." and by_name["0-1"].authorized == 0


def test_authorized_egpu_domain() -> None:
    facts = gather_thunderbolt(host("egpu-thunderbolt-authorized"))
    assert isinstance(facts, ThunderboltFacts)
    (domain,) = facts.domains
    assert (domain.security, domain.iommu_dma_protection, domain.controller_bdf) == (
        TbSecurity.USER,
        True,
        "0000:c4:00.5",
    )
    host_router, enclosure = facts.devices
    assert host_router.is_host_router and host_router.generation == 4
    assert not enclosure.is_host_router and enclosure.domain == "domain0"
    assert (enclosure.authorized, enclosure.generation, enclosure.rx_lanes, enclosure.tx_lanes) == (
        1,
        3,
        2,
        2,
    )
    assert (enclosure.rx_lane_gbits_per_s, enclosure.tx_lane_gbits_per_s) == (20.0, 20.0)
    assert enclosure.device_name == "Core X Chroma"


def test_no_thunderbolt_bus() -> None:
    assert reason(gather_thunderbolt(host("rtx3090-x8-slot-idle"))) is Reason.NOT_FOUND


# --- is the GPU behind a tunnel? ------------------------------------------------------------------------------


def test_egpu_behind_a_usb4_tunnel() -> None:
    # samples/lspci/all-ways-egpu-37-thunderbolt-egpu-summary.txt
    hosted = host("egpu-thunderbolt-authorized")
    path = gather_pcie_link(hosted, EGPU)
    tunnel = gpu_tunnel(path, gather_thunderbolt(hosted))
    assert tunnel.through_tunnel is True
    rules = {(e.rule, e.bdf) for e in tunnel.evidence}
    assert rules == {
        (TunnelRule.REMOVABLE, "0000:62:00.0"),  # the topmost removable hop
        (TunnelRule.INTEL_TB_BRIDGE, "0000:62:00.0"),
        (TunnelRule.INTEL_TB_BRIDGE, "0000:63:01.0"),
        (TunnelRule.TUNNEL_ROOT_PORT, "0000:00:03.1"),
    }
    assert tunnel.virtual_port_bdfs == ("0000:00:03.1",)
    # the virtual port's "2.5 GT/s x1" is meaningless (hardware.md §1.3): without it the bottleneck is the
    # enclosure's upstream link; with it, the tunnel port would be blamed
    assert path.narrowest_bdf == "0000:00:03.1"
    skipped = narrowest_hop(path.hops, skip=tunnel.virtual_port_bdfs)
    assert skipped is not None and skipped.bdf == "0000:62:00.0"
    assert skipped.current_link.bandwidth_gbytes_per_s == 1.0
    # the GPU itself reports its on-card Gen4 x16 link
    assert path.hops[0].current_link.width == 16 and path.hops[0].current_link.generation == 4


def test_rule_c_a_downstream_port_of_the_domains_controller(tmp_path: Path) -> None:
    """The unauthorized tree after authorization, with ids a list would not know (as on a non-Intel controller):
    only the structural rule can tell."""
    shutil.copytree(TREES / "egpu-thunderbolt-unauthorized", tmp_path / "cap", symlinks=True)
    root = tmp_path / "cap" / "root"
    port = root / "sys/devices/pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:01.0"
    for ids in port.parent.glob("**/device"):
        ids.unlink()
    (port / "0000:08:00.0").mkdir()
    (port / "0000:08:00.0" / "class").write_text("0x030000\n")
    (root / "sys/bus/pci/devices/0000:08:00.0").symlink_to(
        "../../../devices/pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:01.0/0000:08:00.0"
    )
    authorized = root / "sys/devices/pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:00.0/0000:07:00.0"
    (authorized / "domain0/0-0/0-3/authorized").write_text("1\n")
    hosted = RecordedHost(tmp_path / "cap")
    path = gather_pcie_link(hosted, "0000:08:00.0")
    tunnel = gpu_tunnel(path, gather_thunderbolt(hosted))
    assert tunnel.through_tunnel is True
    assert [(e.rule, e.bdf) for e in tunnel.evidence] == [(TunnelRule.CONTROLLER_PORT, "0000:06:01.0")]
    # not authorized: rule (c) needs an authorized device in that domain (hardware.md §2.2)
    (authorized / "domain0/0-0/0-3/authorized").write_text("0\n")
    again = gpu_tunnel(path, gather_thunderbolt(RecordedHost(tmp_path / "cap")))
    assert again.through_tunnel is False and again.evidence == ()


@pytest.mark.parametrize(
    ("scenario", "bdf"),
    [
        ("rtx3090-x8-slot-idle", "0000:0b:00.0"),
        ("amd-gpu-onboard-switch", "0000:03:00.0"),
        ("virtio-vm", "0000:00:02.0"),
        ("quadro-rtx8000-pi-x1", "0000:01:00.0"),
    ],
)
def test_slot_gpus_are_not_tunnelled(scenario: str, bdf: str) -> None:
    hosted = host(scenario)
    tunnel = gpu_tunnel(gather_pcie_link(hosted, bdf), gather_thunderbolt(hosted))
    assert tunnel == GpuTunnel(bdf, False, (), ())


def test_an_unreadable_path_is_not_a_verdict() -> None:
    path = gather_pcie_link(host("broken-link-files"), "0000:02:00.0")
    tunnel = gpu_tunnel(path, Unavailable(Reason.NOT_FOUND, "no bus"))
    assert reason(tunnel.through_tunnel) is Reason.FAILED


# --- serialisation --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["egpu-thunderbolt-authorized", "egpu-thunderbolt-unauthorized"])
def test_thunderbolt_facts_round_trip_through_json(scenario: str) -> None:
    hosted = host(scenario)
    facts = gather_thunderbolt(hosted)
    assert isinstance(facts, ThunderboltFacts)
    assert from_json(ThunderboltFacts, json.loads(json.dumps(to_json(facts), allow_nan=False))) == facts
    path = gather_pcie_link(hosted, EGPU)
    tunnel = gpu_tunnel(path, facts)
    assert from_json(GpuTunnel, json.loads(json.dumps(to_json(tunnel)))) == tunnel
    assert from_json(PcieLinkPath, json.loads(json.dumps(to_json(path)))) == path
