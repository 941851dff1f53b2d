"""Blind set 24's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: a bf16 matrix multiply cuBLAS refuses, cuBLAS's own undefined symbols, torchaudio's CUDA mismatch, an error
number said in words, a check script's labelled printout, pip's words on single packages, and a launch failure
with nothing said of a suspend."""

from __future__ import annotations

import io

import pytest

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.render import render_text
from torch_gpu_doctor.unavailable import Unavailable


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


def text_of(d: PasteDiagnosis) -> str:
    out = io.StringIO()
    render_text(d, "paste", out)
    return out.getvalue()


def test_a_bf16_matrix_multiply_cublas_refuses_is_the_gpu_without_bf16() -> None:
    """MinerU#1508 (Tesla M40) and DeepSpeed#6723 (ds_report, then the same refusal): CUDA_R_16BF operands.
    The program's dtype is the fix, not another cuBLAS; without bf16 operands the general entry stays."""
    for name in (
        "mineru-1508-m40-bf16-cublas-not-supported.txt",
        "deepspeed-6723-ds-report-bf16-cublas-not-supported.txt",
    ):
        _, summary, first = cause_of(diagnosed(name))
        assert summary.startswith("cuBLAS refused a bfloat16 matrix multiply"), name
        assert "get_device_capability()" in first
    _, summary, _ = cause_of(diagnosed("whisper-standalone-493-rtx5060-cublas-not-supported.txt"))
    assert "bfloat16" not in summary


def test_cublas_undefined_symbol_is_a_second_cublas_on_the_path() -> None:
    """doods2#71: the pip wheel's libcublas.so.11 meets another libcublasLt.so.11 in a CUDA image."""
    check, summary, first = cause_of(diagnosed("doods2-71-docker-cublaslt-undefined-symbol.txt"))
    assert check == "env.library_path" and "another version was loaded" in summary
    assert first.startswith("env -u LD_LIBRARY_PATH python")


def test_torchaudio_built_for_another_cuda_is_a_companion_mismatch() -> None:
    check, summary, _ = cause_of(diagnosed("autocut-106-torchaudio-cuda-117-vs-torch-118.txt"))
    assert check == "torch.companions" and "built for another torch or CUDA" in summary


def test_an_error_number_said_in_words_is_that_error() -> None:
    """ComfyUI#10415: "gives an error 803" with the traceback cut: libcuda and the kernel module differ."""
    _, summary, first = cause_of(diagnosed("comfyui-10415-linux-error-803-launch.txt"))
    assert "803" in summary and first == "nvidia-smi"
    assert said("The job failed with error 8031 on the queue.\n").result.cause is None


def test_a_check_scripts_labelled_printout_is_read() -> None:
    """RCAN#143 prints torch's answers under Chinese labels; InvokeAI#3967 as `torch version = ...`. A bare
    "cuda version" beside no torch version is anyone's CUDA (nvidia-smi's, nvcc's), not torch's."""
    facts = diagnosed("rcan-143-rtx3090-torch041-cudnn-exec-failed.txt").facts
    assert facts.torch_packages.version == "0.4.1" and facts.torch_packages.cuda == "9.2"  # type: ignore[union-attr]
    facts = diagnosed("invokeai-3967-rx6600xt-gfx1032-hsa-override-not-exported.txt").facts
    assert facts.torch_packages.version == "2.2.1+rocm5.7"  # type: ignore[union-attr]
    assert facts.torch.cuda_available is True  # type: ignore[union-attr]
    alone = said("cuda version = 12.1\nit fails\n").facts.torch_packages
    assert isinstance(alone, Unavailable) or alone.cuda is None


def test_pip_show_and_already_satisfied_give_torch_not_the_list() -> None:
    """DeepSpeed#5312's `pip show torch` (2.2.1, NVIDIA's cu12 wheels in Requires: PyPI's cu121 build) and a
    pip install's "Requirement already satisfied: torch in ... (1.12.1+rocm5.1.1)" name torch; neither is a list
    of what is installed, so nothing is said of torchvision or the nvidia-* wheels."""
    d = diagnosed("deepspeed-5312-pip-show-torch-cu12-vs-nvcc-118.txt")
    assert d.facts.torch_packages.version == "2.2.1" and d.facts.torch_packages.cuda == "12.1"  # type: ignore[union-attr]
    shown = text_of(d)
    assert "Neither torchvision nor torchaudio" not in shown and "requires no nvidia-* wheel" not in shown
    d = diagnosed("sd-rocm-docker-1-hip-no-binary-for-gpu.txt")
    assert d.facts.torch_packages.version == "1.12.1+rocm5.1.1"  # type: ignore[union-attr]
    assert any(p.kind == "pip_list" for p in d.pasted.parts)
    # without NVIDIA's wheels beside it, an untagged torch's build is not known
    cut = (PASTES / "deepspeed-5312-pip-show-torch-cu12-vs-nvcc-118.txt").read_text().replace("nvidia-", "x-")
    assert isinstance(said(cut).facts.torch_packages, Unavailable)  # version alone: its build is not known


