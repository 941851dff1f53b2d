"""Blind set 31's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: messages people cut or reword (Docker's device-driver refusal without its quotes, the container
runtime's requirement cut at its condition, older NCCL's system-error wording), programs' own GPU errors
(onnxruntime's CUDA provider, torch's missing MPS operator, a kernel's illegal address on Windows), the GPU's
firmware hanging (GSP timeouts, Xid 154's reset), NVML inside WSL, and InfiniBand that TCP already ruled in."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from torch_gpu_doctor.checks.support.signatures import match_line
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "said.txt")


def _ids(line: str) -> set[str]:
    return {h.signature.id for h in match_line(line, 1)}


def test_docker_refusing_the_gpu_is_read_with_or_without_the_drivers_quoted_name() -> None:
    """LocalAI#4511: "could not select device driver with capabilities: [[gpu]]", the quotes dropped (exit 2:
    'found nothing it knows')."""
    check, _summary, first = cause_of(diagnosed("localai-4511-could-not-select-device-driver.txt"))
    assert check == "platform.container_gpus" and first.startswith("sudo nvidia-ctk runtime configure")
    wanted = "container_could_not_select_device_driver"
    assert wanted in _ids(
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'
    )
    assert wanted in _ids("could not select device driver with capabilities: [[gpu]]")
    assert wanted not in _ids("could not select device driver with capabilities: [[compute]]")


def test_a_container_requirement_cut_at_its_condition_is_still_the_host_driver() -> None:
    """text-generation-inference#1391: 'unsatisfied condition: cu' (the line cut) was an unknown error."""
    check, summary, first = cause_of(diagnosed("tgi-1391-nvidia-container-cli-requirement-cuda121.txt"))
    assert check == "platform.container_gpus" and "requirement the container image declares" in summary
    assert first == "nvidia-smi"
    whole = "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver"
    assert _ids(whole) & {"driver_too_old_container_cuda_requirement"}
    assert "driver_too_old_container_requirement_cut" not in _ids(whole)  # the whole line keeps its CUDA


def test_onnxruntimes_cuda_provider_that_does_not_load_is_its_cuda_and_cudnn() -> None:
    """facefusion#294: LoadLibrary error 126 for onnxruntime_providers_cuda (an unknown error before)."""
    _check, summary, first = cause_of(diagnosed("facefusion-294-onnxruntime-loadlibrary-126.txt"))
    assert "onnxruntime-gpu could not load its CUDA provider" in summary
    assert "get_available_providers" in first
    linux = (
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open"
    )
    assert "other_onnxruntime_cuda_provider_not_loaded" in _ids(linux)
    assert "other_onnxruntime_cuda_provider_not_loaded" not in _ids("LoadLibrary failed with error 126")


def test_an_operator_mps_lacks_gets_torchs_own_fallback() -> None:
    """insanely-fast-whisper#219: aten::isin not implemented for MPS (an unknown error before)."""
    _check, summary, first = cause_of(diagnosed("insanely-fast-whisper-219-mps-isin-not-implemented.txt"))
    assert "aten::isin.Tensor_Tensor_out" in summary and "MPS" in summary
    assert first == "env PYTORCH_ENABLE_MPS_FALLBACK=1 PROGRAM"


def test_an_illegal_address_where_no_kernel_log_is_read_is_still_the_programs_kernel() -> None:
    """llama.cpp#5990: Ollama on Windows (no kernel-log check there) left the known line unexplained."""
    check, summary, first = cause_of(diagnosed("llama-cpp-5990-ollama-gemma-illegal-memory-access.txt"))
    assert "illegal memory access" in summary and "bug in the program" in summary
    assert "CUDA_LAUNCH_BLOCKING=1" in first
    # on Linux the kernel-log check still speaks for it (its Xid tells program from GPU)
    linux = said(
        "Traceback (most recent call last):\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
        "Linux-6.8.0-45-generic-x86_64-with-glibc2.35\n"
    )
    check, _, _ = cause_of(linux)
    assert check == "driver.xid_errors"


