"""Blind set 21's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: an operator with no CUDA kernel, cuDNN's own load errors (Windows and Linux), NVIDIA's driver library asked
for under ROCm, Triton's floor under a serving engine, launcher and pickling errors that are no GPU fault,
DeepSpeed's toolkit, out of memory said in words (English, Chinese), memory held after a job was stopped, one
GPU full beside free ones, a check that passes in another Python than the program's, an install that asked for
one CUDA and got another, a harmless bitsandbytes warning, a Dockerfile's container, the global Python's
interpreter, and what is asked of a paste with no Python in it."""

from __future__ import annotations

import json

import pytest

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.triage.asked import asked_cuda
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.triage.render import render_json, render_text


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


def rendered(d: PasteDiagnosis) -> str:
    import io  # the text report, for the lines a person reads

    out = io.StringIO()
    render_text(d, "paste", out)
    return out.getvalue()


def test_an_operator_without_a_cuda_kernel_is_its_packages_build() -> None:
    """vLLM#12441's title: "Could not run '_C::rms_norm' with arguments from the 'CUDA' backend"."""
    check, summary, first = cause_of(diagnosed("vllm-12441-vllm-extension-built-without-cuda.txt"))
    assert check == "torch.companions" and summary.startswith("The operator _C::rms_norm has no CUDA kernel")
    assert first.startswith("python -c") and "torch.version.cuda" in first
    # the CPU backend's form is another matter (a CUDA op asked on the CPU): not this entry
    assert not said(
        "NotImplementedError: Could not run 'aten::foo' with arguments from the 'CPU' backend.\n"
    ).pasted.hits


def test_cudnns_windows_load_error_126_is_its_missing_dependency() -> None:
    """whisper-ctranslate2#41: 'Could not load library cudnn_cnn_infer64_8.dll. Error code 126'."""
    check, summary, first = cause_of(diagnosed("whisper-ctranslate2-41-cudnn-zlib-missing-windows.txt"))
    assert check == "env.library_path" and "zlibwapi.dll" in summary
    assert first == "where zlibwapi.dll"


def test_a_library_cudnn_opens_by_name_is_that_library_not_cudnn() -> None:
    """sdnext#539: 'Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open ...'."""
    check, summary, first = cause_of(diagnosed("sdnext-539-cudnn-needs-libnvrtc.txt"))
    assert check == "env.library_path" and "opened libnvrtc.so by name" in summary
    assert first.startswith("find / -name 'libnvrtc.so*'")
    # cuDNN's own sub-library and the driver's libcuda keep their entries
    line = "Could not load library libcudnn_cnn_infer.so.8. Error: {}: cannot open shared object file"
    ids = {h.signature.id for h in said(line.format("libcudnn_ops_infer.so.8") + "\n").pasted.hits}
    assert "missing_library_for_cudnn" not in ids and "missing_library_ctranslate2_cudnn" in ids
    ids = {h.signature.id for h in said(line.format("libcuda.so") + "\n").pasted.hits}
    assert ids == {"missing_library_libcuda_unversioned"}


def test_nvidias_driver_library_asked_for_under_rocm_is_a_cuda_build_there() -> None:
    """sglang#4778: 'libcuda.so.1: cannot open shared object file' from sgl-kernel 'in the rocm environment'."""
    check, summary, first = cause_of(diagnosed("sglang-4778-cuda-only-package-on-rocm.txt"))
    assert check == "driver.installed" and "on a ROCm (AMD) machine" in summary
    assert "torch.version.hip" in first
    # the same line with no ROCm in sight is no driver here, as before
    line = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    check, summary, _ = cause_of(said(line))
    assert check == "driver.installed" and "ROCm" not in summary


def test_tritons_floor_keeps_its_own_fix_under_a_serving_engine() -> None:
    """pascal-pkgs-ci#23: Triton's 'too old' on a P40 under vLLM: run without Triton, not 'no vLLM runs here'."""
    check, summary, first = cause_of(diagnosed("pascal-pkgs-ci-23-triton-needs-sm70-pascal.txt"))
    assert check == "torch.arch_compat" and summary.startswith("The Tesla P40 is older than Triton supports")
    assert "triton.__file__" in first


