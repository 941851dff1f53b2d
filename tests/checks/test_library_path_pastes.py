"""env.library_path picks its fix from the sub-cause of a library failure, on the real pastes of
tests/triage/pastes (sources and the threads' diagnoses in its MANIFEST.json): a program with its own CUDA build,
WSL's libcuda.so, a venv split into lib and lib64, Windows DLLs, an extension built for another torch, a cuBLAS
that refuses a GEMM. The same words ("cannot open shared object file") have different fixes; the first line
says the cause and the first command is the one to type."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tests.factories import facts, os_facts, torch_packages, torch_runtime
from torch_gpu_doctor.checks.env import library_path
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.facts.torch import MappedLibrary, TorchRuntime
from torch_gpu_doctor.fixes.library_path import (
    RUN_WITHOUT_LIBRARY_PATH,
    WITHOUT_LIBRARY_PATH,
    extension_abi_fix,
    soversion_major,
    wheel_of,
)
from torch_gpu_doctor.model import Finding, Status, Target
from torch_gpu_doctor.triage.pipeline import diagnose_paste

PASTES = Path(__file__).parents[1] / "triage" / "pastes"
CID = "env.library_path"
WSL_EXPORT = "export LD_LIBRARY_PATH=/usr/lib/wsl/lib"
VC_REDIST = "winget install Microsoft.VCRedist.2015+.x64"
CUDNN8 = "python -m pip install 'nvidia-cudnn-cu12==8.*'"
PIP_CHECK = "python -m pip check"


def paste_facts(paste: str) -> Facts:
    return diagnose_paste((PASTES / f"{paste}.txt").read_bytes(), paste).facts


def triaged(paste: str) -> Finding:
    result = diagnose_paste((PASTES / f"{paste}.txt").read_bytes(), paste).result
    return next(v.finding for v in result.verdicts if v.finding.check_id == CID)


def first_command(f: Finding) -> str | None:
    """The first command, with the paste's own interpreter (which triage puts in place of `python`) as
    `python`: what is judged here is the command; tests/triage/test_context_rules.py pins the interpreter."""
    fix = f.remediation
    if fix is None or not fix.commands:
        return None
    argv = fix.commands[0].argv
    own = re.compile(r"[/\\]python(?:3(?:\.\d+)?)?(?:\.exe)?$")
    plain = tuple(
        "python" if own.search(a) and (i == 0 or argv[0] == "env") else a for i, a in enumerate(argv)
    )
    return dataclasses.replace(fix.commands[0], argv=plain).display()


def shown(f: Finding) -> str:
    """Everything the fix shows: its text and every command line."""
    fix = f.remediation
    assert fix is not None
    return " ".join([fix.text, *(c.display() for c in fix.commands)])


@pytest.mark.parametrize(
    ("paste", "summary", "first", "says"),
    [
        # (a) CTranslate2/faster-whisper dlopens cuDNN 8 itself; torch's copy is invisible to it
        (
            "chenyme-aavt-1-cudnn8-in-other-python-torch-lib",
            "asked for libcudnn_ops_infer.so.8",
            CUDNN8,
            "torch is not the one asking",
        ),
        (
            "stream-whisper-28-cudnn8-needed-cudnn9-installed",
            "asked for libcudnn_ops_infer.so.8",
            CUDNN8,
            "cuDNN 9 cannot stand in for cuDNN 8",
        ),
        (
            "stt-76-faster-whisper-cudnn8-core-dump",
            "torch is not the one asking",
            CUDNN8,
            "apt install libcudnn8",
        ),
        ("xtts-finetune-31-libcudnn-ops-infer-so8", "own CUDA build", CUDNN8, "LD_LIBRARY_PATH"),
        # (b) cuDNN 8 opens the bare libcuda.so, which WSL2 keeps in /usr/lib/wsl/lib
        (
            "nougat-115-wsl-libcudnn-cnn-infer-libcuda-so",
            "could not open the driver library libcuda.so",
            WSL_EXPORT,
            "Reinstalling torch or the CUDA toolkit does not help",
        ),
        ("yolov10-395-ultralytics-amp-libcuda-so-wsl", "/usr/lib/wsl/lib", WSL_EXPORT, "/usr/lib/wsl/lib"),
        # (d) Windows: a DLL dependency (VC++ runtime, libomp140 for torch 2.4.0's fbgemm) or a user-site torch
        (
            "comfyui-989-winerror126-caffe2-nvrtc-user-site",
            "from a per-user torch in C:\\Users\\tenra\\AppData\\Roaming\\Python\\Python310\\site-packages",
            "python -m pip uninstall torch",
            "Visual C++ 2015-2022 Redistributable",
        ),
        # torch 2.4.0's fbgemm.dll needs libomp140, which no VC++ redistributable has (pytorch/pytorch#131662):
        # which torch it is comes first
        (
            "kohya-sd-scripts-1597-winerror126-fbgemm",
            "Windows could not load torch's fbgemm.dll",
            "python -m pip show torch",
            "install torch 2.4.1 or newer",
        ),
        (
            "pytorch-133397-winerror126-fbgemm-py312",
            "Windows could not load torch's fbgemm.dll",
            "python -m pip show torch",
            "libomp140.x86_64.dll",
        ),
        # caffe2_nvrtc.dll loads after c10.dll (so the VC++ runtime is there) and links the driver's nvcuda.dll
        (
            "oobabooga-3104-winerror126-caffe2-nvrtc",
            "Windows could not load torch's caffe2_nvrtc.dll",
            "nvidia-smi",
            "not a venv's",
        ),
        # (e) an extension's _C built for another torch release
        (
            "vllm-3147-c-ext-undefined-symbol-torch-221",
            "vllm's compiled extension (vllm/_C.cpython-310-x86_64-linux-gnu.so) was built for another torch",
            PIP_CHECK,
            "LD_LIBRARY_PATH has nothing to do with it",
        ),
        (
            "vllm-5501-c-ext-undefined-symbol-torch-library",
            "vllm's compiled extension (vllm/_C.abi3.so)",
            PIP_CHECK,
            "requires",
        ),
        # (f) cuBLAS refuses an ordinary GEMM: torch's own cuBLAS wheel, or CTranslate2's own build
        (
            "pytorch-170676-cublas-invalid-value-cu130-nightly",
            "the cuBLAS of this torch build is the suspect",
            "python -m pip list",
            "another CUDA variant of torch",
        ),
        (
            "whisper-standalone-493-rtx5060-cublas-not-supported",
            "CTranslate2's own cuBLAS cannot run this on this GPU (CUBLAS_STATUS_NOT_SUPPORTED)",
            "PROGRAM --compute_type float16",
            "made for this GPU",
        ),
        # (c) lib/lib64 split: the traceback's frames (kept as the live probe keeps stderr) place torch under
        # lib64 and its nvidia-* wheels under lib
        (
            "poetry-9291-rhel9-libcudnn8-lib64",
            "torch in /central/home/zwang2/torch-newest/.venv/lib64/python3.9/site-packages cannot find libcudnn.so.8",
            "export LD_LIBRARY_PATH=/central/home/zwang2/torch-newest/.venv/lib/python3.9/site-packages/nvidia/cudnn/lib",
            "lib and lib64",
        ),
        (
            "pytorch-165812-libcudnn9-lib64-vs-lib-venv",
            "torch in venv/lib64/python3.11/site-packages cannot find libcudnn.so.9",
            "export LD_LIBRARY_PATH=venv/lib/python3.11/site-packages/nvidia/cudnn/lib",
            "lib and lib64",
        ),
    ],
)
def test_each_sub_cause_gets_its_own_fix(paste: str, summary: str, first: str, says: str) -> None:
    f = triaged(paste)
    assert f.status is Status.FAIL
    assert summary in f.summary
    assert first_command(f) == first
    assert says in shown(f)


@pytest.mark.parametrize(
    "paste",
    [
        "comfyui-989-winerror126-caffe2-nvrtc-user-site",
        "kohya-sd-scripts-1597-winerror126-fbgemm",
        "oobabooga-3104-winerror126-caffe2-nvrtc",
        "pytorch-133397-winerror126-fbgemm-py312",
    ],
)
def test_windows_never_gets_a_linux_loader_fix(paste: str) -> None:
    fix = triaged(paste).remediation
    assert fix is not None
    lines = [c.display() for c in fix.commands]
    assert not any("ldconfig" in c or "LD_LIBRARY_PATH" in c or c.startswith("export") for c in lines)
    assert "reinstall the torch build" not in fix.text


@pytest.mark.parametrize(
    "paste",
    [
        "chenyme-aavt-1-cudnn8-in-other-python-torch-lib",
        "stream-whisper-28-cudnn8-needed-cudnn9-installed",
        "stt-76-faster-whisper-cudnn8-core-dump",
        "xtts-finetune-31-libcudnn-ops-infer-so8",
        "nougat-115-wsl-libcudnn-cnn-infer-libcuda-so",
        "yolov10-395-ultralytics-amp-libcuda-so-wsl",
        "vllm-3147-c-ext-undefined-symbol-torch-221",
        "whisper-standalone-493-rtx5060-cublas-not-supported",
    ],
)
def test_a_fix_that_is_not_torchs_does_not_tell_to_reinstall_torch(paste: str) -> None:
    fix = triaged(paste).remediation
    assert fix is not None
    assert "reinstall the torch build" not in fix.text
    assert "ldconfig" not in (first_command(triaged(paste)) or "")


@pytest.mark.parametrize(
    ("paste", "torch_site", "folder"),
    [
        (
            "poetry-9291-rhel9-libcudnn8-lib64",
            "/central/home/zwang2/torch-newest/.venv/lib64/python3.9/site-packages",
            "/central/home/zwang2/torch-newest/.venv/lib/python3.9/site-packages/nvidia/cudnn/lib",
        ),
        ("pytorch-165812-libcudnn9-lib64-vs-lib-venv", "venv/lib64/python3.11/site-packages", None),
    ],
)
def test_the_lib64_split_from_the_traceback_torch_printed(
    paste: str, torch_site: str, folder: str | None
) -> None:
    """What the live probe keeps (the child's traceback in stderr_tail) places torch under lib64: the fix is the
    wheels' lib folder on LD_LIBRARY_PATH, not a reinstall that repeats the split."""
    base = paste_facts(paste)
    runtime = base.torch
    assert isinstance(runtime, TorchRuntime)
    traceback = (PASTES / f"{paste}.txt").read_text(encoding="utf-8")
    f = library_path(dataclasses.replace(base, torch=dataclasses.replace(runtime, stderr_tail=traceback)))
    assert f.status is Status.FAIL
    assert torch_site in f.summary
    assert "outside torch's RPATH" in f.summary
    command = first_command(f)
    assert command is not None and command.startswith("export LD_LIBRARY_PATH=")
    assert folder is None or command == f"export LD_LIBRARY_PATH={folder}"
    assert "Reinstalling torch as it is repeats the split" in shown(f)


def test_a_torch_wheel_missing_its_own_library_keeps_the_reinstall_fix() -> None:
    """libnvJitLink while torch imports, and a Poetry venv that skipped the nvidia-* dependencies."""
    for paste in ("agrima-6-libnvjitlink-so12-missing-conda", "pytorch-104259-libcudnn8-fresh-poetry-venv"):
        f = triaged(paste)
        assert "torch's import could not find" in f.summary
        assert first_command(f) == PIP_CHECK
        assert "reinstall the torch build" in shown(f)


def test_a_foreign_version_first_on_the_path_keeps_its_fix() -> None:
    """An older cuDNN on LD_LIBRARY_PATH, and bitsandbytes' own CUDA in the failing stack of a cuBLAS error."""
    for paste in (
        "co-gat-2-cudnn-incompat-850-vs-833",
        "bitsandbytes-205-cublas-invalid-value-v100-source-build",
    ):
        f = triaged(paste)
        assert "of another version was loaded" in f.summary
        # the decisive test first: torch with LD_LIBRARY_PATH out of the way, running cuDNN and cuBLAS (both
        # load their sub-libraries on first use, so an import alone would not show the clash)
        assert first_command(f) == RUN_WITHOUT_LIBRARY_PATH.display()


def test_a_foreign_library_that_fails_the_import_is_tested_by_the_import() -> None:
    """An undefined symbol in NCCL while torch imports: the import alone decides, nothing needs to run."""
    f = triaged("returnn-1802-undefined-symbol-ncclMemFree-cu11-cu12")
    assert "of another version was loaded" in f.summary
    assert first_command(f) == WITHOUT_LIBRARY_PATH.display()


# facts-level: the rules on their own, and the live doctor (no reported errors) unchanged


def error(kind: str, text: str, **values: str) -> ReportedError:
    return ReportedError(kind, "test_signature", "what it means", text, "line 1 of the paste", values, "")


def test_the_live_doctor_still_judges_the_mapped_libraries() -> None:
    wheel = "/v/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12"
    own = MappedLibrary("libcublas", wheel, wheel)
    foreign = MappedLibrary(
        "libcudnn", "/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9"
    )
    assert library_path(facts(torch=torch_runtime(mapped_libraries=(own,)))).status is Status.PASS
    warned = library_path(
        facts(torch=torch_runtime(mapped_libraries=(own, foreign)), env={"LD_LIBRARY_PATH": "/x"})
    )
    assert warned.status is Status.WARN
    assert first_command(warned) == (
        "env -u LD_LIBRARY_PATH python -c 'import torch; torch.zeros(1).cuda(); print(torch.backends.cudnn.version())'"
    )
    assert library_path(facts(torch=torch_runtime(outcome="failed"))).status is Status.SKIP


def test_a_known_wsl_says_so_and_a_native_linux_gets_the_link() -> None:
    missing = error("missing_library", "x", library="libcuda.so", cudnn_library="libcudnn_cnn_infer.so.8")
    wsl = library_path(facts(os=os_facts(wsl=True), reported_errors=(missing,)))
    assert "WSL2 keeps it only in /usr/lib/wsl/lib" in wsl.summary
    assert first_command(wsl) == WSL_EXPORT
    assert wsl.remediation is not None and "native Linux" not in wsl.remediation.text
    native = library_path(facts(os=os_facts(), reported_errors=(missing,)))
    assert "only libcuda.so.1 is installed" in native.summary
    assert first_command(native) == "ldconfig -p"
    driver = library_path(facts(reported_errors=(error("missing_library", "x", library="libcuda.so.1"),)))
    assert first_command(driver) == "nvidia-smi"


def test_a_program_asking_for_cuda_11_gets_that_wheel() -> None:
    """TensorFlow / CTranslate2 3.x / ONNX Runtime: libcublas.so.11 with no torch import failing."""
    f = library_path(facts(reported_errors=(error("missing_library", "x", library="libcublas.so.11"),)))
    assert "torch's import is not what failed" in f.summary
    assert first_command(f) == "python -m pip install nvidia-cublas-cu11"
    assert f.remediation is not None and f.remediation.target is Target.PYTHON_ENV


def test_cudnn_8_beside_a_torch_on_cudnn_9_goes_to_the_system() -> None:
    """One nvidia-cudnn-cu12 wheel cannot hold cuDNN 8 for CTranslate2 and cuDNN 9 for torch."""
    dlopen = "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open"
    f = library_path(
        facts(
            torch=torch_runtime(cudnn_version=90100),
            reported_errors=(error("missing_library", dlopen, library="libcudnn_ops_infer.so.8"),),
        )
    )
    assert "torch is not the one asking" in f.summary
    assert first_command(f) == "sudo apt install libcudnn8"
    assert f.remediation is not None and f.remediation.requires_root
    assert "cannot also hold cuDNN 8" in f.remediation.text


def test_the_lib64_split_from_torchs_own_location() -> None:
    """Live facts place torch directly (torch_packages.torch_paths)."""
    packages = dataclasses.replace(
        torch_packages(), torch_paths=("/srv/app/.venv/lib64/python3.12/site-packages/torch",)
    )
    f = library_path(
        facts(
            torch_packages=packages,
            torch=torch_runtime(outcome="failed", failed_stage="import"),
            reported_errors=(error("missing_library", "x", library="libnccl.so.2"),),
        )
    )
    assert (
        first_command(f)
        == "export LD_LIBRARY_PATH=/srv/app/.venv/lib/python3.12/site-packages/nvidia/nccl/lib"
    )
    assert f.remediation is not None
    assert f.remediation.commands[0].runs_here is False  # a shell builtin: shown and copied, never run here


def test_an_extension_of_torchs_own_is_not_an_extension_mismatch() -> None:
    own = (
        "ImportError: /v/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: _ZN3c10x"
    )
    f = library_path(facts(reported_errors=(error("undefined_symbol", own, symbol="_ZN3c10x"),)))
    assert "of another version was loaded" in f.summary
    flash = "ImportError: /v/lib/python3.10/site-packages/flash_attn_2_cuda.so: undefined symbol: _ZN2at4_ops"
    g = library_path(facts(reported_errors=(error("undefined_symbol", flash, symbol="_ZN2at4_ops"),)))
    assert "flash-attn's compiled extension (flash_attn_2_cuda.so)" in g.summary
    # flash-attn pins no torch, so pip check has nothing to say: the rebuild against this torch comes first,
    # with --no-deps (--force-reinstall alone would reinstall torch too, at its newest)
    assert str(first_command(g)).endswith(
        "--no-build-isolation --no-cache-dir --force-reinstall --no-deps flash-attn==VERSION"
    )
    vllm = "ImportError: /v/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN2at4_ops"
    pinned = library_path(facts(reported_errors=(error("undefined_symbol", vllm, symbol="_ZN2at4_ops"),)))
    assert first_command(pinned) == PIP_CHECK  # vLLM pins torch==: pip check names the one it needs


def test_a_cxx11_string_in_the_missing_symbol_asks_for_torchs_abi() -> None:
    """flash-attn's cxx11abiTRUE wheel on a PyPI torch built with the old ABI (a blind paste)."""
    symbol = "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    text = f"ImportError: /v/lib/python3.10/site-packages/flash_attn_2_cuda.so: undefined symbol: {symbol}"
    f = library_path(facts(reported_errors=(error("undefined_symbol", text, symbol=symbol),)))
    assert "or the other C++ ABI" in f.summary
    assert "_GLIBCXX_USE_CXX11_ABI" in str(first_command(f))


def test_a_cublas_error_with_ld_library_path_set_blames_the_path_first() -> None:
    refused = error(
        "cublas", "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx(`"
    )
    clean = library_path(facts(reported_errors=(refused,)))
    assert "the cuBLAS of this torch build is the suspect" in clean.summary
    dirty = library_path(facts(env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}, reported_errors=(refused,)))
    assert "of another version was loaded" in dirty.summary
    other = error(
        "cublas", "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate`"
    )
    assert "of another version was loaded" in library_path(facts(reported_errors=(other,))).summary


