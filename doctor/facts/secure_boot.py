"""Secure Boot, kernel lockdown and the module-signing keys on disk (hardware.md §3.5).

The efivarfs file of a variable holds 4 attribute bytes (little-endian) and then the data; SecureBoot's data is
one byte, 1 = on (kernel docs, "efivarfs" content; §8 trap 4: byte 0 is an attribute byte, not the value).
Secure Boot is in force when SecureBoot == 1 and SetupMode == 0 (mokutil's own rule), unless the shim was told
to stop validating (`mokutil --disable-validation`: the shim variable MokSBStateRT holds 1). No
/sys/firmware/efi means a legacy BIOS boot: no Secure Boot. `mokutil --sb-state` is read only when efivarfs
is not (its words: "SecureBoot enabled" / "SecureBoot disabled" / "Cannot determine secure boot state.").
"""

from __future__ import annotations

from torch_gpu_doctor.facts.sysfs_attr import flag, read_attribute
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

EFI_DIR = "/sys/firmware/efi"
EFIVARS = "/sys/firmware/efi/efivars"
GLOBAL_GUID = "8be4df61-93ca-11d2-aa0d-00e098032b8c"  # EFI_GLOBAL_VARIABLE
SHIM_GUID = "605dab50-e046-4300-abb6-3dd810dd8b23"  # SHIM_LOCK_GUID
SECURE_BOOT_VAR = f"{EFIVARS}/SecureBoot-{GLOBAL_GUID}"
SETUP_MODE_VAR = f"{EFIVARS}/SetupMode-{GLOBAL_GUID}"
MOK_SB_STATE_VAR = f"{EFIVARS}/MokSBStateRT-{SHIM_GUID}"
LOCKDOWN = "/sys/kernel/security/lockdown"
SIG_ENFORCE = "/sys/module/module/parameters/sig_enforce"
MOKUTIL_SB_STATE = ("mokutil", "--sb-state")
MOKUTIL_TIMEOUT_S = 5.0
# Certificates the distributions sign out-of-tree modules with, to be enrolled with `mokutil --import`:
# Ubuntu's update-secureboot-policy, DKMS 3's default (dell/dkms README "Module signing"), Fedora's akmods.
MOK_CERTIFICATES = (
    "/var/lib/shim-signed/mok/MOK.der",
    "/var/lib/dkms/mok.pub",
    "/etc/pki/akmods/certs/public_key.der",
)


@dataclass(frozen=True)
class MokCertificate:
    path: str
    enrolled: Maybe[bool]  # `mokutil --test-key PATH`: already trusted (MOK list, db, or built in)?
    pending: bool = False  # not enrolled, but `mokutil --import` filed a request the next boot can confirm


@dataclass(frozen=True)
class SecureBootFacts:
    efi: bool  # booted through UEFI (/sys/firmware/efi exists)
    secure_boot: Maybe[bool]  # SecureBoot == 1 and SetupMode == 0
    source: str | None  # "efivars" | "mokutil --sb-state"
    setup_mode: Maybe[bool]
    shim_validation_disabled: Maybe[bool]  # MokSBStateRT == 1: the shim lets unsigned modules through
    lockdown: Maybe[str]  # "none" | "integrity" | "confidentiality"
    sig_enforce: Maybe[bool]  # module.sig_enforce: unsigned modules refused even without lockdown
    certificates: tuple[MokCertificate, ...]  # the MOK_CERTIFICATES that exist here

    @property
    def enforced(self) -> Maybe[bool]:
        """Whether the firmware and shim make the kernel insist on signed modules."""
        if isinstance(self.secure_boot, Unavailable) or not self.secure_boot:
            return self.secure_boot
        return self.shim_validation_disabled is not True


def efivar_value(data: bytes) -> int | None:
    """The first data byte after the 4 attribute bytes; None for a garbled variable."""
    if len(data) < 5:
        return None
    return data[4]


