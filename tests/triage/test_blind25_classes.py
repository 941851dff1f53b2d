"""Blind set 25's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: NCCL's 'Last error:' line under its generic wrapper, the old THCudaCheck form of an architecture error, and
a libcuda reporting a newer CUDA than its driver's branch (a forward-compatibility copy)."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.unavailable import Unavailable


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


def headline(d: PasteDiagnosis) -> str:
    """The most likely cause's summary, "" when the paste has none."""
    return "" if d.result.cause is None else d.result.cause.finding.summary


def test_nccls_last_error_line_speaks_for_its_generic_wrapper() -> None:
    """MambaTree#14: 'NCCL error in: ... internal error' then 'Last error: Bootstrap : no socket interface found'.
    The wrapper alone still asks for NCCL_DEBUG=INFO."""
    check, summary, first = cause_of(diagnosed("mambatree-14-nccl-no-socket-interface.txt"))
    assert check == "nccl.communication" and summary.startswith("NCCL could not open its bootstrap socket")
    assert first.startswith("ip -brief address")
    wrapper = (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1201, internal error, "
        "NCCL version 2.14.3\nncclInternalError: Internal check failed.\n"
    )
    _, summary, _ = cause_of(said(wrapper))
    assert "without saying why" in summary
    _, summary, _ = cause_of(said(wrapper + "Last error:\nBootstrap : no socket interface found\n"))
    assert summary.startswith("NCCL could not open its bootstrap socket")


def test_thcudacheck_error_8_is_the_architecture_error() -> None:
    """snake#246: 'THCudaCheck FAIL file=... error=8 : invalid device function' above a cut traceback is the
    error, not 'a traceback cut before its last line'."""
    check, summary, _ = cause_of(diagnosed("snake-246-invalid-device-function-old-torch.txt"))
    assert check == "torch.arch_compat" and "no kernels for this GPU's architecture" in summary
    for number in ("8", "98"):  # 98 since CUDA 10.1
        line = f"THCudaCheck FAIL file=x.cpp line=3 error={number} : invalid device function\n"
        assert "architecture" in headline(said(line)), number
    assert "architecture" not in headline(
        said("THCudaCheck FAIL file=x.cpp line=3 error=7 : too many resources\n")
    )  # 98 is another number: not this signature's old form


def test_a_cuda_version_above_the_drivers_branch_is_a_forward_compatibility_libcuda() -> None:
    """apollo#15613: nvidia-smi's header shows driver 470.256.02 with 'CUDA Version: 11.8' (470 runs 11.4): a
    cuda-compat libcuda is loaded, error 804 on a GeForce. The driver's own CUDA, a driver newer than the
    table, and a driver that runs the CUDA shown are left alone; a GeForce named makes it a failure."""
    d = diagnosed("apollo-15613-error-804-rtx3060-driver470-cuda118.txt")
    check, summary, _ = cause_of(d)
    assert check == "driver.installed" and "CUDA reports 11.8, above the 11.4 of its branch" in summary
    header = "| NVIDIA-SMI {v}   Driver Version: {v}   CUDA Version: {c}     |\n"
    for version, cuda in (("470.256.02", "11.4"), ("535.104.05", "12.2"), ("999.10", "14.9")):
        assert "forward-compatibility" not in headline(said(header.format(v=version, c=cuda))), version
    geforce = header.format(v="470.256.02", c="11.8") + (
        "|   0  NVIDIA GeForce RTX 3060 ...  Off  | 00000000:01:00.0  On |                  N/A |\n"
    )
    verdict = next(v for v in said(geforce).result.verdicts if v.finding.check_id == "driver.installed")
    assert (
        verdict.finding.status.value == "fail"
        and "GeForce GPU here cannot use one" in verdict.finding.summary
    )


def test_memory_a_zombie_or_a_leftover_keeps_is_a_process_that_outlived_the_program() -> None:
    """mxnet#4242: 'the parent process becomes a zombie process which keeps occupying the GPU memory', with
    only nvidia-smi's process table: the holders are found with fuser and stopped."""
    check, summary, first = cause_of(diagnosed("mxnet-4242-zombie-process-holds-gpu-memory.txt"))
    assert check == "torch.out_of_memory" and summary.startswith("A process that outlived the program")
    assert first.startswith("sudo fuser -v /dev/nvidia")
    assert "outlived" not in headline(said("The zombie apocalypse game keeps crashing on start.\n"))


