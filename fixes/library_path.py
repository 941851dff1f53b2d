"""What to do when a program could not load a CUDA library, or loaded one of another version: one builder per
sub-cause that env.library_path tells apart (which program asked, on which platform, from where).

The same words ("cannot open shared object file", "undefined symbol") have different fixes: a program with its
own CUDA build needs that CUDA's libraries, not a torch reinstall; WSL keeps the driver's libcuda outside the
loader path; a venv split into lib and lib64 hides torch's nvidia-* wheels from its RPATH; Windows has no
LD_LIBRARY_PATH at all; an extension compiled for another torch needs that torch. The check picks the builder,
these say what to type.
"""

from __future__ import annotations

from pathlib import PureWindowsPath

from torch_gpu_doctor.compat.extensions import load_extensions
from torch_gpu_doctor.compat.torch_releases import INDEX_URL
from torch_gpu_doctor.facts.driver_libraries import WSL_LIB_DIR
from torch_gpu_doctor.fixes.recommendation import reinstall_argv
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.records import dataclass

VC_REDIST_URL = "https://aka.ms/vs/17/release/vc_redist.x64.exe"
VC_REDIST = Command(
    ("winget", "install", "Microsoft.VCRedist.2015+.x64"),
    note=f"the Visual C++ 2015-2022 runtime (x64), or download {VC_REDIST_URL}",
)
PIP_CHECK = Command(
    ("python", "-m", "pip", "check"), note="nvidia-* wheels that do not match what torch requires"
)
APT_CUDNN8 = Command(
    ("sudo", "apt", "install", "libcudnn8"), note="Debian/Ubuntu with NVIDIA's CUDA repository"
)


@dataclass(frozen=True)
class Wheel:
    """The pip wheel that brings a CUDA library, and its folder under site-packages/nvidia/."""

    name: str  # without the -cuXX suffix
    folder: str
    soversion_is_cuda: bool  # libcublas.so.12 is CUDA 12's; libcudnn.so.8 is cuDNN 8 (for any CUDA)


# library name up to ".so" -> its wheel (NVIDIA's packages on PyPI; the folders are those torch's RPATH lists)
WHEELS: dict[str, Wheel] = {
    "libcudnn": Wheel("nvidia-cudnn", "cudnn", soversion_is_cuda=False),
    "libcublas": Wheel("nvidia-cublas", "cublas", soversion_is_cuda=True),
    "libcublasLt": Wheel("nvidia-cublas", "cublas", soversion_is_cuda=True),
    "libcudart": Wheel("nvidia-cuda-runtime", "cuda_runtime", soversion_is_cuda=True),
    "libnvrtc": Wheel("nvidia-cuda-nvrtc", "cuda_nvrtc", soversion_is_cuda=True),
    "libnvJitLink": Wheel("nvidia-nvjitlink", "nvjitlink", soversion_is_cuda=True),
    "libcusparse": Wheel("nvidia-cusparse", "cusparse", soversion_is_cuda=True),
    "libcupti": Wheel("nvidia-cuda-cupti", "cuda_cupti", soversion_is_cuda=True),
    "libcufft": Wheel("nvidia-cufft", "cufft", soversion_is_cuda=False),
    "libcurand": Wheel("nvidia-curand", "curand", soversion_is_cuda=False),
    "libcusolver": Wheel("nvidia-cusolver", "cusolver", soversion_is_cuda=False),
    "libnccl": Wheel("nvidia-nccl", "nccl", soversion_is_cuda=False),
    "libnvToolsExt": Wheel("nvidia-nvtx", "nvtx", soversion_is_cuda=False),
}
PIP_CUDA_SUFFIXES = ("11", "12")  # the CUDA majors whose wheels carry a -cuXX suffix
_SONAME = lazy(r"^(?P<stem>lib\w+?)(?:_\w+)?\.so(?:\.(?P<major>\d+))?")


def wheel_of(library: str) -> Wheel | None:
    """The wheel family of a library file name (libcudnn_ops_infer.so.8 -> nvidia-cudnn), or None."""
    found = _SONAME.match(library)
    if found is None:
        return None
    return WHEELS.get(found["stem"])


def soversion_major(library: str) -> str | None:
    """The major version in a library's name (libcudnn_ops_infer.so.8 -> "8"), None when it has none."""
    found = _SONAME.match(library)
    return found["major"] if found is not None else None


def export_library_path(folder: str) -> Command:
    """Prepend a folder to LD_LIBRARY_PATH in the person's shell (a shell builtin: shown, never run here)."""
    return Command(
        ("export", f"LD_LIBRARY_PATH={folder}"),
        note="in the shell that starts the program (append :$LD_LIBRARY_PATH to keep what it held; "
        "add the line to ~/.bashrc to keep it)",
        runs_here=False,
    )


