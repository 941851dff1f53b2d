"""Write the six python-side fixture hosts of fixtures18 into tests/fixtures/hosts/.

    python -m tools.fixture_hosts_python_envs

Each is a copy of a healthy NVIDIA machine (rtx4090-workstation-healthy, or h100-sxm-x8-server for Ubuntu
24.04) with one thing changed. Only the probe recordings, host.json env and a few root files differ; the probe
output is written with the helpers of tools/fixture_torch_probes.py (the probes' exact output format).
expected.json is NOT written here (pinned by hand from the doctor's output).
Sources of every value: tests/fixtures/hosts/README.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tools.fixture_host_parts import ARCH_CU12X, gpu_device, libcuda  # noqa: E402
from tools.fixture_host_tree import HOSTS, STD_PATH, HostTree, python_probe  # noqa: E402
from tools.fixture_torch_probes import cuda_runtime, dist, ok, runtime  # noqa: E402

HEALTHY = HOSTS / "rtx4090-workstation-healthy"
H100 = HOSTS / "h100-sxm-x8-server"
NO_DEVICE_STAGES = ("import", "arch_list", "cuda_init", "cudnn", "nccl", "libraries")
RTX4090 = [gpu_device(i, "NVIDIA GeForce RTX 4090", "8.9", 25386352640) for i in range(8)]
CUDNN_8_9_2 = 'nvidia-cudnn-cu12==8.9.2.26; platform_system == "Linux" and platform_machine == "x86_64"'


def base(name: str, description: str, source: Path = HEALTHY, python: str = "/usr/bin/python3") -> HostTree:
    """A copy of a healthy capture: its root/, nvml.json and probes (replaced below where the story differs)."""
    host = HostTree(name, description, python=python)
    host.copy_tree(source)
    host.nvml = json.loads((source / "nvml.json").read_text())
    host.probes = json.loads((source / "probes.json").read_text())
    host.commands = json.loads((source / "commands.json").read_text())
    return host


def companions_none() -> dict[str, Any]:
    return {"torchvision": {"paths": [], "version_py": None}, "torchaudio": {"paths": [], "version_py": None}}


def version_py(version: str, cuda: str | None) -> dict[str, Any]:
    return {"__version__": version, "cuda": cuda, "hip": None, "debug": False, "git_version": "0" * 40}


def torch_packages(
    sys_path: list[str],
    torch_paths: list[str],
    vpy: dict[str, Any] | None,
    dists: list[dict[str, Any]],
    user_site: str | None,
    user_site_enabled: bool,
    managed: bool = False,
) -> dict[str, Any]:
    """The torch_packages probe's JSON (doctor/probes/torch_packages.py), key for key."""
    return ok(
        json.dumps(
            {
                "sys_path": sys_path,
                "user_site": user_site,
                "user_site_enabled": user_site_enabled,
                "torch_paths": torch_paths,
                "torch_version_py": vpy,
                "companions": companions_none(),
                "distributions": dists,
                "externally_managed": managed,
            }
        )
    )


UBUNTU_2204_SYS_PATH = [
    "",
    "/usr/lib/python310.zip",
    "/usr/lib/python3.10",
    "/usr/lib/python3.10/lib-dynload",
]
DIST_310 = "/usr/local/lib/python3.10/dist-packages"
HOME_SITE_310 = "/home/user/.local/lib/python3.10/site-packages"


# --- 1. torch-import-segfault ---------------------------------------------------------------------------------


def import_segfault() -> HostTree:
    host = base(
        "torch-import-segfault",
        "rtx4090-workstation-healthy (8x RTX 4090, Ubuntu 22.04, driver 550.127.05, torch 2.5.1+cu124 in the system "
        "Python) where `import torch` dies of SIGSEGV: the runtime probe exits by signal 11 after its 'import' stage "
        "line (pytorch/pytorch#107371, #70245 for the symptom); see tests/fixtures/hosts/README.md",
    )
    # subprocess gives returncode -11 for a child killed by SIGSEGV; Python prints nothing itself without
    # -X faulthandler ("Segmentation fault (core dumped)" is the user's shell's line, not the child's stderr)
    host.probes["torch_runtime"] = {
        "status": "nonzero",
        "returncode": -11,
        "stdout": json.dumps({"stage": "import"}) + "\n",
        "stderr": "",
    }
    return host


