"""`--format prometheus`: the report in Prometheus' text exposition format, for node_exporter's textfile
collector (write it to `<dir>/gpu_doctor.prom.tmp`, then rename it over `gpu_doctor.prom`).

One metric family per fact, each a gauge with HELP and TYPE, one series per label set:

- `gpu_doctor_check_status{check, status}`: one-hot, a series per status of every check that ran; the one
  with value 1 is the check's status (`pass`, `warn`, `fail`, `skip`, `unknown`, `crash`). Alert with
  `gpu_doctor_check_status{status=~"fail|crash"} == 1`.
- `gpu_doctor_checks{status}`: how many checks ended at each status.
- `gpu_doctor_exit_code`, `gpu_doctor_last_run_timestamp_seconds`, `gpu_doctor_run_duration_seconds`.
- `gpu_doctor_gpus` (NVIDIA GPUs found, on the PCI bus or through NVML), `gpu_doctor_nvml_gpus` (those the
  driver answers for; absent when NVML does not answer), `gpu_doctor_gpu_info{gpu, name}`.
- `gpu_doctor_driver_info{version, cuda_version, flavor}`, `gpu_doctor_torch_info{version, cuda}` (absent
  when unknown), `gpu_doctor_info{version}` (gpu-doctor's own).
- `gpu_doctor_pcie_link_width{gpu}`, `..._max_width`, `..._generation` (now: Gen1 at idle is normal),
  `..._max_generation` (the lower of both ends' max): each GPU's own link, by bus address.
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime

from torch_gpu_doctor.fleet.links import gpu_links
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.unavailable import Unavailable

PREFIX = "gpu_doctor_"
Labels = tuple[tuple[str, str], ...]


@dataclass
class Family:
    name: str
    help: str
    samples: dict[Labels, float] = field(default_factory=dict)  # a dict: one series per label set

    def add(self, value: float, **labels: str) -> None:
        self.samples[tuple(labels.items())] = value


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))


def render_family(family: Family) -> str:
    name = PREFIX + family.name
    lines = [f"# HELP {name} {escape_help(family.help)}", f"# TYPE {name} gauge"]
    for labels, value in family.samples.items():
        text = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels)
        lines.append(f"{name}{{{text}}} {_number(value)}" if text else f"{name} {_number(value)}")
    return "\n".join(lines) + "\n"


STAMP = ("last_run_timestamp_seconds", "When this diagnosis ran (Unix time).")
RUN_FAILED = ("run_failed", "1 when the run ended before a report (reason: usage, internal, interrupted).")
EXIT_CODE = ("exit_code", "The exit code of this run: 0 ok, 1 findings, 2 usage, 3 incomplete, 4 internal.")


def render_failed_run(exit_code: int, when: float, kind: str) -> str:
    """A run that ended before it had a report (a usage error, a bug, Ctrl-C): its exit code and time, so an
    alert on gpu_doctor_exit_code fires instead of the last good run's file standing in the collector."""
    stamp = Family(*STAMP)
    stamp.add(when)
    code = Family(*EXIT_CODE)
    code.add(exit_code)
    failed = Family(*RUN_FAILED)
    failed.add(1, reason=kind)
    return "".join(render_family(f) for f in (stamp, code, failed))


def families(report: Report) -> list[Family]:
    facts = report.facts
    summary = report.summary()
    info = Family("info", "gpu-doctor's own version.")
    info.add(1, version=report.tool_version)
    stamp = Family(*STAMP)
    stamp.add(datetime.fromisoformat(report.generated_at.replace("Z", "+00:00")).timestamp())
    duration = Family("run_duration_seconds", "How long the diagnosis took.")
    duration.add(report.duration_ms / 1000)
    exit_code = Family(*EXIT_CODE)
    exit_code.add(summary.exit_code)
    failed = Family(*RUN_FAILED)
    failed.add(0, reason="")
    status = Family(
        "check_status", "One-hot: 1 for the status each check ended with (pass warn fail skip unknown crash)."
    )
    for finding in report.findings:
        for s in Status:
            status.add(1 if finding.status is s else 0, check=finding.check_id, status=s.value)
    counts = Family("checks", "How many checks ended at each status.")
    for s in Status:
        counts.add(sum(1 for f in report.findings if f.status is s), status=s.value)
    result = [info, stamp, duration, exit_code, failed, status, counts, *_gpu_families(report)]
    driver = Family("driver_info", "The NVIDIA driver: version, the CUDA version it supports, module flavor.")
    d = facts.driver
    if not isinstance(d, Unavailable) and isinstance(d.version, str):
        driver.add(
            1,
            version=d.version,
            cuda_version=d.cuda_version if isinstance(d.cuda_version, str) else "",
            flavor=d.kernel_module_flavor if isinstance(d.kernel_module_flavor, str) else "",
        )
    torch = Family("torch_info", "The torch the diagnosed Python imports: version and CUDA build.")
    packages = facts.torch_packages
    if not isinstance(packages, Unavailable) and packages.version is not None:
        torch.add(1, version=packages.version, cuda=packages.cuda or "")
    return [*result, driver, torch]


def _gpu_families(report: Report) -> list[Family]:
    facts = report.facts
    gpus = Family("gpus", "NVIDIA GPUs found, on the PCI bus or through NVML.")
    gpus.add(len(facts.nvidia_gpus))
    nvml = Family("nvml_gpus", "NVIDIA GPUs the driver answers for (NVML device count).")
    if not isinstance(facts.nvml, Unavailable) and isinstance(facts.nvml.device_count, int):
        nvml.add(facts.nvml.device_count)
    info = Family("gpu_info", "Each NVIDIA GPU by bus address, with its name.")
    for g in facts.nvidia_gpus:
        if isinstance(g.bdf, str):
            info.add(1, gpu=g.bdf, name=g.name if isinstance(g.name, str) else "")
    width = Family("pcie_link_width", "Lanes each GPU's own PCIe link runs at now.")
    max_width = Family("pcie_link_max_width", "The most lanes the GPU supports.")
    gen = Family(
        "pcie_link_generation", "The PCIe generation each GPU's link runs at now (Gen1 at idle is normal)."
    )
    max_gen = Family("pcie_link_max_generation", "The fastest generation the link can train to (both ends).")
    links = gpu_links(facts)
    for link in links if not isinstance(links, str) else ():
        for family, value in (
            (width, link.width),
            (max_width, link.max_width),
            (gen, link.current_generation),
            (max_gen, link.generation),
        ):
            if value is not None:
                family.add(value, gpu=link.bdf)
    return [gpus, nvml, info, width, max_width, gen, max_gen]


def render_prometheus(report: Report) -> str:
    return "".join(render_family(f) for f in families(report) if f.samples)