def test_a_launch_failure_hours_into_training_reads_the_xid_first() -> None:
    """FastVideo#1008 and cryoSBI#66: 'unspecified launch failure' hundreds of steps in, nothing about a sleep."""
    for name in (
        "fastvideo-1008-unspecified-launch-failure-nccl-watchdog.txt",
        "cryosbi-66-unspecified-launch-failure-after-18h.txt",
    ):
        _, summary, first = cause_of(diagnosed(name))
        assert first == "sudo dmesg --level=err,warn", name
        assert "nothing says the machine slept" in summary


def test_a_torch_built_before_the_gpus_architecture_has_no_kernels_for_it() -> None:
    """RCAN#143: torch 0.4.1 (CUDA 9.2, a release the data does not know) on an RTX 3090 (8.6; its major was first
    compiled by CUDA 11.0): no cubin of it runs there, whatever cuDNN then says. A CUDA that knows Ampere is no
    such problem, nor a CUDA 9.2 build on a 7.5 Turing card (its sm_70 cubins run there: detectron2#55)."""
    name = "rcan-143-rtx3090-torch041-cudnn-exec-failed.txt"
    check, summary, first = cause_of(diagnosed(name))
    assert check == "torch.arch_compat"
    assert "built with CUDA 9.2, older than CUDA 11.0" in summary and "RTX 3090" in summary
    assert "--index-url https://download.pytorch.org/whl/cu1" in first
    newer = (PASTES / name).read_text().replace("9.2.148", "11.1.74")
    cause = said(newer).result.cause
    assert cause is None or "older than CUDA" not in cause.finding.summary
    _, summary, _ = cause_of(diagnosed("detectron2-55-detectron2-env-cuda-home-none-no-nvcc.txt"))
    assert "older than CUDA" not in summary  # torch 1.3.0+cu92 on an RTX 2080 Ti


def test_the_first_cuda_of_each_architecture_is_sourced_data() -> None:
    from torch_gpu_doctor.compat import CompatDataError, load_matrix, parse_matrix

    matrix = load_matrix()
    assert matrix.first_cuda_for("8.6") == "11.1" and matrix.first_cuda_for("12.0") == "12.8"
    assert matrix.first_cuda_for("3.5") is None  # not in the table: nothing is inferred
    import json

    from torch_gpu_doctor.package_data import package_text

    data = json.loads(package_text("torch_gpu_doctor.compat", "cuda_matrix.json"))
    for bad in ({"8.6": "eleven"}, {"sm_86": "11.1"}):
        with pytest.raises(CompatDataError):
            parse_matrix({**data, "first_cuda_for_cc": bad})
    with pytest.raises(CompatDataError):
        parse_matrix({k: v for k, v in data.items() if k != "first_cuda_for_cc_source"})


def test_a_container_without_its_gpus_is_said_in_the_headline_too() -> None:
    """gpu-jupyter#22: a test container started with --gpus sees the driver, the notebook's container has no
    nvidia-smi: the headline and the fix both say the container was started without the GPUs."""
    _, summary, first = cause_of(diagnosed("gpu-jupyter-22-docker-missing-gpus-flag.txt"))
    assert summary.startswith("torch.cuda.is_available() is False inside a container where no NVIDIA driver")
    assert first == "docker run --gpus all IMAGE"


def test_the_cpu_said_as_the_setup_is_the_programs_device_choice() -> None:
    """xtts2-ui#28: "(I am using CPU only)" and "Torch not compiled with CUDA enabled": the program must choose
    the CPU; a CUDA build is not what is missing. "Running on CPU only even though I have a 3090" is the
    complaint of someone who wants the GPU."""
    _, summary, first = cause_of(diagnosed("xtts2-ui-28-cpu-only-user-hardcoded-cuda.txt"))
    assert "the program, not torch, has to choose the CPU" in summary and first == ""
    wants_gpu = "I'm running on CPU only even though I have an RTX 3090\nAssertionError: Torch not compiled with CUDA enabled\n"
    _, summary, first = cause_of(said(wants_gpu))
    assert "CPU-only build" in summary and "--index-url https://download.pytorch.org/whl/cu" in first


def test_a_program_fault_xid_is_the_programs_not_an_oom_nor_the_gpus() -> None:
    """llama.cpp#27105: Xid 31 from llama-server, and the words "not a true VRAM capacity OOM": the program's
    fault (no GPU reset), never out of memory; "it goes OOM" alone still is."""
    check, summary, first = cause_of(diagnosed("llama.cpp-27105-xid31-mtp-tesla-m40.txt"))
    assert check == "driver.xid_errors" and "from llama-server" in summary
    # since blind set 30 the run that names the faulting kernel comes first, compute-sanitizer after it
    assert first == "env CUDA_LAUNCH_BLOCKING=1 PROGRAM"
    check, _, _ = cause_of(said("Training on my 3090 goes OOM at step 200.\n"))
    assert check == "torch.out_of_memory"