def foreign_version_fix(windows: bool, library: str = "") -> Remediation:
    """Another copy of a CUDA library comes first on the search path than the one torch was built with.
    `library`: the one the error names, where it names one (cuDNN and cuBLAS are tested by running them)."""
    if windows:
        return Remediation(
            text="An older or newer copy of the library is found first: a CUDA toolkit's bin folder on PATH, or "
            "another program's DLLs. Run the program from a terminal whose PATH has no CUDA toolkit folders; "
            "with pip's torch, the nvidia-* wheels must be the versions torch requires (`pip check`).",
            commands=(PIP_CHECK,),
            target=Target.PYTHON_ENV,
        )
    return Remediation(
        text="An older or newer copy of the library comes first on the search path: LD_LIBRARY_PATH (a system "
        "CUDA toolkit, a conda cudatoolkit), LD_PRELOAD or /etc/ld.so.conf. Run the program with "
        "LD_LIBRARY_PATH unset; if that works, remove the CUDA folders from it for good. With pip's torch, "
        "the nvidia-* wheels must be the versions torch requires (`pip check`).",
        commands=(
            RUN_WITHOUT_LIBRARY_PATH if "cudnn" in library or "cublas" in library else WITHOUT_LIBRARY_PATH,
            PIP_CHECK,
            Command(("ldconfig", "-p"), note="which copies of the CUDA libraries the loader finds"),
        ),
        target=Target.PYTHON_ENV,
    )


# the decisive test of a shadowed CUDA library: the same import with LD_LIBRARY_PATH out of the way
WITHOUT_LIBRARY_PATH = Command(
    ("env", "-u", "LD_LIBRARY_PATH", "python", "-c", "import torch; print(torch.cuda.is_available())"),
    note="True: a folder on LD_LIBRARY_PATH holds the other copy; take it out of LD_LIBRARY_PATH for good",
)
# cuDNN and cuBLAS load their sub-libraries (libcudnn_cnn_*, libcublasLt) only when first used, so for them
# the test runs a convolution and a matrix multiply: is_available() alone loads neither (blind set 18: a system
# cuDNN 8 in /usr/local/cuda/lib64 beside the cu121 wheel's, failing only in training)
RUN_WITHOUT_LIBRARY_PATH = Command(
    (
        "env",
        "-u",
        "LD_LIBRARY_PATH",
        "python",
        "-c",
        'import torch; x = torch.ones(1, 1, 8, 8, device="cuda"); '
        "print(torch.nn.functional.conv2d(x, x[..., :3, :3]).sum().item(), (x[0, 0] @ x[0, 0]).sum().item())",
    ),
    note="two numbers: torch's own cuDNN and cuBLAS load and run without LD_LIBRARY_PATH, so a folder on it holds "
    "the other copy; take it out of LD_LIBRARY_PATH for good",
)


def system_cuda_library_fix(library: str) -> Remediation:
    """torch's import could not find a CUDA library, where torch is older than 1.13 (or a Jetson build): such a
    torch brings no nvidia-* wheels; it loads the CUDA it was built against from the machine."""
    return Remediation(
        text=f"A torch older than 1.13 brings no nvidia-* wheels. A pip wheel of one carries {library} in its own "
        "torch/lib folder (reinstall it if the file is gone); a Jetson's, conda's or a source build loads it from "
        "the CUDA installed on the machine (JetPack's /usr/local/cuda on a Jetson, conda's cudatoolkit). Install "
        "that CUDA's libraries (on a Jetson: sudo apt install nvidia-jetpack, or its JetPack's cuda-libraries "
        "package) and put their folder (/usr/local/cuda/lib64) on the loader path; or install a torch built for "
        "the CUDA the machine has.",
        commands=(
            Command(("ldconfig", "-p"), note=f"must list {library}"),
            Command(
                ("cat", "/etc/nv_tegra_release"), note="on a Jetson: the L4T release, which names its JetPack"
            ),
        ),
        target=Target.SYSTEM,
    )


def torch_wheel_library_fix(library: str) -> Remediation:
    """torch's own import could not find one of the nvidia-* wheels it depends on."""
    return Remediation(
        text=f"torch's pip wheels bring their CUDA libraries as nvidia-* packages and {library or 'this one'} "
        "is not where torch looks: reinstall the torch build (with --no-cache-dir) so its missing nvidia-* "
        "dependencies come back (an installer that skipped dependencies, --no-deps or Poetry, leaves them out), "
        "and do not point LD_LIBRARY_PATH at a CUDA that lacks them. If `pip check` finds nothing missing, the "
        "wheels sit in another site-packages than torch (a venv with both lib and lib64, as on RHEL and "
        "Fedora): add <venv>/lib/pythonX.Y/site-packages/nvidia/*/lib to LD_LIBRARY_PATH.",
        commands=(
            PIP_CHECK,
            Command(
                ("python", "-m", "pip", "list", "-v"),
                note="the Location column: torch and the nvidia-* wheels must share one site-packages",
            ),
        ),
        target=Target.PYTHON_ENV,
    )