def test_a_device_side_assertion_said_in_words_and_tokens_added_to_the_tokenizer() -> None:
    """small-text#53: 'will fail a device-side assertion' after `tokenizer.add_special_tokens(...)`: the new
    tokens' ids are past the embedding table, resize_token_embeddings. Added tokens without an assertion say
    nothing; an assertion without added tokens keeps the general answer."""
    check, summary, _ = cause_of(diagnosed("small-text-53-device-side-assert-added-tokens.txt"))
    assert check == "torch.cuda_init" and "tokens the model's embedding table has no row for" in summary
    added = "tokenizer.add_special_tokens({'additional_special_tokens': ['[S1]']})\n"
    assert headline(said(added + "it does not work\n")) == ""
    assertion = "This will cause the device-side assertion to fail when using cuda.\n"
    assert "kernel's assertion failed" in headline(said(assertion))
    assert "embedding table" in headline(said(added + assertion))


def test_onnxruntime_beside_onnxruntime_gpu_hides_the_gpu_package() -> None:
    """onnxruntime#7748: 'onnxruntime==1.7.0' and 'onnxruntime-gpu==1.7.0' in one environment, only
    CPUExecutionProvider: both uninstalled, the GPU package alone back. Either package alone says nothing."""
    check, summary, first = cause_of(diagnosed("onnxruntime-7748-pip-onnxruntime-and-gpu-both.txt"))
    assert check == "torch.companions" and summary.startswith("Both onnxruntime (the CPU package)")
    assert first == "python -m pip uninstall -y onnxruntime onnxruntime-gpu"
    cpu, gpu = "onnxruntime               1.16.0\n", "onnxruntime-gpu           1.16.3\n"
    d = said(cpu + gpu)
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert d.result.cause.finding.remediation.commands[1].argv[-1] == "onnxruntime-gpu==1.16.3"
    for alone in (cpu, gpu, "pip install onnxruntime-gpu\n"):
        assert "onnxruntime" not in headline(said(alone + "torch                     2.1.0+cu121\n")), alone


def test_pip_finding_no_torch_for_this_python_names_the_python_to_use() -> None:
    """BallonsTranslator-Pro#154: a launcher pins torch==2.7.1 and Python 3.14 runs pip: 2.7's wheels stop at 3.13.
    A release that has the Python's wheels keeps the general answer (the platform or the index), and with no
    version asked only a Python newer than every release is certain."""
    check, summary, first = cause_of(diagnosed("ballonstranslator-pro-154-py314-no-torch-cu118-wheel.txt"))
    assert check == "torch.installed"
    assert summary.startswith(
        "torch 2.7.1 has no wheel for Python 3.14: its wheels are for Python 3.9 to 3.13"
    )
    assert first == "py -3.13 -m venv venv"  # on Windows, the launcher
    error = (
        "ERROR: Could not find a version that satisfies the requirement torch{pin} (from versions: none)\n"
    )
    linux = "Python 3.7.16 (default) [GCC 9.4.0] on linux\n" + error.format(pin="==2.4.0")
    check, summary, first = cause_of(said(linux))
    assert "Python 3.8 to 3.12" in summary and first == "python3.8 -m venv .venv"
    supported = "Python 3.11.9 (main) [GCC 11.4.0] on linux\n" + error.format(pin="==2.4.0")
    assert headline(said(supported)).startswith("pip found no torch wheel for this Python and platform")
    future = "Python 3.17.0 (main) [GCC 15.1.0] on linux\n" + error.format(pin="")
    assert headline(said(future)).startswith("No torch release has wheels for Python 3.17 yet")


def test_nvlink_xids_pasted_name_the_link_not_a_memory_fault() -> None:
    """nccl#2241: pasted Xid 145 and 137 'on link 11' on a B200: the NVLink fabric's checks, not a GPU reset."""
    check, summary, first = cause_of(diagnosed("nccl-2241-b200-xid145-137-nvlink.txt"))
    assert check == "driver.xid_errors" and summary.startswith(
        "An NVLink connection of the GPU failed (Xid 145, 137"
    )
    assert first == "nvidia-smi nvlink -s"
    ecc = "kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, An uncorrectable double bit error\n"
    assert "NVLink" not in headline(said(ecc))
    nvlink = "kernel: NVRM: Xid (PCI:0000:18:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (0x00000000)\n"
    assert "NVLink" not in headline(said(nvlink + ecc))  # the memory's error beside it is the graver


def test_the_device_plugins_own_log_is_the_nodes_runtime_without_nvidias() -> None:
    """k8s-device-plugin#478: the plugin's log cut after 'No valid resources detected, creating a null CDI
    handler'; #655's next lines say 'Incompatible platform detected'. Either is the node's runtime
    (containerd) without NVIDIA's as its default, not docker's."""
    check, _, first = cause_of(diagnosed("k8s-device-plugin-478-no-valid-resources-nvml.txt"))
    assert check == "platform.container_gpus"
    assert first == "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default"
    log = "E0417 07:12:59.758986       1 factory.go:115] Incompatible platform detected\n"
    _, _, first = cause_of(said(log))
    assert "--runtime=containerd" in first
    assert "container" not in headline(said("Incompatible types in assignment (platform detected later)\n"))