@pytest.mark.parametrize(
    ("name", "check", "words"),
    [
        (
            "fastposegait-14-not-a-fault-launcher-usage.txt",
            "nccl.communication",
            "not a GPU or driver problem",
        ),
        ("llamafactory-7232-not-a-fault-library-version.txt", "torch.cuda_init", "not a GPU setup problem"),
    ],
)
def test_errors_that_are_no_gpu_fault_say_so(name: str, check: str, words: str) -> None:
    found, summary, _ = cause_of(diagnosed(name))
    assert found == check and words in summary


@pytest.mark.parametrize(
    ("name", "words"),
    [
        (
            "deepspeed-2902-cuda-toolkit-torch-mismatch-windows.txt",
            "differs from the CUDA torch was built with",
        ),
        ("deepspeed-2055-cuda-home-points-elsewhere.txt", "where torch's extension builder looks"),
    ],
)
def test_deepspeeds_toolkit_errors_are_read(name: str, words: str) -> None:
    check, summary, first = cause_of(diagnosed(name))
    assert check == "torch.companions" and words in summary and "CUDA_HOME" in first


@pytest.mark.parametrize(
    "name", ["magicquill-57-oom-model-too-big-for-gpu.txt", "nanodet-147-oom-other-process-on-gpu.txt"]
)
def test_out_of_memory_said_in_words_is_out_of_memory(name: str) -> None:
    """'# oom' over an idle T4's nvidia-smi; 'CUDA内存不足' with batchsize_per_gpu: 80."""
    d = diagnosed(name)
    check, _, _ = cause_of(d)
    assert check == "torch.out_of_memory" and d.result.confidence == "likely"


@pytest.mark.parametrize(
    "line",
    [
        "To avoid OOM I set the batch size to 1.",
        "The OOM killer ended the process.",
        "Memory usage: 10 GB of system RAM.",
        "The room is cold.",
    ],
)
def test_words_about_memory_are_not_an_out_of_memory(line: str) -> None:
    assert "oom_said_in_words" not in {h.signature.id for h in said(line + "\n").pasted.hits}


def test_memory_held_after_the_job_was_stopped_is_its_processes() -> None:
    """PaddleOCR#2074: '启动训练进程之后直接kill主进程显卡不会释放显存', nvidia-smi lists no process."""
    check, summary, first = cause_of(diagnosed("paddleocr-2074-orphan-processes-hold-gpu-memory.txt"))
    assert check == "torch.out_of_memory" and "still holds the GPU's memory" in summary
    assert first.startswith("sudo fuser -v /dev/nvidia")
    # the catalogue's entry reads the Chinese forms of it too, never memory that was freed
    for line in ("kill主进程显卡不会释放显存", "kill主进程后显存一直被占用"):
        assert {h.signature.id for h in said(line + "\n").pasted.hits} == {"gpu_memory_held_after_exit"}
    assert not said("训练结束后显存已经释放了\n").pasted.hits


def test_one_gpu_full_of_another_job_beside_free_ones_moves_the_job() -> None:
    """gpt2-chitchat#19: GPU 0 at 15514 of 16130 MiB (a TensorFlow job), GPUs 1-3 at 0 MiB, `--device 0`."""
    name = "gpt2-chitchat-19-oom-other-process-on-gpu.txt"
    check, summary, first = cause_of(diagnosed(name))
    assert check == "torch.out_of_memory" and "GPUs 1, 2, 3 hold nothing" in summary
    assert first.startswith("env CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1")
    # every GPU busy: no free one to move to
    text = (PASTES / name).read_text().replace("     0MiB / 16130MiB", " 15000MiB / 16130MiB")
    _, summary, first = cause_of(said(text))
    assert "hold nothing" not in summary and "CUDA_VISIBLE_DEVICES=1" not in first


@pytest.mark.parametrize(
    "line",
    [
        "# bug: [nvidia gpu can not enable]",
        "Why my Gpu isn't being recognized?",
        "Hello, I ran into the problem as indicated in the title",
    ],
)
def test_a_failure_said_in_these_words_is_one(line: str) -> None:
    assert read_prose([line]).fails is not None


