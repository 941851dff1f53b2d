"""Write the torch-probe recordings of the fixture hosts, in the exact output format of the probe scripts.

The values come from the compat data (arch lists, cuDNN, companions), from PyTorch's own error text (compat.md
§6) and from the public reports cited beside each one; ci-no-gpu-cuda-toolkit's recording is a real run of the
probe on the CI machine. Re-run after changing a probe's output format: `python tools/fixture_torch_probes.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HOSTS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hosts"
TOO_OLD = (
    "The NVIDIA driver on your system is too old (found version 12070). Please update your GPU driver by "
    "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
    "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
    "version of the CUDA driver."
)
STAGES = ("import", "arch_list", "cuda_init", "devices", "cudnn", "nccl", "libraries")


def packages(
    site: str, version: str, cuda: str | None, dists: list[dict[str, Any]], managed: bool = False
) -> dict[str, Any]:
    return {
        "sys_path": ["", "/usr/lib/python3.x", site],
        "user_site": None,
        "user_site_enabled": True,
        "torch_paths": [f"{site}/torch"],
        "torch_version_py": {
            "__version__": version,
            "cuda": cuda,
            "hip": None,
            "debug": False,
            "git_version": "0" * 40,
        },
        "companions": {
            "torchvision": {"paths": [], "version_py": None},
            "torchaudio": {"paths": [], "version_py": None},
        },
        "distributions": dists,
        "externally_managed": managed,
    }


def runtime(result: dict[str, Any], stages: tuple[str, ...] = STAGES) -> str:
    lines = [json.dumps({"stage": s}) for s in stages]
    return "\n".join([*lines, json.dumps({"result": result})]) + "\n"


def ok(stdout: str) -> dict[str, Any]:
    return {"status": "ok", "returncode": 0, "stdout": stdout, "stderr": ""}


def write(host: str, entries: dict[str, dict[str, Any]]) -> None:
    path = HOSTS / host / "probes.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update(entries)
    path.write_text(json.dumps(data, indent=1) + "\n")


NO_DRIVER = (
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
    "http://www.nvidia.com/Download/index.aspx"
)
# as torch prints it (CompVis/stable-diffusion#439, easydiffusion#379, atorch#2)
ERROR_803 = (
    "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
    "that might have already set an error? Error 803: system has unsupported display driver / cuda driver "
    "combination"
)


def python_env(executable: str, version: str, prefix: str, base: str) -> dict[str, Any]:
    out = {
        "executable": executable,
        "version": version,
        "implementation": "CPython",
        "machine": "x86_64",
        "system": "Linux",
        "prefix": prefix,
        "base_prefix": base,
        "in_virtualenv": prefix != base,
        "conda_prefix": None,
        "user_site_enabled": prefix == base,
    }
    return {**ok(json.dumps(out)), "argv": [executable, "-c", "<probe:python_env>"]}


def dist(name: str, version: str, site: str, requires: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "version": version, "location": site, "requires": requires or []}


def cuda_runtime(site: str, version: str, cuda: str, arch: list[str], **fields: Any) -> dict[str, Any]:
    """A torch_runtime result with the probe's keys; `fields` override the healthy defaults."""
    base: dict[str, Any] = {
        "python": "/usr/bin/python3",
        "version": version,
        "file": f"{site}/torch/__init__.py",
        "cuda": cuda,
        "hip": None,
        "debug": False,
        "git_version": "0" * 40,
        "arch_list": arch,
        "cuda_available": True,
        "cuda_warnings": [],
        "cuda_init_error": None,
        "device_count": 0,
        "devices": [],
        "cudnn_available": True,
        "cudnn_version": None,
        "nccl_version": None,
        "mapped_libraries": [],
    }
    return {**base, **fields}


