"""`modinfo nvidia`: the module file modprobe would load for the running kernel, its version and signature.

kmod prints `%-16s%s` lines (`filename:       /lib/modules/.../nvidia.ko.xz`); long values (the signature)
continue on lines that start with whitespace; `parm:` repeats. A signed module has `sig_id:`, `signer:`,
`sig_key:`, `sig_hashalgo:` and `signature:` lines; an unsigned one has none of them (the unsigned akmods build
in fedora-silverblue/issue-tracker#272 ends at `vermagic:` and `parm:`). kmod built without OpenSSL prints
`sig_id: PKCS#7` with an EMPTY `signer:` for a signed module, so "signed" is read from sig_id/signature,
never from the signer's name alone.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.driver import DRIVER_VERSION
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

_FIELD = lazy(r"^(?P<key>[a-z_]{2,32}):(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_SIGNATURE_KEYS = ("sig_id", "signature", "sig_key")


@dataclass(frozen=True)
class ModuleInfo:
    filename: Maybe[str]
    version: Maybe[str]
    vermagic: Maybe[str]  # the kernel release the module was built for (first word of vermagic)
    signed: bool  # a signature is appended to the file
    signer: Maybe[str]  # the certificate's name; empty (unknown) on kmod without OpenSSL


def parse_fields(text: str) -> dict[str, str]:
    """The first value of every `key:` line; continuation lines are skipped."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t":
            continue
        match = _FIELD.match(line)
        if match and match["key"] not in fields:
            fields[match["key"]] = match["value"] or ""
    return fields


def parse_modinfo(text: str) -> ModuleInfo | None:
    """None when the text is not modinfo output at all (no filename line)."""
    fields = parse_fields(text)
    if "filename" not in fields:
        return None

    def field(key: str) -> Maybe[str]:
        value = fields.get(key)
        return value if value else Unavailable(Reason.NOT_FOUND, f"modinfo has no {key} line")

    raw_version = fields.get("version", "")
    version: Maybe[str] = (
        raw_version.strip()
        if DRIVER_VERSION.match(raw_version.strip())
        else (
            Unavailable(Reason.UNPARSEABLE, f"version: {raw_version[:40]!r}")
            if raw_version
            else Unavailable(Reason.NOT_FOUND, "modinfo has no version line")
        )
    )
    magic = fields.get("vermagic", "").split()
    signed = any(key in fields for key in _SIGNATURE_KEYS)
    signer: Maybe[str] = field("signer")
    if signed and isinstance(signer, Unavailable):
        signer = Unavailable(Reason.NOT_SUPPORTED, "signed, but this modinfo does not name the signer")
    return ModuleInfo(
        filename=field("filename"),
        version=version,
        vermagic=magic[0] if magic else Unavailable(Reason.NOT_FOUND, "modinfo has no vermagic line"),
        signed=signed,
        signer=signer,
    )