def test_a_check_scripts_built_with_cuda_false_is_the_cpu_build() -> None:
    """mila-docs#213: 'PyTorch built with CUDA: False' and 'PyTorch detects CUDA available: False' beside a
    working driver: the CPU build, said by torch itself, not 'the paste does not say why'. True says nothing
    of the build."""
    check, summary, first = cause_of(diagnosed("mila-docs-213-torch-built-without-cuda-nvsmi-q.txt"))
    assert check == "torch.cpu_build" and summary.startswith("torch is a CPU-only build")
    assert "--index-url https://download.pytorch.org/whl/cu" in first
    cuda_built = "PyTorch built with CUDA:         True\nPyTorch detects CUDA available:  False\n"
    assert "CPU-only build:" not in headline(said(cuda_built))


def test_a_mok_enrollment_said_in_words_is_secure_boot_refusing_the_module() -> None:
    """azure-docs#111536: nvidia-smi cannot reach the driver, and the person tells of the MOK enrollment screen
    they cannot confirm on a VM: Secure Boot, the enrollment or its way round first, not a module build. A
    question about MOK, or Secure Boot said to be off, is no account of it."""
    check, summary, first = cause_of(diagnosed("azure-docs-111536-secure-boot-mok-nvidia-smi.txt"))
    assert check == "driver.secure_boot" and "the enrollment was never confirmed at boot" in summary
    assert first == "mokutil --list-new"
    smi = (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
        "NVIDIA driver is installed and running.\n"
    )
    for words in ("How do I enroll the MOK key for the driver?\n", "Secure Boot is disabled in the BIOS.\n"):
        assert "Secure Boot" not in headline(said(smi + words)), words
    retried = (
        "I have also tried to re-enroll MOK keys to no avail.\n"  # done already: no account of the cause
    )
    assert "Secure Boot" not in headline(said(smi + retried))


def test_a_paragraph_pasted_as_one_line_is_quoted_by_its_message() -> None:
    """azure-docs#111536 is one 1,400-character line: the driver's facts quote nvidia-smi's message, not the
    paragraph around it; a short line is quoted whole."""
    d = diagnosed("azure-docs-111536-secure-boot-mok-nvidia-smi.txt")
    assert not isinstance(d.facts.driver, Unavailable) and isinstance(d.facts.driver.version, Unavailable)
    assert d.facts.driver.version.detail == (
        'line 1 of the paste: "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver"'
    )
    line = "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure.\n"
    short = said(line).facts.driver
    assert not isinstance(short, Unavailable) and isinstance(short.version, Unavailable)
    assert short.version.detail.endswith('Make sure."')


def test_a_library_not_found_under_sudo_is_sudo_removing_ld_library_path() -> None:
    """Yolov5-instance-seg-tensorrt#8: '(CUDA113+CUDNN82) han@han:...$ sudo ./trt_infer ...', then libcudnn.so.8
    not found: the same command without sudo first. Without sudo, or sudo on another command far above, the
    library's own answer stays."""
    check, summary, first = cause_of(diagnosed("yolov5-seg-trt-8-sudo-libcudnn-so8.txt"))
    assert check == "env.library_path" and summary.startswith(
        "libcudnn.so.8 was not found for a program started with sudo"
    )
    assert first == "./trt_infer ../models/yolov5s-seg.onnx ../images/bus.jpg"
    error = "./app: error while loading shared libraries: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
    assert "sudo" not in headline(said("user@box:~$ ./app\n" + error))
    far = "user@box:~$ sudo apt install foo\n" + "ok\n" * 6 + "user@box:~$ ./app\n" + error
    assert "sudo" not in headline(said(far))
    _, _, first = cause_of(said("$ sudo -E python3 infer.py --fp16\n" + error))
    assert first == "python3 infer.py --fp16"


def test_the_toolkit_without_nvml_under_wsl_is_the_windows_side() -> None:
    """sd-webui-docker#129: nvidia-container-cli cannot load libnvidia-ml.so.1 'using WSL2 (latest Docker
    Desktop)': the Windows driver, WSL and Windows provide it, never a Linux driver or ldconfig. On Linux the
    host's driver stays the answer."""
    check, summary, first = cause_of(
        diagnosed("sd-webui-docker-129-wsl2-nvidia-container-cli-libnvidia-ml.txt")
    )
    assert check == "platform.container_gpus" and summary.startswith("The container toolkit under WSL 2")
    assert first.startswith("wsl.exe --update")
    linux = (
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
        "object file: no such file or directory: unknown\n"
    )
    assert "WSL" not in headline(said(linux))


