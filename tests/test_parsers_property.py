"""Property tests: every pure parser survives empty, cut, binary and garbage text, and real samples cut short
never turn into a wrong-but-confident value. Also: serialize round-trips every Facts dataclass exactly."""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from enum import Enum
from importlib import resources
from typing import Any, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_gpu_doctor.compat import CompatDataError, CompatMatrix, parse_matrix
from torch_gpu_doctor.facts import model as facts_model
from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.driver import (
    cuda_from_nvml_int,
    library_version_from_name,
    parse_nvidia_smi_csv,
    parse_proc_driver_version,
    parse_version_token,
)
from torch_gpu_doctor.facts.kernel import (
    CMDLINE_BLACKLIST,
    cmdline_blacklists_nouveau,
    modprobe_blacklists_nouveau,
    parse_proc_modules,
)
from torch_gpu_doctor.facts.meminfo import parse_meminfo
from torch_gpu_doctor.facts.nvml import NvmlDevice
from torch_gpu_doctor.facts.pci import lookup_pci_ids, parse_gpu_information, parse_hex
from torch_gpu_doctor.facts.platform import is_wsl_kernel, parse_cpuinfo, parse_os_release
from torch_gpu_doctor.facts.python_env import parse_python_probe
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- real samples (shared/reference/samples/proc-driver-nvidia, `# SOURCE:` line stripped) -----------------

# (text, version, flavor, is_jetson)
PROC_VERSION_SAMPLES: tuple[tuple[str, str, str, bool], ...] = (
    (  # version-proprietary-384.98.txt (neofetch #876)
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017\n"
        "GCC version:  gcc version 7.2.0 (Ubuntu 7.2.0-8ubuntu3) \n",
        "384.98",
        "proprietary",
        False,
    ),
    (  # version-open-565.57.01.txt (nixGL #186)
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  "
        "(dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\n"
        "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n",
        "565.57.01",
        "open",
        False,
    ),
    (  # version-open-525.60.11-arch.txt (nixGL #121): no build date, trailing spaces
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
        "(archlinux-builder@localhost)  \n"
        "GCC version:  gcc version 12.2.0 (GCC) \n",
        "525.60.11",
        "open",
        False,
    ),
    (  # version-open-555.58-gentoo-locale.txt (Hyprland #6715): build date in a Russian locale
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.58  Release Build  (portage@localhost)  "
        "Сб 29 июн 2024 14:36:22 MSK\n",
        "555.58",
        "open",
        False,
    ),
    (  # version-jetson-orin-35.3.1.txt (nixGL #139): an L4T release, not a driver branch
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  35.3.1  Release Build  "
        "(buildbrain@mobile-u64-6289-d7000)  Sun Mar 19 08:09:33 PDT 2023\n"
        "GCC version:  gcc version 9.3.0 (Buildroot 2020.08) \n",
        "35.3.1",
        "open",
        True,
    ),
    (  # mismatch-truenas-580.txt (truenas-nvidia-drivers #19): a shell transcript around the file
        "root@truenas[/]# nvidia-smi\n"
        "Failed to initialize NVML: Driver/library version mismatch\n"
        "NVML library version: 580.178\n"
        "root@truenas[/]# cat /proc/driver/nvidia/version\n"
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Tue Jun 23 08:38:17 UTC 2026\n"
        "GCC version:  gcc version 14.2.0 (Ubuntu 14.2.0-4ubuntu2~24.04.1)\n",
        "580.173.02",
        "proprietary",
        False,
    ),
)

# gpus-0000_70_00.0-information-L4.txt (snapd #14893), tabs as nv-procfs.c prints them
L4_INFORMATION = (
    "Model: \t\t NVIDIA L4\n"
    "IRQ:   \t\t 16\n"
    "GPU UUID: \t GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689\n"
    "Video BIOS: \t 95.04.65.00.13\n"
    "Bus Type: \t PCIe\n"
    "DMA Size: \t 47 bits\n"
    "DMA Mask: \t 0x7fffffffffff\n"
    "Bus Location: \t 0000:70:00.0\n"
    "Device Minor: \t 0\n"
    "GPU Excluded:\t No\n"
)

