"""driver.secure_boot: is UEFI Secure Boot keeping the nvidia module from loading?

Rules (hardware.md §3.5): with Secure Boot in force the kernel loads only modules signed by a key it trusts
(built in, or enrolled with MOK). Proof that it refused one is in the kernel log ("Lockdown: modprobe: unsigned
module loading is restricted", "Loading of module with unavailable key is rejected"); without the log, an
unsigned module under Secure Boot is refused for certain, a signed one only if its key is not enrolled. A
loaded module, a BIOS boot or Secure Boot off means Secure Boot is not the problem.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import is_wsl
from torch_gpu_doctor.checks.support.driver_state import module_on_disk, nvidia_loaded, running_kernel
from torch_gpu_doctor.checks.support.signatures import reported, reported_evidence
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.modinfo import ModuleInfo
from torch_gpu_doctor.facts.nvidia_module import module_missing
from torch_gpu_doctor.facts.secure_boot import SecureBootFacts
from torch_gpu_doctor.fixes.module_signing import enroll_key, enrollment_unconfirmed, sign_and_enroll
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Maybe, Unavailable

CID = "driver.secure_boot"
# the catalogue's entry for a person saying the key's enrollment (MOK) was part of it: started, not confirmed
ENROLLMENT_SAID = "secure_boot_mok_enrollment_in_words"
TAINT = "module verification failed"  # the module loaded anyway: signatures are not enforced


def _state(sb: SecureBootFacts) -> str:
    enforced = sb.enforced
    if enforced is True:
        return "on"
    if sb.secure_boot is True:
        return "on, but the shim does not validate modules"
    return "off" if enforced is False else "unknown"


def _refusals(facts: Facts) -> tuple[str, ...]:
    log = facts.kernel_log
    if isinstance(log, Unavailable):
        return ()
    return tuple(line for line in log.signature_lines if TAINT not in line)


def _log_readable(facts: Facts) -> bool:
    return not isinstance(facts.kernel_log, Unavailable) and isinstance(facts.kernel_log.source, str)


def _signature(module: ModuleInfo) -> str:
    if not module.signed:
        return "not signed"
    return f"signed by '{module.signer}'" if isinstance(module.signer, str) else "signed"


def _evidence(
    sb: SecureBootFacts, module: ModuleInfo | None, refusals: tuple[str, ...]
) -> tuple[Evidence, ...]:
    items = [
        fact("Secure Boot", _state(sb) if sb.efi else "legacy BIOS boot", sb.source or "efivars"),
        fact("kernel lockdown", sb.lockdown, "/sys/kernel/security/lockdown"),
    ]
    if module is not None:
        items.append(fact("nvidia module", f"{module.filename}: {_signature(module)}", "modinfo nvidia"))
    for cert in sb.certificates:
        enrolled = cert.enrolled
        state = (
            enrolled
            if isinstance(enrolled, Unavailable)
            else "enrolled"
            if enrolled
            else "not enrolled yet: the enrollment request waits for a reboot"
            if cert.pending
            else "not enrolled"
        )
        items.append(fact(f"MOK certificate {cert.path}", state, "mokutil --test-key"))
    items += [Evidence("kernel log", line, "dmesg / journalctl -k") for line in refusals[:3]]
    return tuple(items)


def _fix(facts: Facts, sb: SecureBootFacts, module: ModuleInfo | None) -> Remediation:
    unenrolled = next((c for c in sb.certificates if c.enrolled is False), None)
    certificate = unenrolled.path if unenrolled else next((c.path for c in sb.certificates), None)
    if module is not None and module.signed:
        return enroll_key(facts.os, certificate, pending=unenrolled is not None and unenrolled.pending)
    version = module.version if module is not None and isinstance(module.version, str) else None
    return sign_and_enroll(facts.os, certificate, version, running_kernel(facts))


@check(CID, "Secure Boot does not block the NVIDIA kernel module", "driver")
def driver_secure_boot(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether UEFI Secure Boot is in force (the SecureBoot and SetupMode EFI variables, the shim's validation
    switch, or `mokutil --sb-state`), the kernel lockdown mode, whether the installed nvidia module is signed
    (`modinfo`), whether the distribution's module-signing certificate is enrolled (`mokutil --test-key`), and
    whether the kernel log shows a module refused for its signature.

    ## Why it matters
    With Secure Boot on, the kernel loads only modules signed with a key the firmware trusts. NVIDIA's module
    is built on your machine (DKMS, akmods) and signed with a local key that must be enrolled once through the
    blue MokManager screen at boot; skip that screen, or build without signing, and `modprobe nvidia` fails
    with "Key was rejected by service". The GPU then has no driver and PyTorch sees no CUDA device.

    ## How to fix
    Enroll the signing certificate with `sudo mokutil --import <certificate>` (Ubuntu:
    /var/lib/shim-signed/mok/MOK.der, DKMS: /var/lib/dkms/mok.pub, Fedora akmods:
    /etc/pki/akmods/certs/public_key.der), reboot and confirm "Enroll MOK"; rebuild an unsigned module first
    so it gets signed. Or turn Secure Boot off in the firmware setup.
    """
    sb = facts.secure_boot
    if is_wsl(facts):
        return Finding(CID, Status.SKIP, "WSL2 uses the Windows driver: no Linux module to sign.")
    if not facts.nvidia_gpus:
        return Finding(CID, Status.SKIP, "No NVIDIA GPU here.")
    refused = reported(facts, "secure_boot_refused")
    if isinstance(sb, Unavailable) and refused:
        if all(e.signature == ENROLLMENT_SAID for e in refused):  # started, never confirmed at boot
            return Finding(
                CID,
                Status.FAIL,
                "Secure Boot refuses the NVIDIA module until the key it was signed with is enrolled, and the "
                f"enrollment was never confirmed at boot ({refused[0].where}).",
                details=refused[0].means,
                evidence=reported_evidence(refused),
                remediation=enrollment_unconfirmed(),
            )
        return Finding(
            CID,
            Status.FAIL,
            f"Secure Boot (kernel lockdown) refused to load an unsigned kernel module ({refused[0].where}).",
            details=refused[0].means,
            evidence=reported_evidence(refused),
            remediation=sign_and_enroll(facts.os, None, None, None),
        )
    if isinstance(sb, Unavailable):
        return Finding(CID, Status.UNKNOWN, f"Could not read the Secure Boot facts: {sb}.")
    module = module_on_disk(facts)
    refusals = _refusals(facts)
    evidence = _evidence(sb, module, refusals)
    if nvidia_loaded(facts):
        return Finding(
            CID,
            Status.PASS,
            f"The nvidia module is loaded, so Secure Boot ({_state(sb) if sb.efi else 'not in use'}) is not "
            "blocking it.",
            evidence=evidence,
        )
    installed = module is not None or not module_missing(_modinfo(facts))
    if refusals and installed:  # the log lines do not name the module: only blame it when it exists
        return Finding(
            CID,
            Status.FAIL,
            "The kernel refused to load a module for lack of a trusted signature, and the nvidia module is not "
            "loaded: Secure Boot is blocking the NVIDIA driver.",
            details="The kernel log names the refusal (the lockdown line does not name the module). "
            + _module_sentence(module),
            evidence=evidence,
            remediation=_fix(facts, sb, module),
        )
    if not sb.efi:
        return Finding(CID, Status.SKIP, "Legacy BIOS boot: there is no Secure Boot to block the module.")
    enforced = sb.enforced
    if enforced is False:
        return Finding(
            CID, Status.PASS, f"Secure Boot is {_state(sb)}: it cannot block the module.", evidence=evidence
        )
    if module is None:
        return _no_module_info(facts, sb, enforced, evidence)
    if isinstance(enforced, Unavailable):
        if not module.signed:
            return Finding(
                CID,
                Status.WARN,
                f"Could not read the Secure Boot state ({enforced}), and the nvidia module is not signed: if "
                "Secure Boot is on, the kernel refuses it.",
                evidence=evidence,
                remediation=_fix(facts, sb, module),
            )
        return Finding(
            CID, Status.UNKNOWN, f"Could not read the Secure Boot state ({enforced}).", evidence=evidence
        )
    if not module.signed:
        return Finding(
            CID,
            Status.FAIL,
            "Secure Boot is on and the nvidia module for this kernel is not signed: the kernel refuses to load "
            "it.",
            details=f"{module.filename} carries no signature. " + _module_sentence(module),
            evidence=evidence,
            remediation=_fix(facts, sb, module),
        )
    return _signed_not_loaded(facts, sb, module, evidence)


