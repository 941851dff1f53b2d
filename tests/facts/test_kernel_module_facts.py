"""The nvidia module on disk: `modinfo nvidia`, `dkms status`, /lib/modules/<release>.

Trees: tests/fixtures/driver-state-trees (provenance in its README.md). Texts quoted below name their source.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.factories import driver
from torch_gpu_doctor.facts.dkms import DkmsEntry, parse_dkms_line, parse_dkms_status
from torch_gpu_doctor.facts.modinfo import ModuleInfo, parse_modinfo
from torch_gpu_doctor.facts.nvidia_module import (
    MODINFO_ARGV,
    NO_MODULE,
    NvidiaModuleFacts,
    gather_nvidia_module,
    kernel_sort_key,
    module_missing,
)
from torch_gpu_doctor.host.base import DEFAULT_TIMEOUT_S, CommandResult
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "driver-state-trees"
LOADED = Unavailable(Reason.NOT_APPLICABLE, "the module is loaded; see the loaded version")


def tree(name: str) -> RecordedHost:
    return RecordedHost(TREES / name)


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


# --- modinfo ---------------------------------------------------------------------------------------------------

# Network World, "Looking into Linux modules" (S. Henry-Stocker, 2019): `modinfo floppy | head -16` on Ubuntu
# 19.04, kmod without OpenSSL: a signed module whose signer and key are printed empty.
FLOPPY_KMOD_NO_OPENSSL = """\
filename:       /lib/modules/5.0.0-13-generic/kernel/drivers/block/floppy.ko
alias:          block-major-2-*
license:        GPL
author:         Alain L. Knaff
srcversion:     EBEAA26742DF61790588FD9
alias:          acpi*:PNP0700:*
alias:          pnp:dPNP0700*
depends:
retpoline:      Y
intree:         Y
name:           floppy
vermagic:       5.0.0-13-generic SMP mod_unload
sig_id:         PKCS#7
signer:
sig_key:
sig_hashalgo:   md4
"""
# The signature block kmod appends for a DKMS-signed module (libkmod-signature fields; the signer name as
# OpenZFS's Fedora guide shows `modinfo ... | grep ^signer` for a DKMS build), tab-indented continuation lines.
DKMS_SIGNED = """\
filename:       /lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko.zst
version:        550.120
license:        NVIDIA
name:           nvidia
vermagic:       6.8.0-49-generic SMP preempt mod_unload modversions
sig_id:         PKCS#7
signer:         DKMS module signing key
sig_key:        5B:1E:61:3C:94:0A:7D:22
sig_hashalgo:   sha512
signature:      30:65:02:31:00:F4:33:EC:11:19:CF:0D:43:38:31:DC:0D:BC:C0:B8:
\t\tE4:F1:A6:EC:AF:87:76:BD:0F:72:A9:08:16:B8:38:02:2B:13:B4:AD
parm:           NVreg_ResmanDebugLevel:int
"""


def test_unsigned_akmods_module_from_the_fedora_report() -> None:
    text = json.loads((TREES / "fedora-akmods-unsigned-secure-boot" / "commands.json").read_text())[0][
        "stdout"
    ]
    info = parse_modinfo(text)
    assert info == ModuleInfo(
        filename="/usr/lib/modules/5.17.9-300.fc36.x86_64/extra/nvidia/nvidia.ko.xz",
        version="510.68.02",
        vermagic="5.17.9-300.fc36.x86_64",
        signed=False,
        signer=Unavailable(Reason.NOT_FOUND, "modinfo has no signer line"),
    )


def test_signed_module_with_an_empty_signer_is_still_signed() -> None:
    info = parse_modinfo(FLOPPY_KMOD_NO_OPENSSL)
    assert info is not None and info.signed
    assert reason(info.signer) is Reason.NOT_SUPPORTED
    assert reason(info.version) is Reason.NOT_FOUND  # in-tree modules carry no version line
    assert info.vermagic == "5.0.0-13-generic"


def test_dkms_signed_module_names_its_signer_and_skips_continuation_lines() -> None:
    info = parse_modinfo(DKMS_SIGNED)
    assert info is not None
    assert (info.signed, info.signer, info.version) == (True, "DKMS module signing key", "550.120")


@pytest.mark.parametrize(
    "text", ["", "modinfo: ERROR: Module nvidia not found.\n", "version: 550.120\n", "\x00\x01garbage"]
)
def test_text_without_a_filename_line_is_not_modinfo_output(text: str) -> None:
    assert parse_modinfo(text) is None


def test_garbled_version_is_unparseable_not_a_version() -> None:
    info = parse_modinfo("filename:       /x/nvidia.ko\nversion:        550.120-beta; rm -rf\n")
    assert info is not None and reason(info.version) is Reason.UNPARSEABLE
    assert reason(info.vermagic) is Reason.NOT_FOUND


# --- dkms status -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        # DKMS 3 (public install notes)
        (
            "nvidia/550.90.12, 6.1.91-99.172.amzn2023.x86_64, x86_64: installed",
            DkmsEntry("nvidia", "550.90.12", "6.1.91-99.172.amzn2023.x86_64", "x86_64", "installed", ""),
        ),
        # DKMS 2 (a 2012 ZFS report)
        (
            "zfs, 0.6.0.65, 3.2.0-26-generic, x86_64: installed",
            DkmsEntry("zfs", "0.6.0.65", "3.2.0-26-generic", "x86_64", "installed", ""),
        ),
        # a note after the state (a Fedora 44 report)
        (
            "brcmfmac-bcm4350-dfs/1.0, 7.2.4-200.fc44.x86_64, x86_64: installed (Original modules exist)",
            DkmsEntry(
                "brcmfmac-bcm4350-dfs",
                "1.0",
                "7.2.4-200.fc44.x86_64",
                "x86_64",
                "installed",
                "(Original modules exist)",
            ),
        ),
        ("nvidia/550.120: added", DkmsEntry("nvidia", "550.120", None, None, "added", "")),
        ("nvidia, 418.56: added", DkmsEntry("nvidia", "418.56", None, None, "added", "")),
    ],
)
def test_dkms_lines_in_both_formats(line: str, entry: DkmsEntry) -> None:
    assert parse_dkms_line(line) == entry


@pytest.mark.parametrize(
    "line",
    [
        "Error! Could not locate dkms.conf file.",
        "",
        "nvidia/550.120, 6.8.0-45-generic: installed",  # a kernel without an arch
        ": installed",
        "nvidia/, 6.8.0-45-generic, x86_64: installed",
    ],
)
def test_lines_that_are_not_status_lines_are_ignored(line: str) -> None:
    assert parse_dkms_line(line) is None


def test_status_text_keeps_the_parseable_lines() -> None:
    text = "Deprecated feature: REMAKE_INITRD\nnvidia/550.120, 6.8.0-45-generic, x86_64: installed\n"
    assert [e.kernel for e in parse_dkms_status(text)] == ["6.8.0-45-generic"]


def test_kernel_releases_sort_by_their_numbers() -> None:
    releases = ["6.8.0-49-generic", "6.8.0-45-generic", "6.10.0-1-generic", "5.15.0-112-generic"]
    assert sorted(releases, key=kernel_sort_key) == [
        "5.15.0-112-generic",
        "6.8.0-45-generic",
        "6.8.0-49-generic",
        "6.10.0-1-generic",
    ]


# --- gather_nvidia_module over the trees -------------------------------------------------------------------------


def test_fedora_tree_finds_the_akmods_module_through_the_lib_symlink() -> None:
    host = tree("fedora-akmods-unsigned-secure-boot")
    facts = gather_nvidia_module(host, driver(version=None, installed_module_version="510.68.02"))
    assert facts.running_kernel == "5.17.9-300.fc36.x86_64"
    assert isinstance(facts.modinfo, ModuleInfo) and not facts.modinfo.signed
    assert not isinstance(facts.kernels, Unavailable)
    (kernel,) = facts.kernels
    assert kernel.installed and kernel.headers
    assert kernel.nvidia_modules == ("/lib/modules/5.17.9-300.fc36.x86_64/extra/nvidia/nvidia.ko.xz",)
    assert reason(facts.dkms) is Reason.NOT_FOUND  # akmods, no dkms on PATH
    assert host.unexpected_commands == []
    assert from_json(NvidiaModuleFacts, json.loads(json.dumps(to_json(facts)))) == facts


def test_ubuntu_tree_after_a_kernel_upgrade_without_headers() -> None:
    host = tree("ubuntu-kernel-upgrade-no-headers")
    facts = gather_nvidia_module(host, driver(version=None, installed_module_version=LOADED))
    assert facts.running_kernel == "6.8.0-49-generic"
    assert module_missing(facts.modinfo)
    assert not isinstance(facts.kernels, Unavailable)
    by_release = {k.release: k for k in facts.kernels}
    assert by_release["6.8.0-45-generic"].headers and by_release["6.8.0-45-generic"].nvidia_modules
    assert not by_release["6.8.0-49-generic"].headers and by_release["6.8.0-49-generic"].nvidia_modules == ()
    assert facts.dkms == (DkmsEntry("nvidia", "550.120", "6.8.0-45-generic", "x86_64", "installed", ""),)


class Counting(RecordedHost):
    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.ran: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult:
        self.ran.append(tuple(argv))
        return super().run(argv, timeout)


def test_the_drivers_modinfo_answer_is_reused_instead_of_asking_again() -> None:
    host = Counting(TREES / "ubuntu-kernel-upgrade-no-headers")
    not_found = Unavailable(Reason.FAILED, "modinfo: modinfo: ERROR: Module nvidia not found. (exit 1)")
    facts = gather_nvidia_module(host, driver(version=None, installed_module_version=not_found))
    assert facts.modinfo == Unavailable(Reason.NOT_FOUND, NO_MODULE)
    assert MODINFO_ARGV not in host.ran
    assert host.ran == [("dkms", "status")]


def _capture(
    tmp_path: Path, commands: list[dict[str, Any]], files: dict[str, str], **host: Any
) -> RecordedHost:
    root = tmp_path / "root"
    root.mkdir()
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (tmp_path / "host.json").write_text(json.dumps({"description": "test", **host}))
    (tmp_path / "commands.json").write_text(json.dumps(commands))
    return RecordedHost(tmp_path)


def test_missing_tools_and_folders_are_not_found(tmp_path: Path) -> None:
    facts = gather_nvidia_module(_capture(tmp_path, [], {}), LOADED)
    assert reason(facts.running_kernel) is Reason.NOT_FOUND
    assert facts.modinfo == Unavailable(Reason.NOT_FOUND, "modinfo is not on PATH")
    assert reason(facts.kernels) is Reason.NOT_FOUND
    assert reason(facts.dkms) is Reason.NOT_FOUND


def test_unreadable_modules_folder_and_garbled_answers(tmp_path: Path) -> None:
    commands = [
        {"argv": ["modinfo", "nvidia"], "stdout": "Segmentation fault\n"},
        {"argv": ["dkms", "status"], "status": "timed_out", "stdout": ""},
    ]
    files = {
        "/proc/sys/kernel/osrelease": "\x00\x01\n",
        "/lib/modules/6.8.0-49-generic/modules.dep": "",
        "/usr/bin/modinfo": "",
        "/usr/bin/dkms": "",
    }
    host = _capture(tmp_path, commands, files, file_errors={"/lib/modules": "permission_denied"})
    facts = gather_nvidia_module(host, driver())
    assert reason(facts.running_kernel) is Reason.UNPARSEABLE
    assert reason(facts.modinfo) is Reason.UNPARSEABLE
    assert reason(facts.kernels) is Reason.PERMISSION_DENIED
    assert reason(facts.dkms) is Reason.TIMED_OUT


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("nvidia/550.12, :-\t\nfilename:version:sig_idsigner_x86"), max_size=300)
)
def test_any_text_parses_to_facts_or_nothing(text: str) -> None:
    info = parse_modinfo(text)
    assert info is None or isinstance(info.signed, bool)
    for entry in parse_dkms_status(text):
        assert entry.module and entry.version and entry.state