# Typical small files in their real formats (not from shared/: hand-written in the kernel's layout).
MEMINFO = (
    "MemTotal:       65536000 kB\n"
    "MemFree:         1234567 kB\n"
    "MemAvailable:   40000000 kB\n"
    "SwapTotal:       8388604 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n"
)
OS_RELEASE = (
    'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n'
    "ID=ubuntu\nID_LIKE=debian\nHOME_URL='https://www.ubuntu.com/'\n"
)
CPUINFO = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\n\n"
    "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\n"
)
PROC_MODULES = (
    "nvidia_uvm 4956160 0 - Live 0x0000000000000000 (POE)\n"
    "nvidia_drm 122880 2 - Live 0x0000000000000000 (POE)\n"
    "nvidia 54386688 23 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n"
)
NVIDIA_SMI_CSV = (
    "550.54.15, NVIDIA GeForce RTX 4090, 00000000:01:00.0, GPU-5c6ad3a0-8f63-1d0c-1a4b-4d3c3a1e1f11, 24564\n"
    "550.54.15, NVIDIA GeForce RTX 4090, 00000000:4C:00.0, GPU-9a1a2b5c-0d9e-4f0a-8b6c-7e8f9a0b1c2d, 24564\n"
)
PCI_IDS = (
    "# pci.ids excerpt\n"
    "10de  NVIDIA Corporation\n"
    "\t2684  AD102 [GeForce RTX 4090]\n"
    "\t\t10de 167c  AD102 [GeForce RTX 4090 Founders Edition]\n"
    "\t2330  GH100 [H100 SXM5 80GB]\n"
    "1002  Advanced Micro Devices, Inc. [AMD/ATI]\n"
    "\t2684  (made-up AMD device with an NVIDIA device id)\n"
)
REAL_TEXTS: tuple[str, ...] = (
    *(s[0] for s in PROC_VERSION_SAMPLES),
    L4_INFORMATION,
    MEMINFO,
    OS_RELEASE,
    CPUINFO,
    PROC_MODULES,
    NVIDIA_SMI_CSV,
    PCI_IDS,
)

# --- garbage -------------------------------------------------------------------------------------------------

# fmt: off
FRAGMENTS = (
    "\n", "\r\n", "\r", "\t", " ", "  ", ":", "=", "#", '"', "'", "\\", ".", ",", "0x", "10de", "0", "1", "9",
    "12", "550.54.15", "35.3.1", "kB", "NVRM version:", "NVIDIA UNIX ", "Open Kernel Module", " Kernel Module",
    " for aarch64", "x86_64", "processor", "model name", "MemTotal", "ID", "PRETTY_NAME", "blacklist",
    "nouveau", "install", "/bin/false", "modprobe.blacklist=nouveau", "nvidia", " Live ", "0000:", "PCI:",
    "00000000:0A:00.0", "{", "}", "[", "]", "null", "libnvidia-ml.so.", "²", "١", "\x00", "\ufffd", "é",
    "\u2028", "\x85", "Model", "GPU UUID", "Device Minor",
)
# fmt: on


def _cut(text: str) -> st.SearchStrategy[str]:
    return st.integers(0, len(text)).map(lambda i: text[:i])


def _replace_decoded(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


# Lines shaped like the real formats (key, separator, number-ish token, unit), with Unicode digits in the
# tokens: "²".isdigit() is True, and int("²") raises.
KEYS = (
    "MemTotal",
    "processor",
    "model name",
    "ID",
    "Model",
    "Device Minor",
    "NVRM version",
    "nvidia 123 0 -",
)
_tokens = st.text(st.characters(categories=["Nd", "No"]) | st.sampled_from("0123456789.x "), max_size=6)
_lines = st.tuples(
    st.sampled_from(KEYS),
    st.sampled_from((":", "=", ":\t", ": ", "  ")),
    _tokens | st.sampled_from(FRAGMENTS),
    st.sampled_from(("", " kB", " kb", "  ", "\t")),
).map("".join)
line_garbage = st.lists(_lines, max_size=6).map("\n".join)

garbage: st.SearchStrategy[str] = st.one_of(
    st.just(""),
    line_garbage,
    st.text(),
    st.binary(max_size=200).map(_replace_decoded),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=40).map("".join),
    st.sampled_from(REAL_TEXTS).flatmap(_cut),
    # real bytes with a few bytes replaced by arbitrary ones, then decoded like the host does
    st.tuples(
        st.sampled_from(REAL_TEXTS), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=4)
    ).map(lambda tw: _replace_decoded(_corrupt(tw[0].encode(), tw[1]))),
)