def test_a_gpu_the_program_misses_while_the_users_test_sees_it_is_another_python() -> None:
    """ebook2audiobook#847: 'GPU not recognized by torch' from the app; True printed by the user's own check."""
    d = diagnosed("ebook2audiobook-847-not-a-fault-wrong-python-env.txt")
    check, summary, first = cause_of(d)
    assert check == "torch.cuda_init" and "another Python environment" in summary
    assert first.startswith("PYTHON -c") and d.result.confidence == "likely"
    # the check alone, with nothing said to fail, is no problem
    quiet = said('python -c "import torch; print(torch.cuda.is_available())"\n\nTrue\n')
    assert quiet.result.cause is None and quiet.pasted.prose.torch_works == 1


def test_an_install_that_asked_for_one_cuda_and_got_another() -> None:
    """pytorch#27745: `conda install pytorch torchvision cudatoolkit=10.1` gave pytorch 1.0.0 for CUDA 9.0 on
    driver 398.36 (CUDA <= 9.2): the driver first."""
    name = "pytorch-27745-conda-old-build-driver-too-old.txt"
    d = diagnosed(name)
    check, summary, _ = cause_of(d)
    assert check == "torch.driver_compat" and "runs CUDA ≤ 9.2, so no CUDA 10.1 build can run here" in summary
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "418.96" in fix.text
    # a driver new enough: the installer's choice, not the driver
    text = (
        (PASTES / name).read_text().replace("Nvidia driver version: 398.36", "Nvidia driver version: 431.86")
    )
    _, summary, _ = cause_of(said(text))
    assert "settled on another" in summary
    # asked and installed the same CUDA: nothing to say
    same = text.replace("cudatoolkit=10.1", "cudatoolkit=9.0")
    assert said(same).result.cause is None


def test_bitsandbytes_duplicate_runtime_warning_is_no_fault() -> None:
    """bitsandbytes#573: 'Found duplicate [libcudart.so, libcudart.so.11.0 ...]': one library's two names."""
    d = diagnosed("bitsandbytes-573-duplicate-cuda-runtime-libs.txt")
    assert d.result.cause is None and not d.result.exit_problem()
    assert "Harmless by itself" in rendered(d)


def test_a_dockerfile_is_a_container() -> None:
    """facechain#71: error 803 under a Dockerfile that sets NVIDIA_DISABLE_REQUIRE=true, on Kubernetes."""
    d = diagnosed("facechain-71-err803-container-newer-than-driver.txt")
    check, summary, first = cause_of(d)
    assert check == "torch.cuda_init" and "Error 803" in summary and first == "nvidia-smi"
    fix = d.result.cause.finding.remediation if d.result.cause else None
    # the Dockerfile's ENV line is named as what switched the toolkit's own check off
    assert fix is not None and fix.text.startswith("NVIDIA_DISABLE_REQUIRE (line 9 of the paste)")
    assert "Error 803 inside a container" in fix.text


def test_the_global_pythons_interpreter_is_its_python_exe() -> None:
    """sunone_aimbot#66: torch in C:\\Users\\USER\\AppData\\Local\\Programs\\Python\\Python311: the commands run its
    python.exe, never the folder."""
    _, _, first = cause_of(diagnosed("sunone_aimbot-66-windows-dll-dependency-missing.txt"))
    assert first.startswith("C:\\Users\\USER\\AppData\\Local\\Programs\\Python\\Python311\\python.exe -m pip")


def test_an_unknown_error_of_a_program_without_python_asks_for_its_gpus_own_listing() -> None:
    """llama.cpp#4762: 'CUDA error: invalid device function' from a HIP build on an AMD card: no torch report
    and no nvidia-smi to ask for, rocminfo; the same words on an NVIDIA machine ask nvidia-smi."""

    def asked(out: str) -> str:
        lines = out.splitlines()
        at = next(i for i, line in enumerate(lines) if line.strip().startswith("Next:"))
        return lines[at + 1].strip()

    assert asked(rendered(diagnosed("llama.cpp-4762-rocm-build-target-typo.txt"))) == "$ rocminfo"
    text = "./main -m model.gguf -ngl 50\nError: failed to load the model onto the device\n"
    assert asked(rendered(said(text))) == "$ nvidia-smi"


