"""IOMMU facts from tests/fixtures/platform-trees (provenance in its README) and variations built in tmp_path."""

from __future__ import annotations

from pathlib import Path

from tests.facts.platform_tree import build, tree
from torch_gpu_doctor.facts.iommu import (
    GpuIommu,
    IommuFacts,
    gather_iommu,
    iommu_cmdline_options,
    routes_below_shared_ports,
    upstream_functions,
)
from torch_gpu_doctor.facts.pci import gather_pci
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

PLX = "iommu-plx-switch-acs"
GPUS = ("0000:1a:00.0", "0000:1b:00.0", "0000:1c:00.0", "0000:1d:00.0")


def iommu(host: RecordedHost) -> IommuFacts:
    facts = gather_iommu(host, gather_pci(host))
    assert isinstance(facts, IommuFacts), facts
    return facts


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


def gpu_files(bdf: str, chain: tuple[str, ...], group: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """One NVIDIA VGA function below `chain` (root port first), with its iommu_group link when `group` is set."""
    rel = "/".join((f"pci{(chain[0] if chain else bdf)[:7]}", *chain, bdf))
    base = f"/sys/devices/{rel}"
    files = {f"{base}/vendor": "0x10de\n", f"{base}/device": "0x2684\n", f"{base}/class": "0x030000\n"}
    links = {f"/sys/bus/pci/devices/{bdf}": f"../../../devices/{rel}"}
    if group is not None:
        up = "../" * (rel.count("/") + 2)
        links[f"{base}/iommu_group"] = f"{up}kernel/iommu_groups/{group}"
        links[f"/sys/kernel/iommu_groups/{group}/devices/{bdf}"] = f"../../../../devices/{rel}"
        files[f"/sys/kernel/iommu_groups/{group}/type"] = "DMA\n"
    return files, links


def two_gpus(
    tmp_path: Path,
    first: tuple[str, ...],
    second: tuple[str, ...],
    groups: tuple[str | None, str | None],
    cmdline: str | None = None,
) -> RecordedHost:
    files: dict[str, str] = {} if cmdline is None else {"/proc/cmdline": cmdline}
    links: dict[str, str] = {}
    for bdf, chain, group in (("0000:03:00.0", first, groups[0]), ("0000:04:00.0", second, groups[1])):
        f, lnk = gpu_files(bdf, chain, group)
        files.update(f)
        links.update(lnk)
    return build(tmp_path, files, links)


def test_plx_switch_with_every_gpu_in_its_own_group() -> None:
    io = iommu(tree(PLX))
    assert io.units == ("dmar0", "dmar1", "dmar2", "dmar3")
    assert io.group_count == 10 and io.active
    assert io.cmdline_options == ("intel_iommu=on",) and not io.acs_override
    assert tuple(g.bdf for g in io.gpus) == GPUS
    first = io.gpus[1]
    assert first.upstream == ("0000:17:00.0", "0000:18:00.0", "0000:19:0c.0")
    assert first.group == "30" and first.domain_type == "DMA-FQ"
    assert first.group_devices == ("0000:1b:00.0", "0000:1b:00.1", "0000:1b:00.2", "0000:1b:00.3")
    assert len(io.pairs) == 6
    assert all(p.shared_bridge == "0000:18:00.0" and p.acs_redirect is True for p in io.pairs)
    pair = next(p for p in io.pairs if (p.first, p.second) == ("0000:1b:00.0", "0000:1c:00.0"))
    assert pair.turn_ports == ("0000:19:0c.0", "0000:19:10.0")


def test_single_gpu_shares_its_group_with_the_root_port() -> None:
    io = iommu(tree("iommu-gt1030-root-port"))
    (gpu,) = io.gpus
    assert gpu.bdf == "0000:01:00.0" and gpu.group == "2"
    assert gpu.group_devices == ("0000:00:01.0", "0000:01:00.0", "0000:01:00.1")
    assert reason(gpu.domain_type) is Reason.NOT_FOUND  # no `type` file in that capture (kernels before 5.11)
    assert io.pairs == () and io.cmdline_options == ()


def test_gpus_below_one_switch_in_one_group_are_not_redirected(tmp_path: Path) -> None:
    chain = ("0000:00:01.0", "0000:01:00.0")
    host = two_gpus(tmp_path, (*chain, "0000:02:00.0"), (*chain, "0000:02:01.0"), ("5", "5"))
    (pair,) = iommu(host).pairs
    assert pair.shared_bridge == "0000:01:00.0" and pair.acs_redirect is False


def test_gpus_on_separate_root_ports_share_no_switch_and_their_pair_is_not_listed(tmp_path: Path) -> None:
    # issue 21: listing every pair made the facts grow with the square of the GPUs (2 MB at 128 GPUs)
    host = two_gpus(tmp_path, ("0000:00:01.0",), ("0000:00:03.1",), ("7", "8"))
    assert iommu(host).pairs == ()


def test_pairs_are_listed_per_root_port_not_for_every_two_gpus() -> None:
    def gpu(bdf: str, port: str, group: str) -> GpuIommu:
        return GpuIommu(bdf, (port, f"{port[:-1]}9"), group, "DMA", ())

    gpus = tuple(gpu(f"0000:{i + 16:02x}:00.0", f"0000:00:0{i // 4}.0", str(i)) for i in range(32))
    routes = routes_below_shared_ports(gpus, override=False)
    assert len(routes) == 8 * 6  # 8 root ports of 4 GPUs: 6 pairs each, not 32 x 31 / 2 = 496
    assert all(r.acs_redirect is True for r in routes)  # below one switch, in separate groups


def test_acs_override_makes_groups_meaningless(tmp_path: Path) -> None:
    chain = ("0000:00:01.0", "0000:01:00.0")
    host = two_gpus(
        tmp_path,
        (*chain, "0000:02:00.0"),
        (*chain, "0000:02:01.0"),
        ("5", "6"),
        cmdline="ro amd_iommu=on iommu=pt pcie_acs_override=downstream,multifunction\n",
    )
    io = iommu(host)
    assert io.acs_override
    assert io.cmdline_options == ("amd_iommu=on", "iommu=pt", "pcie_acs_override=downstream,multifunction")
    assert reason(io.pairs[0].acs_redirect) is Reason.NOT_SUPPORTED


def test_no_iommu_groups_folder_means_no_iommu(tmp_path: Path) -> None:
    chain = ("0000:00:01.0", "0000:01:00.0")
    host = two_gpus(tmp_path, (*chain, "0000:02:00.0"), (*chain, "0000:02:01.0"), (None, None))
    io = iommu(host)
    assert io.group_count == 0 and io.active is False and io.units == ()
    assert reason(io.gpus[0].group) is Reason.NOT_FOUND
    assert reason(io.pairs[0].acs_redirect) is Reason.NOT_APPLICABLE


def test_empty_iommu_folders_of_the_ci_machine(tmp_path: Path) -> None:
    # Verified here: /sys/kernel/iommu_groups and /sys/class/iommu exist and are empty (git keeps no empty folders).
    host = build(tmp_path, dirs=("/sys/kernel/iommu_groups", "/sys/class/iommu"), base="ci-vm-dockerenv")
    io = iommu(host)
    assert io.group_count == 0 and io.units == () and io.gpus == ()


def test_denied_group_listing_is_not_read_as_no_iommu(tmp_path: Path) -> None:
    host = build(tmp_path, file_errors={"/sys/kernel/iommu_groups": "permission_denied"}, base=PLX)
    io = iommu(host)
    assert reason(io.group_count) is Reason.PERMISSION_DENIED and io.active is None


def test_garbled_group_link_and_type(tmp_path: Path) -> None:
    gpu = "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:0c.0/0000:1b:00.0"
    host = build(
        tmp_path,
        files={"/sys/kernel/iommu_groups/31/type": "\x00garbage\n"},
        links={f"{gpu}/iommu_group": "../../../../../../kernel/iommu_groups/thirty"},
        base=PLX,
    )
    io = iommu(host)
    by_bdf = {g.bdf: g for g in io.gpus}
    assert reason(by_bdf["0000:1b:00.0"].group) is Reason.UNPARSEABLE
    assert reason(by_bdf["0000:1c:00.0"].domain_type) is Reason.UNPARSEABLE
    pair = next(p for p in io.pairs if p.first == "0000:1b:00.0")
    assert reason(pair.acs_redirect) is Reason.UNPARSEABLE


def test_unreadable_pci_bus_passes_through() -> None:
    gone = Unavailable(Reason.PERMISSION_DENIED, "/sys/bus/pci/devices")
    assert gather_iommu(tree(PLX), gone) == gone


def test_only_nvidia_gpus_are_paired(tmp_path: Path) -> None:
    gpu = "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:0c.0/0000:1b:00.0"
    host = build(tmp_path, files={f"{gpu}/vendor": "0x1002\n"}, base=PLX)
    assert "0000:1b:00.0" not in {g.bdf for g in iommu(host).gpus}


def test_upstream_functions_and_cmdline() -> None:
    path = "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:0c.0/0000:1b:00.0"
    assert upstream_functions(path) == ("0000:17:00.0", "0000:18:00.0", "0000:19:0c.0")
    assert upstream_functions("/sys/devices/pci0000:00/0000:00:02.0") == ()
    assert iommu_cmdline_options("BOOT_IMAGE=/vmlinuz ro quiet intel_iommu=on iommu=pt splash") == (
        "intel_iommu=on",
        "iommu=pt",
    )


def test_iommu_facts_round_trip_through_json() -> None:
    io = iommu(tree(PLX))
    assert from_json(IommuFacts, to_json(io)) == io


def test_gpus_whose_path_is_unknown_are_listed_once_each() -> None:
    """Review finding: two GPUs with unknown paths were listed as (0, 1) and (1, 0)."""
    lost = Unavailable(Reason.PERMISSION_DENIED, "realpath")
    gpus = (GpuIommu("0000:01:00.0", lost, "1", "DMA", ()), GpuIommu("0000:02:00.0", lost, "2", "DMA", ()))
    routes = routes_below_shared_ports(gpus, override=False)
    assert [(r.first, r.second) for r in routes] == [("0000:01:00.0", "0000:02:00.0")]
    assert routes[0].acs_redirect is lost  # the unknown is seen, once