def _corrupt(data: bytes, writes: list[tuple[int, int]]) -> bytes:
    buf = bytearray(data)
    for pos, byte in writes:
        if buf:
            buf[pos % len(buf)] = byte
    return bytes(buf)


def _is_str_dict(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


# --- every parser: never raises, returns its documented type -------------------------------------------------


@PROPS
@given(garbage)
def test_parse_os_release_total(text: str) -> None:
    result = parse_os_release(text)
    assert _is_str_dict(result)
    assert all(k.isidentifier() for k in result)
    # A well-formed line after any garbage still counts (last assignment wins, os-release(5)).
    assert parse_os_release(text + '\nID="ubuntu"\n')["ID"] == "ubuntu"


@PROPS
@given(garbage)
def test_parse_cpuinfo_total(text: str) -> None:
    model, count = parse_cpuinfo(text)
    assert model is None or (isinstance(model, str) and model == model.strip() and model)
    assert isinstance(count, int) and count >= 0
    assert parse_cpuinfo(text + "\nprocessor\t: 7\n")[1] == count + 1


@PROPS
@given(garbage)
def test_is_wsl_kernel_total(text: str) -> None:
    assert isinstance(is_wsl_kernel(text), bool)


def test_is_wsl_kernel_examples() -> None:
    assert is_wsl_kernel("5.15.167.4-microsoft-standard-WSL2")
    assert is_wsl_kernel("4.4.0-19041-Microsoft")
    assert not is_wsl_kernel("6.8.0-45-generic")


@PROPS
@given(garbage)
def test_parse_meminfo_total(text: str) -> None:
    result = parse_meminfo(text)
    assert isinstance(result, dict)
    assert all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in result.items())
    assert parse_meminfo(text + "\nMemTotal:  16 kB\n")["MemTotal"] == 16 * 1024


def test_parse_meminfo_digits_int_refuses() -> None:
    # "²".isdigit() is True but int("²") raises; Python refuses int() of more than 4300 digits.
    assert parse_meminfo("MemTotal: ² kB\nSwapTotal: 1 kB\n") == {"SwapTotal": 1024}
    assert "MemTotal" not in parse_meminfo("MemTotal: " + "9" * 5000 + " kB\n")


@PROPS
@given(garbage)
def test_parse_version_token_total(text: str) -> None:
    result = parse_version_token(text)
    if result is not None:
        assert result == text.strip()
        assert re.fullmatch(r"[0-9]+(\.[0-9]+){1,2}", result), result  # ASCII digits only


def test_parse_version_token_examples() -> None:
    assert parse_version_token("550.144.03\n") == "550.144.03"
    assert parse_version_token("35.3.1") == "35.3.1"
    for bad in ("", "550", "550.", "v550.54", "550.54.15.1", "٥٥٠.٥٤", "1" * 5000 + ".1"):
        assert parse_version_token(bad) is None, bad


@PROPS
@given(garbage)
def test_parse_proc_driver_version_total(text: str) -> None:
    version, flavor, jetson = parse_proc_driver_version(text)
    assert version is None or parse_version_token(version) == version
    assert flavor in (None, "open", "proprietary")
    assert isinstance(jetson, bool)
    assert not (jetson and version is None)


def test_parse_proc_driver_version_huge_number() -> None:
    # int() of the major version must not see thousands of digits (ValueError in Python >= 3.11).
    text = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  " + "1" * 5000 + ".1  Release Build\n"
    assert parse_proc_driver_version(text) == (None, "open", False)


@pytest.mark.parametrize(("text", "version", "flavor", "jetson"), PROC_VERSION_SAMPLES)
def test_parse_proc_driver_version_real(text: str, version: str, flavor: str, jetson: bool) -> None:
    assert parse_proc_driver_version(text) == (version, flavor, jetson)
    assert parse_proc_driver_version(text.replace("\n", "\r\n")) == (version, flavor, jetson)