def test_windows_from_the_facts_gets_no_loader_commands() -> None:
    windows = dataclasses.replace(os_facts(), system="Windows")
    refused = error(
        "cublas", "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate`"
    )
    f = library_path(facts(os=windows, reported_errors=(refused,)))
    assert f.remediation is not None
    assert [c.display() for c in f.remediation.commands] == [PIP_CHECK]
    assert "LD_LIBRARY_PATH" not in shown(f)
    packages = dataclasses.replace(
        torch_packages(),
        torch_paths=("C:\\Users\\a\\AppData\\Roaming\\Python\\Python311\\site-packages\\torch",),
        user_site="C:\\Users\\a\\AppData\\Roaming\\Python\\Python311\\site-packages",
    )
    dll = error("missing_library", "OSError: [WinError 126] The specified module could not be found.")
    g = library_path(facts(os=windows, torch_packages=packages, reported_errors=(dll,)))
    assert "per-user torch" in g.summary
    assert first_command(g) == "python -m pip uninstall torch"


@pytest.mark.parametrize(
    ("library", "wheel", "major"),
    [
        ("libcudnn_ops_infer.so.8", "nvidia-cudnn", "8"),
        ("libcudnn.so.9", "nvidia-cudnn", "9"),
        ("libcublasLt.so.12", "nvidia-cublas", "12"),
        ("libcudart.so.11.0", "nvidia-cuda-runtime", "11"),
        ("libnvJitLink.so.12", "nvidia-nvjitlink", "12"),
        ("libcuda.so", None, None),
    ],
)
def test_library_names_map_to_their_wheels(library: str, wheel: str | None, major: str | None) -> None:
    found = wheel_of(library)
    assert (found.name if found else None) == wheel
    assert soversion_major(library) == major


