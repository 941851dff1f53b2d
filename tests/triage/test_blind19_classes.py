"""Blind set 19's classes, each on its real paste (tests/triage/pastes, MANIFEST.json): errors triage found
nothing in (old torch's 'invalid device function', 'busy or unavailable', NVRM's reset-required, WinError 1455 in
a title, a shell without nvidia-smi), a capability said in words, and failures said only in words (one GPU works
and several do not, a communication test that hangs, a job across machines, a launcher's report)."""

from __future__ import annotations

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.unavailable import Unavailable


def test_old_torchs_invalid_device_function_with_a_capability_in_words_is_a_gpu_no_build_serves() -> None:
    """pytorch.github.io#72: 'cuda runtime error (8) : invalid device function' on 'GM630m => cuda capability
    2.1': Fermi, which no release in the data builds for (and CUDA 8 was the last to compile for it)."""
    check, summary, first = cause_of(diagnosed("pytorch.github.io-72-fermi-cc21-unsupported.txt"))
    assert check == "torch.arch_compat" and "compute capability 2.1" in summary
    assert first.endswith("--index-url https://download.pytorch.org/whl/cpu")
    fix = diagnosed("pytorch.github.io-72-fermi-cc21-unsupported.txt").result.cause
    assert fix is not None and fix.finding.remediation is not None
    assert "build from source" not in fix.finding.remediation.text  # torch's source needs a newer CUDA


def test_a_gpu_that_needs_a_reset_is_read_from_nvrm_beside_busy_or_unavailable() -> None:
    """sichek#51: 'CUDA-capable device(s) is/are busy or unavailable' on GPU1, dmesg -T's NVRM lines with
    NV_ERR_RESET_REQUIRED: the GPU needs a reset, not another program."""
    d = diagnosed("sichek-51-gsp-reset-required-kernel-log.txt")
    check, _, first = cause_of(d)
    assert check == "driver.xid_errors"
    assert first == "sudo nvidia-smi -r -i N"  # the reset first: restarting the programs does not clear it


def test_winerror_1455_in_a_title_cut_before_its_dll_is_the_page_file() -> None:
    check, summary, _ = cause_of(diagnosed("yolo-v8-object-detection-7-winerror1455-pagefile.txt"))
    assert check == "env.library_path" and "page file" in summary


def test_a_container_shell_without_nvidia_smi_is_a_container_started_without_gpus() -> None:
    """anomalib#584: `docker run -it test` (in markdown's inline code), then 'bash: nvidia-smi: command not
    found' at a root@<id> prompt: their own run, with the GPUs added."""
    _, summary, first = cause_of(diagnosed("anomalib-584-container-without-gpus.txt"))
    assert "started without the GPUs" in summary
    assert first == "docker run --gpus all -it test"


def test_one_gpu_works_and_two_do_not_said_in_chinese_is_the_path_between_them() -> None:
    """LlamaFactory#4322: '指定单卡...是正常的，通过多卡微调也是一样的报错'."""
    check, _, first = cause_of(diagnosed("llamafactory-4322-multi-gpu-fails-single-ok.txt"))
    assert check == "nccl.communication" and first == "env NCCL_P2P_DISABLE=1 PROGRAM"


def test_a_communication_test_that_hangs_is_the_p2p_path() -> None:
    """accelerate#1209: '"accelerate test" hangs after initialization and then timeouts' on 6 RTX A6000."""
    check, _, first = cause_of(diagnosed("accelerate-1209-nccl-hang-multi-gpu.txt"))
    assert check == "nccl.communication" and first == "env NCCL_P2P_DISABLE=1 PROGRAM"


def test_a_failure_on_two_nodes_said_in_a_title_is_the_network_between_them() -> None:
    """accelerate#1606: 'Accelerate test failed on 2 nodes with 8x A800'."""
    check, summary, first = cause_of(diagnosed("accelerate-1606-multinode-a800-deepspeed.txt"))
    assert check == "nccl.communication" and "spans several machines" in summary
    assert first == "ip -brief address"