def test_a_watchdog_timeout_placed_at_an_epochs_end_checks_the_ranks_step_first() -> None:
    """ChatLM-mini-Chinese#47: an ALLGATHER timeout 'right after the first epoch', evaluation suspected: the
    out-of-step check first. Hours into training with no such step said, the stalled rank's dmesg stays first."""
    check, _, first = cause_of(diagnosed("chatlm-mini-chinese-47-nccl-watchdog-allgather-eval.txt"))
    assert check == "nccl.communication" and first == "env TORCH_DISTRIBUTED_DEBUG=DETAIL PROGRAM"
    timeout = (
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=61, OpType=ALLREDUCE, "
        "NumelIn=7168, NumelOut=7168, Timeout(ms)=1800000) ran for 1800086 milliseconds before timing out.\n"
    )
    _, _, first = cause_of(said(timeout + "It happens after the first epoch, during evaluation.\n"))
    assert first == "env TORCH_DISTRIBUTED_DEBUG=DETAIL PROGRAM"
    _, _, first = cause_of(said(timeout + "It ran fine for 14 hours before this.\n"))
    assert first.startswith("sudo dmesg")


def test_winerror_127_on_a_cuda_dll_is_another_copy_of_its_dependency_found_first() -> None:
    """torch2trt#698: after installing TensorRT, WinError 127 loading torch's cublas64_11.dll: a function is
    missing from another version of a DLL it needs, found first on PATH: `where`, not a reinstall. A DLL that
    is not found (126) keeps its own answer."""
    check, summary, first = cause_of(diagnosed("torch2trt-698-winerror127-cublas64-11-dll.txt"))
    assert check == "env.library_path" and "a function it needs is missing (WinError 127)" in summary
    assert first == "where cublas64_11.dll"
    error = (
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\\\env\\\\lib\\\\'
        'site-packages\\\\torch\\\\lib\\\\cublas64_11.dll" or one of its dependencies.\n'
    )
    assert "WinError 127" not in headline(said(error))


def test_an_issue_templates_example_os_is_not_the_os() -> None:
    """onnxruntime#7748's template: 'OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Linux lab-am-vm
    4.19.0-16-cloud-amd64 ... Debian': the example is no distribution; one named after its label is."""
    d = diagnosed("onnxruntime-7748-pip-onnxruntime-and-gpu-both.txt")
    assert isinstance(d.facts.os, Unavailable) or d.facts.os.distro_version != "16.04"
    shown = said(
        "- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Ubuntu 22.04\nCUDA out of memory.\n"
    )
    assert not isinstance(shown.facts.os, Unavailable) and shown.facts.os.distro_version == "22.04"


P2P_TEST = """Device: 0, NVIDIA RTX A6000, pciBusID: 3, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 673.20  {off}
     1  12.99 673.20
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 673.49  {on}
     1  {on} 672.33
"""


def test_a_p2p_bandwidth_test_slower_with_p2p_is_the_path_acs_or_the_iommu_blocks() -> None:
    """ml-engineering#1: three RTX A6000, every pair 1.6-2.6 GB/s with P2P against 13-22 GB/s without: ACS or the
    IOMMU in the way (lspci's ACSCtl first). A test where P2P is the faster is no problem, and the GPUs it names
    are read either way."""
    check, summary, first = cause_of(diagnosed("ml-engineering-1-p2p-bandwidth-broken-a6000.txt"))
    assert check == "nccl.communication" and summary.startswith(
        "Peer-to-peer copies between the GPUs are slower"
    )
    assert first == "sudo lspci -vvv"
    healthy = said(P2P_TEST.format(off="13.15", on="25.80"))
    assert healthy.result.cause is None and healthy.pasted.p2p_test is not None
    assert [g.name for g in healthy.facts.gpus] == ["NVIDIA RTX A6000", "NVIDIA RTX A6000"]
    assert "Peer-to-peer" in headline(said(P2P_TEST.format(off="13.15", on="2.60")))


def test_a_torch_frozen_into_an_executable_is_not_replaced_with_pip() -> None:
    """ChatTTS-ui#290: app.exe of a one-click package warns from `torch\\cuda\\__init__.py:215` (no site-packages)
    that the RTX 5070 Ti's sm_120 is not in its build: a new build of the program, or running it from source;
    no pip command. The same warning from a site-packages torch, or without an executable, keeps the install."""
    d = diagnosed("chattts-ui-290-rtx5070ti-sm120-bundled-torch.txt")
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    fix = d.result.cause.finding.remediation
    assert fix.text.startswith("The program is a frozen build") and not fix.commands
    warning = (
        "{path}:215: UserWarning:\nNVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with "
        "the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 "
        "sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90 compute_37.\n{run}\n"
    )
    for path, run in (
        ("C:\\app\\venv\\Lib\\site-packages\\torch\\cuda\\__init__.py", "I started app.exe"),
        ("torch\\cuda\\__init__.py", "I started it with python main.py"),
    ):
        _, _, first = cause_of(said(warning.format(path=path, run=run)))
        assert "pip install" in first, path