@pytest.mark.parametrize(("text", "version", "flavor", "jetson"), PROC_VERSION_SAMPLES)
def test_parse_proc_driver_version_truncated_is_never_confidently_wrong(
    text: str, version: str, flavor: str, jetson: bool
) -> None:
    """Every prefix (all of them, not a sample) gives the right answer or no answer, field by field.

    A text cut inside "565.57.01" must not report "565.57" (a real, different driver), and a text cut before
    "Open Kernel Module" must not report "proprietary".
    """
    for cut in range(len(text) + 1):
        got_version, got_flavor, got_jetson = parse_proc_driver_version(text[:cut])
        where = repr(text[:cut])
        assert got_version in (None, version), where
        assert got_flavor in (None, flavor), where
        assert got_jetson in (False, jetson), where
        if got_version is not None:
            assert got_jetson == jetson, where
    assert parse_proc_driver_version(text)[0] == version


@PROPS
@given(garbage)
def test_parse_nvidia_smi_csv_total(text: str) -> None:
    rows = parse_nvidia_smi_csv(text)
    assert isinstance(rows, list)
    assert len(rows) == sum(1 for line in text.splitlines() if line.strip())
    for row in rows:
        assert row and all(isinstance(cell, str) and cell == cell.strip() and "," not in cell for cell in row)


def test_parse_nvidia_smi_csv_truncated_keeps_complete_rows() -> None:
    full = parse_nvidia_smi_csv(NVIDIA_SMI_CSV)
    assert full[1][2] == "00000000:4C:00.0"
    for cut in range(len(NVIDIA_SMI_CSV) + 1):
        prefix = NVIDIA_SMI_CSV[:cut]
        complete = prefix.count("\n")
        assert parse_nvidia_smi_csv(prefix)[:complete] == full[:complete]


@PROPS
@given(garbage)
def test_library_version_from_name_total(name: str) -> None:
    result = library_version_from_name(name)
    assert result is None or parse_version_token(result) == result


@PROPS
@given(st.lists(st.integers(0, 999), min_size=2, max_size=3))
def test_library_version_from_name_finds_version(parts: list[int]) -> None:
    version = ".".join(f"{p:02d}" for p in parts)
    assert library_version_from_name(f"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.{version}") == version
    assert library_version_from_name(f"/usr/lib/libcuda.so.{version}") is None


@PROPS
@given(st.integers(min_value=0))
def test_cuda_from_nvml_int_total(value: int) -> None:
    result = cuda_from_nvml_int(value)
    assert isinstance(result, str) and re.fullmatch(r"\d+\.\d+", result)


@PROPS
@given(st.integers(1, 99), st.integers(0, 9), st.integers(0, 9))
def test_cuda_from_nvml_int_decodes(major: int, minor: int, patch: int) -> None:
    # cudaDriverGetVersion: 1000 * major + 10 * minor (+ a patch digit some builds carry)
    assert cuda_from_nvml_int(major * 1000 + minor * 10 + patch) == f"{major}.{minor}"


@PROPS
@given(garbage)
def test_parse_proc_modules_total(text: str) -> None:
    names = parse_proc_modules(text)
    assert isinstance(names, set) and all(isinstance(n, str) and n for n in names)
    assert "nvidia" in parse_proc_modules(text + "\nnvidia 54386688 23 - Live 0x0 (POE)\n")


@PROPS
@given(garbage)
def test_modprobe_blacklists_nouveau_total(text: str) -> None:
    assert isinstance(modprobe_blacklists_nouveau(text), bool)
    # Blank line first: a trailing backslash in the garbage would continue onto it, not onto ours.
    assert modprobe_blacklists_nouveau(text + "\n\nblacklist nouveau\n")
    assert modprobe_blacklists_nouveau(text + "\n\ninstall nouveau /bin/false\n")


def test_modprobe_blacklists_nouveau_examples() -> None:
    assert not modprobe_blacklists_nouveau("# blacklist nouveau\n")
    assert not modprobe_blacklists_nouveau("blacklist nouveaufb\noptions nouveau modeset=0\n")
    assert modprobe_blacklists_nouveau("blacklist nouveau  # no open driver\n")


@PROPS
@given(garbage)
def test_cmdline_blacklists_nouveau_total(text: str) -> None:
    found = cmdline_blacklists_nouveau(text)
    assert isinstance(found, list)
    assert all(word in CMDLINE_BLACKLIST and word in text.split() for word in found)