def test_gsp_firmware_that_stops_answering_is_a_failure_with_or_without_xid_lines() -> None:
    """open-gpu-kernel-modules#1200: GSP heartbeat timeouts, then Xid 154 'GPU Reset Required', read as 'only
    informational Xid lines' and 'No problem found' (exit 0)."""
    d = diagnosed("open-gpu-kernel-modules-1200-rtx5080-gsp-heartbeat-xid154.txt")
    check, summary, _first = cause_of(d)
    assert check == "driver.xid_errors" and "GSP firmware stopped answering" in summary
    assert d.result.cause is not None and "another driver release" in (
        d.result.cause.finding.remediation.text if d.result.cause.finding.remediation else ""
    )


def test_xid_154_is_a_fault_when_it_asks_for_a_recovery_and_news_when_it_asks_for_none() -> None:
    head = "Linux-6.8.0-45-generic-x86_64-with-glibc2.35\n"
    reset = said(
        head
        + "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
    )
    check, summary, _ = cause_of(reset)
    assert check == "driver.xid_errors" and "faults" in summary
    none = said(
        head
        + "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)\n"
    )
    assert none.result.cause is None or none.result.cause.finding.check_id != "driver.xid_errors"


def test_nvml_failing_inside_wsl_asks_wsls_own_nvidia_smi_first() -> None:
    """WSL#11755: 'Failed to initialize NVML: N/A' read nothing (exit 0: 'No problem found')."""
    check, summary, first = cause_of(diagnosed("wsl-11755-nvml-na-in-wsl.txt"))
    assert check == "driver.nvml" and "inside WSL" in summary and "N/A" in summary
    assert first == "/usr/lib/wsl/lib/nvidia-smi"
    # outside WSL the same words are a device-access question, not WSL's libraries
    host = said("Linux-6.8.0-45-generic-x86_64-with-glibc2.35\nFailed to initialize NVML: N/A\n")
    check, summary, first = cause_of(host)
    assert check == "driver.nvml" and "WSL" not in summary and first != "/usr/lib/wsl/lib/nvidia-smi"


def test_nccl_system_error_that_tcp_avoids_is_infinibands_locked_memory() -> None:
    """nccl#834: NCCL 2.10's 'System call (socket, malloc, munmap, etc) failed' over IB, 'works fine through TCP
    (NCCL_IB_DISABLE=1)': 'No problem found' before."""
    check, summary, first = cause_of(diagnosed("nccl-834-ncclsystemerror-ib.txt"))
    assert check == "nccl.communication" and "InfiniBand" in summary and "locked-memory" in summary
    assert first == "prlimit --memlock"
    # without the person's words the system error asks NCCL for its reason, not for the memlock limit
    alone = said("ncclSystemError: System call (socket, malloc, munmap, etc) failed.\n")
    _, summary, first = cause_of(alone)
    assert "locked-memory" not in summary and "NCCL_DEBUG=INFO" in first
    assert "nccl_ib_disable_cures_it_words" not in _ids("NCCL INFO NCCL_IB_DISABLE set by environment to 0.")
    for denied in (
        "It still doesn't work with NCCL_IB_DISABLE=1",
        "Setting NCCL_IB_DISABLE=1 does not work either",
    ):
        assert "nccl_ib_disable_cures_it_words" not in _ids(denied), denied


def test_nvswitch_errors_are_the_fabric_between_the_gpus() -> None:
    """open-gpu-kernel-modules#1118: SXid lines from nvidia-nvswitch under vLLM ('says it fails, shows no error')."""
    _check, summary, first = cause_of(diagnosed("open-gpu-kernel-modules-1118-a100-nvswitch-sxid.txt"))
    assert "NVSwitch fabric" in summary and "SXid 24007" in summary
    assert first == "systemctl status nvidia-fabricmanager"
    assert "nvswitch_sxid_event" not in _ids(
        "NVRM: Xid (PCI:0000:01:00): 79, pid=123, GPU has fallen off the bus."
    )