def test_a_gpu_pod_stuck_pending_is_the_node_not_advertising_gpus() -> None:
    """k8s-device-plugin#176: `kubectl get pods` shows the GPU pod Pending on Kubernetes 1.18 (pods through
    Docker): Docker's default runtime. A newer Kubernetes, or containerd said, gets containerd's; a Running pod
    is no such failure."""
    name = "k8s-device-plugin-176-gpu-pod-pending.txt"
    check, _, first = cause_of(diagnosed(name))
    assert check == "platform.container_gpus"
    assert first == "sudo nvidia-ctk runtime configure --runtime=docker --set-as-default"
    text = (PASTES / name).read_text()
    _, _, first = cause_of(said(text.replace("kubernetes 1.18.2", "kubernetes 1.28.2")))
    assert first == "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default"
    running = said(
        "$ kubectl get pods\nNAME      READY   STATUS    RESTARTS   AGE\ngpu-pod   1/1     Running   0          24h\n"
    )
    assert all(h.signature.id != "container_k8s_pod_pending" for h in running.pasted.hits)


def test_an_ib_queue_pair_timeout_is_reachability_not_memlock() -> None:
    """NVIDIA/nccl#2013: ibv_modify_qp failed with 110 at INIT to RTR: the ports cannot reach each other as
    paired (NCCL_CROSS_NIC=0 fixed it); other verbs failures keep the general InfiniBand answer."""
    _, summary, first = cause_of(diagnosed("nccl-2013-ibv-modify-qp-timeout-cross-nic.txt"))
    assert "timed out between two ports" in summary and first.startswith("env NCCL_CROSS_NIC=0")
    other = "host:1:1 [0] NCCL WARN Call to ibv_create_qp failed with 12 Cannot allocate memory\n"
    _, summary, _ = cause_of(said(other))
    assert "timed out" not in summary


def test_a_build_for_the_gpu_said_to_be_installed_already_is_another_python() -> None:
    """RVC#2636: the sm_120 warning, and "已经试过...更换torch...至最新的nightly版本" (get_arch_list() has sm_120):
    the program runs another Python's torch, which is asked first. A driver said to be installed is not it."""
    _, _, first = cause_of(diagnosed("rvc-2636-rtx5070ti-sm120-old-bundled-torch.txt"))
    assert first.startswith("python -c 'import sys, torch; print(sys.executable")
    warning = (PASTES / "rvc-2636-rtx5070ti-sm120-old-bundled-torch.txt").read_text().split("经")[0]
    _, _, first = cause_of(said(warning + "I already installed the nightly cu128 build.\n"))
    assert first.startswith("python -c 'import sys, torch; print(sys.executable")
    _, _, first = cause_of(said(warning + "I already installed the 570 driver.\n"))
    assert not first.startswith("python -c 'import sys, torch")


def test_what_a_paste_rules_out_is_said_once_and_without_an_invented_count() -> None:
    """InvokeAI#3967: is_available() True in a check script, no device list: "CUDA works", never "0 device(s)";
    and two checks' same sentence about the ROCm build is shown once."""
    shown = text_of(diagnosed("invokeai-3967-rx6600xt-gfx1032-hsa-override-not-exported.txt"))
    assert "CUDA works in torch 2.2.1+rocm5.7." in shown and "0 device(s)" not in shown
    assert shown.count("torch 2.2.1+rocm5.7 is a ROCm 5.7 build.") == 1


def test_the_cuda_malloc_async_wording_is_not_only_a_memory_fraction() -> None:
    """ComfyUI#1443: 'Allocation on device 0 would exceed allowed memory' is the cudaMallocAsync allocator's
    out-of-memory (ComfyUI's default backend), not only a per-process memory fraction."""
    d = diagnosed("comfyui-1443-6gb-vram-oom-after-update.txt")
    assert d.result.cause is not None
    assert "cudaMallocAsync" in d.result.cause.finding.details


def test_an_illegal_address_beside_a_servers_optional_kernels_runs_without_them_first() -> None:
    """vllm#5376: an illegal memory access from vLLM started with --enable-prefix-caching and a forced
    FLASH_ATTN backend: the same command without them first; the same error with no such option keeps
    CUDA_LAUNCH_BLOCKING=1 first."""
    name = "vllm-5376-illegal-memory-access-prefix-caching-gptq.txt"
    d = diagnosed(name)
    _, _, first = cause_of(d)
    assert first == "SERVER_COMMAND"
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "drop --enable-prefix-caching" in d.result.cause.finding.remediation.text
    plain = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    _, _, first = cause_of(said(plain))
    assert first.startswith("env CUDA_LAUNCH_BLOCKING=1")