@PROPS
@given(garbage)
def test_parse_hex_total(text: str) -> None:
    value = parse_hex(text)
    assert value is None or (isinstance(value, int) and text.strip().lower().startswith("0x"))


@PROPS
@given(st.integers(0, 2**64))
def test_parse_hex_reads_sysfs_values(value: int) -> None:
    assert parse_hex(f"0x{value:04x}\n") == value
    assert parse_hex(hex(value).upper().replace("0X", "0x")) == value
    assert parse_hex(str(value) + "z") is None


@PROPS
@given(garbage, st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))
def test_lookup_pci_ids_total(text: str, vendor: int, device: int) -> None:
    name = lookup_pci_ids(text, vendor, device)
    assert name is None or (isinstance(name, str) and name and name == name.strip())


def test_lookup_pci_ids_examples() -> None:
    assert lookup_pci_ids(PCI_IDS, 0x10DE, 0x2684) == "AD102 [GeForce RTX 4090]"
    assert lookup_pci_ids(PCI_IDS, 0x1002, 0x2684) == "(made-up AMD device with an NVIDIA device id)"
    assert lookup_pci_ids(PCI_IDS, 0x10DE, 0x167C) is None  # a subsystem line, not a device
    assert lookup_pci_ids(PCI_IDS, 0x8086, 0x2684) is None


@PROPS
@given(garbage)
def test_parse_gpu_information_total(text: str) -> None:
    result = parse_gpu_information(text)
    assert _is_str_dict(result)
    assert parse_gpu_information(text + "\nModel: \t\t NVIDIA L4\n")["Model"] == "NVIDIA L4"


def _line_parser_prefix_invariant(parse: typing.Callable[[str], dict[str, Any]], full_text: str) -> None:
    """Cut anywhere: keys from complete lines keep their full-text values; only the cut last line may differ."""
    full = parse(full_text)
    for cut in range(len(full_text) + 1):
        prefix = full_text[:cut]
        complete, _, partial = prefix.rpartition("\n")
        got = parse(prefix)
        from_partial = parse(partial)
        for key, value in got.items():
            assert key in full, (prefix, key)
            if key not in from_partial:
                assert value == full[key], (prefix, key)
        for key, value in parse(complete).items():
            assert full[key] == value, (complete, key)


def test_parse_gpu_information_real_and_truncated() -> None:
    info = parse_gpu_information(L4_INFORMATION)
    assert info["Model"] == "NVIDIA L4"
    assert info["GPU UUID"] == "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689"
    assert info["Bus Location"] == "0000:70:00.0"
    assert info["GPU Excluded"] == "No"
    _line_parser_prefix_invariant(parse_gpu_information, L4_INFORMATION)
    # the cut last line can only lose characters at its end
    for cut in range(len(L4_INFORMATION) + 1):
        for key, value in parse_gpu_information(L4_INFORMATION[:cut]).items():
            assert info[key].startswith(value)


def test_line_parsers_truncated() -> None:
    assert parse_meminfo(MEMINFO)["MemTotal"] == 65536000 * 1024
    _line_parser_prefix_invariant(parse_meminfo, MEMINFO)
    assert parse_os_release(OS_RELEASE)["PRETTY_NAME"] == "Ubuntu 24.04.1 LTS"
    _line_parser_prefix_invariant(parse_os_release, OS_RELEASE)


# --- normalize_bdf --------------------------------------------------------------------------------------------

CANONICAL_BDF = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")


@PROPS
@given(garbage)
def test_normalize_bdf_total_and_idempotent(text: str) -> None:
    bdf = normalize_bdf(text)
    if bdf is not None:
        assert CANONICAL_BDF.fullmatch(bdf), bdf
        assert normalize_bdf(bdf) == bdf


