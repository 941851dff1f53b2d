"""Built-in checks: pure functions from Facts to Findings (`@check` in torch_gpu_doctor.registry).

A check's file is named after its id's prefix and topic (driver.nvml is in driver_nvml.py); what several
checks share lives in checks/support/. BUILTIN_CHECK_MODULES is the list of modules whose checks run, in
this order (reports, the TUI list and --list-checks keep it); docs/contributing.md says how to add one.
"""

BUILTIN_CHECK_MODULES = (
    "torch_gpu_doctor.checks.gpu_present",
    "torch_gpu_doctor.checks.gpu_precision",
    "torch_gpu_doctor.checks.gpu_topology",
    "torch_gpu_doctor.checks.driver_installed",
    "torch_gpu_doctor.checks.driver_nvml",
    "torch_gpu_doctor.checks.driver_nouveau",
    "torch_gpu_doctor.checks.torch_build",
    "torch_gpu_doctor.checks.torch_stack",
    "torch_gpu_doctor.checks.env",
    "torch_gpu_doctor.checks.python_env",
    "torch_gpu_doctor.checks.compat_data",
    "torch_gpu_doctor.checks.torch_out_of_memory",
    "torch_gpu_doctor.checks.nccl_communication",
    "torch_gpu_doctor.checks.pcie_link",
    "torch_gpu_doctor.checks.egpu",
    "torch_gpu_doctor.checks.memory",
    "torch_gpu_doctor.checks.storage",
    "torch_gpu_doctor.checks.platform_container",
    "torch_gpu_doctor.checks.platform_wsl",
    "torch_gpu_doctor.checks.platform_iommu",
    "torch_gpu_doctor.checks.platform_vm",
    "torch_gpu_doctor.checks.platform_jetson",
    "torch_gpu_doctor.checks.pcie_link_under_load",
    # after the checks above: the smoke test's results, when it ran
    "torch_gpu_doctor.checks.smoke_run",
    "torch_gpu_doctor.checks.smoke_gpu",
    "torch_gpu_doctor.checks.smoke_training",
    "torch_gpu_doctor.checks.smoke_multi_gpu",
    "torch_gpu_doctor.checks.amd",
    "torch_gpu_doctor.checks.driver_secure_boot",
    "torch_gpu_doctor.checks.driver_module_build",
    "torch_gpu_doctor.checks.driver_reboot_pending",
    "torch_gpu_doctor.checks.driver_xid_errors",
    "torch_gpu_doctor.checks.gpu_persistence",
    "torch_gpu_doctor.checks.gpu_throttle",
    "torch_gpu_doctor.checks.gpu_memory_errors",
)