def test_a_missing_library_the_message_does_not_name_is_still_a_missing_library() -> None:
    unnamed = error("missing_library", "ImportError: cannot open shared object file")
    f = library_path(
        facts(torch=torch_runtime(outcome="failed", failed_stage="import"), reported_errors=(unnamed,))
    )
    assert "torch's import could not find a CUDA library" in f.summary
    assert first_command(f) == PIP_CHECK


@pytest.mark.parametrize(
    ("text", "symbol", "shown", "pip_name"),
    [
        # blind set 11's e04: flash-attn 2 loads its module at site-packages' top level, named bare
        (
            "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
            "_ZN3c104cuda9SetDeviceEi",
            "flash-attn's compiled extension (flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so)",
            "flash-attn",
        ),
        # blind set 11's e16: mmcv's ops, in its own folder; mmcv pins no torch either
        (
            "ImportError: /home/u/anaconda3/envs/b/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-"
            "gnu.so: undefined symbol: _ZN2at5sliceERKNS_6TensorElN3c108optionalIlEES5_l",
            "_ZN2at5sliceERKNS_6TensorElN3c108optionalIlEES5_l",
            "mmcv's compiled extension (mmcv/_ext.cpython-38-x86_64-linux-gnu.so)",
            "mmcv",
        ),
    ],
)
def test_an_extension_that_pins_no_torch_is_rebuilt_not_checked(
    text: str, symbol: str, shown: str, pip_name: str
) -> None:
    f = library_path(facts(reported_errors=(error("undefined_symbol", text, symbol=symbol),)))
    assert shown in f.summary
    assert f.remediation is not None
    first = f.remediation.commands[0].argv
    assert "--no-build-isolation" in first and "--no-deps" in first and first[-1] == f"{pip_name}==VERSION"
    assert (
        f.remediation.commands[0].runs_here is False
    )  # VERSION is the person's to fill in: never run as it is
    assert "pins no torch" in f.remediation.text and "this the" not in f.remediation.text