def test_a_runtime_newer_than_the_gpus_last_driver_is_no_driver_update() -> None:
    """wyoming-whisper-gpu#12: a Kepler GT 710 (R470, CUDA 11.4) under CTranslate2's CUDA 12 runtime was told to
    update the host driver, which no longer exists for it."""
    d = diagnosed("wyoming-whisper-gpu-12-gt710-driver-insufficient.txt")
    _, summary, first = cause_of(d)
    assert "No driver for this GPU runs it" in summary
    assert first.endswith("-m pip install ctranslate2==3.24.0")
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "update the driver" not in fix.text and "R470" in fix.text
    # a Kepler still below its last branch (R418: CUDA 10.1) gets that branch first: the CUDA 11 build needs R450+
    older = said(
        "NVIDIA-SMI 418.226.00   Driver Version: 418.226.00   CUDA Version: 10.1\n"
        "|   0  GeForce GT 710      Off  | 00000000:01:00.0 N/A |                  N/A |\n"
        '  File "/app/lib/python3.10/site-packages/faster_whisper/transcribe.py", line 130, in __init__\n'
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
    )
    _, summary, _ = cause_of(older)
    assert "No driver for this GPU runs it" not in summary
    # Maxwell and Pascal's last branch (R580) runs CUDA 12 and 13: there the driver update stays the fix
    for name in (
        "gptsovits-1048-ctranslate2-cuda12-driver515.txt",
        "faster-whisper-1229-unraid-docker-p40-no-gpu-passed.txt",
    ):
        _, summary, _ = cause_of(diagnosed(name))
        assert "No driver for this GPU runs it" not in summary, name


def test_a_failure_a_restart_already_clears_gets_what_stops_it_coming_back() -> None:
    """k8s-device-plugin#1431 (a node's mismatch that its reboot clears) and pytorch#159954 (CUDA's unknown error
    that reloading nvidia_uvm clears) were told to reboot and to reload: the step they had."""
    _, _, first = cause_of(diagnosed("k8s-device-plugin-1431-nvml-mismatch-on-boot.txt"))
    assert first == "grep -i nvidia /var/log/apt/history.log"
    _, _, first = cause_of(diagnosed("pytorch-159954-cuda-unknown-error-nvidia-uvm.txt"))
    assert first == "grep PreserveVideoMemoryAllocations /proc/driver/nvidia/params"
    mismatch = "Failed to initialize NVML: Driver/library version mismatch\n"
    # without those words, or where the reboot did not help, the reboot and its follow-up stay
    _, _, first = cause_of(said(mismatch))
    assert first == "systemctl reboot"
    _, _, first = cause_of(said(mismatch + "I rebooted and it still fails the same way.\n"))
    assert first not in ("systemctl reboot", "grep -i nvidia /var/log/apt/history.log")
    for denied in ("Rebooting has not fixed the issue.", "After reboot the issue is not resolved."):
        _, _, first = cause_of(said(mismatch + denied + "\n"))
        assert first != "grep -i nvidia /var/log/apt/history.log", denied
    # a restart that cures another failure (a notebook's OOM) changes nothing here
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. If I restart the kernel it works again.\n"
    _, _, first = cause_of(said(oom))
    assert "PreserveVideoMemoryAllocations" not in first and "apt/history" not in first


SERVICE = (
    "services:\n  whisper:\n    image: lscr.io/linuxserver/faster-whisper:gpu\n    container_name: whisper\n"
    "    environment:\n      - TZ=Europe/London\n    ports:\n      - 10300:10300\n"
)
INSUFFICIENT = (
    "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
)