def test_a_cpu_build_conda_chose_for_a_cuda_its_release_never_had() -> None:
    """conda#11001: `conda install pytorch ... cudatoolkit=10.1 -c pytorch` planned
    'pytorch/win-64::pytorch-1.10.0-py3.6_cpu_0': 1.10 was built for CUDA 10.2, 11.1 and 11.3, so conda fell
    back to the CPU build; its plan row is read as the package list it is."""
    name = "conda-11001-conda-cpuonly-no-matching-cuda-build.txt"
    d = diagnosed(name)
    torch = next(lib for listing in d.pasted.packages for lib in listing.packages if lib.name == "pytorch")
    assert (torch.version, torch.build) == ("1.10.0", "py3.6_cpu_0")
    check, summary, first = cause_of(d)
    assert (
        check == "torch.cpu_build"
        and "torch 1.10.0 has no build for it (its CUDA builds: 10.2, 11.1, 11.3)" in summary
    )
    assert first.startswith("conda install pytorch==1.10.0") and "cudatoolkit=10.2" in first
    # asked for a CUDA the release has: no such sentence (why the solver passed it by is not in the data)
    _, summary, _ = cause_of(
        said((PASTES / name).read_text().replace("cudatoolkit=10.1", "cudatoolkit=10.2"))
    )
    assert "has no build for it" not in summary


def test_a_c_library_older_than_a_wheel_needs_is_the_distribution() -> None:
    """vLLM#6562's title: 'Failed to import from vllm._C with ImportError("/lib64/libc.so.6: version `GLIBC_2.32'
    not found' on CentOS 7: glibc, not an unbuilt source checkout; GLIBCXX keeps its own entry."""
    check, summary, first = cause_of(diagnosed("vllm-6562-glibc-too-old-for-binary.txt"))
    assert check == "env.library_path" and summary.startswith("A compiled module needs glibc 2.32 or newer")
    assert first == "ldd --version"
    ids = {h.signature.id for h in said("version `GLIBCXX_3.4.30' not found\n").pasted.hits}
    assert ids == {"library_path_glibcxx_too_old"}


def test_a_dll_that_does_not_load_comes_before_a_cpu_build_chosen_beside_it() -> None:
    """timesfm#330: '# WinError 127 - Error loading "torch_python.dll"' over 'torch version: 2.9.0+cpu' from
    /whl/cpu: the import that fails is the cause, never a CUDA build for a CPU user."""
    d = diagnosed("timesfm-330-windows-torch-dll-127.txt")
    check, summary, first = cause_of(d)
    assert check == "env.library_path" and summary.startswith("Windows could not load torch_python.dll")
    assert "whl/cu" not in first
    assert any(v.finding.check_id == "torch.cpu_build" for v in d.result.verdicts if v.kind == "problem")
    # the bare code in other words is no load error
    assert not said("Exit code 127: command not found\n").pasted.hits


@pytest.mark.parametrize(
    "line",
    [
        "Other programs work fine, only my training script crashes.",
        "I am running with driver 550.54.",
        "I closed all other applications, still the same error.",
        "It does not work on Windows either.",
    ],
)
def test_no_contrast_is_no_work_elsewhere(line: str) -> None:
    """An Xid 31 beside these words stays the program's own (code review of blind set 21's rule)."""
    assert read_prose([line]).fine_elsewhere is None
    title = (PASTES / "open-gpu-kernel-modules-1030-xid31-mmu-fault.txt").read_text().splitlines()[0]
    cause = said(f"{title}\n{line}\n").result.cause
    assert cause is not None and "usually their own bugs" in cause.finding.summary