def test_a_bare_module_nobody_knows_stays_unnamed_and_reads_well() -> None:
    text = "my_op_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    f = library_path(
        facts(reported_errors=(error("undefined_symbol", text, symbol="_ZN3c104cuda9SetDeviceEi"),))
    )
    assert f.summary.startswith("A compiled extension was built for another torch release")
    assert (
        f.remediation is not None and f.remediation.commands[0].argv[-1] == "check"
    )  # pip check: it may pin
    assert "this the" not in f.remediation.text and "a the" not in f.remediation.text


@pytest.mark.parametrize(
    ("package", "installed", "spec"),
    [
        ("flash_attn_2_cuda", {"flash-attn": "2.5.7"}, "flash-attn==2.5.7"),  # a rebuild, not an upgrade
        ("mmcv", {"mmcv-full": "1.7.1"}, "mmcv-full==1.7.1"),  # mmcv 1.x is mmcv-full: never mmcv 2.x over it
        ("mmcv", {"mmcv": "2.1.0"}, "mmcv==2.1.0"),
        ("detectron2", {}, "git+https://github.com/facebookresearch/detectron2.git"),
    ],
)
def test_the_rebuild_keeps_the_installed_release(package: str, installed: dict[str, str], spec: str) -> None:
    fix = extension_abi_fix(package, f"{package}.so", installed=installed)
    assert fix.commands[0].argv[-1] == spec and fix.commands[0].runs_here is True