def _modinfo(facts: Facts) -> Maybe[ModuleInfo]:
    module = facts.nvidia_module
    return module if isinstance(module, Unavailable) else module.modinfo


def _module_sentence(module: ModuleInfo | None) -> str:
    if module is None:
        return ""
    if not module.signed:
        return "The installed nvidia module is not signed."
    signer = f" by '{module.signer}'" if isinstance(module.signer, str) else ""
    return f"The installed nvidia module is signed{signer}, with a key the firmware does not trust yet."


def _no_module_info(
    facts: Facts, sb: SecureBootFacts, enforced: bool | Unavailable, evidence: tuple[Evidence, ...]
) -> Finding:
    modinfo = _modinfo(facts)
    if module_missing(modinfo):
        on = (
            " Secure Boot is on: the module you install must be signed with an enrolled key."
            if enforced
            else ""
        )
        return Finding(
            CID,
            Status.SKIP,
            f"No NVIDIA kernel module is installed for this kernel (see driver.installed).{on}",
            evidence=evidence,
        )
    return Finding(
        CID,
        Status.UNKNOWN,
        f"Secure Boot is {_state(sb)} and the nvidia module is not loaded, but whether it is signed could not be "
        f"read ({modinfo}).",
        evidence=evidence,
    )


def _signed_not_loaded(
    facts: Facts, sb: SecureBootFacts, module: ModuleInfo, evidence: tuple[Evidence, ...]
) -> Finding:
    signer = f" (by '{module.signer}')" if isinstance(module.signer, str) else ""
    if _log_readable(facts):
        return Finding(
            CID,
            Status.PASS,
            f"Secure Boot is on and the nvidia module is signed{signer}; the kernel log shows no refused module, "
            "so Secure Boot is not what keeps it from loading (see driver.installed).",
            evidence=evidence,
        )
    unenrolled = [c for c in sb.certificates if c.enrolled is False]
    if unenrolled:
        first = unenrolled[0]
        return Finding(
            CID,
            Status.WARN,
            f"Secure Boot is on, the nvidia module is signed{signer} and the certificate {first.path} is not "
            "enrolled"
            + (" (its enrollment request waits for a reboot)" if first.pending else "")
            + ": if the module was signed with it, the kernel refuses it.",
            details="The kernel log, which would say for sure, is not readable here.",
            evidence=evidence,
            remediation=enroll_key(facts.os, first.path, pending=first.pending),
        )
    if any(c.enrolled is True for c in sb.certificates):
        return Finding(
            CID,
            Status.PASS,
            f"Secure Boot is on, the nvidia module is signed{signer} and the local signing certificate is "
            "enrolled.",
            evidence=evidence,
        )
    return Finding(
        CID,
        Status.UNKNOWN,
        f"Secure Boot is on and the nvidia module is signed{signer}, but whether the firmware trusts that key "
        "shows only in the kernel log, which is not readable here.",
        evidence=evidence,
    )