def more_hosts() -> None:
    """The six fixtures of issue 1/6 that had no torch recordings yet."""
    ci_site = "/work/main/.venv/lib/python3.11/site-packages"
    # a real run of the torch_packages probe for this CI machine's /work/main/.venv/bin/python3 (no torch)
    ci = {
        "sys_path": [
            "",
            "/root/.pyenv/versions/3.11.7/lib/python311.zip",
            "/root/.pyenv/versions/3.11.7/lib/python3.11",
            "/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload",
            ci_site,
            "/work/main/build/__editable__.torch_gpu_doctor-0.1.0-py3-none-any",
        ],
        "user_site": "/root/.local/lib/python3.11/site-packages",
        "user_site_enabled": False,
        "torch_paths": [],
        "torch_version_py": None,
        "companions": {
            "torchvision": {"paths": [], "version_py": None},
            "torchaudio": {"paths": [], "version_py": None},
        },
        "distributions": [dist("nvidia-ml-py", "13.615.71", ci_site)],
        "externally_managed": False,
    }
    write("ci-no-gpu-cuda-toolkit", {"torch_packages": ok(json.dumps(ci))})

    # Debian 11 L4 box: `pip install --user torch==2.8.0` (the PyPI default, CUDA 12.8) on driver 550 (CUDA 12.4)
    site = "/home/user/.local/lib/python3.9/site-packages"
    lib = f"{site}/nvidia"
    cudnn = 'nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"'
    l4 = packages(
        site,
        "2.8.0",
        "12.8",
        [dist("nvidia-cudnn-cu12", "9.10.2.21", site), dist("torch", "2.8.0", site, [cudnn])],
    )
    write(
        "l4-notsupported-fields",
        {
            "torch_packages": ok(json.dumps(l4)),
            "torch_runtime": ok(
                runtime(
                    cuda_runtime(
                        site,
                        "2.8.0",
                        "12.8",
                        ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
                        device_count=1,
                        devices=[
                            {
                                "index": 0,
                                "name": "NVIDIA L4",
                                "capability": "8.9",
                                "total_memory_bytes": 23580639232,
                                "uuid": None,
                                "pci_bus_id": None,
                            }
                        ],
                        cudnn_version=91002,
                        nccl_version="2.27.3",
                        mapped_libraries=[
                            {
                                "name": "libcuda",
                                "path": "/lib/x86_64-linux-gnu/libcuda.so.1",
                                "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07",
                            },
                            {
                                "name": "libcudnn",
                                "path": f"{lib}/cudnn/lib/libcudnn.so.9",
                                "realpath": f"{lib}/cudnn/lib/libcudnn.so.9",
                            },
                        ],
                    )
                )
            ),
        },
    )

    # 4x Tesla P40 held by nouveau: torch 2.5.1+cu124 imports, but libcuda is not there
    site = "/usr/local/lib/python3.10/dist-packages"
    p40 = packages(site, "2.5.1+cu124", "12.4", [dist("torch", "2.5.1+cu124", site)])
    write(
        "nouveau-bound-nvidia-gpu",
        {
            "torch_packages": ok(json.dumps(p40)),
            "torch_runtime": ok(
                runtime(
                    cuda_runtime(
                        site,
                        "2.5.1+cu124",
                        "12.4",
                        ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
                        cuda_available=False,
                        cuda_warnings=["CUDA initialization: " + NO_DRIVER],
                        cuda_init_error="RuntimeError: " + NO_DRIVER,
                        cudnn_version=90100,
                    ),
                    ("import", "arch_list", "cuda_init", "cudnn", "nccl", "libraries"),
                )
            ),
        },
    )

    # Tesla T4 VM with no driver, and no torch yet: a fresh machine being provisioned
    site = "/usr/local/lib/python3.10/dist-packages"
    fresh = {**packages(site, "", None, []), "torch_paths": [], "torch_version_py": None}
    write("nvidia-gpu-no-driver", {"torch_packages": ok(json.dumps(fresh))})

    # TrueNAS after a driver update without reboot: torch 2.9.1+cu126 in a venv; libcuda is the new 580.178.04
    venv = "/mnt/tank/venvs/ml"
    site = f"{venv}/lib/python3.11/site-packages"
    p4 = {
        **packages(site, "2.9.1+cu126", "12.6", [dist("torch", "2.9.1+cu126", site)]),
        "user_site_enabled": False,
    }
    write(
        "driver-library-mismatch",
        {
            "python_env": python_env(f"{venv}/bin/python", "3.11.2", venv, "/usr"),
            "torch_packages": ok(json.dumps(p4)),
            "torch_runtime": ok(
                runtime(
                    cuda_runtime(
                        site,
                        "2.9.1+cu126",
                        "12.6",
                        ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
                        python=f"{venv}/bin/python",
                        cuda_available=False,
                        cuda_warnings=["CUDA initialization: " + ERROR_803],
                        cuda_init_error="RuntimeError: " + ERROR_803,
                        cudnn_version=91002,
                        mapped_libraries=[
                            {
                                "name": "libcuda",
                                "path": "/lib/x86_64-linux-gnu/libcuda.so.1",
                                "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.580.178.04",
                            }
                        ],
                    ),
                    ("import", "arch_list", "cuda_init", "cudnn", "nccl", "libraries"),
                )
            ),
        },
    )

    # the confined process of permission-denied: its Python has torch 2.6.0+cu124 on its path; the capture was
    # taken without importing torch (the runtime probe is absent: torch.cuda_init cannot say)
    site = "/usr/local/lib/python3.12/dist-packages"
    confined = packages(site, "2.6.0+cu124", "12.4", [dist("torch", "2.6.0+cu124", site)])
    write(
        "permission-denied",
        {
            "python_env": python_env("/usr/bin/python3", "3.12.3", "/usr", "/usr"),
            "torch_packages": ok(json.dumps(confined)),
        },
    )


