"""Identifiers that used to leak into bundles: container ids and pod UIDs, MACs in other spellings, and the
MACs, USB serials and file system UUIDs the kernel log and command line print."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

from torch_gpu_doctor.bundle.build import bundle_capture
from torch_gpu_doctor.bundle.extract import extract_bundle
from torch_gpu_doctor.bundle.identifiers import (
    Identifier,
    IdentitySources,
    Kind,
    capture_identifiers,
    container_identifiers,
)
from torch_gpu_doctor.bundle.kernel_text import scrub_kernel_text
from torch_gpu_doctor.bundle.redact import Redactor
from torch_gpu_doctor.bundle.write import write_archive
from torch_gpu_doctor.facts.kernel_log import KernelLogFacts, parse_kernel_log
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "reference" / "samples" / "dmesg"

# tests/fixtures/hosts/docker-container-no-gpus/root/proc/self/mountinfo (a real container)
DOCKER_ID = "dc64b5743252dbaef6e30521c34d6bbd1620c8ce65bdb7bf9e7143b61bb5b183"
DOCKER_SHORT = DOCKER_ID[:12]
# cgroup paths as a process sees them (tkestack/gpu-manager pkg/services/watchdog helper comments: Ubuntu
# 20.04 with the systemd driver, CentOS with cgroupfs, plain Docker)
K8S_SYSTEMD = (
    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poddc380811_8168_4a9e_9b4a_56ded1b6fe9c"
    ".slice/docker-fa7f0ec4fbcbb70c69565a5b2d269926e04ec5601dff59235199d6e60198e95c.scope"
)
K8S_CGROUPFS = (
    "/kubepods/besteffort/pod762f2fe7-8a9d-450a-81e7-88094fc057d0/"
    "557a3158f637c3021ecba8450ee945570bdb66876922afafa5dd6e0b35131f71"
)
DOCKER_V1 = "/docker/04807c588b00fbf639c1e4896eab5a076771b6905b60f9ccc56bf6984ba9b71a"
DOCKER_SCOPE = "/system.slice/docker-293f758723d0652a0b9fa869106e600079e56dae362ca84de12942d38524a272.scope"
# kubelet bind-mounts the pod's /etc/hosts and volumes from its pods folder (mountinfo's 4th field)
KUBELET_MOUNT = (
    "1325 1301 259:2 /var/lib/kubelet/pods/762f2fe7-8a9d-450a-81e7-88094fc057d0/etc-hosts /etc/hosts "
    "rw,relatime - ext4 /dev/nvme0n1p2 rw"
)
# containerd's CRI bind-mounts the pod sandbox's hostname from /run (a tmpfs: the path is relative to it)
SANDBOX_ID = "1207db63eaeb133a85d2b614d12d95d4dff3f29af60d7a7b3c7d39abdf4bd119"
SANDBOX_MOUNT = (
    f"1327 1301 0:25 /containerd/io.containerd.grpc.v1.cri/sandboxes/{SANDBOX_ID}/hostname /etc/hostname "
    "rw,nosuid,nodev - tmpfs tmpfs rw,size=3273452k,mode=755"
)


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}  # type: ignore[union-attr]


def _grep(members: dict[str, bytes], needle: str) -> list[str]:
    raw = needle.lower().encode()
    return [name for name, data in members.items() if raw in data.lower() or raw in name.lower().encode()]


def _bundle_and_replay(
    capture: Path, tmp_path: Path, identity: bool = False
) -> tuple[dict[str, bytes], Report, Report]:
    report = diagnose(RecordedHost(capture), "python3", plugins=False)
    sources = IdentitySources(hostnames=lambda: ("gd-leak-box",), interfaces=dict, current_user=lambda: None)
    bundle = bundle_capture(
        capture, report, RecordedHost(capture) if identity else None, False, sources=sources
    )
    archive = tmp_path / "b.tar.gz"
    write_archive(archive, bundle.members, 0)
    into = tmp_path / "replay"
    into.mkdir()
    extract_bundle(archive, into)
    return _members(archive), report, diagnose(RecordedHost(into), "python3", plugins=False)


def _same_findings(report: Report, replayed: Report) -> None:
    assert [(f.check_id, f.status, f.summary) for f in replayed.findings] == [
        (f.check_id, f.status, f.summary) for f in report.findings
    ]


# --- (a) container ids and pod UIDs -----------------------------------------------------------------------


def test_container_ids_and_pod_uids_are_enumerated_from_cgroup_and_mountinfo() -> None:
    mountinfo = (FIXTURES / "docker-container-no-gpus/root/proc/self/mountinfo").read_text()
    text = "\n".join(
        [mountinfo, K8S_SYSTEMD, K8S_CGROUPFS, DOCKER_V1, DOCKER_SCOPE, KUBELET_MOUNT, SANDBOX_MOUNT]
    )
    found = set(container_identifiers(text))
    assert {i.value for i in found if i.kind is Kind.CONTAINER and i.owner is None} == {
        DOCKER_ID,
        "fa7f0ec4fbcbb70c69565a5b2d269926e04ec5601dff59235199d6e60198e95c",
        "557a3158f637c3021ecba8450ee945570bdb66876922afafa5dd6e0b35131f71",
        "04807c588b00fbf639c1e4896eab5a076771b6905b60f9ccc56bf6984ba9b71a",
        "293f758723d0652a0b9fa869106e600079e56dae362ca84de12942d38524a272",
        SANDBOX_ID,
    }
    assert Identifier(Kind.CONTAINER, DOCKER_SHORT, owner=DOCKER_ID) in found
    assert {i.value for i in found if i.kind is Kind.POD} == {
        "dc380811-8168-4a9e-9b4a-56ded1b6fe9c",  # the systemd slice's `_` spelling, as the kubelet writes it
        "762f2fe7-8a9d-450a-81e7-88094fc057d0",
    }
    # overlay2 layer folders are 64 hex too, but not a container id; a bare hash names nothing
    assert not set(container_identifiers("upperdir=/var/lib/docker/overlay2/" + "4e" * 32 + "/diff"))
    assert not set(container_identifiers("0::/\n" + "ab" * 32))


def test_every_spelling_of_a_container_or_pod_is_replaced() -> None:
    redactor = Redactor(tuple(container_identifiers(f"{K8S_SYSTEMD}\n{KUBELET_MOUNT}\n/docker/{DOCKER_ID}")))
    text = (
        f"{K8S_SYSTEMD}\n{KUBELET_MOUNT}\n12:devices:/docker/{DOCKER_ID}\n"
        f"root@{DOCKER_SHORT}:/# HOSTNAME={DOCKER_SHORT} x{DOCKER_SHORT} {DOCKER_SHORT}0"
    )
    assert redactor.text(text).text == (
        "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podpod-1.slice/"
        "docker-container-1.scope\n"
        "1325 1301 259:2 /var/lib/kubelet/pods/pod-2/etc-hosts /etc/hosts rw,relatime - ext4 /dev/nvme0n1p2 rw\n"
        "12:devices:/docker/container-2\n"
        f"root@container-2:/# HOSTNAME=container-2 x{DOCKER_SHORT} {DOCKER_SHORT}0"  # whole words only
    )
    assert redactor.legend()["container-2"] == "container"
    assert redactor.legend()["pod-1"] == "pod"


def test_a_docker_capture_loses_its_container_id_and_replays(tmp_path: Path) -> None:
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES / "docker-container-no-gpus", capture, symlinks=True)
    (capture / "expected.json").unlink()
    root = capture / "root"
    # cgroup v1 PID 1 (what the container facts read) and Docker's default host name, the id's first 12
    (root / "proc/1/cgroup").write_text(
        f"12:devices:/docker/{DOCKER_ID}\n1:name=systemd:/docker/{DOCKER_ID}\n0::/system.slice/docker-"
        f"{DOCKER_ID}.scope\n"
    )
    (root / "etc/hostname").write_text(f"{DOCKER_SHORT}\n")
    assert Identifier(Kind.CONTAINER, DOCKER_ID) in capture_identifiers(capture)
    members, report, replayed = _bundle_and_replay(capture, tmp_path)
    assert _grep(members, DOCKER_SHORT) == []  # the full id starts with it: gone in every spelling
    mountinfo = members["root/proc/self/mountinfo"].decode()
    assert "/docker/containers/container-1/resolv.conf /etc/resolv.conf" in mountinfo
    assert members["root/etc/hostname"] == b"container-1\n"
    assert "container" in json.loads(members["manifest.json"])["pseudonyms"].values()
    assert replayed.facts.container == report.facts.container  # `/docker/` still names Docker
    _same_findings(report, replayed)


# --- (c) MACs written with dashes or without separators -----------------------------------------------------


def test_an_enumerated_mac_is_replaced_in_every_spelling() -> None:
    redactor = Redactor((Identifier(Kind.MAC, "1e:2d:3e:4f:5a:6b"),))
    text = (
        "1e:2d:3e:4f:5a:6b 1E-2D-3E-4F-5A-6B enx1e2d3e4f5a6b 1e2d3e4f5a6b "
        "f1e2d3e4f5a6b 1e2d3e4f5a6b0 1e-2d-3e-4f-5a-6b-7c"
    )
    assert redactor.text(text).text == (
        "mac-1 mac-1 enxmac-1 mac-1 f1e2d3e4f5a6b 1e2d3e4f5a6b0 1e-2d-3e-4f-5a-6b-7c"
    )
    assert (
        redactor.path("root/sys/class/net/enx1e2d3e4f5a6b/address") == "root/sys/class/net/enxmac-1/address"
    )


# --- (e) the kernel log and command line -------------------------------------------------------------------

# printk formats: drivers/usb/core/hub.c (announce_device), e1000e_print_device_info, udev renames,
# ext4_fill_super's "mounted filesystem %pU", the boot command line; Xid/NVRM lines from the samples
KERNEL_LOG = (
    "[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic "
    "root=UUID=0a3407de-014b-458b-b5c1-848e92a327a3 ro quiet splash resume=UUID=ABCD-1234\n"
    "[    1.204512] usb usb1: SerialNumber: 0000:00:14.0\n"
    "[    2.345678] usb 1-4: SerialNumber: 4C530001230526115543\n"
    "[    3.123456] e1000e 0000:00:1f.6 eth0: (PCI Express:2.5GT/s:Width x1) 54:e1:ad:12:34:56\n"
    "[    3.234567] cdc_ether 2-1:1.0 enx0a1b2c3d4e5f: renamed from usb0\n"
    "[    3.300000] IN=eth0 OUT= MAC=ff:ff:ff:ff:ff:ff:54:e1:ad:12:34:56:08:00 SRC=192.0.2.7\n"
    "[    4.000000] EXT4-fs (nvme0n1p2): mounted filesystem 0a3407de-014b-458b-b5c1-848e92a327a3 ro with "
    "ordered data mode. Quota mode: none.\n"
    "[    5.000000] NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae\n"
    "[    5.000001] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n"
    "[    5.000002] NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
    "reset gpu to activate.\n"
    "[    5.000003] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x24:0xffff:1423)\n"
    "[    6.000000] pci 0000:1a:10.3: 8.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x4 link at "
    "0000:05:01.0 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)\n"
    "[    6.100000] pcieport 0000:00:1c.0: AER: Corrected error received: 0000:01:00.0\n"
    "[    7.000000] thunderbolt 0-1: new device found, vendor=0x1 device=0x8006\n"
)
KERNEL_SECRETS = (
    "0a3407de-014b-458b-b5c1-848e92a327a3",
    "ABCD-1234",
    "4C530001230526115543",
    "54:e1:ad:12:34:56",
    "0a1b2c3d4e5f",
    "0b11d014-1685-04bd-26ed-5fc0bc1c44ae",
)


def test_the_kernel_log_loses_macs_serials_and_uuids_and_keeps_what_the_checks_read() -> None:
    redactor = Redactor((Identifier(Kind.MAC, "54:e1:ad:12:34:56"),))  # this machine's, enumerated
    result = redactor.kernel_text(KERNEL_LOG)
    for value in KERNEL_SECRETS:
        assert value.lower() not in result.text.lower(), value
    lines = result.text.splitlines()
    assert "root=UUID=fs-uuid-1 ro quiet splash resume=UUID=fs-uuid-2" in lines[0]
    assert lines[1].endswith("SerialNumber: 0000:00:14.0")  # a root hub's controller address stays
    assert lines[2].endswith("usb 1-4: SerialNumber: serial-1")
    assert lines[3].endswith("(PCI Express:2.5GT/s:Width x1) mac-1")  # the enumerated MAC's own pseudonym
    assert "enxmac-3: renamed from usb0" in lines[4]
    assert "MAC=mac-2 SRC=" in lines[5]  # destination, source and type: one run
    assert "mounted filesystem fs-uuid-1 ro" in lines[6]  # the same disk, the same pseudonym
    assert lines[7].endswith("NVRM: GPU at PCI:0000:2b:00: GPU-uuid-1")
    assert lines[8:] == KERNEL_LOG.splitlines()[8:]  # Xid, NVRM, PCIe, AER, Thunderbolt: untouched
    assert result.kinds == {"mac", "serial", "fs_uuid", "gpu_uuid"}
    before = parse_kernel_log(KERNEL_LOG, "dmesg", False)
    assert parse_kernel_log(result.text, "dmesg", False) == before
    assert before.xid_events_total == 2


def test_the_shared_dmesg_samples_pass_through_unchanged() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt"))] if SAMPLES.is_dir() else []
    for text in texts or [KERNEL_LOG.split("NVRM: GPU at")[1].split("\n", 1)[1]]:
        body = "\n".join(
            line for line in text.splitlines() if "GPU-" not in line and not line.startswith("#")
        )
        assert scrub_kernel_text(body, lambda kind, value: "X") == (body, frozenset())


def test_dmesg_in_a_bundle_is_scrubbed_and_replays(tmp_path: Path) -> None:
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES / "gpu-x1-link", capture, symlinks=True)
    (capture / "expected.json").unlink(missing_ok=True)
    commands = json.loads((capture / "commands.json").read_text())
    dmesg = next(entry for entry in commands if entry["argv"] == ["dmesg"])
    dmesg["stdout"] = KERNEL_LOG + dmesg["stdout"]
    (capture / "commands.json").write_text(json.dumps(commands))
    (capture / "root/proc").mkdir(parents=True, exist_ok=True)
    (capture / "root/proc/cmdline").write_text(
        "BOOT_IMAGE=/boot/vmlinuz root=UUID=0a3407de-014b-458b-b5c1-848e92a327a3 ro iommu=pt\n"
    )
    members, report, replayed = _bundle_and_replay(capture, tmp_path, identity=True)
    for value in KERNEL_SECRETS:
        assert _grep(members, value) == [], value
    assert members["root/proc/cmdline"] == b"BOOT_IMAGE=/boot/vmlinuz root=UUID=fs-uuid-1 ro iommu=pt\n"
    rows = {row["path"]: row for row in json.loads(members["manifest.json"])["members"]}
    assert {"mac", "serial", "fs_uuid"} <= set(rows["commands.json"]["redaction"]["redacted"])
    assert replayed.facts.kernel_log == report.facts.kernel_log
    assert isinstance(report.facts.kernel_log, KernelLogFacts)
    assert report.facts.kernel_log.xid_events_total == 2  # the scrubbed log's Xid lines are all still read
    _same_findings(report, replayed)


def test_include_identifiers_keeps_the_kernel_text() -> None:
    redactor = Redactor((), shapes=False)
    assert redactor.kernel_text(KERNEL_LOG).text == KERNEL_LOG
    assert redactor.text("root=UUID=0a3407de-014b-458b-b5c1-848e92a327a3").kinds == frozenset()