def test_a_launchers_failed_report_points_at_the_error_before_it() -> None:
    """LlamaFactory#6118: '.../launcher.py FAILED' in the title, no traceback in the excerpt."""
    _, summary, first = cause_of(diagnosed("llamafactory-6118-h20-launcher-failed.txt"))
    assert "launcher's own report is not the error" in summary
    assert first == "env CUDA_VISIBLE_DEVICES=0 PROGRAM"


def test_a_launchers_report_comes_after_the_error_the_paste_shows() -> None:
    """pipedream#76: NCCL's bus error (a /dev/shm too small in Docker), then ChildFailedError: the bus error."""
    check, _, first = cause_of(diagnosed("pipedream-76-nccl-bus-error-docker-shm.txt"))
    assert check == "memory.shm" and first == "df -h /dev/shm"


def test_a_worker_killed_with_sigkill_is_host_memory() -> None:
    """AMVUR#2: 'exitcode: -9', 'signal 9 (SIGKILL) received by PID': the kernel's OOM killer."""
    _, summary, first = cause_of(diagnosed("amvur-2-torchrun-worker-sigkill-host-memory.txt"))
    assert "host memory (RAM)" in summary and first == "sudo dmesg -T"


def test_a_jetson_image_started_without_nvidias_runtime_misses_the_hosts_cuda() -> None:
    """jetson-containers#93: libcurand.so.10 missing in dustynv/ros:noetic-pytorch-l4t-r32.5.0 (the release
    after the image's name): before JetPack 5 the runtime mounts CUDA from the host, so `--runtime nvidia`."""
    check, summary, first = cause_of(diagnosed("jetson-containers-93-jetson-container-runtime.txt"))
    assert check == "platform.jetson" and "L4T R32.5.0" in summary and "--runtime nvidia" in summary
    assert first == "docker run --runtime nvidia IMAGE"


def test_torch_failing_in_a_jetson_container_but_not_on_its_host_is_the_container() -> None:
    """jetson-inference#1400: 'import torch works well from the host', fails in the container after the host
    updated itself: not another torch to install."""
    d = diagnosed("jetson-inference-1400-jetson-container-after-update.txt")
    _, summary, first = cause_of(d)
    assert "inside a container on a Jetson" in summary and first == "docker run --runtime nvidia IMAGE"
    cause = d.result.cause
    assert cause is not None and cause.finding.details == ""  # no "install the build for this JetPack"


def test_a_jetson_run_with_the_runtime_already_leaves_the_hosts_release() -> None:
    """jetson-containers#126: `docker run ... --runtime nvidia ... l4t-r32.5.0`: the runtime is there, so the
    host's own L4T release is what differs."""
    _, summary, first = cause_of(diagnosed("jetson-containers-126-jetson-l4t-container-mismatch.txt"))
    assert "the host runs another L4T release" in summary and "started without" not in summary
    assert first == "cat /etc/nv_tegra_release"


def test_an_environment_report_alone_is_read_and_a_bare_worknccl_is_the_watchdog() -> None:
    """LlamaFactory#6269: '# WorkNCCL' over llamafactory-cli env, nothing else: its GPU type, platform and
    torch are facts, and WorkNCCL is the watchdog's timeout."""
    d = diagnosed("llamafactory-6269-nccl-watchdog-timeout.txt")
    check, summary, _ = cause_of(d)
    assert check == "nccl.communication" and "timeout" in summary
    facts = d.facts
    assert [g.name for g in facts.gpus] == ["NVIDIA A100-PCIE-40GB"]
    assert [g.compute_capability for g in facts.gpus] == ["8.0"]
    os_facts = facts.os
    assert not isinstance(os_facts, Unavailable)
    assert (os_facts.system, os_facts.distro_id, os_facts.kernel_release) == (
        "Linux",
        "rhel",
        "3.10.0-1160.102.1.el7.x86_64",
    )


def test_a_machine_said_to_have_no_nvidia_gpu_is_not_sent_to_install_cudnn() -> None:
    """whisper-standalone-win#171: 'my system doesn't have Nvidia GPU', the program ran on CUDA and wanted
    libcudnn_ops_infer.so.8: run it on the CPU (the thread's answer: --device=cpu)."""
    d = diagnosed("whisper-standalone-win-171-wsl-no-gpu-cudnn-missing.txt")
    _, summary, first = cause_of(d)
    assert "no NVIDIA GPU" in summary and first == ""
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "--device cpu" in cause.finding.remediation.text


def test_not_compiled_with_cuda_beside_a_working_cuda_torch_is_another_python() -> None:
    """insanely-fast-whisper#41: the program says 'Torch not compiled with CUDA enabled' while the person's
    Python prints 2.1.0+cu121 and 'Is CUDA available: True': the program runs another environment."""
    _, summary, first = cause_of(diagnosed("insanely-fast-whisper-41-torch-not-compiled-two-envs.txt"))
    assert summary.startswith("Two Pythons") and "2.1.0+cu121" in summary
    assert first.startswith("python -c 'import sys, torch; print(sys.executable")


def test_a_launch_failure_beside_nvidia_smis_err_is_the_gpus_not_a_suspend() -> None:
    """vllm#27430: 'unspecified launch failure' and 'persistent ERR! state in nvidia-smi' on 8x A100-SXM4: the
    Xid first, not nvidia_uvm after a suspend a server never had."""
    _, summary, first = cause_of(diagnosed("vllm-27430-xid-unspecified-launch-failure.txt"))
    assert "ERR!" in summary and first == "sudo dmesg --level=err,warn"


def test_a_launch_failure_keeps_the_suspend_lead_only_where_the_paste_says_it_slept() -> None:
    """cupy#7774: a cupy session whose second call fails. Only the thread says the laptop had slept: the paste
    alone leads with the driver's Xid (set 24: failures hours into training are no suspend), and the fix still
    names the reload for a machine that slept. Said in the paste, the suspend lead comes back."""
    name = "cupy-7774-launch-failure-after-sleep.txt"
    d = diagnosed(name)
    _, summary, first = cause_of(d)
    assert first == "sudo dmesg --level=err,warn" and "nothing says the machine slept" in summary
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "sudo rmmod nvidia_uvm" in d.result.cause.finding.remediation.text
    slept = "After resuming from suspend, CUDA fails in cupy:\n" + (PASTES / name).read_text()
    _, _, first = cause_of(diagnose_paste(slept.encode(), name))
    assert first == "sudo rmmod nvidia_uvm"


def test_unhandled_system_error_in_ncclgetuniqueid_is_the_bootstrap_socket() -> None:
    """nccl-tests#14: 'unhandled system error' at ncclGetUniqueId in an NGC container: the bootstrap's socket
    (the thread: 'Address family not supported by protocol', --net=host), not /dev/shm."""
    d = diagnosed("nccl-tests-14-nccl-unhandled-system-error-docker.txt")
    _, summary, first = cause_of(d)
    assert "bootstrap" in summary and "not /dev/shm" in summary
    assert first == "env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET PROGRAM"
    cause = d.result.cause
    assert cause is not None and "/dev/shm size is the usual culprit" not in cause.finding.details


def test_a_harmless_message_it_knows_is_explained_beside_no_problem_found() -> None:
    """ArchWSL#248: only WSL's 'libcuda.so.1 is not a symbolic link': no problem, but the answer says what the
    line means and how to silence it, not a bare 'No problem found'."""
    import io

    from torch_gpu_doctor.triage.render import render_text

    d = diagnosed("archwsl-248-wsl-libcuda-not-symlink.txt")
    assert d.result.cause is None
    out = io.StringIO()
    render_text(d, "paste", out)
    text = out.getvalue()
    assert "No problem found" in text and "- line 4: ldconfig warning under WSL2" in text
    assert "mklink libcuda.so.1 libcuda.so.1.1" in text


def test_gpus_in_docker_but_not_in_pods_is_the_runtime_kubernetes_uses() -> None:
    """k8s-device-plugin#250: `docker run --gpus all` works on the node, pods through the device plugin get no
    GPU: containerd's default runtime, not docker's."""
    check, _, first = cause_of(diagnosed("k8s-device-plugin-250-k8s-device-plugin-vgpu.txt"))
    assert check == "platform.container_gpus"
    assert first == "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default"


def test_the_schedulers_insufficient_gpu_gets_kubernetes_runtime_not_dockers() -> None:
    """k8s-device-plugin#852: 'Insufficient nvidia.com/gpu' from the scheduler: the node's containerd."""
    _, _, first = cause_of(diagnosed("k8s-dp-852-insufficient-gpu.txt"))
    assert first == "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default"


def test_autocasts_bf16_refusal_is_the_programs_dtype_and_the_template_is_read() -> None:
    """openvla#103: torch.autocast's 'Current CUDA Device does not support bfloat16' on a Quadro RTX 8000 named
    in an issue template ('- GPU: Quadro RTX 8000', '- OS: Ubuntu20.04')."""
    d = diagnosed("openvla-103-bf16-unsupported-turing.txt")
    check, _, _ = cause_of(d)
    assert check == "gpu.precision"
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "dtype=torch.float16" in cause.finding.remediation.text
    assert [(g.name, g.compute_capability) for g in d.facts.gpus] == [("Quadro RTX 8000", "7.5")]
    assert not isinstance(d.facts.os, Unavailable) and d.facts.os.distro_id == "ubuntu"


def test_a_uuid_in_cuda_visible_devices_said_in_a_title_is_the_programs_parsing() -> None:
    """vllm#20939: '[Bug]: pydantic crash when CUDA_VISIBLE_DEVICES uses UUIDs', the traceback cut before its
    message: the title says what breaks."""
    check, _, first = cause_of(diagnosed("vllm-20939-cuda-visible-devices-uuid.txt"))
    assert check == "env.cuda_visible_devices" and first == "env -u CUDA_VISIBLE_DEVICES PROGRAM"


def test_an_error_it_does_not_know_is_counted_in_the_json_summary() -> None:
    """An unknown error exits 1 with no problem verdict: the summary says why (blind set 19's review: rc 1
    beside problems: 0)."""
    import contextlib
    import io
    import json

    from torch_gpu_doctor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["triage", "--json", str(PASTES / "flash-attention-224-flash-attn-wheel-build-fails.txt")]
        )
    summary = json.loads(out.getvalue())["summary"]
    assert code == summary["exit_code"] == 1
    assert (summary["problems"], summary["errors_not_known"]) == (0, 1)


def test_slow_training_beside_an_idle_gpu_is_a_job_not_on_the_gpu() -> None:
    """3D-Deepbox#44: 'very slow', and the pasted table shows the TITAN V at 0% (P8, 320 MiB) beside a Quadro
    K620 at 2% driving the display: the largest GPU is idle, so the job is not on it."""
    d = diagnosed("3d-deepbox-44-gpu-idle-healthy-env.txt")
    assert d.pasted.smi is not None
    assert [(g.name, g.utilization_pct) for g in d.pasted.smi.gpus] == [("TITAN V", 0), ("Quadro K620", 2)]
    _, summary, first = cause_of(d)
    assert "TITAN V idle" in summary and first.startswith("nvidia-smi --query-compute-apps=")
    assert d.result.confidence == "likely"


def test_a_dll_that_does_not_load_under_zluda_is_the_hip_sdk_not_an_nvidia_driver() -> None:
    """ComfyUI-Zluda#9: caffe2_nvrtc.dll with WinError 126 on a 7900 XTX with ROCm 5.7, in E:\\ComfyUI-Zluda."""
    check, summary, first = cause_of(diagnosed("comfyui-zluda-9-winerror126-rocm-zluda.txt"))
    assert check == "env.library_path" and "through ZLUDA" in summary and first == "where hipinfo"


def test_a_torch_version_said_twice_at_two_precisions_is_kept_by_the_fix() -> None:
    """index-tts#815: 'PyTorch：2.8.0+cu128' in the template and 'PyTorch 2.8 + CUDA 12.8' in the words: one
    release, so the fix keeps 2.8.0 and changes only the CUDA variant (cu126 still has sm_60)."""
    _, summary, first = cause_of(diagnosed("index-tts-815-pascal-sm60-dropped-cu128.txt"))
    assert summary.startswith("torch 2.8.0+cu128 has no kernels for Tesla P100")
    assert first.startswith("python -m pip install torch==2.8.0+cu126 ")


def test_a_rocm_target_nothing_builds_in_a_paste_without_torch_is_not_a_torch_build() -> None:
    """legacy-rocm-build#1525: hipErrorNoBinaryForGpu on gfx1012 (Navi 14) with rocminfo, no program named: no
    ROCm release builds it and no sibling stands in, so neither a torch source build nor rocminfo again."""
    d = diagnosed("legacy-rocm-build-1525-rocm-no-binary-navi14.txt")
    check, summary, first = cause_of(d)
    assert check == "amd.gfx_target" and "gfx1012" in summary and first == ""
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "cannot use this GPU through ROCm" in cause.finding.remediation.text
    assert "Set HSA_OVERRIDE_GFX_VERSION to a supported compatible target" not in cause.finding.details


def test_a_symptom_said_in_words_is_likely_not_stated_and_no_jetson_is_asked_of_an_x86_paste() -> None:
    """accelerate#1209's hang is what the person says happens, not why: 'likely'; nothing in it says ARM or
    Jetson, so /etc/nv_tegra_release is not among what to run."""
    d = diagnosed("accelerate-1209-nccl-hang-multi-gpu.txt")
    assert d.result.confidence == "likely"
    assert "platform.jetson" not in {v.finding.check_id for v in d.result.verdicts}


def test_a_jetson_containers_cause_stands_for_the_missing_library_so_nothing_contradicts_it() -> None:
    """jetson-containers#93 (set 19 after-review): the container's CUDA is the cause, so the library check's
    'install NVIDIA's torch for this L4T' is not listed beside it."""
    import io

    from torch_gpu_doctor.triage.render import render_text

    out = io.StringIO()
    render_text(diagnosed("jetson-containers-93-jetson-container-runtime.txt"), "paste", out)
    text = out.getvalue()
    assert "Also found" not in text and "Install NVIDIA's torch built for this board" not in text


def test_a_gpu_named_without_its_capability_gets_no_cpu_build_recommended() -> None:
    """accelerate#1606: 'GPU type: NVIDIA Graphics Device' (a driver that does not know the A800) and CUDA
    available: the JSON's recommended install was the CPU build; with the capability unknown nothing is picked."""
    d = diagnosed("accelerate-1606-multinode-a800-deepspeed.txt")
    assert [g.name for g in d.facts.gpus] == ["NVIDIA Graphics Device"]
    assert d.result.report.recommended_install is None


def test_a_shell_without_nvidia_smi_is_not_asked_to_run_nvidia_smi_there() -> None:
    """anomalib#584: 'bash: nvidia-smi: command not found' in the container: the host is where it answers."""
    cause = diagnosed("anomalib-584-container-without-gpus.txt").result.cause
    assert (
        cause is not None and cause.find_out == "nvidia-smi   # on the host (the container's shell has none)"
    )


def test_a_pytorch_cuda_pin_the_version_was_never_built_for_is_why_conda_took_the_cpu_build() -> None:
    """DiT#109's conda list: pytorch 2.5.1 py3.12_cpu_0 beside pytorch-cuda 11.7 (2.5.1 was built for 11.8,
    12.1 and 12.4): change the pin, through conda."""
    _, summary, first = cause_of(diagnosed("dit-109-conda-cpu-build-yml.txt"))
    assert "pins pytorch-cuda 11.7" in summary and "11.8, 12.1, 12.4" in summary
    assert first == "conda install pytorch==2.5.1 pytorch-cuda=12.4 -c pytorch -c nvidia"