def split_site_packages_fix(library: str, torch_site: str, wheels_site: str) -> Remediation:
    """torch sits in <venv>/lib64/.../site-packages, its nvidia-* wheels in <venv>/lib/.../site-packages."""
    wheel = wheel_of(library)
    listing = Command(("ls", f"{wheels_site}/nvidia"), note="the other wheels whose lib folders it needs too")
    return Remediation(
        text=f"torch is in {torch_site} but pip put its nvidia-* wheels in {wheels_site} (a venv with both lib "
        "and lib64, as on RHEL, Alma and Fedora, or made by Poetry): torch's RPATH looks for them only beside "
        f"itself, so {library or 'the library'} is not found. Add {wheels_site}/nvidia/*/lib to LD_LIBRARY_PATH "
        "(each wheel's lib folder, joined with ':'), or install torch and its wheels into one site-packages. "
        "Reinstalling torch as it is repeats the split.",
        commands=(export_library_path(f"{wheels_site}/nvidia/{wheel.folder}/lib"), listing)
        if wheel is not None
        else (listing,),
        target=Target.PYTHON_ENV,
    )


def program_library_fix(library: str, cuda_major: str | None, torch_cudnn_major: str | None) -> Remediation:
    """A program with its own CUDA build (CTranslate2/faster-whisper, TensorFlow, ONNX Runtime) asked for a CUDA
    or cuDNN major version that is not on the loader path; torch's own copies are invisible to it.

    `cuda_major`: the CUDA the program was built for, when known (its cuDNN wheel is -cu11 or -cu12);
    `torch_cudnn_major`: the cuDNN major of the torch in the same environment, when known (one nvidia-cudnn
    wheel cannot hold two majors).
    """
    wheel = wheel_of(library)
    major = soversion_major(library)
    cudnn = wheel is not None and wheel.name == WHEELS["libcudnn"].name
    spec = suffix = None
    if wheel is not None and major is not None:
        suffix = (cuda_major or "12") if cudnn else major if wheel.soversion_is_cuda else None
        if suffix in PIP_CUDA_SUFFIXES:
            spec = f"{wheel.name}-cu{suffix}" + (f"=={major}.*" if cudnn else "")
    what = (
        f"cuDNN {major}"
        if cudnn and major
        else f"CUDA {major}"
        if wheel is not None and wheel.soversion_is_cuda and major
        else library
    )
    clash = cudnn and torch_cudnn_major is not None and major is not None and torch_cudnn_major != major
    apt = cudnn and major == "8"
    built = f" was built for {what}" if what != library else " needs it on the loader path"
    stand_in = f" (cuDNN 9 cannot stand in for cuDNN {major})" if cudnn and major not in (None, "9") else ""
    how = [f"`pip install {spec}`"] if spec else []
    if apt:
        how.append("system-wide: `sudo apt install libcudnn8` from NVIDIA's CUDA repository")
    text = (
        f"The program that asked for {library}{built}; torch is not the one asking, and torch's own copy inside "
        f"its wheel (torch/lib, nvidia/*/lib) is invisible to that program{stand_in}. Install {what} for it and "
        "put its lib folder on LD_LIBRARY_PATH"
        + (f" ({'; '.join(how)})" if how else "")
        + ", or install a build of the program made for the CUDA and cuDNN you have (faster-whisper: "
        "ctranslate2 >= 4.5 uses cuDNN 9). Reinstalling torch does not help."
    )
    if clash:
        text += (
            f" The torch in this environment uses cuDNN {torch_cudnn_major} from the same nvidia-cudnn wheel, "
            f"which cannot also hold cuDNN {major}: use the system package or a separate environment."
        )
    find = Command(("ldconfig", "-p"), note=f"the copies of {library} the loader finds")
    commands: tuple[Command, ...]
    if clash:
        commands = (APT_CUDNN8,) if apt else (find,)
    elif spec is not None and wheel is not None:
        commands = (
            Command(
                ("python", "-m", "pip", "install", spec),
                note=f"{what} for that program"
                + (
                    "; nvidia-cudnn-cu11 for one built for CUDA 11 (CTranslate2 3.x)"
                    if cudnn and suffix == "12"
                    else ""
                ),
            ),
            Command(
                ("python", "-c", f'import nvidia.{wheel.folder} as m; print(m.__path__[0] + "/lib")'),
                note="the folder to put on LD_LIBRARY_PATH for that program",
            ),
        )
    else:
        commands = (find,)
    return Remediation(
        text=text,
        commands=commands,
        requires_root=commands[0] is APT_CUDNN8,
        needs_network=commands[0] is not find,
        target=Target.SYSTEM if clash else Target.PYTHON_ENV,
    )


def wsl_libcuda_fix(library: str, wsl_known: bool) -> Remediation:
    """cuDNN (or Triton, bitsandbytes) dlopens the unversioned libcuda.so, which WSL2 keeps in /usr/lib/wsl/lib."""
    where = "On WSL2" if wsl_known else "On WSL2, where this message comes from,"
    text = (
        f"{where} the Windows driver's libcuda is projected into {WSL_LIB_DIR}, which the loader's cache "
        f"knows only as libcuda.so.1; a library that opens the bare {library} does not find it. Put {WSL_LIB_DIR} "
        "first on LD_LIBRARY_PATH (export it in ~/.bashrc). Reinstalling torch or the CUDA toolkit does not help."
    )
    if not wsl_known:
        text += (
            " On a native Linux, the driver's libcuda.so.1 lacks its libcuda.so link: create it beside "
            "libcuda.so.1 (`ldconfig -p` shows where)."
        )
    return Remediation(
        text=text,
        commands=(export_library_path(WSL_LIB_DIR),),
        target=Target.SYSTEM,
    )


