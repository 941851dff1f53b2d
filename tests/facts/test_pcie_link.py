"""PCIe link facts: sysfs speed/width parsers against real text, and the hop walk over captured sysfs trees.

Trees: tests/fixtures/sysfs-trees/<scenario> (provenance of every value in its README.md).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_gpu_doctor.facts.pcie_link import (
    MAX_HOPS,
    LinkState,
    PcieLinkPath,
    gather_pcie_link,
    gather_pcie_links,
    lane_gbytes_per_s,
    link_gbytes_per_s,
    link_state,
    link_state_from_generation,
    narrowest_hop,
    parse_hex_attribute,
    parse_link_speed,
    parse_link_width,
    speed_generation,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs-trees"
PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def host(scenario: str) -> RecordedHost:
    return RecordedHost(TREES / scenario)


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


# --- parsers: real strings ------------------------------------------------------------------------------------

# (text as the file holds it, GT/s, generation)
REAL_SPEEDS = (
    (
        "16.0 GT/s PCIe\n",
        16.0,
        4,
    ),  # samples/sysfs/nokyan-resources-512-amd-gpu-internal-switch.txt (01:00.0 current)
    ("32.0 GT/s PCIe\n", 32.0, 5),  # same file (01:00.0 max, 03:00.0 current and max)
    # hardware.md §1.1, kernel 4.13-5.6 vocabulary (56c1af4606f0, 4.17, de76cda215d5)
    ("2.5 GT/s\n", 2.5, 1),
    ("5 GT/s\n", 5.0, 2),
    ("8 GT/s\n", 8.0, 3),
    ("16 GT/s\n", 16.0, 4),
    ("32 GT/s\n", 32.0, 5),
    # hardware.md §1.1, kernel 5.7+ pci_speed_string() (6348a34dcb98)
    ("2.5 GT/s PCIe\n", 2.5, 1),
    ("5.0 GT/s PCIe\n", 5.0, 2),
    ("8.0 GT/s PCIe\n", 8.0, 3),
    ("64.0 GT/s PCIe\n", 64.0, 6),
)


@pytest.mark.parametrize(("text", "gts", "generation"), REAL_SPEEDS)
def test_parse_link_speed_both_kernel_vocabularies(text: str, gts: float, generation: int) -> None:
    assert parse_link_speed(text) == gts
    assert speed_generation(gts) == generation


@pytest.mark.parametrize("text", ["Unknown\n", "Unknown speed\n"])  # hardware.md §1.1: new and old fallbacks
def test_unknown_speed_is_unavailable_not_a_guess(text: str) -> None:
    result = parse_link_speed(text)
    assert reason(result) is Reason.NOT_SUPPORTED
    assert "Unknown" in str(result)


@pytest.mark.parametrize(
    "text", ["", "\n", "GT/s", "16.0", "16.0 Gb/s", "fast", "16.0 GT/s PCIe x16", "1e3 GT/s"]
)
def test_garbled_speed_is_unparseable(text: str) -> None:
    assert reason(parse_link_speed(text)) is Reason.UNPARSEABLE


def test_parse_link_width_real_and_garbage() -> None:
    # samples/sysfs/nokyan-resources-512-amd-gpu-internal-switch.txt: "8" and "16"
    assert parse_link_width("8\n") == 8
    assert parse_link_width("16\n") == 16
    assert parse_link_width("0\n") == 0  # a link that is down
    for bad in ("", "x16", "16x", "-1", "64", "١٦", "²", "9" * 5000):
        assert reason(parse_link_width(bad)) is Reason.UNPARSEABLE, bad


def test_a_rate_that_is_no_generation_gives_no_bandwidth() -> None:
    state = link_state("4 GT/s\n", "16\n")
    assert state.speed_gts == 4.0
    assert reason(state.generation) is Reason.UNPARSEABLE
    assert reason(state.bandwidth_gbytes_per_s) is Reason.UNPARSEABLE


def test_lane_rates() -> None:
    # hardware.md §1.2 table (kernel PCIE_SPEED2MBS_ENC) and the brief's Gen6 FLIT figure
    expected = {1: 0.25, 2: 0.5, 3: 0.9846, 4: 1.9692, 5: 3.9385, 6: 7.5625}
    for generation, rate in expected.items():
        got = lane_gbytes_per_s(generation)
        assert isinstance(got, float) and got == pytest.approx(rate, abs=1e-4), generation
    assert reason(lane_gbytes_per_s(7)) is Reason.UNPARSEABLE
    assert reason(link_gbytes_per_s(4, 0)) is Reason.NOT_APPLICABLE


@pytest.mark.parametrize(
    ("generation", "width", "kernel_gbits"),
    [
        # samples/dmesg/amdgpu_top-33-pcie-bandwidth-limited.txt: "126.016 Gb/s ... 8.0 GT/s PCIe x16",
        # "capable of 252.048 Gb/s with 16.0 GT/s PCIe x16" (the kernel truncates each lane to whole Mb/s)
        (3, 16, 126.016),
        (4, 16, 252.048),
        # samples/dmesg/archwiki-egpu-tb-limited.txt: "8.000 Gb/s ... limited by 2.5 GT/s PCIe x4"
        (1, 4, 8.000),
    ],
)
def test_bandwidth_agrees_with_the_kernels_log_line(generation: int, width: int, kernel_gbits: float) -> None:
    gbytes = link_gbytes_per_s(generation, width)
    assert isinstance(gbytes, float)
    assert gbytes * 8 == pytest.approx(kernel_gbits, abs=0.02)


def test_nvml_generation_and_width_map_to_the_same_states() -> None:
    # samples/nvidia-smi-q/thamada-RTX4090-q.txt: Current 1 / Device Max 4, width 16x / 16x
    idle = link_state_from_generation(1, 16)
    assert idle == LinkState(2.5, 1, 16, 4.0)
    assert link_state_from_generation(4, 16) == link_state("16.0 GT/s PCIe\n", "16\n")
    # samples/nvidia-smi-q/thamada-RTX4060Ti-q.txt: Gen 4, Current 4x (an x8 card in an x4 slot)
    slot = link_state_from_generation(4, 4).bandwidth_gbytes_per_s
    assert isinstance(slot, float) and slot == pytest.approx(7.877, abs=1e-3)
    not_supported = Unavailable(Reason.NOT_SUPPORTED, "NVMLError_NotSupported")
    assert link_state_from_generation(not_supported, 16).bandwidth_gbytes_per_s == not_supported
    assert reason(link_state_from_generation(9, 16).generation) is Reason.UNPARSEABLE


def test_parse_hex_attribute() -> None:
    # samples/sysfs/local-vm-virtio-blk-and-pci.txt: class 0x018000, vendor 0x1af4
    assert parse_hex_attribute("0x018000\n") == 0x018000
    assert parse_hex_attribute("0x1af4\n") == 0x1AF4
    for bad in ("", "0x", "1af4", "0x1af4z", "0x" + "f" * 40, "0x١"):
        assert parse_hex_attribute(bad) is None, bad


# --- parsers: properties --------------------------------------------------------------------------------------

GENERATION_RATES = ((2.5, "2.5"), (5.0, "5"), (8.0, "8"), (16.0, "16"), (32.0, "32"), (64.0, "64"))
_tokens = st.sampled_from(
    [
        "GT/s",
        " GT/s",
        "PCIe",
        " PCIe",
        "Unknown",
        " speed",
        ".",
        "0",
        "2.5",
        "16",
        "\n",
        " ",
        "x",
        "١",
        "\x00",
        "é",
    ]
)
garbage = st.one_of(st.text(max_size=40), st.lists(_tokens, max_size=8).map("".join))


@PROPS
@given(garbage)
def test_parse_link_speed_is_total(text: str) -> None:
    result = parse_link_speed(text)
    assert isinstance(result, Unavailable) or (isinstance(result, float) and 0 <= result < 1000)


@PROPS
@given(garbage)
def test_parse_link_width_is_total(text: str) -> None:
    result = parse_link_width(text)
    assert isinstance(result, Unavailable) or (isinstance(result, int) and 0 <= result <= 63)


@PROPS
@given(st.sampled_from(GENERATION_RATES), st.booleans(), st.sampled_from(["", "\n", " \n"]))
def test_every_kernel_spelling_of_a_rate_parses_to_it(rate: tuple[float, str], new: bool, end: str) -> None:
    gts, old_text = rate
    text = (f"{gts:.1f} GT/s PCIe" if new else f"{old_text} GT/s") + end
    assert parse_link_speed(text) == gts
    assert isinstance(speed_generation(gts), int)


@PROPS
@given(st.sampled_from([s[0] for s in REAL_SPEEDS]), st.data())
def test_cut_speed_text_is_never_a_different_rate(text: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(text)))
    got = parse_link_speed(text[:cut])
    assert isinstance(got, Unavailable) or got == parse_link_speed(text)


@PROPS
@given(st.integers(1, 6), st.integers(0, 32), st.integers(0, 32))
def test_link_bandwidth_is_monotonic_in_width(generation: int, a: int, b: int) -> None:
    low, high = sorted((a, b))
    low_bw, high_bw = link_gbytes_per_s(generation, low), link_gbytes_per_s(generation, high)
    if low > 0:
        assert isinstance(low_bw, float) and isinstance(high_bw, float) and low_bw <= high_bw


# --- gather over captured trees -------------------------------------------------------------------------------


def test_rtx3090_in_an_x8_slot_idle() -> None:
    # samples/lspci/club-3090-1095-rtx3090-x8-slot-idle.txt
    path = gather_pcie_link(host("rtx3090-x8-slot-idle"), "0000:0b:00.0")
    assert path.sysfs_path == "/sys/devices/pci0000:00/0000:00:03.2/0000:0b:00.0"
    assert [h.bdf for h in path.hops] == ["0000:0b:00.0", "0000:00:03.2"]
    gpu, port = path.hops
    assert (gpu.vendor_id, gpu.device_id, gpu.class_code, gpu.is_bridge) == (0x10DE, 0x2204, 0x030000, False)
    assert gpu.current_link == LinkState(2.5, 1, 8, 2.0)
    assert (gpu.max_link.generation, gpu.max_link.width) == (4, 16)
    assert (port.is_bridge, port.on_root_bus, gpu.on_root_bus) == (True, True, False)
    assert port.max_link.width == 8  # the slot limit: the card is x16-capable, the port is not
    assert reason(port.vendor_id) is Reason.NOT_FOUND  # not in the sample: absent, not invented
    assert path.power_state == "D0"
    # equal links: the kernel names the hop nearer the root ("limited by ... at 0000:00:03.2")
    assert path.narrowest_bdf == "0000:00:03.2"
    assert path.negotiated_gbytes_per_s == 2.0
    assert path.capable_gbytes_per_s == pytest.approx(15.754, abs=1e-3)  # Gen4 x8: the port caps it
    assert path.truncated is False


@pytest.mark.parametrize("scenario", ["rtx4090-riser-idle-gen1", "rtx4090-riser-idle-old-kernel"])
def test_rtx4090_idle_at_gen1_full_width_in_both_vocabularies(scenario: str) -> None:
    # samples/lspci/janhq-jan-183-rtx4090-riser-idle.txt: LnkCap 16GT/s x16, LnkSta 2.5GT/s x16
    path = gather_pcie_link(host(scenario), "00000000:01:00.0")  # NVML's spelling of the address
    assert path.bdf == "0000:01:00.0"
    gpu, port = path.hops
    assert gpu.current_link == LinkState(2.5, 1, 16, 4.0)
    assert gpu.max_link.generation == 4 and gpu.max_link.width == 16
    assert reason(port.max_link.speed_gts) is Reason.NOT_FOUND
    assert path.negotiated_gbytes_per_s == 4.0
    assert path.capable_gbytes_per_s == pytest.approx(31.508, abs=1e-3)  # only the GPU's max is known


def test_quadro_on_a_raspberry_pi_x1() -> None:
    # samples/lspci/geerlingguy-480-quadro-rtx8000-on-pi-x1.txt: LnkSta 5GT/s x1
    path = gather_pcie_link(host("quadro-rtx8000-pi-x1"), "0000:01:00.0")
    assert path.sysfs_path == "/sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0"
    assert [h.bdf for h in path.hops] == ["0000:01:00.0", "0000:00:00.0"]
    assert path.hops[1].on_root_bus
    assert path.hops[0].current_link == LinkState(5.0, 2, 1, 0.5)
    assert path.negotiated_gbytes_per_s == 0.5
    assert path.capable_gbytes_per_s == 0.5  # the platform, not the card: Gen2 x1 at best


def test_amd_gpu_behind_its_on_card_switch() -> None:
    # samples/sysfs/nokyan-resources-512-amd-gpu-internal-switch.txt
    path = gather_pcie_link(host("amd-gpu-onboard-switch"), "0000:03:00.0")
    assert [h.bdf for h in path.hops] == ["0000:03:00.0", "0000:02:00.0", "0000:01:00.0", "0000:00:01.1"]
    gpu, _, switch_up, _ = path.hops
    # the trap: the GPU's own files say Gen5 x16 ...
    assert (gpu.current_link.speed_gts, gpu.current_link.generation, gpu.current_link.width) == (32.0, 5, 16)
    assert gpu.current_link.bandwidth_gbytes_per_s == pytest.approx(63.015, abs=1e-3)
    # ... while the slot link shows one hop up
    assert (switch_up.current_link.speed_gts, switch_up.current_link.width) == (16.0, 8)
    assert (switch_up.max_link.speed_gts, switch_up.max_link.width) == (32.0, 16)
    assert path.negotiated_gbytes_per_s == pytest.approx(15.754, abs=1e-3)
    assert path.narrowest_bdf == "0000:00:01.1"  # the same x8 link, named at the root port as the kernel does
    assert narrowest_hop(path.hops, skip=["0000:00:01.1"]) == switch_up


def test_virtio_device_has_no_link_files() -> None:
    # samples/sysfs/local-vm-virtio-blk-and-pci.txt: no *_link_*, no removable
    path = gather_pcie_link(host("virtio-vm"), "0000:00:02.0")
    (hop,) = path.hops
    assert (hop.vendor_id, hop.device_id, hop.class_code) == (0x1AF4, 0x1042, 0x018000)
    assert hop.on_root_bus and hop.is_bridge is False
    assert reason(hop.current_link.speed_gts) is Reason.NOT_FOUND
    assert reason(hop.removable) is Reason.NOT_FOUND
    assert reason(path.negotiated_gbytes_per_s) is Reason.NOT_FOUND
    assert reason(path.narrowest_bdf) is Reason.NOT_FOUND
    assert reason(path.capable_gbytes_per_s) is Reason.NOT_FOUND


def test_unreadable_and_garbled_files() -> None:
    path = gather_pcie_link(host("broken-link-files"), "0000:01:00.0")
    gpu, port = path.hops
    assert reason(gpu.current_link.speed_gts) is Reason.NOT_SUPPORTED  # "Unknown"
    assert reason(gpu.current_link.width) is Reason.PERMISSION_DENIED
    assert reason(gpu.max_link.speed_gts) is Reason.UNPARSEABLE  # garbage bytes before "16.0 GT/s PCIe"
    assert reason(gpu.max_link.width) is Reason.NOT_FOUND
    assert reason(gpu.class_code) is Reason.UNPARSEABLE
    assert reason(gpu.is_bridge) is Reason.UNPARSEABLE
    assert path.power_state == "D3cold"
    assert reason(port.current_link.speed_gts) is Reason.NOT_SUPPORTED  # "Unknown speed"
    assert port.current_link.width == 0
    assert reason(port.removable) is Reason.PERMISSION_DENIED
    assert (port.max_link.speed_gts, port.max_link.generation, port.max_link.width) == (8.0, 3, 16)
    # no hop has a known current bandwidth: the reason is the GPU's own
    assert reason(path.negotiated_gbytes_per_s) is Reason.NOT_SUPPORTED
    assert path.capable_gbytes_per_s == pytest.approx(15.754, abs=1e-3)


def test_missing_looping_and_malformed_addresses() -> None:
    broken = host("broken-link-files")
    loop = gather_pcie_link(broken, "0000:02:00.0")  # its bus link points at itself
    assert reason(loop.sysfs_path) is Reason.FAILED and loop.hops == ()
    assert reason(loop.negotiated_gbytes_per_s) is Reason.FAILED
    absent = gather_pcie_link(broken, "0000:09:00.0")
    assert reason(absent.sysfs_path) is Reason.NOT_FOUND
    bad = gather_pcie_link(broken, "not-a-bdf")
    assert bad.bdf == "not-a-bdf" and reason(bad.sysfs_path) is Reason.UNPARSEABLE


def test_gather_pcie_links_dedupes_spellings_and_keeps_order() -> None:
    paths = gather_pcie_links(
        host("rtx3090-x8-slot-idle"), ["00000000:0B:00.0", "0000:0b:00.0", "0000:0a:00.0"]
    )
    assert [p.bdf for p in paths] == ["0000:0b:00.0", "0000:0a:00.0"]
    assert isinstance(paths[0].sysfs_path, str) and reason(paths[1].sysfs_path) is Reason.NOT_FOUND


def test_a_very_deep_chain_is_cut_at_max_hops(tmp_path: Path) -> None:
    # 20 nested bridges with a GPU at the bottom; sysfs-like but made here (no sample is this deep)
    shutil.copytree(TREES / "rtx3090-x8-slot-idle", tmp_path / "cap", symlinks=True)
    parts = ["/sys/devices/pci0000:00"] + [f"0000:{bus:02x}:00.0" for bus in range(1, 22)]
    local = tmp_path / "cap" / "root" / "/".join(parts).lstrip("/")
    local.mkdir(parents=True)
    (local / "current_link_width").write_text("4\n")
    (local / "current_link_speed").write_text("8.0 GT/s PCIe\n")
    bus_link = tmp_path / "cap" / "root" / "sys/bus/pci/devices/0000:15:00.0"
    bus_link.symlink_to(os.path.relpath(local, bus_link.parent))
    path = gather_pcie_link(RecordedHost(tmp_path / "cap"), "0000:15:00.0")
    assert path.truncated is True
    assert len(path.hops) == MAX_HOPS
    assert path.hops[0].bdf == "0000:15:00.0" and path.hops[-1].bdf == "0000:06:00.0"
    assert path.narrowest_bdf == "0000:15:00.0"  # the only hop with a link


# --- serialisation --------------------------------------------------------------------------------------------

SCENARIOS = {
    "rtx3090-x8-slot-idle": "0000:0b:00.0",
    "rtx4090-riser-idle-gen1": "0000:01:00.0",
    "quadro-rtx8000-pi-x1": "0000:01:00.0",
    "amd-gpu-onboard-switch": "0000:03:00.0",
    "virtio-vm": "0000:00:02.0",
    "egpu-thunderbolt-authorized": "0000:66:00.0",
    "broken-link-files": "0000:01:00.0",
}


@pytest.mark.parametrize(("scenario", "bdf"), sorted(SCENARIOS.items()))
def test_paths_round_trip_through_json(scenario: str, bdf: str) -> None:
    hosted = host(scenario)
    paths = gather_pcie_links(hosted, [bdf, "0000:7f:00.0", "garbage"])
    for path in paths:
        text = json.dumps(to_json(path), allow_nan=False)
        assert from_json(PcieLinkPath, json.loads(text)) == path
    assert hosted.unexpected_commands == []