def test_each_kernel_feature_row_is_sourced_and_matches_its_option() -> None:
    from torch_gpu_doctor.compat import CompatDataError
    from torch_gpu_doctor.compat.kernel_features import (
        features_in,
        load_kernel_features,
        parse_kernel_features,
    )

    assert all(f.source and f.without for f in load_kernel_features())
    shown = "vllm serve m --enable-chunked-prefill --kv-cache-dtype fp8_e5m2 --speculative-config '{...}'"
    assert [f.feature for f, _ in features_in(shown)] == [
        "vLLM's chunked prefill",
        "speculative decoding",
        "an FP8 KV cache",
    ]
    assert features_in("vllm serve m --max-model-len 4096") == []
    with pytest.raises(CompatDataError):
        parse_kernel_features({"features": [{"feature": "x", "words": "(", "without": "w", "source": "s"}]})


def test_nvcc_of_another_major_than_torch_where_the_paste_builds_against_torch() -> None:
    """DeepSpeed#5312: nvcc -V says 11.8, pip show's torch 2.2.1 requires NVIDIA's cu12 wheels (PyPI's cu121
    build), and `pip install deepspeed` builds against it: torch's extension builder refuses another major. No
    build in the paste, or the same major, is no such problem."""
    name = "deepspeed-5312-pip-show-torch-cu12-vs-nvcc-118.txt"
    _, summary, _ = cause_of(diagnosed(name))
    assert (
        summary
        == "A CUDA extension is being built with CUDA 11.8's nvcc, but torch was built with CUDA 12.1."
    )
    text = (PASTES / name).read_text()
    for other in (
        text.replace("pip install deepspeed", "python train.py"),
        text.replace("release 11.8", "release 12.4"),
    ):
        assert all(
            h.signature.id != "other_cpp_extension_cuda_version_mismatch" for h in said(other).pasted.hits
        )


def test_a_training_log_that_resumes_or_sleeps_in_code_did_not_suspend() -> None:
    """'Resuming from checkpoint' and a traceback's time.sleep() say nothing of a machine that slept."""
    log = (
        "Resuming from checkpoint step 1200\n"
        '  File "train.py", line 88, in wait\n    time.sleep(5)\n'
        "RuntimeError: CUDA error: unspecified launch failure\n"
    )
    _, summary, first = cause_of(said(log))
    assert first == "sudo dmesg --level=err,warn" and "nothing says the machine slept" in summary


def test_an_nccl_debug_log_is_read_even_without_a_warn_line() -> None:
    """NVIDIA/nccl#1637: NCCL_DEBUG=INFO lines only (the excerpt ends before any WARN): a log triage reads, never
    "found nothing it knows"; the same words in a sentence are no log."""
    d = diagnosed("nccl-1637-rtx5090-nccl-2.25-cuda12.2.txt")
    assert [p.kind for p in d.pasted.parts] == ["nccl_log"] and not d.pasted.empty
    assert said("Should I set NCCL INFO logging on?\n").pasted.empty


def test_xformers_built_for_the_torch_you_have_is_its_load_error_not_a_mismatch() -> None:
    """xformers#1250: 'PyTorch 2.6.0+cu118 with CUDA 1107 (you have 2.6.0+cu118)': the version check is not
    why the kernels do not load, so XFORMERS_MORE_DETAILS=1 shows the error. Another torch, or a CPU torch, in
    the 'you have' part stays the mismatch it is."""
    check, summary, first = cause_of(diagnosed("xformers-1250-xformers-info-cant-load-extensions.txt"))
    assert check == "torch.companions" and "built for the very torch installed (2.6.0+cu118)" in summary
    assert first == "env XFORMERS_MORE_DETAILS=1 python -m xformers.info"
    for name in (
        "comfyui-supir-35-xformers-built-for-torch220-have-212.txt",  # 2.2.0+cu121, you have 2.1.2+cu121
        "mistral-inference-59-xformers-you-have-cpu-torch.txt",  # you have 2.1.0+cpu
    ):
        _, summary, first = cause_of(diagnosed(name))
        assert "very torch installed" not in summary and "XFORMERS_MORE_DETAILS" not in first, name
    warning = (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cu121)\n"
        "    Python  3.10.11 (you have 3.10.11)\n"
    )
    _, summary, _ = cause_of(said(warning))
    assert "very torch installed (2.1.2+cu121)" in summary
    _, summary, _ = cause_of(said(warning.replace("(you have 2.1.2+cu121)", "(you have 2.1.2+cu1210)")))
    assert "very torch installed" not in summary