@pytest.mark.parametrize(
    ("package", "build_env"),
    [
        # flash-attn's setup.py downloads its release wheel again unless told to compile
        ("flash_attn_2_cuda", ("env", "FLASH_ATTENTION_FORCE_BUILD=TRUE")),
        ("mmcv", ("env", "MMCV_WITH_OPS=1", "FORCE_CUDA=1")),  # mmcv 1.x builds no ops without it
        ("detectron2", ()),
    ],
)
def test_a_rebuild_sets_what_the_package_needs_to_compile(package: str, build_env: tuple[str, ...]) -> None:
    argv = extension_abi_fix(package, f"{package}.so").commands[0].argv
    assert argv[: len(build_env)] == build_env and argv[len(build_env)] == "python"


def test_an_extension_with_a_wheel_page_per_torch_installs_the_one_built_for_it() -> None:
    fix = extension_abi_fix(
        "mmcv", "mmcv/_ext.so", installed={"mmcv-full": "1.2.3"}, torch_build=("1.5", "cu102")
    )
    assert fix.commands[0].argv[-3:] == (
        "mmcv-full==1.2.3",
        "-f",
        "https://download.openmmlab.com/mmcv/dist/cu102/torch1.5.0/index.html",
    )
    assert "--no-build-isolation" not in fix.commands[0].argv  # a wheel: no compiler needed
    assert "--only-binary" in fix.commands[0].argv  # never PyPI's newer source distribution
    unknown = extension_abi_fix("torch_scatter", "torch_scatter/_scatter.so", torch_build=("2.1", "cu121"))
    assert unknown.commands[0].argv[-3:] == (
        "torch-scatter==VERSION",
        "-f",
        "https://data.pyg.org/whl/torch-2.1.0+cu121.html",
    )
    assert unknown.commands[0].runs_here is False  # VERSION is the person's to fill in
    # mmcv for a torch 1.x without a version said is mmcv-full; a ROCm torch has no such page
    old = extension_abi_fix("mmcv", "mmcv/_ext.so", torch_build=("1.4", "cu101"))
    assert old.commands[0].argv[-3] == "mmcv-full==VERSION"
    rocm = extension_abi_fix("mmcv", "mmcv/_ext.so", torch_build=("2.1", "rocm5.6"))
    assert "-f" not in rocm.commands[0].argv


def test_a_module_path_glued_to_its_error_is_still_named() -> None:
    # open-mmlab/mmcv issues: "..._ext.cpython-37m-x86_64-linux-gnu.so:undefined symbol: ..." with no space
    text = (
        "/home/u/miniconda3/envs/py37/lib/python3.7/site-packages/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so"
        ":undefined symbol: _ZN3c106Symbol14fromQualStringERKSs"
    )
    f = library_path(
        facts(
            reported_errors=(error("undefined_symbol", text, symbol="_ZN3c106Symbol14fromQualStringERKSs"),)
        )
    )
    assert f.summary.startswith("mmcv's compiled extension (mmcv/_ext.cpython-37m-x86_64-linux-gnu.so)")
