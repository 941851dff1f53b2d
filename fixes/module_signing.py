"""Getting a signed nvidia module past Secure Boot: sign it, enroll the signing key with MOK, reboot.

Key locations (hardware.md §3.5, dell/dkms README "Module signing", fedora-silverblue/issue-tracker#272):
Ubuntu's update-secureboot-policy keeps its key in /var/lib/shim-signed/mok/ (MOK.der); DKMS 3 elsewhere
creates /var/lib/dkms/mok.pub on first use; Fedora's akmods uses /etc/pki/akmods/certs/public_key.der
(`kmodgenca -a` creates it). `mokutil --import` only files a request: the firmware's blue MokManager screen
asks for the one-time password at the next boot, and the key is trusted once "Enroll MOK" is confirmed there.
Rebuilding so the module gets signed: `dkms build --force` (dell/dkms dkms.8: `install --force` reinstalls the
built module), `akmods --rebuild` (akmods 0.5.10: `--force` only retries failed builds).
"""

from __future__ import annotations

from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.fixes.distro import Builder, recipe
from torch_gpu_doctor.fixes.kernel_modules import REBOOT
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

ENROLL_NOTE = (
    "at the next boot choose 'Enroll MOK' in the blue MokManager screen and type the password set here"
)
DISABLE_TEXT = "The alternative is to turn Secure Boot off in the firmware setup."


def _import(certificate: str) -> Command:
    return Command(("sudo", "mokutil", "--import", certificate), note="asks for a one-time password")


def enroll_key(
    os_facts: OsFacts | Unavailable, certificate: str | None, pending: bool = False
) -> Remediation:
    """The module is signed, but with a key the firmware does not trust yet. `pending`: `mokutil --import`
    already filed the request (mokutil would skip a second one), so only the reboot and the confirmation
    are left."""
    cert = certificate or recipe(os_facts).mok_certificate
    if cert is not None and pending:
        return Remediation(
            text=f"An enrollment request for {cert} is already filed: reboot and confirm it in MokManager. If "
            "you no longer know its password, `sudo mokutil --revoke-import` cancels the request and a new "
            f"`sudo mokutil --import {cert}` files another. {DISABLE_TEXT}",
            commands=(Command(REBOOT.argv, note=ENROLL_NOTE),),
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    if cert is None:
        return Remediation(
            text="Enroll the certificate the module was signed with: `sudo mokutil --import <certificate.der>`, "
            f"reboot and confirm it in MokManager. {DISABLE_TEXT}",
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    return Remediation(
        text=f"Enroll the module-signing certificate {cert} with MOK, then reboot and confirm it. {DISABLE_TEXT}",
        commands=(_import(cert), Command(REBOOT.argv, note=ENROLL_NOTE)),
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )


def enrollment_unconfirmed() -> Remediation:
    """A key enrollment started (`mokutil --import`, or a driver installer that ran it) and never confirmed: the
    firmware trusts the key only after the next boot's MokManager screen, which a cloud VM reached over SSH never
    shows (blind set 25: an Azure VM with Trusted Launch, MicrosoftDocs/azure-docs#111536)."""
    return Remediation(
        text="The key the module was signed with is trusted only once its enrollment is confirmed: reboot and choose "
        "'Enroll MOK' in the blue MokManager screen, with the password set when it was filed. A VM shows that "
        "screen only on its console (the hypervisor's or the cloud's serial console). Where it cannot be reached: "
        "turn Secure Boot off in the VM's or the firmware's settings, or install the distribution's pre-signed "
        "driver modules, which need no enrollment (Ubuntu: linux-modules-nvidia-BRANCH-$(uname -r), with "
        "BRANCH the driver's, e.g. 535).",
        commands=(
            Command(("mokutil", "--list-new"), note="a key listed here still waits for that confirmation"),
            Command(REBOOT.argv, note=ENROLL_NOTE),
        ),
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )


def sign_and_enroll(
    os_facts: OsFacts | Unavailable, certificate: str | None, version: str | None, release: str | None
) -> Remediation:
    """The module was built without a signature: rebuild it so DKMS or akmods signs it, then enroll the key."""
    how = recipe(os_facts)
    cert = certificate or how.mok_certificate
    rebuild: tuple[Command, ...] = ()
    if how.signing_builder is Builder.AKMODS:
        rebuild = (
            Command(("sudo", "kmodgenca", "-a"), note="creates the akmods signing key if there is none"),
            Command(
                # --force only retries modules that failed; --rebuild also redoes ones that are up to date
                ("sudo", "akmods", "--rebuild", *(("--kernels", release) if release else ())),
                note="rebuilds the module, signed with that key (akmods before 0.5.10: remove the "
                "kmod-nvidia package of this kernel, then `sudo akmods --force`)",
            ),
        )
    elif how.signing_builder is Builder.DKMS and version and release:
        module = f"nvidia/{version}"
        rebuild = (
            # `dkms install --force` reinstalls the .ko already built (unsigned): only a build signs
            Command(
                ("sudo", "dkms", "build", "--force", module, "-k", release),
                note="rebuilds the module; DKMS signs it with its MOK key (and creates one if needed)",
            ),
            Command(
                ("sudo", "dkms", "install", "--force", module, "-k", release),
                note="installs the signed build",
            ),
        )
    if not rebuild and cert is not None and how.signing_builder is Builder.DKMS:
        # the module and kernel not shown: DKMS signed what it built with its own key, which waits for enrollment
        return Remediation(
            text=f"DKMS signs the modules it builds with {cert}: enroll that certificate with MOK, reboot and "
            "confirm it (a module built before the key existed needs `sudo dkms build --force nvidia/VERSION` and "
            f"`sudo dkms install --force nvidia/VERSION` after that). {DISABLE_TEXT}",
            commands=(_import(cert), Command(REBOOT.argv, note=ENROLL_NOTE)),
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    if not rebuild or cert is None:
        return Remediation(
            text="Secure Boot refuses unsigned modules. Sign the nvidia module with a key of your own "
            "(kmodsign or the kernel's scripts/sign-file), enroll that key with `sudo mokutil --import`, and "
            f"reboot. {DISABLE_TEXT}",
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    return Remediation(
        text=f"Rebuild the nvidia module so it is signed, enroll the signing certificate {cert} with MOK, "
        f"then reboot and confirm the enrollment. {DISABLE_TEXT}",
        commands=(*rebuild, _import(cert), Command(REBOOT.argv, note=ENROLL_NOTE)),
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )
