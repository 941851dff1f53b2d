"""Blind set 26's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: what Windows' nvidia-smi table says (its driver model, a compute mode that refuses CUDA), nvidia-smi that
crashed, NVML's and CUDA's own error strings in the forms tools print them, a missing /dev/nvidia-uvm the person
names, and an MPS allocation that failed with nothing allocated."""

from __future__ import annotations

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from tests.triage.test_blind25_classes import headline, said
from torch_gpu_doctor.triage.built_for import extension_built_for
from torch_gpu_doctor.triage.tool_output import parse_nvidia_smi


def _lines(name: str) -> list[str]:
    return (PASTES / name).read_text(encoding="utf-8").splitlines()


def test_windows_table_rows_are_read_with_driver_model_and_compute_mode() -> None:
    """Windows' nvidia-smi has TCC/WDDM where Linux's has persistence: its GPU rows were skipped, so no name,
    memory or compute mode was read from any Windows table. Linux rows keep no driver model."""
    vgpu = parse_nvidia_smi(_lines("ollama-8980-vgpu-a-profile-compute-prohibited.txt"))
    assert vgpu is not None and len(vgpu.gpus) == 1
    gpu = vgpu.gpus[0]
    assert (gpu.name, gpu.driver_model, gpu.compute_mode) == ("NVIDIA RTXA6000-48A", "WDDM", "Prohibited")
    assert gpu.memory_total_mib == 49152
    tcc = parse_nvidia_smi(_lines("wsl-11865-l40s-tcc-gpu-access-blocked.txt"))
    assert tcc is not None and (tcc.gpus[0].driver_model, tcc.gpus[0].compute_mode) == ("TCC", "Default")
    linux = parse_nvidia_smi(_lines("model-angelo-60-healthy-after-slurm-gpu-allocation.txt"))
    assert linux is not None and linux.gpus and linux.gpus[0].driver_model is None


def test_a_prohibited_compute_mode_is_the_cause_and_a_vgpu_a_profile_names_the_profile() -> None:
    """ollama#8980: 'RTXA6000-48A' with Compute M. 'Prohibited' was 'no problem found' (exit 0). A Default
    compute mode (the same table format, jan#1975) adds nothing."""
    check, summary, first = cause_of(diagnosed("ollama-8980-vgpu-a-profile-compute-prohibited.txt"))
    assert check == "torch.cuda_init" and "vGPU 'A' profile" in summary and "Prohibited" in summary
    assert first == "nvidia-smi -q"
    bare = _lines("ollama-8980-vgpu-a-profile-compute-prohibited.txt")
    table = "\n".join(bare).replace("RTXA6000-48A", "RTX A6000   ")  # the same table on bare metal
    summary = headline(said(table))
    assert "compute mode Prohibited" in summary and "vGPU" not in summary
    assert "Prohibited" not in headline(diagnosed("jan-1975-app-cuda-runtime-not-found-windows.txt"))


def test_tcc_is_the_cause_only_under_wsl() -> None:
    """microsoft/WSL#11865: an L40S in TCC under WSL 2 was 'no problem found'; WSL needs WDDM or MCDM. The same
    table with nothing about WSL is a Windows machine, where TCC runs CUDA."""
    d = diagnosed("wsl-11865-l40s-tcc-gpu-access-blocked.txt")
    check, summary, first = cause_of(d)
    assert check == "torch.cuda_init" and "TCC driver model, which WSL cannot use" in summary
    assert first == "nvidia-smi -i 0 -dm 0"
    lines = _lines("wsl-11865-l40s-tcc-gpu-access-blocked.txt")
    start = next(i for i, line in enumerate(lines) if line.startswith("+--"))
    assert "TCC" not in headline(said("\n".join(lines[start:])))


def test_nvidia_smi_that_crashed_is_a_problem_and_its_header_says_wsl() -> None:
    """WSL2-Linux-Kernel#13: the header (NVIDIA-SMI 555.42.03 over Driver Version 555.85) then 'segmentation
    fault  nvidia-smi' was 'no problem found'. The header pair is WSL's; a Linux header (equal versions) is not."""
    d = diagnosed("wsl2-kernel-13-nvidia-smi-segfault-555.txt")
    check, summary, first = cause_of(d)
    assert check == "driver.nvml" and summary.startswith("nvidia-smi crashed while reading the GPUs")
    assert first == "wsl --shutdown" and d.result.exit_problem()
    assert any(h.signature.id == "wsl_smi_windows_driver_version" for h in d.pasted.hits)
    linux = said("| NVIDIA-SMI 555.42.03   Driver Version: 555.42.03   CUDA Version: 12.5     |\n")
    assert not any(h.signature.id == "wsl_smi_windows_driver_version" for h in linux.pasted.hits)
    assert "crashed" not in headline(said("nvidia-smi shows no processes; python crashed with a segfault\n"))


def test_nvml_and_cuda_error_strings_in_the_forms_tools_print_them() -> None:
    """nvitop#41: NVML's own string for the mismatch; gpu-operator#1043: CUDA error 802 in the samples'
    '(error code ...)' form; jetson-containers#1460: 'invalid runtime nvidia' in the person's words;
    minimind#48: DeepSpeed's 'CUDA_HOME does not exist'. Each was 'an error it does not know' or exit 2."""
    check, summary, first = cause_of(diagnosed("nvitop-41-nvml-rm-mismatch-after-apt-cuda-toolkit.txt"))
    assert check == "driver.nvml" and summary.startswith("Driver/library version mismatch")
    assert first.startswith("systemctl reboot")
    check, _, first = cause_of(diagnosed("gpu-operator-1043-cuda-validator-802-system-not-initialized.txt"))
    assert check == "torch.cuda_init" and "nvidia-fabricmanager" in first
    jetson = diagnosed("jetson-containers-1460-jetpack62-invalid-runtime-nvidia.txt")
    check, _, first = cause_of(jetson)
    assert check == "platform.container_gpus" and jetson.result.exit_problem() and "nvidia-ctk" in first
    assert "container" not in headline(said("I switched the runtime to runc and it works now\n"))
    check, summary, _ = cause_of(diagnosed("minimind-48-deepspeed-cuda-home-missing.txt"))
    assert check == "torch.companions" and "found no CUDA toolkit" in summary


def test_a_missing_uvm_node_the_paste_names_is_the_cause_of_the_unknown_error() -> None:
    """dsnote#111: cuInit 999 in a Flatpak, and 'no /dev/nvidia-uvm file' under Cause: the fix loads the module
    on the host, with no `ls` to learn what the paste says. Without those words a desktop's 999 keeps its
    suspend-and-resume lead."""
    check, summary, first = cause_of(diagnosed("dsnote-111-cuinit-999-no-dev-nvidia-uvm-flatpak.txt"))
    assert check == "torch.cuda_init" and "/dev/nvidia-uvm is missing, as the paste says" in summary
    assert first == "sudo nvidia-modprobe -u -c=0"
    error = (
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up "
        "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n"
    )
    assert "nvidia-uvm is missing" not in headline(said(error))
    assert "nvidia-uvm is missing" in headline(
        said(error + "ls: cannot access '/dev/nvidia-uvm': No such file\n")
    )


def test_an_mps_allocation_that_fails_with_nothing_allocated_is_no_memory_limit() -> None:
    """runner-images#9918: 'MPS allocated: 0 bytes, other allocations: 0 bytes ... Tried to allocate 256 bytes'
    on a hosted macOS runner was read as the watermark; a real watermark (surya#254) stays one."""
    check, summary, _ = cause_of(diagnosed("runner-images-9918-macos-runner-mps-oom-0-bytes.txt"))
    assert check == "torch.out_of_memory" and "gave no memory at all" in summary
    assert "reached the unified memory" in headline(
        diagnosed("surya-254-mps-out-of-memory-batch-too-big.txt")
    )


def test_cuda_works_without_a_version_names_none() -> None:
    """model-angelo#60: `print(torch.cuda.is_available())` answering True, with no version: never 'torch None'."""
    d = diagnosed("model-angelo-60-healthy-after-slurm-gpu-allocation.txt")
    assert not d.result.exit_problem()
    summaries = [v.finding.summary for v in d.result.verdicts]
    assert "CUDA works in torch." in summaries and not any("torch None" in s for s in summaries)


def test_collect_env_without_torch_still_shows_nvidia_smis_silence() -> None:
    """vllm#3721: PyTorch version N/A, and 'Could not collect' for the GPUs and the driver on WSL2. collect_env
    asks nvidia-smi for both without torch, so no driver answers in that WSL; torch's absence was the headline."""
    check, summary, _ = cause_of(diagnosed("vllm-3721-collect-env-wsl-cpu-machine-no-gpu.txt"))
    assert check == "driver.installed" and "No NVIDIA driver answers inside this WSL2" in summary


def test_a_driver_the_person_cannot_change_keeps_the_torch_for_it_in_a_container() -> None:
    """Kronos#71: 'found version 11040' inside a container, and '没办法更新机器GPU驱动' (no way to update the
    machine's driver): the host-driver fix of a container is the one thing ruled out, so a torch built for a CUDA
    the driver runs comes first. Without that sentence the host's driver stays the fix."""
    name = "kronos-71-driver-too-old-11040-container.txt"
    check, _, first = cause_of(diagnosed(name))
    assert check == "torch.driver_compat" and "--index-url https://download.pytorch.org/whl/cu118" in first
    text = (PASTES / name).read_text(encoding="utf-8").replace("没办法更新机器GPU驱动。", "")
    d = said(text)
    assert d.result.cause is not None
    fix = d.result.cause.finding.remediation
    assert fix is not None and "update the NVIDIA driver on the host" in fix.text and not fix.commands


def test_the_words_of_a_driver_that_cannot_change() -> None:
    """What sets the shared-machine reading: no root, a driver that cannot be updated (English, Chinese);
    never a driver that was updated, or one the person is about to update."""
    for words in (
        "I can't update my GPU driver on this server",
        "the driver cannot be updated, it's a company machine",
        "没办法更新机器GPU驱动",
        "服务器无法升级驱动",
        "我没有root权限",
    ):
        assert said(words + "\n").pasted.prose.shared is not None, words
    for words in (
        "I updated the driver yesterday",
        "I will upgrade the nvidia driver tonight",
        "驱动已经更新了",
    ):
        assert said(words + "\n").pasted.prose.shared is None, words


def test_nccl_settings_gathered_while_chasing_a_failure_are_dropped_first() -> None:
    """InstructGLM#3: a watchdog timeout beside ten exported NCCL variables, two pairs contradicting each other:
    the plain run with NCCL_DEBUG=INFO first. NCCL's debug variables and a setting or two leave the fix alone,
    and NCCL settings beside another failure change nothing."""
    d = diagnosed("instructglm-3-nccl-watchdog-timeout-env-overrides.txt")
    check, _, first = cause_of(d)
    assert check == "nccl.communication" and first.startswith("unset NCCL_IB_GID_INDEX")
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "NCCL_P2P_DISABLE=1 beside NCCL_P2P_LEVEL" in fix.text
    timeout = (
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=49, OpType=ALLREDUCE, "
        "Timeout(ms)=1800000) ran for 1800005 milliseconds before timing out.\n"
    )
    few = "export NCCL_DEBUG=INFO\nexport NCCL_DEBUG_SUBSYS=INIT,NET\nexport NCCL_SOCKET_IFNAME=eth0\n"
    _, _, first = cause_of(said(few + timeout))
    assert not first.startswith("unset")
    many = "export NCCL_IB_DISABLE=1\nexport NCCL_P2P_DISABLE=1\nexport NCCL_SOCKET_IFNAME=eth0\n"
    _, _, first = cause_of(said(many + timeout))
    assert first == "unset NCCL_IB_DISABLE NCCL_P2P_DISABLE NCCL_SOCKET_IFNAME"
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    _, _, first = cause_of(said(many + oom))
    assert not first.startswith("unset")


def test_a_cpu_build_in_an_application_that_installs_its_own_torch_gets_that_torch_back() -> None:
    """A1111#17236 ('Torch not compiled with CUDA enabled' after --skip-torch-cuda-test, web-ui.bat): the web
    UI's own torch once the CPU one is uninstalled (its venv, Windows); Fooocus#1202: Fooocus's own pinned torch 2.1.0 from cu121 with its
    embedded Python, not the newest torch. A Blackwell GPU named keeps the newest torch: those pins lack it."""
    _, summary, first = cause_of(diagnosed("a1111-17236-torch-not-compiled-after-skip-cuda-test.txt"))
    assert (
        "CPU-only build" in summary
        and first == ".\\venv\\Scripts\\python.exe -m pip uninstall -y torch torchvision"
    )
    _, _, first = cause_of(diagnosed("fooocus-1202-torch-not-compiled-after-force-reinstall.txt"))
    assert first.startswith(".\\python_embeded\\python.exe -m pip install --force-reinstall torch==2.1.0")
    assert first.endswith("--extra-index-url https://download.pytorch.org/whl/cu121")
    text = (PASTES / "a1111-17236-torch-not-compiled-after-skip-cuda-test.txt").read_text(encoding="utf-8")
    _, _, first = cause_of(said(text + "\nGPU: NVIDIA GeForce RTX 5090\n"))
    assert "uninstall" not in first


def test_a_fragmented_cache_on_a_card_at_its_limit_also_lowers_the_job() -> None:
    """MGFN#35: 1.70 GiB asked on a 6 GiB card with 2.30 GiB cached: the allocator setting, and the batch or
    input size with mixed precision. lerf#73's 3 GiB of 24 GiB is the cache alone."""
    fix = diagnosed("mgfn-35-oom-6gb-gpu-reserved-unallocated.txt").result.cause
    assert fix is not None and fix.finding.remediation is not None
    assert "at the card's limit (one request is 1.70 GiB of its 6.00 GiB)" in fix.finding.remediation.text
    other = diagnosed("lerf-73-oom-24gb-fragmentation.txt").result.cause
    assert other is not None and other.finding.remediation is not None
    assert "expandable_segments" in other.finding.remediation.text
    assert "card's limit" not in other.finding.remediation.text


def test_secure_boot_on_ubuntu_enrolls_the_key_dkms_signs_with() -> None:
    """nvidia-graphics-drivers#62: 'Key was rejected by service' beside `dkms status` lines of Ubuntu kernels
    ('-generic'; the distribution itself misspelt): DKMS signed the modules with Ubuntu's MOK.der, so enrolling
    it is the fix, not signing by hand. Without a distribution the paste shows, the general advice stays."""
    _, _, first = cause_of(diagnosed("canonical-nvidia-62-secureboot-key-rejected.txt"))
    assert first == "sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"
    rejected = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"
    _, _, first = cause_of(said(rejected))
    assert "MOK.der" not in first
    assert said("nvidia/535.113.01, 5.15.0-86-generic, x86_64: installed\n").pasted.prose.distro is not None
    assert said("Linux box 6.1.0-18-amd64 #1 SMP Debian\n").pasted.prose.distro is None


def test_nvrms_mismatch_seconds_after_boot_is_no_missed_reboot() -> None:
    """bazzite#2668: 'NVRM: API mismatch' twelve seconds after boot: the module that loads at boot is the
    mismatched one, so the answer is the module on disk, not a reboot (its version is in the lines already).
    The same lines hours into uptime keep the reboot."""
    _, _, first = cause_of(diagnosed("bazzite-2668-nvrm-api-mismatch-gsp-firmware.txt"))
    assert first == "modinfo -F version nvidia"
    late = (
        "[86412.014918] NVRM: API mismatch: the client has the version 570.153.02, but\n"
        "               NVRM: this kernel module has the version 570.144.  Please\n"
    )
    _, _, first = cause_of(said(late))
    assert first.startswith("systemctl reboot")
    _, _, first = cause_of(said(late.replace("86412.", "   12.")))
    assert first == "modinfo -F version nvidia"


def test_the_torch_xformers_was_built_for_is_the_one_installed() -> None:
    """xformers#971: a CPU torch 2.1.0 beside xFormers built for 2.1.2+cu121: the install is 2.1.2 from cu121
    with its companions, not 2.1.0 rebuilt for CUDA. The same line naming the torch that is installed (xFormers'
    own load failure, xformers#1250) moves nothing."""
    d = diagnosed("xformers-971-built-for-cu121-have-cpu-torch.txt")
    _, _, first = cause_of(d)
    assert "torch==2.1.2 torchvision==0.16.2 torchaudio==2.1.2" in first and first.endswith("/whl/cu121")
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "2.1.0" not in fix.text
    same = said("xFormers was built for:\n    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cu121)\n")
    assert extension_built_for(same.pasted) is None


def test_an_override_the_paste_sets_is_removed_beside_a_build_with_the_gpus_own_kernels() -> None:
    """rocm-libraries#37: gfx1150 with HSA_OVERRIDE_GFX_VERSION set: the newer ROCm torch, and the override
    unset. The same error without the override adds no unset."""
    d = diagnosed("rocmlibs-37-gfx1150-hsa-override-invalid-isa.txt")
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and [c.argv[0] for c in fix.commands][:2] == ["python", "unset"]
    text = (PASTES / "rocmlibs-37-gfx1150-hsa-override-invalid-isa.txt").read_text(encoding="utf-8")
    plain = said(text.replace("HSA_OVERRIDE_GFX_VERSION", "the override"))
    fix = plain.result.cause.finding.remediation if plain.result.cause else None
    assert fix is not None and not any(c.argv[0] == "unset" for c in fix.commands)


def test_two_frameworks_pinning_different_nvidia_wheels_need_two_environments() -> None:
    """Paddle#74894: pip's 'conflict is caused by' torch 2.5.1 and paddlepaddle-gpu 3.1.0 pinning different
    nvidia-cuda-runtime-cu12 builds: separate environments, not an unknown error. A dependency without an exact
    nvidia-* pin is no such conflict."""
    check, summary, first = cause_of(
        diagnosed("paddle-74894-pip-resolution-torch-vs-paddle-cuda-runtime-pin.txt")
    )
    assert check == "torch.installed" and "pin different exact builds of nvidia-cuda-runtime-cu12" in summary
    assert first.startswith("python -m venv")
    loose = said("The conflict is caused by:\n    torch 2.5.1 depends on nvidia-cuda-runtime-cu12>=12.4\n")
    assert not any(h.signature.id == "pip_conflict_nvidia_wheel_pins" for h in loose.pasted.hits)


def test_bitsandbytes_below_its_cuda_floor_needs_a_newer_cuda_not_a_reinstall() -> None:
    """bitsandbytes#138: 'Required library version not found: libbitsandbytes_cuda102.so' (CUDA 10.2 from a
    system path): a CUDA 11+ runtime, not `pip install -U bitsandbytes`. A missing cuda121 library keeps the
    general reading (a source checkout, BNB_CUDA_VERSION)."""
    _, summary, first = cause_of(diagnosed("bitsandbytes-138-cuda102-not-supported.txt"))
    assert "older than the CUDA 11 it needs" in summary and "LD_LIBRARY_PATH" in first
    newer = said("CUDA SETUP: Required library version not found: libbitsandbytes_cuda121.so\n")
    assert "older than the CUDA 11" not in headline(newer)


def test_winerror_127_on_cudnn_inside_torch_lib_reinstalls_torch_over_itself() -> None:
    """kohya_ss#486: WinError 127 on torch\\lib\\cudnn_adv_infer64_8.dll in kohya's venv: the cuDNN set inside
    torch\\lib is mixed (a launcher's cuDNN copy over it), so torch over itself first, with the venv's Python.
    The same error on a CUDA DLL elsewhere (torch2trt#698, cublas64_11.dll in a TensorRT setup) keeps the hunt
    for the other copy on PATH."""
    check, summary, first = cause_of(diagnosed("kohya-486-winerror127-cudnn-adv-infer-dll.txt"))
    assert check == "env.library_path" and "cuDNN DLLs in torch\\lib are of mixed versions" in summary
    assert first.startswith("E:\\SSD\\SuperSD2.0\\kohya\\kohya_ss\\venv\\Scripts\\python.exe -m pip install")
    assert "--force-reinstall --no-deps torch==VERSION" in first
    _, summary, first = cause_of(diagnosed("torch2trt-698-winerror127-cublas64-11-dll.txt"))
    assert "mixed versions" not in summary and first.startswith("where ")


def test_a_pad_token_added_beside_an_index_assert_is_the_added_tokens_cause() -> None:
    """llama-cookbook#189: 'the tokenizer adds a special pad token (id=32000)' and 'device-side asserts' in
    words, beside `srcIndex < srcSelectDimSize`: resize the embeddings or reuse eos as pad. The assert alone
    keeps the general index reading."""
    _, summary, _ = cause_of(diagnosed("llama-cookbook-189-pad-token-32000-index-assert.txt"))
    assert summary.startswith("The tokenizer has tokens the model's embedding table has no row for")
    assert_line = (
        "../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [223,0,0], thread: [96,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.\n"
    )
    assert "embedding table has no row" not in headline(said(assert_line))
    assert "embedding table has no row" not in headline(
        said(assert_line + "We added a new GPU to the box.\n")
    )


def test_ollama_without_gpu_runners_on_an_amd_gpu_needs_a_rocm_build() -> None:
    """ollama#3446: 'Dynamic LLM libraries [cpu_avx2 cpu cpu_avx]' beside amd_linux.go lines and
    ROCR_VISIBLE_DEVICES: a build with ROCm, not CUDA folders. The runner line alone keeps lib/ollama's list."""
    _, summary, first = cause_of(diagnosed("ollama-3446-amd-linux-cpu-only-runners.txt"))
    assert "no ROCm runner" in summary and first.startswith("curl -fsSL -o install.sh")
    runners = (
        "time=2024-04-01T22:37:03.358-06:00 level=INFO source=payload_common.go:140 "
        'msg="Dynamic LLM libraries [cpu_avx2 cpu cpu_avx]"\n'
    )
    assert "ROCm" not in headline(said(runners))


def test_a_legacy_branch_that_does_not_build_for_a_new_kernel_needs_an_lts_kernel() -> None:
    """arch-nvidia-drivers-installation-guide#37: DKMS fails for nvidia/470.256.02 on 6.14.4-arch1-2: a kernel
    the legacy branch builds for, not the new kernel's headers. A current branch's failure keeps the headers."""
    _, summary, _ = cause_of(diagnosed("arch-nvidia-guide-37-470xx-dkms-fails-kernel-6.14.txt"))
    assert summary.startswith("The legacy NVIDIA 470 driver does not build for this kernel")
    current = (
        "==> dkms install --no-depmod nvidia/570.153.02 -k 6.14.4-arch1-2\n"
        "Error! Bad return status for module build on kernel: 6.14.4-arch1-2 (x86_64)\n"
    )
    _, summary, first = cause_of(said(current))
    assert "legacy" not in summary and first.startswith("sudo dkms autoinstall")


def test_a_torch_install_inside_a_projects_container_says_where_it_lasts() -> None:
    """WhisperLive#396: a GPU image whose torch stops at sm_90 on an RTX 5060 Ti: the install, and that it belongs
    in an image built from the project's. Without a container the fix has no such words."""
    d = diagnosed("whisperlive-396-rtx5060ti-sm120-docker-torch.txt")
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and fix.text.startswith("The program runs in a container (line 3 of the paste)")
    text = (PASTES / "whisperlive-396-rtx5060ti-sm120-docker-torch.txt").read_text(encoding="utf-8")
    bare = said(text.replace("gpu docker container", "program").replace("docker container", "build"))
    fix = bare.result.cause.finding.remediation if bare.result.cause else None
    assert fix is not None and "container" not in fix.text