def native_libcuda_fix(library: str) -> Remediation:
    """A native Linux whose driver libcuda.so.1 exists, but not the unversioned libcuda.so link."""
    return Remediation(
        text=f"The driver's libcuda.so.1 is installed but the unversioned {library} link that this library "
        "opens is not: create it beside libcuda.so.1 (`sudo ln -s libcuda.so.1 libcuda.so` in that folder, "
        "then `sudo ldconfig`), or install the driver's development package that ships it.",
        commands=(Command(("ldconfig", "-p"), note="the folder of libcuda.so.1"),),
        target=Target.SYSTEM,
    )


def driver_library_fix(library: str) -> Remediation:
    """The driver's own libcuda.so.1 is not there: no driver, or a container started without the GPUs."""
    return Remediation(
        text=f"{library} comes with the NVIDIA driver, not with torch: install the driver, or start the "
        "container with the GPUs (`--gpus all` with the NVIDIA Container Toolkit) so it is mounted in.",
        commands=(
            Command(("nvidia-smi",), note="answers only when the driver is installed and visible here"),
        ),
        target=Target.SYSTEM,
    )


def page_file_fix() -> Remediation:
    """WinError 1455: each process maps torch's large CUDA DLLs into virtual memory; the page file backs it."""
    return Remediation(
        text="Each process that imports torch with CUDA reserves several GB of virtual memory for its DLLs, and "
        "Windows backs it with the page file. Let Windows manage the page file size (System > About > Advanced "
        "system settings > Performance > Advanced > Virtual memory), or set it larger on a drive with room, "
        "then restart. DataLoader workers each import torch again: fewer workers (num_workers) need less.",
        target=Target.SYSTEM,
    )


def procedure_not_found_fix(
    dll: str, in_torch_lib: bool = False, installed: str | None = None, variant: str | None = None
) -> Remediation:
    """WinError 127 (ERROR_PROC_NOT_FOUND): the DLL was found and loaded, but a function it imports is not in the
    copy of a dependency Windows found first: another version of a CUDA DLL (a CUDA Toolkit's, TensorRT's or
    cuDNN's bin folder on PATH, a copy in System32) shadows the one beside torch's (blind set 25: torch2trt after
    installing TensorRT, cublas64_11.dll). Not a missing file: reinstalling torch keeps the other copy first.

    `in_torch_lib`: one of cuDNN's DLLs inside torch\\lib itself (the caller tells). torch ships its cuDNN there, and launchers offer
    to copy newer cuDNN DLLs over it (kohya_ss's cuDNN step, blind set 26: kohya_ss#486), which leaves a mixed set:
    reinstalling torch over itself puts back its own, before any PATH hunt. `installed`, `variant`: torch's."""
    if in_torch_lib:
        pin = f"torch=={installed}" if installed else "torch==VERSION"
        return Remediation(
            text=f"{dll} is one of the cuDNN DLLs torch ships in its own torch\\lib, and a function it calls is "
            "missing from another of them: the cuDNN DLLs there are of mixed versions, as a script that copies "
            "newer cuDNN DLLs into torch\\lib leaves them. Reinstall the same torch over itself into that "
            "environment, which puts back its own set; if it still fails, look for other copies on PATH "
            "(`where " + dll + "`).",
            commands=(
                Command(
                    reinstall_argv((pin,), variant or "VARIANT", no_deps=True),
                    note="with the environment's own Python"
                    + (
                        ""
                        if installed and variant
                        else "; VERSION and VARIANT from `pip show torch` (2.0.1+cu118)"
                    ),
                    runs_here=bool(installed and variant),
                ),
            ),
            needs_network=True,
            target=Target.PYTHON_ENV,
        )
    return Remediation(
        text=f"WinError 127 means {dll} was found but a function it calls is missing from a DLL loaded before it: "
        "an older or newer copy of one of its CUDA dependencies (cuBLAS's cublasLt, cudart, cuDNN's) from a CUDA "
        "Toolkit, TensorRT or cuDNN folder on PATH, or in System32. Find the other copies, take their folders off "
        "PATH (or move them after the program's own), and open a new terminal; or make the toolkit on PATH the "
        "same CUDA version as torch's build. Reinstalling torch alone leaves the other copy first.",
        commands=(
            Command(("where", dll), note="in cmd: every copy on PATH; one outside torch\\lib is the suspect"),
            Command(("where", "cublasLt64_*.dll"), note="its own dependency's copies, the usual one"),
        ),
        target=Target.PYTHON_ENV,
    )