def parse_lockdown(text: str) -> str | None:
    """`none [integrity] confidentiality` → "integrity" (the word in brackets)."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]") and len(word) > 2:
            return word[1:-1]
    return None


def parse_sb_state(text: str) -> bool | None:
    lines = text.splitlines()
    if any(line.strip() == "SecureBoot enabled" for line in lines):
        return True
    if any(line.strip() == "SecureBoot disabled" for line in lines):
        return False
    return None


# mokutil's own sentences (lcp/mokutil src/mokutil.c, test_key and print_skip_message): the key is trusted
# when it is enrolled in the MOK list, in the firmware's db, or in the kernel's built-in keyring.
TRUSTED = ("is already enrolled", "is already in db", "is already in the built-in trusted keyring")
PENDING = "is already in the enrollment request"


def parse_test_key(text: str) -> bool | None:
    """`mokutil --test-key`: trusted (True), not yet (False: "is not enrolled", a pending request, or a key
    blocked in dbx/MokListX), or a sentence this does not know (None)."""
    if PENDING in text or "is blocked in" in text:
        return False
    if any(sentence in text for sentence in TRUSTED):
        return True
    if "is not enrolled" in text:
        return False
    return None


def _efivar(host: Host, path: str) -> Maybe[int]:
    data = host.read_bytes(path)
    if isinstance(data, Unavailable):
        return data
    value = efivar_value(data)
    if value is None or value > 1:
        return Unavailable(Reason.UNPARSEABLE, f"{path}: {data[:8].hex()}")
    return value


def _from_efivars(host: Host) -> tuple[Maybe[bool], Maybe[bool]]:
    secure = _efivar(host, SECURE_BOOT_VAR)
    setup = _efivar(host, SETUP_MODE_VAR)
    setup_mode: Maybe[bool] = setup if isinstance(setup, Unavailable) else setup == 1
    if isinstance(secure, Unavailable):
        return secure, setup_mode
    # A firmware in setup mode enforces nothing, whatever SecureBoot says (mokutil's rule).
    return secure == 1 and setup_mode is not True, setup_mode


def _from_mokutil(host: Host) -> Maybe[bool]:
    if host.which("mokutil") is None:
        return Unavailable(Reason.NOT_FOUND, "mokutil is not on PATH")
    result = host.run(MOKUTIL_SB_STATE, timeout=MOKUTIL_TIMEOUT_S)
    state = parse_sb_state(result.stdout + "\n" + result.stderr)
    if state is None:
        return result.unavailable() if not result.ok else Unavailable(Reason.UNPARSEABLE, result.stdout[:80])
    return state


def _lockdown(host: Host) -> Maybe[str]:
    text = host.read_text(LOCKDOWN)
    if isinstance(text, Unavailable):
        return text
    return parse_lockdown(text) or Unavailable(Reason.UNPARSEABLE, f"{LOCKDOWN}: {text.strip()[:80]!r}")


def _sig_enforce(host: Host) -> Maybe[bool]:
    return read_attribute(host, SIG_ENFORCE, flag("Y", "N"))


def _certificates(host: Host, secure_boot: Maybe[bool]) -> tuple[MokCertificate, ...]:
    found = [path for path in MOK_CERTIFICATES if host.exists(path)]
    if secure_boot is not True:
        why = Unavailable(Reason.NOT_APPLICABLE, "only asked when Secure Boot is on")
        return tuple(MokCertificate(path, why) for path in found)
    if host.which("mokutil") is None:
        missing = Unavailable(Reason.NOT_FOUND, "mokutil is not on PATH")
        return tuple(MokCertificate(path, missing) for path in found)
    certificates = []
    for path in found:
        result = host.run(("mokutil", "--test-key", path), timeout=MOKUTIL_TIMEOUT_S)
        # mokutil's exit status differs between versions; its sentence does not.
        text = result.stdout + "\n" + result.stderr
        state = parse_test_key(text)
        enrolled: Maybe[bool] = state if state is not None else result.unavailable()
        certificates.append(MokCertificate(path, enrolled, pending=PENDING in text))
    return tuple(certificates)


def gather_secure_boot(host: Host) -> SecureBootFacts:
    efi = host.is_dir(EFI_DIR)
    if not efi:
        legacy = Unavailable(Reason.NOT_APPLICABLE, "legacy BIOS boot: no /sys/firmware/efi")
        return SecureBootFacts(False, legacy, None, legacy, legacy, _lockdown(host), _sig_enforce(host), ())
    secure, setup = _from_efivars(host)
    source: str | None = "efivars"
    if isinstance(secure, Unavailable):
        from_tool = _from_mokutil(host)
        if isinstance(from_tool, bool):
            secure, source = from_tool, " ".join(MOKUTIL_SB_STATE)
        else:
            secure, source = Unavailable(secure.reason, f"{secure.detail}; {from_tool}"), None
    shim = _efivar(host, MOK_SB_STATE_VAR)
    shim_disabled: Maybe[bool]
    if isinstance(shim, Unavailable):
        # No MokSBStateRT: the shim validates (the usual case), or there is no shim at all.
        shim_disabled = False if shim.reason is Reason.NOT_FOUND else shim
    else:
        shim_disabled = shim == 1
    return SecureBootFacts(
        efi=True,
        secure_boot=secure,
        source=source,
        setup_mode=setup,
        shim_validation_disabled=shim_disabled,
        lockdown=_lockdown(host),
        sig_enforce=_sig_enforce(host),
        certificates=_certificates(host, secure),
    )