@pytest.mark.parametrize(
    "line",
    [
        "My training script ran out of RAM.",
        "The worker got OOM-killed by the kernel.",
        "It doesn't OOM anymore after the update.",
        "为了避免显存不足我把batch改成了1",
    ],
)
def test_memory_words_that_are_no_gpu_out_of_memory(line: str) -> None:
    assert "oom_said_in_words" not in {h.signature.id for h in said(line + "\n").pasted.hits}


def test_words_before_a_real_error_do_not_outrank_it() -> None:
    text = (
        "To avoid getting out of memory errors I lowered the batch size to 1.\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    check, _, _ = cause_of(said(text))
    assert check != "torch.out_of_memory"


@pytest.mark.parametrize(
    "text",
    [
        # a running job's failure, not a GPU it cannot find
        'python -c "import torch; print(torch.cuda.is_available())"\nTrue\nTraining on the GPU fails to run after '
        "3 epochs, the loss becomes NaN.\n",
        # MPS, not CUDA
        "print(torch.backends.mps.is_available())\nTrue\nMy GPU is not detected by the app.\n",
        # False printed first
        "print(torch.cuda.is_available())\nFalse\nTrue\nMy GPU is not detected by the app.\n",
    ],
)
def test_no_other_python_without_a_gpu_not_found_beside_a_cuda_true(text: str) -> None:
    cause = said(text).result.cause
    assert cause is None or "another Python environment" not in cause.finding.summary


def test_collect_envs_rocm_label_is_no_rocm_machine() -> None:
    """'ROCM used to build PyTorch: N/A' is in every report: libcuda.so.1 beside it is no driver, not ROCm."""
    text = (
        "PyTorch version: 2.3.0+cu121\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\n"
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    )
    check, summary, _ = cause_of(said(text))
    assert check == "driver.installed" and "ROCm" not in summary


def test_a_full_gpu_holding_this_jobs_own_memory_is_not_moved() -> None:
    """When the error's own figures say this process holds the memory, moving to a free GPU is no answer."""
    name = "gpt2-chitchat-19-oom-other-process-on-gpu.txt"
    text = (
        (PASTES / name)
        .read_text()
        .replace(
            "RuntimeError: CUDA error: out of memory",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
            "of 15.75 GiB of which 12.00 MiB is free. Including non-PyTorch memory, this process has 15.15 GiB "
            "memory in use. Of the allocated memory 14.80 GiB is allocated by PyTorch, and 100.00 MiB is reserved "
            "by PyTorch but unallocated.",
        )
    )
    _, summary, _ = cause_of(said(text))
    assert "hold nothing" not in summary


@pytest.mark.parametrize(
    ("line", "counted"),
    [
        ("NVRM: Xid (PCI:0000:01:00): 31, pid=1, name=<unknown>, Ch 0000000a, intr 0.", False),
        ("NVRM: Xid (PCI:0000:01:00): 31, pid=2, name=VLLM::Worker_TP1, Ch 0000000a, intr 0.", False),
        ("NVRM: Xid (PCI:0000:01:00): 31, pid=3, name=ollama, Ch 0000000a, intr 0.", True),
    ],
)
def test_one_programs_processes_are_one_program(line: str, counted: bool) -> None:
    first = "NVRM: Xid (PCI:0000:01:00): 31, pid=9, name=VLLM::Worker_TP0, Ch 0000000a, intr 0."
    cause = said(f"{first}\n{line}\n").result.cause
    assert cause is not None and ("not one program's bug" in cause.finding.summary) is counted


def test_an_install_asked_for_a_cuda_the_driver_runs_by_minor_version_compatibility() -> None:
    """pytorch-cuda=11.8 asked, 2.0.1+cu117 installed, driver 470 (CUDA 11.4): 11.8 runs there through minor
    version compatibility, so the driver is not why."""
    text = (
        "conda install pytorch torchvision pytorch-cuda=11.8 -c pytorch -c nvidia\n"
        "PyTorch version: 2.0.1+cu117\nCUDA used to build PyTorch: 11.7\nIs CUDA available: True\n"
        "Nvidia driver version: 470.182.03\n"
    )
    cause = said(text).result.cause
    assert cause is not None and "no CUDA 11.8 build can run here" not in cause.finding.summary


@pytest.mark.parametrize(
    "line",
    [
        "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend.",
        "训练的时候调用torch.cuda.empty_cache()也不能释放显存",
        "Could not load library cudnn_ops64_9.dll. Error code 193",
        "INFO: Flash attention is not enabled, using SDPA.",
    ],
)
def test_lines_the_new_entries_must_not_read(line: str) -> None:
    ids = {h.signature.id for h in said(line + "\n").pasted.hits}
    assert not ids & {
        "companion_op_without_cuda_kernel",
        "gpu_memory_held_after_exit",
        "missing_library_cudnn_windows_dll",
    }


def test_a_programs_info_line_is_no_failure_said() -> None:
    assert read_prose(["INFO: Flash attention is not enabled, using SDPA."]).fails is None
    assert read_prose(["If you run into issues, please report them."]).fails is None


def test_a_conda_update_row_is_not_the_build_installed() -> None:
    line = "  pytorch    pytorch::pytorch-1.9.0-py3.8_cuda11.1_cudnn8_0 --> pytorch::pytorch-1.10.0-py3.8_cpu_0\n"
    assert not said(line).pasted.packages


def test_windows_long_form_of_error_127_names_its_dll() -> None:
    line = (
        '[WinError 127] The specified procedure could not be found. Error loading "C:\\x\\torch\\lib\\'
        'torch_python.dll" or one of its dependencies.\n'
    )
    hits = [h for h in said(line).pasted.hits if h.signature.id == "missing_library_winerror127"]
    assert hits and hits[0].values["library"] == "torch_python.dll"


def test_a_rocm_programs_missing_target_is_its_siblings_override() -> None:
    """ComfyUI#6656: 'HIP error: invalid device function' on a 7800 XT (gfx1101), a paste that never names torch:
    the program's ROCm build lacks gfx1101, so gfx1100's kernels stand in (HSA_OVERRIDE_GFX_VERSION=11.0.0)."""
    check, summary, first = cause_of(diagnosed("comfyui-6656-rocm-gfx1101-not-in-wheel.txt"))
    assert check == "amd.gfx_target" and "gfx1101" in summary
    assert first == "env HSA_OVERRIDE_GFX_VERSION=11.0.0 PROGRAM"
    # a target with no sibling in any build (RDNA1's gfx1012 family has none built) keeps the no-build answer
    _, _, first = cause_of(said("HIP error: invalid device function\nMy GPU is an RX 5500 XT (gfx1012).\n"))
    assert "HSA_OVERRIDE_GFX_VERSION" not in first


@pytest.mark.parametrize(
    ("text", "cuda", "conda"),
    [
        ("mamba install pytorch cudatoolkit=10.1 -c pytorch\n", "10.1", True),
        ("pip install torch --index-url https://download.pytorch.org/whl/cu118\n", "11.8", False),
    ],
)
def test_the_cuda_an_install_asks_for_and_whose_install_it_is(text: str, cuda: str, conda: bool) -> None:
    found = asked_cuda("some words first\n" + text)
    assert found is not None and (found.cuda, found.line, found.conda) == (cuda, 2, conda)
    assert asked_cuda("pip install torch\n") is None


def test_a_serving_engine_that_fails_without_its_error_on_a_gpu_before_ampere_gets_the_dtype_guess() -> None:
    """vllm#9791: "Can't start `vllm serve microsoft/Phi-3-small-8k-instruct`" and a collect_env of a V100, no
    error: the guess is the model's bfloat16 or its attention kernels, tested with --dtype half; collect_env's
    "ROCM used to build PyTorch: N/A" is no AMD machine, so rocminfo is never asked for."""
    d = diagnosed("vllm-9791-model-kernel-needs-newer-arch-v100.txt")
    assert d.result.cause is None and d.result.hunch is not None
    assert "Tesla V100-PCIE-32GB (compute capability 7.0" in d.result.hunch.text
    assert d.result.hunch.command == "vllm serve microsoft/Phi-3-small-8k-instruct --dtype half"
    out = rendered(d)
    assert "rocminfo" not in out
    assert out.index("Likeliest on the machine shown") < out.index("Next: paste the error")
    document = json.loads(render_json(d, "paste", 1))
    assert document["likeliest_without_the_error"]["command"] == d.result.hunch.command
    assert document["cause"] is None
    # the same words on an Ampere card, or with no serving engine, guess nothing
    text = PASTES.joinpath("vllm-9791-model-kernel-needs-newer-arch-v100.txt").read_text(encoding="utf-8")
    assert said(text.replace("Tesla V100-PCIE-32GB", "NVIDIA A100-SXM4-80GB")).result.hunch is None
    plain = text.replace("vllm serve", "python train.py").replace("vllm/", "app/").replace("vllm.", "app.")
    assert said(plain).result.hunch is None


def test_an_extension_beside_others_in_an_extensions_folder_is_rebuilt_from_its_own_folder() -> None:
    """goliath#23: extensions/sgutils/sgutilslib...so was built by extensions/sgutils/setup.py, so the rebuild
    names that folder; a package's own _C.so (segment-anything-2/sam2/_C.so) still names the checkout's root."""
    _, _, first = cause_of(diagnosed("goliath-23-extension-torch-abi-mismatch.txt"))
    assert first.endswith("-e /home/guoyang/GMS/gaussian-mesh-splatting/extensions/sgutils")
    line = (
        "ImportError: /data/levi/segment-anything-2/sam2/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    _, _, first = cause_of(said(line))
    assert first.endswith("-e /data/levi/segment-anything-2")


def test_a_message_the_person_quotes_from_hearsay_is_no_error_and_bf16_false_before_ampere_is_expected() -> (
    None
):
    """pytorch#124996: "It is said that bfloat16 is only supported on GPUs with compute capability of at least
    8.0" quotes vLLM's message, no program printed it; is_bf16_supported() False on a V100 under torch 2.2 is
    expected (bf16 runs there by emulation): no cause, exit 0, and the entry says why."""
    d = diagnosed("pytorch-124996-not-a-fault-bf16-emulated-on-volta.txt")
    assert d.result.cause is None and d.result.unrecognised is None
    assert [h.signature.id for h in d.pasted.hits] == ["other_bf16_supported_false_before_ampere"]
    assert "line 18: torch.cuda.is_bf16_supported() said False" in rendered(d)
    message = "bfloat16 is only supported on GPUs with compute capability of at least 8.0"
    for quoted in (
        f"It is said that {message}.",
        f"I read that {message}",
        f"According to the docs, {message}.",
    ):
        assert not said(quoted + "\n").pasted.hits, quoted
    for printed in (f"ValueError: B{message[1:]}. Your Tesla V100 GPU has compute capability 7.0.", message):
        assert [h.signature.id for h in said(printed + "\n").pasted.hits] == ["other_bfloat16_needs_cc80"]


def test_bitsandbytes_banner_then_its_cpu_library_says_torch_saw_no_gpu() -> None:
    """bitsandbytes#779: 0.41's banner, then libbitsandbytes_cpu.so with no CUDA SETUP step between, on a
    Studio Lab CPU session: torch's own check comes first, the upgrade after it. A log where its CUDA search ran
    (a CUDA runtime path found) or a Windows install keeps the upgrade first."""
    name = "bitsandbytes-779-bnb-cpu-only-no-gpu.txt"
    _, summary, first = cause_of(diagnosed(name))
    assert summary.startswith("bitsandbytes loaded its CPU library because torch saw no CUDA GPU")
    assert first.endswith("-c 'import torch; print(torch.__version__, torch.cuda.is_available())'")
    text = PASTES.joinpath(name).read_text(encoding="utf-8")
    searched = text.replace(
        "bin /home", "CUDA SETUP: CUDA runtime path found: /usr/lib/libcudart.so\nbin /home"
    )
    _, summary, first = cause_of(said(searched))
    assert not summary.startswith("bitsandbytes loaded its CPU library because") and "pip install" in first
    _, summary, _ = cause_of(said(text.replace("/", "\\").replace("\\home\\", "C:\\Users\\")))
    assert not summary.startswith("bitsandbytes loaded its CPU library because")
