"""Secure Boot facts: efivarfs bytes, mokutil's words, lockdown, and the MOK certificates on disk.

Trees: tests/fixtures/driver-state-trees (provenance in its README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.facts.secure_boot import (
    MOK_SB_STATE_VAR,
    SECURE_BOOT_VAR,
    SETUP_MODE_VAR,
    MokCertificate,
    SecureBootFacts,
    efivar_value,
    gather_secure_boot,
    parse_lockdown,
    parse_sb_state,
    parse_test_key,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "driver-state-trees"
ON = bytes([6, 0, 0, 0, 1])  # attributes NV|BS|RT (little-endian), then the value (hardware.md §7)
OFF = bytes([6, 0, 0, 0, 0])


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


@pytest.mark.parametrize(
    ("data", "value"),
    [(ON, 1), (OFF, 0), (bytes([7, 0, 0, 0, 1, 0]), 1), (b"", None), (b"\x06\x00\x00\x00", None)],
)
def test_efivar_value_is_the_byte_after_the_attributes(data: bytes, value: int | None) -> None:
    assert efivar_value(data) == value


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("none [integrity] confidentiality\n", "integrity"),
        ("[none] integrity confidentiality\n", "none"),
        ("none integrity [confidentiality]", "confidentiality"),
        ("none integrity confidentiality\n", None),
        ("[]", None),
    ],
)
def test_lockdown_mode_is_the_bracketed_word(text: str, mode: str | None) -> None:
    assert parse_lockdown(text) == mode


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("SecureBoot enabled\n", True),
        ("SecureBoot enabled\nSecureBoot validation is disabled in shim\n", True),
        ("SecureBoot disabled\nPlatform is in Setup Mode\n", False),  # r-pufky/docs
        ("Cannot determine secure boot state.\n", None),
        ("SecureBoot unknown\n", None),  # older mokutil
        ("", None),
    ],
)
def test_mokutil_sb_state(text: str, state: bool | None) -> None:
    assert parse_sb_state(text) is state


@pytest.mark.parametrize(
    ("text", "enrolled"),
    [
        ("/var/lib/dkms/mok.pub is not enrolled\n", False),  # r-pufky/docs
        ("/etc/pki/akmods/certs/public_key.der is already enrolled\n", True),
        ("/var/lib/dkms/mok.pub is already in the enrollment request\n", False),
        # lcp/mokutil src/mokutil.c test_key/print_skip_message: trusted through db or the kernel's keyring too
        ("/var/lib/dkms/mok.pub is already in db\n", True),
        ("/var/lib/dkms/mok.pub is already in the built-in trusted keyring\n", True),
        ("/var/lib/dkms/mok.pub is blocked in dbx\n", False),
        ("Failed to read /var/lib/dkms/mok.pub\n", None),
    ],
)
def test_mokutil_test_key(text: str, enrolled: bool | None) -> None:
    assert parse_test_key(text) is enrolled


def test_fedora_tree_secure_boot_on_with_integrity_lockdown() -> None:
    host = RecordedHost(TREES / "fedora-akmods-unsigned-secure-boot")
    facts = gather_secure_boot(host)
    assert facts == SecureBootFacts(
        efi=True,
        secure_boot=True,
        source="efivars",
        setup_mode=False,
        shim_validation_disabled=False,
        lockdown="integrity",
        sig_enforce=False,
        certificates=(MokCertificate("/etc/pki/akmods/certs/public_key.der", True),),
    )
    assert facts.enforced is True
    assert host.unexpected_commands == []
    assert from_json(SecureBootFacts, json.loads(json.dumps(to_json(facts)))) == facts


def test_ubuntu_tree_secure_boot_off_asks_mokutil_nothing() -> None:
    host = RecordedHost(TREES / "ubuntu-kernel-upgrade-no-headers")
    facts = gather_secure_boot(host)
    assert (facts.efi, facts.secure_boot, facts.enforced, facts.lockdown) == (True, False, False, "none")
    assert facts.certificates == ()
    assert host.unexpected_commands == []


def test_no_efi_folder_is_a_legacy_bios_boot() -> None:
    facts = gather_secure_boot(RecordedHost(TREES / "dmesg-restricted-no-journal-access"))
    assert not facts.efi
    assert reason(facts.secure_boot) is Reason.NOT_APPLICABLE
    assert reason(facts.enforced) is Reason.NOT_APPLICABLE


def _capture(
    tmp_path: Path, files: dict[str, bytes], commands: tuple[dict[str, Any], ...] = (), **host: Any
) -> RecordedHost:
    root = tmp_path / "root"
    (root / "sys/firmware/efi/efivars").mkdir(parents=True)
    for path, data in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (tmp_path / "host.json").write_text(json.dumps({"description": "test", **host}))
    (tmp_path / "commands.json").write_text(json.dumps(list(commands)))
    return RecordedHost(tmp_path)


def test_setup_mode_enforces_nothing(tmp_path: Path) -> None:
    facts = gather_secure_boot(_capture(tmp_path, {SECURE_BOOT_VAR: ON, SETUP_MODE_VAR: ON}))
    assert (facts.secure_boot, facts.setup_mode) == (False, True)


def test_shim_validation_disabled_lets_unsigned_modules_through(tmp_path: Path) -> None:
    facts = gather_secure_boot(
        _capture(tmp_path, {SECURE_BOOT_VAR: ON, SETUP_MODE_VAR: OFF, MOK_SB_STATE_VAR: ON})
    )
    assert facts.secure_boot is True and facts.shim_validation_disabled is True
    assert facts.enforced is False


def test_garbled_efivar_is_unparseable_and_mokutil_answers_instead(tmp_path: Path) -> None:
    commands = ({"argv": ["mokutil", "--sb-state"], "stdout": "SecureBoot enabled\n"},)
    files = {SECURE_BOOT_VAR: b"\x06\x00", "/usr/bin/mokutil": b""}
    facts = gather_secure_boot(_capture(tmp_path, files, commands))
    assert (facts.secure_boot, facts.source) == (True, "mokutil --sb-state")


def test_unreadable_efivars_without_mokutil_stays_unavailable(tmp_path: Path) -> None:
    host = _capture(tmp_path, {SECURE_BOOT_VAR: ON}, file_errors={SECURE_BOOT_VAR: "permission_denied"})
    facts = gather_secure_boot(host)
    assert reason(facts.secure_boot) is Reason.PERMISSION_DENIED
    assert facts.source is None
    assert reason(facts.enforced) is Reason.PERMISSION_DENIED


def test_mokutil_that_cannot_tell_is_not_a_state(tmp_path: Path) -> None:
    commands = ({"argv": ["mokutil", "--sb-state"], "stdout": "Cannot determine secure boot state.\n"},)
    facts = gather_secure_boot(_capture(tmp_path, {"/usr/bin/mokutil": b""}, commands))
    assert reason(facts.secure_boot) is Reason.NOT_FOUND  # the efivar's reason, with mokutil's words added
    assert "Cannot determine secure boot state" in str(facts.secure_boot)


def test_value_byte_two_is_garbage_not_on(tmp_path: Path) -> None:
    facts = gather_secure_boot(_capture(tmp_path, {SECURE_BOOT_VAR: bytes([6, 0, 0, 0, 2])}))
    assert reason(facts.secure_boot) is Reason.UNPARSEABLE