def windows_dll_fix(
    dll: str,
    user_site: str | None,
    global_python: str | None,
    init_failed: bool = False,
    *,
    installed: str | None = None,
    variant: str | None = None,
) -> Remediation:
    """Windows could not load one of torch's DLLs or a DLL it depends on (WinError 126), or loaded it and its
    start-up failed (`init_failed`, WinError 1114). `installed`, `variant`: torch's version and build where known
    (pip's own "Successfully installed torch-2.4.0+cu121"), which decide fbgemm.dll's case without asking."""
    parts = []
    commands: list[Command] = []
    if user_site is not None:
        parts.append(
            f"The torch that fails is a per-user copy ({user_site}, from `pip install --user`), imported before "
            "the environment's own: uninstall it with the same Python (pip removes the copy Python finds first, "
            "this one) and run the program in its own environment (a venv or the app's portable build), "
            "reinstalling torch from the CUDA index there if it lacks one."
        )
        commands.append(
            Command(
                ("python", "-m", "pip", "uninstall", "torch"),
                note=f"with the Python whose user site is {user_site}; torchvision and torchaudio there too",
            )
        )
    elif global_python is not None:
        parts.append(
            f"This torch is the global Python's ({global_python}), not a venv's: if the program has its own "
            "environment (a venv, the installer's env, a start script), start it through that."
        )
    release, tag = (installed or "").partition("+")[0], variant or ""
    if dll.lower() == "fbgemm.dll" and release == "2.4.0":  # known: no need to ask pip which torch it is
        parts.append(
            "torch 2.4.0's fbgemm.dll needs libomp140.x86_64.dll (LLVM's OpenMP runtime), which no Visual C++ "
            "Redistributable installs: install torch 2.4.1 from the same index, which does not need it (or 2.3.1)."
        )
        index = (
            ("--index-url", f"https://download.pytorch.org/whl/{tag}")
            if tag.startswith(("cu", "cpu"))
            else ()
        )
        commands.append(
            Command(
                ("python", "-m", "pip", "install", f"torch==2.4.1{'+' + tag if index else ''}", *index),
                note="the same build of 2.4.1; torchvision 0.19.1 and torchaudio 2.4.1 go with it",
            )
        )
    elif dll.lower() == "fbgemm.dll":  # pytorch/pytorch#131662, a regression of the 2.4.0 Windows wheels
        parts.append(
            "torch 2.4.0's fbgemm.dll needs libomp140.x86_64.dll (LLVM's OpenMP runtime), which no Visual C++ "
            "Redistributable installs: if `pip show torch` says 2.4.0, install torch 2.4.1 or newer from the same "
            "index (or 2.3.1), which do not need it. For another version, the runtime below is what is missing."
        )
        commands.append(
            Command(
                ("python", "-m", "pip", "show", "torch"), note="Version: 2.4.0 is the release that needs it"
            )
        )
    if not init_failed and user_site is None and torch_cuda_dll(dll):
        # torch loads torch\lib's DLLs in name order: c10.dll, which needs the Visual C++ runtime, came first
        # the global Python's folder (C:\...\Python311): its interpreter is the python.exe in it, never the folder
        python = str(PureWindowsPath(global_python, "python.exe")) if global_python else "python"
        driver = dll.lower().startswith(
            "caffe2_nvrtc"
        )  # it links nvcuda.dll, which the NVIDIA driver installs
        parts.append(
            f"torch loads its DLLs in name order, and c10.dll, which needs the Visual C++ runtime, loaded before "
            f"{dll}: the runtime is there, and what {dll} needs is missing: "
            + (
                "it links nvcuda.dll, the NVIDIA driver's own DLL, so first see that a driver answers (no "
                "NVIDIA GPU or driver: install the CPU build), then "
                if driver
                else ""
            )
            + "a torch install cut short or two builds over each other: reinstall torch cleanly with the "
            "program's Python, from the index of its CUDA build (`pip show torch`: the +cuXXX of its version). "
            f"The Visual C++ Redistributable ({VC_REDIST_URL}) only if that does not help."
        )
        if driver:
            commands.append(Command(("nvidia-smi",), note="the driver answers: nvcuda.dll is there"))
        commands += [
            Command((python, "-m", "pip", "uninstall", "-y", "torch")),
            Command(
                (
                    python,
                    "-m",
                    "pip",
                    "install",
                    "--no-cache-dir",
                    "torch",
                    "--index-url",
                    INDEX_URL + "cuXXX",
                ),
                note="cuXXX: the CUDA build it had (cu118, cu121, cu126, ...); torchvision and torchaudio with it",
                runs_here=False,
            ),
        ]
        return Remediation(
            text=" ".join(parts), commands=tuple(commands), needs_network=True, target=Target.PYTHON_ENV
        )
    parts.append(
        f"{dll or 'A torch DLL'} or a DLL it needs does not load: install the Microsoft Visual C++ 2015-2022 "
        f"Redistributable (x64, {VC_REDIST_URL}) and open a new terminal."
    )
    if init_failed:
        parts.append(
            "WinError 1114 means the DLL was found and its start-up failed: most often an older Visual C++ "
            "runtime is already in the process, loaded by a package imported before torch (PyQt5, PySide, some "
            "GUI or game libraries bring their own). Import torch before those packages."
        )
    parts.append("LD_LIBRARY_PATH and ldconfig do not exist on Windows.")
    commands.append(VC_REDIST)
    return Remediation(
        text=" ".join(parts),
        commands=tuple(commands),
        requires_root=True,  # the redistributable installs for every user (an administrator prompt)
        needs_network=True,
        destructive=user_site is not None,
        target=Target.SYSTEM,
    )