def test_a_compose_service_that_requests_no_gpu_is_the_cause_of_a_driver_missing_inside() -> None:
    """docker-faster-whisper#56: the CUDA runtime's 'driver insufficient' in a compose service without `deploy`
    devices was blamed on the host driver's age, with a CTranslate2 pin."""
    check, summary, first = cause_of(diagnosed("docker-faster-whisper-56-no-gpu-in-compose.txt"))
    assert check == "platform.container_gpus" and "started without the GPUs" in summary
    assert first == "docker run --rm --gpus all ubuntu nvidia-smi"
    check, _, _ = cause_of(said(SERVICE + INSUFFICIENT))
    assert check == "platform.container_gpus"
    requested = SERVICE + "    deploy:\n      resources:\n        reservations:\n          devices:\n"
    requested += "            - driver: nvidia\n              capabilities: [gpu]\n"
    for text in (
        requested + INSUFFICIENT,  # the GPUs are requested: the driver's age is the question again
        SERVICE.replace("    runtime", "") + "    runtime: nvidia\n" + INSUFFICIENT,
        "image: ubuntu:22.04\n" + INSUFFICIENT,  # one YAML line is no service
        SERVICE + "    <<: *gpu\n" + INSUFFICIENT,  # an anchor's keys, maybe its deploy devices: unseen
        SERVICE + "torch.cuda.is_available() returns False, is that expected?\n",  # no failure of a driver
    ):
        check, _, _ = cause_of(said(text))
        assert check != "platform.container_gpus", text


def test_invalid_device_ordinal_from_nccl_under_one_gpu_per_task_is_slurms_binding() -> None:
    """nccl#1948: `srun --gpus-per-task=1` and NCCL's 'invalid device ordinal' in transport/p2p.cc were told to
    compare the program's GPU index with the GPUs that exist."""
    check, summary, first = cause_of(diagnosed("nccl-1948-invalid-device-ordinal-slurm.txt"))
    assert check == "env.cuda_visible_devices" and "binds one GPU to each task" in summary
    assert first == "srun --gpus-per-node=N --gpu-bind=none PROGRAM"
    ordinal = "RuntimeError: CUDA error: invalid device ordinal\n"
    for text in (
        ordinal,
        "srun --gpus-per-task=1 python train.py\n" + ordinal,
    ):  # no NCCL: the program's index
        _, summary, _ = cause_of(said(text))
        assert "binds one GPU" not in summary, text


def test_a_driver_version_in_markdown_emphasis_or_code_is_read() -> None:
    """open-gpu-kernel-modules#1200 ('- Driver: **595.71.05** (open kernel modules)') and lerobot#4093 ('- NVIDIA
    driver: `580.88`') showed 'NVIDIA driver: not in the paste'."""
    for text, version in (
        ("- Driver: **595.71.05** (open kernel modules), Ubuntu\n", "595.71.05"),
        ("- NVIDIA driver: `580.88`\n", "580.88"),
        ("- **Driver**: 580.82.09\n", "580.82.09"),
    ):
        shown = said(text).pasted.prose.driver
        assert shown is not None and shown.value == version, text


def test_a_requirement_line_that_names_another_condition_is_not_called_cut() -> None:
    assert "driver_too_old_container_requirement_cut" not in _ids(
        "nvidia-container-cli: requirement error: unsatisfied condition: brand = tesla"
    )


def test_a_mismatch_only_nvidia_smi_shows_while_cuda_works_is_a_stray_nvml() -> None:
    """statcan/aaw#1581: 'GPU training ... works correctly but the tool nvidia-smi fails' with NVML's mismatch was
    told to reboot, which a module and libcuda that agree do not need."""
    check, summary, first = cause_of(diagnosed("statcan-aaw-1581-nvml-mismatch-notebook.txt"))
    assert check == "driver.nvml" and "NVML only" in summary
    assert first == "cat /proc/driver/nvidia/version"
    mismatch = "Failed to initialize NVML: Driver/library version mismatch\n"
    for words in (
        "",  # nothing said: the missed reboot stays
        "Training does not work either, but nvidia-smi shows this:\n",  # denied
        "nvidia-smi fails and torch fails too.\n",  # no 'but ... works'
    ):
        _, summary, first = cause_of(said(words + mismatch))
        assert "NVML only" not in summary and first != "cat /proc/driver/nvidia/version", words
    _, summary, _ = cause_of(said("Torch training runs fine, but nvidia-smi fails with\n" + mismatch))
    assert "NVML only" in summary