def main() -> int:
    site = "/usr/local/lib/python3.10/dist-packages"
    lib = f"{site}/nvidia"
    write(
        "rtx4090-workstation-healthy",
        {
            "torch_packages": ok(
                json.dumps(
                    packages(
                        site,
                        "2.5.1+cu124",
                        "12.4",
                        [
                            {
                                "name": "nvidia-cudnn-cu12",
                                "version": "9.1.0.70",
                                "location": site,
                                "requires": [],
                            },
                            {
                                "name": "torch",
                                "version": "2.5.1",
                                "location": site,
                                "requires": [
                                    'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"'
                                ],
                            },
                        ],
                    )
                )
            ),
            "torch_runtime": ok(
                runtime(
                    {
                        "python": "/usr/bin/python3",
                        "version": "2.5.1+cu124",
                        "file": f"{site}/torch/__init__.py",
                        "cuda": "12.4",
                        "hip": None,
                        "debug": False,
                        "git_version": "0" * 40,
                        "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
                        "cuda_available": True,
                        "cuda_warnings": [],
                        "cuda_init_error": None,
                        "device_count": 8,
                        "devices": [
                            {
                                "index": i,
                                "name": "NVIDIA GeForce RTX 4090",
                                "capability": "8.9",
                                "total_memory_bytes": 25386352640,
                                "uuid": None,
                                "pci_bus_id": None,
                            }
                            for i in range(8)
                        ],
                        "cudnn_available": True,
                        "cudnn_version": 90100,
                        "nccl_version": "2.21.5",
                        "mapped_libraries": [
                            {
                                "name": "libcuda",
                                "path": "/lib/x86_64-linux-gnu/libcuda.so.1",
                                "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05",
                            },
                            {
                                "name": "libcudnn",
                                "path": f"{lib}/cudnn/lib/libcudnn.so.9",
                                "realpath": f"{lib}/cudnn/lib/libcudnn.so.9",
                            },
                            {
                                "name": "libcublas",
                                "path": f"{lib}/cublas/lib/libcublas.so.12",
                                "realpath": f"{lib}/cublas/lib/libcublas.so.12",
                            },
                        ],
                    }
                )
            ),
        },
    )
    site = "/usr/local/lib/python3.12/dist-packages"
    write(
        "h100-sxm-x8-server",
        {
            # Ubuntu 24.04's Python is externally managed: torch went in with --break-system-packages
            "torch_packages": ok(
                json.dumps(
                    packages(
                        site,
                        "2.13.0+cu130",
                        "13.0",
                        [
                            {"name": "torch", "version": "2.13.0", "location": site, "requires": []},
                        ],
                        managed=True,
                    )
                )
            ),
            "torch_runtime": ok(
                runtime(
                    {
                        "python": "/usr/bin/python3",
                        "version": "2.13.0+cu130",
                        "file": f"{site}/torch/__init__.py",
                        "cuda": "13.0",
                        "hip": None,
                        "debug": False,
                        "git_version": "0" * 40,
                        "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
                        "cuda_available": False,
                        "cuda_warnings": ["CUDA initialization: " + TOO_OLD],
                        "cuda_init_error": "RuntimeError: " + TOO_OLD,
                        "device_count": 0,
                        "devices": [],
                        "cudnn_available": True,
                        "cudnn_version": 92000,
                        "nccl_version": None,
                        "mapped_libraries": [
                            {
                                "name": "libcuda",
                                "path": "/lib/x86_64-linux-gnu/libcuda.so.1",
                                "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.565.57.01",
                            }
                        ],
                    },
                    ("import", "arch_list", "cuda_init", "cudnn", "nccl", "libraries"),
                )
            ),
        },
    )
    site = "/home/user/.local/lib/python3.10/site-packages"
    write(
        "wsl2",
        {
            # `pip install --user torch` on Linux gives the PyPI default; this user took the /whl/cpu index
            "torch_packages": ok(
                json.dumps(
                    packages(
                        site,
                        "2.13.0+cpu",
                        None,
                        [
                            {"name": "torch", "version": "2.13.0+cpu", "location": site, "requires": []},
                        ],
                    )
                )
            ),
        },
    )
    more_hosts()
    return 0


if __name__ == "__main__":
    sys.exit(main())