def extension_cuda_fix(library: str, library_cuda: str, torch_cuda: str, python: str) -> Remediation:
    """A CUDA runtime of another release than torch's, asked for by a compiled extension built for it (mmcv-full
    built for CUDA 10.1 beside a cu102 torch, mmdetection3d#651): the extension's build for torch's CUDA."""
    return Remediation(
        text=f"Install the build of the extension that asked for {library} made for CUDA {torch_cuda} and the "
        "installed torch: OpenMMLab's mmcv-full with `mim install mmcv-full` (mim picks the wheel for the "
        "installed torch and CUDA), a package built from source (detectron2, custom ops) rebuilt against the "
        f"installed torch with CUDA_HOME at a CUDA {torch_cuda} toolkit. Putting CUDA {library_cuda}'s runtime on "
        "LD_LIBRARY_PATH instead only makes two CUDA runtimes share one process.",
        commands=(
            Command(
                (python, "-m", "pip", "list"),
                note=f"the compiled extensions installed (mmcv-full, detectron2, apex...): the one built for CUDA "
                f"{library_cuda} is the one to reinstall",
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def torch_cuda_dll(dll: str) -> bool:
    """One of torch's CUDA DLLs (cuDNN's, cuBLAS's, torch_cuda.dll), which torch loads after c10.dll."""
    name = dll.lower()
    return (
        name.endswith(".dll")
        and name > "c10.dll"
        and name.startswith(("c10_", "cu", "nv", "torch_cuda", "caffe2"))
    )


def unpinned_extension(module: str | None) -> str | None:
    """What rebuilding the extension whose top-level module is `module` installs (its pip name, or the
    repository its install guide builds from), where its wheels pin no torch (pip check cannot name the torch
    they need, so rebuilding against the installed torch is the fix); None otherwise (compat/extensions.json)."""
    row = load_extensions().by_module(module)
    return row.rebuild if row is not None else None


def extension_name(module: str | None) -> str | None:
    """How a person knows the extension a module belongs to: its pip name (selective_scan_cuda: mamba-ssm);
    the module itself where the table does not know it."""
    row = load_extensions().by_module(module)
    return row.name if row is not None else module


def extension_abi_fix(
    package: str | None,
    extension: str | None,
    cxx11: bool = False,
    python: str = "python",
    installed: dict[str, str] | None = None,
    torch_build: tuple[str, str] | None = None,
) -> Remediation:
    """A compiled extension (vLLM's _C, flash-attn, xformers) was built against another torch release; with
    `cxx11`, against the other C++ ABI (a `__cxx11` std::string in the missing symbol). `torch_build`: the
    installed torch's major.minor and build ("1.5", "cu102"), where known: an extension with a page of prebuilt
    wheels per torch (mmcv-full, PyG's) installs the one built for it, no compiler needed."""
    pip_name = unpinned_extension(package)
    row = load_extensions().by_module(package)
    built = torch_build is not None and torch_build[1].startswith(
        ("cu", "cpu")
    )  # the pages have no ROCm builds
    page = row.wheel_page(*torch_build) if row is not None and torch_build is not None and built else None
    if pip_name is not None and page is not None and torch_build is not None and "/" not in pip_name:
        spec, known = _rebuilt_version(pip_name, installed or {})
        if not known and pip_name == "mmcv" and torch_build[0].startswith("1."):
            spec = (
                "mmcv-full==VERSION"  # an mmcv with CUDA ops for torch 1.x is mmcv 1.x: the mmcv-full package
            )
        name = extension_name(package) or pip_name
        wanted = spec
        return Remediation(
            text=f"{name} ships C++ code ({extension or 'a compiled module'}) built against one exact torch "
            f"release, and the installed torch (torch {torch_build[0] if torch_build else ''}, "
            f"{torch_build[1] if torch_build else ''}) is another: its C++ symbols do not match. {name} pins no "
            "torch, so pip never noticed. Install its wheel built for this torch from its own page (no compiler "
            "needed); --no-deps keeps pip from replacing torch.",
            commands=(
                Command(
                    (python, "-m", "pip", "install", "--no-cache-dir", "--force-reinstall", "--no-deps",
                     "--only-binary", ":all:", wanted, "-f", page),
                    note="its wheel built for the installed torch and CUDA (--only-binary: never PyPI's source)"
                    + ("" if known else f"; VERSION: the one installed now (`pip show {wanted.split('==')[0]}`)"),
                    runs_here=known,
                ),
            ),
            needs_network=True,
            target=Target.PYTHON_ENV,
        )  # fmt: skip
    wheels = f" {row.wheels}" if row is not None and row.wheels is not None else ""
    name = extension_name(package) or "the extension"
    if cxx11:
        text = (
            f"{name} was built for another torch release or with the other C++ ABI (the missing symbol takes a "
            "std::string of one C++ ABI, `std::__cxx11` for the new and `Ss` for the old, and torch exports its "
            "functions with only its own). The command prints "
            "both of torch's: install the build of the extension made for them (flash-attn's release wheels name "
            "the torch version and cxx11abiTRUE or cxx11abiFALSE), or build it against the installed torch "
            "(`pip install --no-build-isolation --no-cache-dir --force-reinstall --no-deps`)."
        )
        probe = Command(
            (python, "-c", "import torch; print(torch.__version__, torch._C._GLIBCXX_USE_CXX11_ABI)"),
            note="torch's version and C++ ABI (True: a cxx11abiTRUE build of the extension)",
        )
        return Remediation(text=text, commands=(probe,), needs_network=True, target=Target.PYTHON_ENV)
    text = (
        f"{name} ships C++ code ({extension or 'a compiled module'}) built against one exact torch release, "
        "and the installed torch is another: its C++ symbols do not match. "
        + (
            f"{name} pins no torch, so `pip check` cannot name one: rebuild it against the installed torch, or "
            f"install its release built for that torch.{wheels} "
            if pip_name is not None
            else "Install the torch version its release requires (`python -m pip check` names it, from the "
            "same index as your torch), or a release of it built for your torch. "
        )
        + "An extension built from source (flash-attn, xformers, a custom "
        "op) must be rebuilt against the installed torch (`pip install --no-build-isolation --no-cache-dir "
        "--force-reinstall --no-deps` it: without --no-deps pip reinstalls torch too). LD_LIBRARY_PATH has "
        "nothing to do with it."
    )
    if pip_name is not None:  # it does not pin torch: pip check has nothing to say, the rebuild is the fix
        spec, known = _rebuilt_version(pip_name, installed or {})
        build_env = row.build_env if row is not None else ()
        rebuild = Command(
            (
                *_with_env(build_env),
                python,
                "-m",
                "pip",
                "install",
                "--no-build-isolation",
                "--no-cache-dir",
                "--force-reinstall",
                "--no-deps",
                spec,
            ),
            note="builds it against the installed torch (needs the CUDA toolkit of torch's CUDA); --no-deps keeps "
            "--force-reinstall from replacing torch itself"
            + (
                f"; {' '.join(f'{k}={v}' for k, v in build_env)}: what its source build needs to compile its CUDA code"
                if build_env
                else ""
            )
            + (
                ""
                if known
                else f"; VERSION: the one installed now (`pip show {spec.split('==')[0]}`): a rebuild, not an upgrade"
            ),
            runs_here=known,
        )
        return Remediation(text=text, commands=(rebuild,), needs_network=True, target=Target.PYTHON_ENV)
    return Remediation(
        text=text,
        commands=(
            Command(
                (python, "-m", "pip", "check"),
                note=f"prints '{package or 'PACKAGE'} X has requirement torch==Y, but you have torch Z'",
            ),
            Command(
                (python, "-m", "pip", "install", "torch==VERSION"),
                note="VERSION: the one pip check names; add your torch's --index-url for its CUDA variant",
                runs_here=False,
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _with_env(build_env: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """`env VAR=value` before a command, for what a source build needs set (compat/extensions.json)."""
    return ("env", *(f"{k}={v}" for k, v in build_env)) if build_env else ()


def in_place_rebuild_fix(module: str, root: str, python: str = "python") -> Remediation:
    """A compiled module built in its source tree against another torch (a checkout installed with `-e .` or
    build_ext --inplace, then torch changed): rebuild it there, against the installed torch."""
    row = load_extensions().by_module(module)
    build_env = row.build_env if row is not None else ()
    return Remediation(
        text=f"{module}'s compiled module was built in its source folder ({root}) against another torch than the "
        "one installed now (torch was upgraded after the build, or pip's build isolation built it against a "
        "torch it downloaded). Rebuild it in place against the installed torch, without build isolation, after "
        "deleting the old build (the build/ folder and the .so files in the tree).",
        commands=(
            Command(
                (
                    *_with_env(build_env),
                    python,
                    "-m",
                    "pip",
                    "install",
                    "--no-build-isolation",
                    "--no-deps",
                    "-e",
                    root,
                ),
                note="builds it against the torch this Python imports (needs the CUDA toolkit of torch's CUDA)"
                + (
                    f"; {' '.join(f'{k}={v}' for k, v in build_env)}: what its build needs to compile its ops"
                    if build_env
                    else ""
                ),
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _rebuilt_version(pip_name: str, installed: dict[str, str]) -> tuple[str, bool]:
    """What the rebuild installs: the same release as installed (a rebuild, not an upgrade a newer torch or
    toolkit may be needed for), and whether that version is known. mmcv 1.x is the mmcv-full package."""
    if "/" in pip_name:  # a repository (detectron2, pytorch3d): its checkout, as installed
        return pip_name, True
    if pip_name == "mmcv":
        full = installed.get("mmcv-full")
        version = full or installed.get("mmcv")
        name = "mmcv-full" if full or (version or "").startswith("1.") else "mmcv"
        return (f"{name}=={version}", True) if version else ("mmcv==VERSION", False)
    version = installed.get(pip_name)
    return (f"{pip_name}=={version}", True) if version else (f"{pip_name}==VERSION", False)


def extension_arch_fix(
    extension: str,
    capability: str | None,
    wheels: str | None = None,
    pip_build: bool = True,
    *,
    page: tuple[str, str] | None = None,
    torch_covers: bool = False,
    windows: bool = False,
    rebuild_first: bool = False,
) -> Remediation:
    """'no kernel image' raised in a compiled extension (causal_conv1d_cuda, a custom op), not in torch: the
    extension's binary has no kernels for this GPU's architecture, whatever torch's arch list. `wheels`: where
    its own builds are (compat/extensions.json); `pip_build`: its source builds with pip and setuptools, where
    TORCH_CUDA_ARCH_LIST picks the architectures (not sgl-kernel's CMake, nor FlashInfer's compiling at run time).
    `page`: the package to install and the page of its wheels built for the installed torch (mmcv-full's
    OpenMMLab index), where known; `torch_covers`: torch's own arch list is known to have the GPU, so the probe that
    would show it is not asked again; `windows`: the build's variable set as cmd sets it; `rebuild_first`: the
    extension's own report shows the archs it was built for (detectron2's arch flags), so its rebuild for this GPU
    comes first and torch is not asked."""
    arch = f"compute capability {capability}" if capability else "this GPU's compute capability"
    flags = capability or "X.Y"
    where = f" {wheels}" if wheels else ""
    setting = (
        f"`set TORCH_CUDA_ARCH_LIST={flags}`, then `pip install --no-build-isolation -e .`"
        if windows
        else f"`TORCH_CUDA_ARCH_LIST={flags} pip install --no-build-isolation -e .`"
    )
    build = (
        f" Or build it from source for this GPU: in a checkout of {_project(extension)}, delete its build folder, "
        f"then {setting} with the CUDA toolkit of torch's CUDA (nvcc)."
        if pip_build
        else f" If none has kernels for {arch}, it does not support this GPU: ask its project, or run on a GPU it "
        "supports."
    )
    return Remediation(
        text=f"The kernel that fails is in {extension}, not in torch: its binary was built "
        f"without kernels for {arch}. Install a release of it built for this GPU (newer GPUs need its newest "
        f"release).{where}{build} Reinstalling torch does not change the extension.",
        commands=(
            *(
                [
                    Command(
                        (
                            "env",
                            f"TORCH_CUDA_ARCH_LIST={flags}",
                            "python",
                            "-m",
                            "pip",
                            "install",
                            "--no-build-isolation",
                            "-e",
                            ".",
                        ),
                        note=f"in a checkout of {_project(extension)}, after deleting its build folder",
                    )
                ]
                if rebuild_first and pip_build and capability and not windows
                else []
            ),
            *(
                [
                    Command(
                        (
                            "python",
                            "-m",
                            "pip",
                            "install",
                            "--no-cache-dir",
                            "--force-reinstall",
                            "--no-deps",
                            "--only-binary",
                            ":all:",
                            page[0],
                            "-f",
                            page[1],
                        ),
                        note="its wheel built for the installed torch and CUDA, from its own page",
                    )
                ]
                if page is not None
                else []
            ),
            *(
                []
                if torch_covers or rebuild_first
                else [
                    Command(
                        (
                            "python",
                            "-c",
                            "import torch; print(torch.__version__, torch.cuda.get_arch_list())",
                        ),
                        note="torch's own kernels cover this GPU when its arch list has it: the extension is the gap",
                    )
                ]
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _project(extension: str) -> str:
    """The project whose checkout builds it: a package's own name, else its module's."""
    return f"{extension}'s repository" if extension.isidentifier() else "its repository"


def ctranslate2_cublas_fix(status: str) -> Remediation:
    """CTranslate2 (faster-whisper, the whisper standalone apps) raised a cuBLAS status with its own build."""
    return Remediation(
        text=f"CTranslate2 brings its own CUDA libraries; {status} from them means its cuBLAS cannot run this "
        "compute type on this GPU, typically a build made with a CUDA older than the GPU (CUDA < 12.8 on an "
        'RTX 50-series / Blackwell) running int8. Run with `--compute_type float16` (compute_type="float16" '
        "in Python), or install a CTranslate2 (or app) build made for this GPU. torch and the library search "
        "path are not involved.",
        commands=(
            Command(
                ("PROGRAM", "--compute_type", "float16"),
                note="PROGRAM: your faster-whisper / CTranslate2 command line",
                runs_here=False,
            ),
            Command(
                ("python", "-m", "pip", "install", "--upgrade", "ctranslate2"),
                note="a pip-installed CTranslate2; a frozen app needs its own newer build",
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def torch_cublas_fix(status: str, windows: bool) -> Remediation:
    """cuBLAS refused an ordinary GEMM for torch and nothing points at a foreign library: torch's own cuBLAS."""
    return Remediation(
        text=f"cuBLAS answered {status} to an ordinary matrix multiply and nothing shows another CUDA's "
        "libraries in the process: the cuBLAS that came with this torch build (its nvidia-cublas wheel) is the "
        "suspect, as with a new CUDA variant or a nightly. Install another nvidia-cublas version (`pip install "
        "--upgrade` it, or the one an earlier torch pinned), or another CUDA variant of torch (e.g. cu128 instead "
        "of cu130) from download.pytorch.org. "
        + (
            "A CUDA toolkit's bin folder on PATH is a second suspect: run once without it."
            if windows
            else "LD_LIBRARY_PATH is a second suspect: if it is set, run once without it."
        ),
        commands=(
            Command(("python", "-m", "pip", "list"), note="the nvidia-cublas-* line: the cuBLAS torch loads"),
        ),
        target=Target.PYTHON_ENV,
    )