# --- 2. cuda-visible-devices-empty ------------------------------------------------------------------------------


def visible_devices_empty() -> HostTree:
    host = base(
        "cuda-visible-devices-empty",
        "rtx4090-workstation-healthy with CUDA_VISIBLE_DEVICES='' in the environment: torch 2.5.1+cu124 sees no GPU "
        "(is_available() False, torch.cuda.init(): 'No CUDA GPUs are available'; pytorch/pytorch#40618, "
        "jiaw-z/CoR-GS#23); see tests/fixtures/hosts/README.md",
    )
    host.env = {"CUDA_VISIBLE_DEVICES": "", "PATH": STD_PATH}
    lib = f"{DIST_310}/nvidia"
    host.probes["torch_runtime"] = ok(
        runtime(
            cuda_runtime(
                DIST_310,
                "2.5.1+cu124",
                "12.4",
                ARCH_CU12X,
                cuda_available=False,
                cuda_warnings=[],  # cudaErrorNoDevice counts as 0 devices in c10's device_count: no warning
                cuda_init_error="RuntimeError: No CUDA GPUs are available",
                cudnn_version=90100,
                mapped_libraries=[
                    libcuda("550.127.05"),
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
            ),
            NO_DEVICE_STAGES,
        )
    )
    return host


# --- 3. pep668-system-python-no-torch ---------------------------------------------------------------------------

# Debian/Ubuntu's marker as pip prints its Error= text on Ubuntu 24.04 (python3.12); INI layout as PEP 668's
# example (continuation lines indented one space)
# Debian's file: a blank line inside the Error value is a single space (an INI continuation line)
EXTERNALLY_MANAGED_312 = (
    "\n".join(
        [
            "[externally-managed]",
            "Error=To install Python packages system-wide, try apt install",
            " python3-xyz, where xyz is the package you are trying to",
            " install.",
            " ",
            " If you wish to install a non-Debian-packaged Python package,",
            " create a virtual environment using python3 -m venv path/to/venv.",
            " Then use path/to/venv/bin/python and path/to/venv/bin/pip. Make",
            " sure you have python3-full installed.",
            " ",
            " If you wish to install a non-Debian packaged Python application,",
            " it may be easiest to use pipx install xyz, which will manage a",
            " virtual environment for you. Make sure you have pipx installed.",
            " ",
            " See /usr/share/doc/python3.12/README.venv for more information.",
        ]
    )
    + "\n"
)


def pep668_no_torch() -> HostTree:
    host = base(
        "pep668-system-python-no-torch",
        "h100-sxm-x8-server (8x H100 SXM, Ubuntu 24.04, open module 565.57.01) diagnosing /usr/bin/python3 3.12.3, "
        "externally managed (EXTERNALLY-MANAGED in /usr/lib/python3.12, PEP 668), with no torch installed; see "
        "tests/fixtures/hosts/README.md",
        source=H100,
    )
    host.text("/usr/lib/python3.12/EXTERNALLY-MANAGED", EXTERNALLY_MANAGED_312)
    host.probes = {
        "python_env": python_probe("/usr/bin/python3", "3.12.3", "/usr", "/usr"),
        "torch_packages": torch_packages(
            [
                "",
                "/usr/lib/python312.zip",
                "/usr/lib/python3.12",
                "/usr/lib/python3.12/lib-dynload",
                "/usr/local/lib/python3.12/dist-packages",
                "/usr/lib/python3/dist-packages",
            ],
            [],
            None,
            [],
            "/home/user/.local/lib/python3.12/site-packages",
            True,
            managed=True,
        ),
    }
    return host


# --- 4. ld-library-path-override --------------------------------------------------------------------------------

CUDA118_LIB = "/usr/local/cuda-11.8/targets/x86_64-linux/lib"
CUDNN_MISMATCH = (
    "cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime version (8, 7, 0). "
    "PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure PyTorch can find "
    "the bundled cuDNN. Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. Please either "
    "remove it from the path or install cudnn (8, 9, 2)"
)


def ld_library_path_override() -> HostTree:
    host = base(
        "ld-library-path-override",
        "rtx4090-workstation-healthy with LD_LIBRARY_PATH=/usr/local/cuda-11.8/lib64 (a CUDA 11.8 toolkit with "
        "cuDNN 8.7.0 copied in) and torch 2.1.2+cu121 from PyPI in the system Python: torch maps that folder's "
        "libcudnn.so.8 instead of its nvidia-cudnn-cu12 8.9.2.26 wheel, and torch.backends.cudnn.version() raises "
        "PyTorch's 'cuDNN version incompatibility' error; see tests/fixtures/hosts/README.md",
    )
    host.env = {"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64", "PATH": STD_PATH}
    # the toolkit's layout: lib64 -> targets/x86_64-linux/lib, cuDNN copied in with `cp -P` (links kept)
    host.link("/usr/local/cuda-11.8/lib64", "targets/x86_64-linux/lib")
    host.marker(f"{CUDA118_LIB}/libcudnn.so.8.7.0", f"{CUDA118_LIB}/libcublas.so.11.11.3.6")
    host.link(f"{CUDA118_LIB}/libcudnn.so.8", "libcudnn.so.8.7.0")
    host.link(f"{CUDA118_LIB}/libcublas.so.11", "libcublas.so.11.11.3.6")
    lib = f"{DIST_310}/nvidia"
    host.probes["torch_packages"] = torch_packages(
        [*UBUNTU_2204_SYS_PATH, DIST_310, "/usr/lib/python3/dist-packages"],
        [f"{DIST_310}/torch"],
        version_py("2.1.2+cu121", "12.1"),
        [
            dist("nvidia-cudnn-cu12", "8.9.2.26", DIST_310),
            dist("torch", "2.1.2", DIST_310, [CUDNN_8_9_2]),
        ],
        HOME_SITE_310,
        True,
    )
    result = cuda_runtime(
        DIST_310,
        "2.1.2+cu121",
        "12.1",
        ARCH_CU12X,
        device_count=8,
        devices=RTX4090,
        cudnn_available=False,
        cudnn_version=None,
        nccl_version="2.18.1",
        mapped_libraries=[
            libcuda("550.127.05"),
            # /proc/self/maps names the file itself: the folder behind the lib64 link, the versioned name
            {
                "name": "libcudnn",
                "path": f"{CUDA118_LIB}/libcudnn.so.8.7.0",
                "realpath": f"{CUDA118_LIB}/libcudnn.so.8.7.0",
            },
            {
                "name": "libcublas",
                "path": f"{lib}/cublas/lib/libcublas.so.12",
                "realpath": f"{lib}/cublas/lib/libcublas.so.12",
            },
        ],
    )
    result["cudnn_error"] = "RuntimeError: " + CUDNN_MISMATCH  # the probe's key when cudnn.version() raises
    host.probes["torch_runtime"] = ok(runtime(result))
    return host


# --- 5. shadowing-torch-copy ------------------------------------------------------------------------------------

VENV = "/home/user/venv"
VENV_SITE = f"{VENV}/lib/python3.10/site-packages"
SHARED_SITE = "/opt/tools/lib/python3.10/site-packages"


def shadowing_copy() -> HostTree:
    host = base(
        "shadowing-torch-copy",
        "rtx4090-workstation-healthy diagnosing a venv (/home/user/venv, Python 3.10.12) with torch 2.6.0+cu124, "
        "shadowed by torch 2.1.0+cpu in a PYTHONPATH folder (/opt/tools/lib/python3.10/site-packages, a "
        "`pip install --target` folder) that comes first on sys.path; see tests/fixtures/hosts/README.md",
        python=f"{VENV}/bin/python",
    )
    host.env = {
        "PATH": f"{VENV}/bin:{STD_PATH}",
        "PYTHONPATH": SHARED_SITE,
        "VIRTUAL_ENV": VENV,
    }
    host.probes = {
        "python_env": python_probe(f"{VENV}/bin/python", "3.10.12", VENV, "/usr"),
        # PYTHONPATH entries come right after the script folder (''), before the standard library and site
        "torch_packages": torch_packages(
            ["", SHARED_SITE, *UBUNTU_2204_SYS_PATH[1:], VENV_SITE],
            [f"{SHARED_SITE}/torch", f"{VENV_SITE}/torch"],
            version_py("2.1.0+cpu", None),
            [
                dist("nvidia-cudnn-cu12", "9.1.0.70", VENV_SITE),
                # importlib.metadata walks sys.path in order: the PYTHONPATH copy's metadata is found first
                dist("torch", "2.1.0+cpu", SHARED_SITE),
            ],
            HOME_SITE_310,
            False,
        ),
        # no torch_runtime: the first copy's version.py says CPU build, so the doctor does not import torch
    }
    return host


# --- 6. conda-env-cpu-torch -------------------------------------------------------------------------------------

CONDA = "/home/user/miniconda3/envs/ml"
CONDA_SITE = f"{CONDA}/lib/python3.11/site-packages"
# conda's own history format (conda-meta/history); the command is the CPU line of pytorch.org's
# "previous versions" page for 2.5.1 without torchvision/torchaudio (chosen)
CONDA_HISTORY = """==> 2024-11-20 10:12:33 <==
# cmd: /home/user/miniconda3/bin/conda install pytorch==2.5.1 cpuonly -c pytorch
# conda version: 24.9.2
+pytorch::cpuonly-2.0-0
+pytorch::pytorch-2.5.1-py3.11_cpu_0
+pytorch::pytorch-mutex-1.0-cpu
# update specs: ['pytorch==2.5.1', 'cpuonly']
"""


def conda_cpu() -> HostTree:
    host = base(
        "conda-env-cpu-torch",
        "rtx4090-workstation-healthy diagnosing a conda env (/home/user/miniconda3/envs/ml, Python 3.11.10, "
        "CONDA_PREFIX set, conda-meta/ present) holding pytorch 2.5.1 py3.11_cpu_0 from the pytorch channel (a CPU "
        "build: torch.version.cuda None) on a working driver; see tests/fixtures/hosts/README.md",
        python=f"{CONDA}/bin/python",
    )
    host.env = {
        "CONDA_DEFAULT_ENV": "ml",
        "CONDA_PREFIX": CONDA,
        "PATH": f"{CONDA}/bin:/home/user/miniconda3/condabin:{STD_PATH}",
    }
    host.text(f"{CONDA}/conda-meta/history", CONDA_HISTORY)
    host.probes = {
        "python_env": python_probe(f"{CONDA}/bin/python", "3.11.10", CONDA, CONDA, conda=CONDA),
        "torch_packages": torch_packages(
            [
                "",
                f"{CONDA}/lib/python311.zip",
                f"{CONDA}/lib/python3.11",
                f"{CONDA}/lib/python3.11/lib-dynload",
                CONDA_SITE,
            ],
            [f"{CONDA_SITE}/torch"],
            version_py("2.5.1", None),  # the pytorch channel's builds carry no +cpu/+cu local tag
            [dist("torch", "2.5.1", CONDA_SITE)],  # its requirements name no nvidia-*/triton package
            "/home/user/.local/lib/python3.11/site-packages",
            True,
        ),
    }
    return host


BUILDERS = {
    "torch-import-segfault": import_segfault,
    "cuda-visible-devices-empty": visible_devices_empty,
    "pep668-system-python-no-torch": pep668_no_torch,
    "ld-library-path-override": ld_library_path_override,
    "shadowing-torch-copy": shadowing_copy,
    "conda-env-cpu-torch": conda_cpu,
}


def main(names: list[str]) -> int:
    for name in names or list(BUILDERS):
        print(BUILDERS[name]().write())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