@PROPS
@given(st.integers(0, 0xFFFF), st.integers(0, 0xFF), st.integers(0, 0x1F), st.integers(0, 7))
def test_normalize_bdf_agrees_across_sources(domain: int, bus: int, dev: int, fn: int) -> None:
    nvml = f"{domain:08X}:{bus:02X}:{dev:02X}.{fn}"  # nvmlDeviceGetPciInfo().busId
    sysfs = f"{domain:04x}:{bus:02x}:{dev:02x}.{fn}"  # /sys/bus/pci/devices, /proc/driver/nvidia/gpus
    smi = f"{domain:08X}:{bus:02X}:{dev:02X}.{fn}\n"  # nvidia-smi --query-gpu=pci.bus_id
    canonical = normalize_bdf(sysfs)
    assert canonical == sysfs
    assert normalize_bdf(nvml) == normalize_bdf(smi) == canonical
    assert normalize_bdf(canonical) == canonical
    if fn == 0:  # Xid lines name no function
        assert normalize_bdf(f"PCI:{domain:04x}:{bus:02x}:{dev:02x}") == canonical


def test_normalize_bdf_examples() -> None:
    assert normalize_bdf("00000000:0A:00.0") == normalize_bdf("0000:0a:00.0") == "0000:0a:00.0"
    # Intel VMD puts devices in 32-bit domains: sysfs says 10000:e1:00.0, NVML 00010000:E1:00.0
    assert normalize_bdf("00010000:E1:00.0") == normalize_bdf("10000:e1:00.0") == "10000:e1:00.0"
    assert normalize_bdf("0000:01:00.8") is None
    assert normalize_bdf("") is None


# --- python probe ---------------------------------------------------------------------------------------------

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@PROPS
@given(garbage)
def test_parse_python_probe_total(stdout: str) -> None:
    result = parse_python_probe(stdout)
    if isinstance(result, Unavailable):
        assert result.reason is Reason.UNPARSEABLE
    else:
        assert isinstance(result, dict)


@FEW
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6), garbage)
def test_parse_python_probe_reads_last_line(data: dict[str, Any], noise: str) -> None:
    assert parse_python_probe(noise + "\n" + json.dumps(data) + "\n") == data


@pytest.mark.parametrize("stdout", ["[" * 100_000, '{"a":' * 50_000, "1" * 5000, "\x00", "null", "[1, 2]"])
def test_parse_python_probe_pathological(stdout: str) -> None:
    result = parse_python_probe(stdout)
    assert isinstance(result, Unavailable) and result.reason is Reason.UNPARSEABLE


# --- compat matrix --------------------------------------------------------------------------------------------


def _real_matrix_data() -> Any:
    text = resources.files("torch_gpu_doctor.compat").joinpath("cuda_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


REAL_MATRIX = _real_matrix_data()


def _check_matrix(data: Any) -> None:
    """parse_matrix either refuses with CompatDataError or returns a matrix that its users can query."""
    try:
        matrix = parse_matrix(data)
    except CompatDataError:
        return
    assert isinstance(matrix, CompatMatrix)
    assert all(isinstance(v, str) for v in matrix.sm_to_arch.values())
    for driver in ("550.54.15", "384.98", "35.3.1", "999.99"):
        for system in ("linux", "windows"):
            cuda = matrix.max_cuda_for_driver(driver, system)
            assert cuda is None or isinstance(cuda, str)
    found = matrix.gpu_by_name("NVIDIA GeForce RTX 4090")
    assert found is None or isinstance(found.compute_capability, str)
    assert matrix.architecture("8.9") is None or isinstance(matrix.architecture("8.9"), str)


@st.composite
def mutated_matrix(draw: st.DrawFn) -> Any:
    """The real matrix with one value somewhere inside it replaced by garbage."""

    def mutate(value: Any, depth: int) -> Any:
        containers = isinstance(value, dict | list) and value
        if not containers or depth > 4 or draw(st.integers(0, 4)) == 0:
            return draw(json_values)
        if isinstance(value, dict):
            key = draw(st.sampled_from(sorted(value)))
            return {**value, key: mutate(value[key], depth + 1)}
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], mutate(value[index], depth + 1), *value[index + 1 :]]

    return mutate(REAL_MATRIX, 0)


def test_parse_matrix_real() -> None:
    matrix = parse_matrix(REAL_MATRIX)
    assert matrix.toolkits and matrix.gpus


@PROPS
@given(mutated_matrix())
def test_parse_matrix_mutated_raises_only_compat_error(data: Any) -> None:
    _check_matrix(data)


@PROPS
@given(json_values)
def test_parse_matrix_garbage_raises_only_compat_error(data: Any) -> None:
    _check_matrix(data)
    if isinstance(data, dict):
        _check_matrix({**data, "schema": REAL_MATRIX["schema"]})


@pytest.mark.parametrize(
    "patch",
    [
        {"cuda_toolkits": 5},
        {"cuda_toolkits": ["x"]},
        {"gpus": {"a": 1}},
        {"gpus": [None]},
        {"sm_to_arch": {"8.9": 89}},
        {"data_date": 20240101},
    ],
)
def test_parse_matrix_wrong_shapes(patch: dict[str, Any]) -> None:
    with pytest.raises(CompatDataError):
        parse_matrix({**REAL_MATRIX, **patch})


@pytest.mark.parametrize("branch", ["Rx", "615", "R" + "1" * 5000, "R١"])
def test_parse_matrix_bad_branch_refused(branch: str) -> None:
    toolkits = [{**REAL_MATRIX["cuda_toolkits"][0], "linux_branch": branch, "linux_min_driver": None}]
    with pytest.raises(CompatDataError):
        parse_matrix({**REAL_MATRIX, "cuda_toolkits": toolkits})


def test_parse_matrix_huge_driver_refused() -> None:
    toolkits = [{**REAL_MATRIX["cuda_toolkits"][1], "linux_min_driver": "1" * 5000 + ".0"}]
    with pytest.raises(CompatDataError):
        parse_matrix({**REAL_MATRIX, "cuda_toolkits": toolkits})


# --- serialize: exact JSON round trip of every Facts dataclass ------------------------------------------------

unavailables: st.SearchStrategy[Unavailable] = st.builds(
    Unavailable, st.sampled_from(Reason), st.text(max_size=12)
)


def strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """Values of a type hint; each `Maybe[...]` is either a value or Unavailable(reason, detail)."""
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return st.one_of(*(strategy_for(arg) for arg in get_args(tp)))
    if tp is Unavailable:
        return unavailables
    if tp is type(None):
        return st.none()
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers()
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if tp is str:
        return st.text(max_size=12)
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(strategy_for(args[0]), max_size=2).map(tuple)
        return st.tuples(*(strategy_for(arg) for arg in args))
    if origin is dict:
        key, value = get_args(tp)
        return st.dictionaries(strategy_for(key), strategy_for(value), max_size=2)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return st.sampled_from(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        names = facts_model.annotation_names() if tp is facts_model.Facts else None
        hints = typing.get_type_hints(tp, localns=names)
        fields = {f.name: strategy_for(hints[f.name]) for f in dataclasses.fields(tp) if f.init}
        return st.builds(tp, **fields)
    raise TypeError(f"no strategy for {tp!r}")


FACT_CLASSES = [
    obj
    for obj in (facts_model.Facts, NvmlDevice, *facts_model.annotation_names().values())
    if isinstance(obj, type)
    and dataclasses.is_dataclass(obj)
    and obj.__module__.startswith("torch_gpu_doctor.facts.")
]


def test_fact_classes_found() -> None:
    names = {cls.__name__ for cls in FACT_CLASSES}
    assert {"NvmlDevice", "DriverFacts", "OsFacts", "NvmlFacts", "Gpu", "Facts"} <= names


def _round_trip(cls: type, value: object) -> None:
    text = json.dumps(to_json(value))
    assert from_json(cls, json.loads(text)) == value
    assert json.dumps(to_json(from_json(cls, json.loads(text)))) == text


@FEW
@pytest.mark.parametrize("cls", FACT_CLASSES, ids=lambda cls: cls.__name__)
@given(data=st.data())
def test_serialize_round_trip_facts(cls: type, data: st.DataObject) -> None:
    _round_trip(cls, data.draw(strategy_for(cls)))


@FEW
@given(strategy_for(Report))
def test_serialize_round_trip_report(report: Report) -> None:
    _round_trip(Report, report)


@FEW
@given(strategy_for(NvmlDevice))
def test_serialize_unavailable_is_null_with_reason(device: NvmlDevice) -> None:
    encoded = to_json(device)
    missing = encoded.get("unavailable", {})
    for field in dataclasses.fields(device):
        value = getattr(device, field.name)
        if isinstance(value, Unavailable):
            assert encoded[field.name] is None
            assert missing[field.name] == {"reason": value.reason.value, "detail": value.detail}
        else:
            assert field.name not in missing
