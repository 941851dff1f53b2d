"""Write the torch-probe recordings of three fixture hosts, in the exact output format of the probe scripts.

The values come from the compat data (arch lists, cuDNN, companions) and from PyTorch's own error text
(compat.md §6). Re-run after changing a probe's output format: `python tools/fixture_torch_probes.py`.
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
    data = json.loads(path.read_text())
    data.update(entries)
    path.write_text(json.dumps(data, indent=1) + "\n")


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
