from __future__ import annotations

import json
import subprocess
import sys

import pytest

from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding
from torch_gpu_doctor.registry import RegistryError, check, parse_explanation

# Check ids are a public contract (scripts use --check/--skip and JSON consumers key on them): never rename.
STABLE_IDS = {
    "gpu.present",
    "driver.installed",
    "driver.nvml",
    "driver.nouveau",
    "torch.installed",
    "torch.cpu_build",
    "torch.driver_compat",
    "torch.arch_compat",
    "torch.cuda_init",
    "env.cuda_visible_devices",
    "python.env_kind",
    "compat.data_age",
    "torch.companions",
    "torch.cudnn",
    "torch.nvidia_wheels",
    "env.library_path",
    "pcie.link",
    "egpu.authorized",
    "egpu.tunnel",
    "memory.ram",
    "memory.shm",
    "memory.locked_limit",
    "memory.bandwidth",
    "storage.data_dir",
    "storage.nvme_link",
    "storage.read_speed",
    "platform.container_gpus",
    "platform.wsl_gpu",
    "platform.wsl_linux_driver",
    "platform.iommu_p2p",
    "platform.virtual_machine",
    "amd.rocm_stack",
    "amd.torch_rocm",
    "amd.gfx_target",
    "driver.secure_boot",
    "driver.kernel_module_build",
    "driver.reboot_pending",
    "driver.xid_errors",
    "gpu.persistence_mode",
    "gpu.throttle",
    "gpu.memory_errors",
    "pcie.link_under_load",
    "smoke.run",
    "smoke.previous_run",
    "smoke.gpu_memory",
    "smoke.transfer",
    "smoke.memory_bandwidth",
    "smoke.matmul",
    "smoke.cudnn",
    "smoke.training",
    "smoke.multi_gpu",
}


def test_builtin_ids_are_stable() -> None:
    ids = {c.spec.id for c in load_checks(plugins=False).checks}
    assert ids >= STABLE_IDS


def test_every_check_explains_what_why_and_how() -> None:
    for c in load_checks(plugins=False).checks:
        text = c.spec.explanation
        for section in (text.what, text.why, text.fix):
            assert len(section) > 40, c.spec.id
        assert c.spec.area == c.spec.id.split(".")[0]


def test_explanation_needs_all_three_sections() -> None:
    with pytest.raises(RegistryError, match="lacks how to fix"):
        parse_explanation("## What it checks\nx\n## Why it matters\ny\n", "a.b")
    with pytest.raises(RegistryError, match="unknown section"):
        parse_explanation("## Whatever\nx", "a.b")


def test_decorator_rejects_bad_ids() -> None:
    def fn(facts: Facts) -> Finding:
        raise NotImplementedError

    with pytest.raises(RegistryError, match="dotted lower case"):
        check("NoDots", "t", "a")(fn)


def test_the_order_of_checks_does_not_depend_on_which_module_was_imported_first() -> None:
    script = (
        "import importlib, sys, json\n"
        "for name in sys.argv[1:]: importlib.import_module(name)\n"
        "from torch_gpu_doctor.catalog import load_checks\n"
        "print(json.dumps([c.spec.id for c in load_checks(plugins=False).checks]))\n"
    )
    late_first = ["torch_gpu_doctor.checks.gpu_memory_errors", "torch_gpu_doctor.checks.env"]
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, *order], capture_output=True, text=True, check=True, timeout=120
        ).stdout
        for order in ([], late_first)
    ]
    assert runs[0] == runs[1]
    ids = json.loads(runs[0])
    # BUILTIN_CHECK_MODULES order: gpu_present, ..., env, ..., gpu_memory_errors last
    assert ids.index("gpu.present") < ids.index("env.library_path") < ids.index("gpu.memory_errors")
