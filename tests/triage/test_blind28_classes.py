"""Blind set 28's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: the messages that were 'nothing it knows', out of memory by phase, the words that name the
platform or the GPU, the container and Kubernetes forms of the driver's faults, and a torch said in words on a
GPU newer than all its builds."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from tests.triage.test_blind25_classes import headline, said
from torch_gpu_doctor.triage.healthy import healthy_next_step
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis


def _fix_text(d: PasteDiagnosis) -> str:
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    return cause.finding.remediation.text


def test_modprobes_module_not_found_is_no_module_for_the_running_kernel() -> None:
    """compiler-explorer/infra#1413 (an AWS kernel, the error cut from a backtick) and nvidia-xrun#135 (Fedora):
    'nothing it knows' before. Another module's 'not found' is not the NVIDIA driver's."""
    for name, kernel in (
        ("ce-1413-modprobe-no-nvidia-aws-kernel.txt", "6.8.0-1015-aws"),
        ("nvidia-xrun-135-module-nvidia-not-found-fedora.txt", "5.2.13-200.fc30.x86_64"),
    ):
        d = diagnosed(name)
        check, summary, first = cause_of(d)
        assert check == "driver.kernel_module_build" and f"running kernel {kernel}:" in summary
        assert first == "dkms status" and d.result.exit_problem()
    assert headline(said("modprobe: FATAL: Module loop not found in directory /lib/modules/4.4.0\n")) == ""


def test_torchs_nccl_heartbeat_monitor_is_a_collective_timeout() -> None:
    for name in ("deim-105-nccl-heartbeat-timeout.txt", "dinov2-447-nccl-heartbeat-monitor-timed-out.txt"):
        check, _, first = cause_of(diagnosed(name))
        assert check == "nccl.communication" and first.startswith("sudo dmesg")


def test_compose_before_1_28_cannot_read_gpu_reservations() -> None:
    """Sygil-Webui#490 (docker-compose 1.17.1) and gpu-jupyter#46; swarm's own wording of a refused GPU
    reservation ('Additional property devices is not allowed', docker stack deploy) is another limit."""
    for name in (
        "sygil-490-compose-1-17-no-gpu-devices.txt",
        "gpu-jupyter-46-compose-too-old-for-gpu-devices.txt",
    ):
        check, summary, first = cause_of(diagnosed(name))
        assert check == "platform.container_gpus" and "older than 1.28" in summary
        assert first == "sudo apt install docker-compose-plugin"
    swarm = said("services.test.deploy.resources.reservations Additional property devices is not allowed\n")
    assert "1.28" not in headline(swarm)


def test_a_gpu_lost_from_the_bus_in_the_drivers_words_is_a_problem() -> None:
    """ogkm#1342: 'GPU lost from the bus [NV_ERR_GPU_IS_LOST]' and nvidia-smi's device-handle error with the
    GPU's index before its bus id ('GPU0: 0000:09:00.0') were 'no problem found' (exit 0)."""
    d = diagnosed("ogkm-1342-gpu-lost-rtx5090.txt")
    check, summary, _ = cause_of(d)
    assert check == "driver.xid_errors" and "fell off the bus" in summary and d.result.exit_problem()


def test_ollamas_inference_compute_on_a_gpu_is_healthy_and_on_the_cpu_is_not() -> None:
    d = diagnosed("ollama-6336-amdgpu-version-missing-benign.txt")
    assert d.result.cause is None and not d.result.exit_problem()
    cpu = said(
        'time=2024-08-13T16:46:10.463+08:00 level=INFO source=types.go:105 msg="inference compute" id=0 '
        'library=cpu compute="" driver=0.0 name="" total="31.3 GiB" available="28.1 GiB"\n'
    )
    assert not any(h.signature.id == "other_ollama_inference_compute_on_a_gpu" for h in cpu.pasted.hits)


def test_out_of_memory_while_the_weights_move_is_not_a_batch_size_problem() -> None:
    """flux2#23 (`pipe.to(device)` on a 48 GB A6000) and one-click-installers#15 (nn.Module's convert): the
    weights alone do not fit; a training run's out of memory keeps the training levers."""
    for name in ("flux2-23-oom-a6000.txt", "oneclick-15-cuda-oom-loading-model.txt"):
        text = _fix_text(diagnosed(name))
        assert "before any batch ran" in text and "enable_model_cpu_offload" in text
        assert "lower the batch size" not in text
    assert "lower the batch size" in _fix_text(diagnosed("e11_oom_dcrnn_batch.txt"))


def test_out_of_memory_running_a_model_gets_inference_levers_and_sees_the_low_memory_mode_on() -> None:
    """Hunyuan3D-2#238: a gradio app with --low_vram_mode already set, on a 16 GB card."""
    text = _fix_text(diagnosed("hunyuan3d-238-oom-16gb.txt"))
    assert (
        text.startswith("The models this program runs") and "low-memory mode is on already (line 15)" in text
    )
    assert "gradient accumulation" not in text


def test_the_macs_watermark_is_lifted_only_after_a_smaller_job() -> None:
    text = _fix_text(diagnosed("pinokio-941-mps-oom-m1.txt"))
    assert text.index("Lower what one step needs first") < text.index("PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0")
    assert "last resort" in text


def test_words_before_a_gpus_name_and_a_gcc_package_version_are_not_read_as_facts() -> None:
    """dta#18: 'Heya, get this error NVIDIA GeForce RTX 5080 with CUDA capability sm_120'; truenas#19:
    /proc/driver/nvidia/version's 'gcc version 14.2.0 (Ubuntu 14.2.0-4ubuntu2~24.04.1)' is no Ubuntu 14.2."""
    _, summary, _ = cause_of(diagnosed("dta-18-rtx5080-sm120.txt"))
    assert "for NVIDIA GeForce RTX 5080 (compute capability 12.0)" in summary
    os_facts = diagnosed("truenas-19-nvml-mismatch.txt").facts.os
    assert getattr(os_facts, "distro_name", None) != "Ubuntu 14.2.0"
    assert "Ubuntu 22.04" in str(
        said("OS: Ubuntu 22.04 LTS\nRuntimeError: CUDA error: out of memory\n").facts.os
    )


def test_an_application_without_an_nvidia_gpu_starts_with_its_own_cpu_switch() -> None:
    """pytorch#117358: 'i don't have nivida gpu' (misspelt) under Fooocus; an Intel Arc user keeps XPU's way."""
    _, summary, first = cause_of(diagnosed("pytorch-117358-no-nvidia-gpu-fooocus.txt"))
    assert (
        summary.startswith("The machine has no NVIDIA GPU")
        and first == "python entry_with_update.py --always-cpu"
    )
    _, _, arc_first = cause_of(diagnosed("e29_intel_arc_node_hardcodes_cuda.txt"))
    assert "--cpu" not in arc_first


def test_the_container_toolkits_driver_not_loaded_is_the_hosts_driver_and_no_wsl() -> None:
    d = diagnosed("nct-260-nvml-driver-not-loaded.txt")
    check, summary, first = cause_of(d)
    assert check == "platform.container_gpus" and summary.startswith(
        "The host's NVIDIA kernel driver is not loaded"
    )
    assert first == "sudo modprobe nvidia"
    assert not getattr(d.facts.os, "is_wsl", False)  # libnvidia-container's dxcore probe is no WSL


def test_a_pods_missing_nvidia_smi_and_a_peer_that_closed_ncclS_socket() -> None:
    check, _, _ = cause_of(diagnosed("nvkind-31-pod-no-nvidia-smi.txt"))
    assert check == "platform.container_gpus"
    check, summary, first = cause_of(diagnosed("nccl-1514-connection-closed-by-peer.txt"))
    assert check == "nccl.communication" and summary.startswith("Another rank closed its NCCL connection")
    assert first == "sudo dmesg -T"


def test_an_extension_named_by_a_cut_path_is_rebuilt_not_torch_downgraded() -> None:
    _, summary, first = cause_of(diagnosed("fa-1696-undefined-symbol-torch27.txt"))
    assert summary.startswith("flash-attn's compiled extension (flash_attn_2_cuda.so)")
    assert "--no-build-isolation" in first and "torch==" not in first


def test_a_linux_driver_library_beside_wsls_is_the_linux_driver_in_wsl() -> None:
    """ollama#1940: libnvidia-ml.so.535.104.05 in /usr/lib/x86_64-linux-gnu beside /usr/lib/wsl/lib's copy.
    WSL's own copies alone say nothing of a Linux driver."""
    check, summary, first = cause_of(diagnosed("ollama-1940-wsl-linux-driver-libs.txt"))
    assert check == "platform.wsl_linux_driver" and "535.104.05 is installed inside WSL" in summary
    assert first == "dpkg -S /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05"
    only_wsl = said(
        "gpu.go:248: Discovered GPU libraries: [/usr/lib/wsl/lib/libnvidia-ml.so.1]\n"
        "CUDA error 100 at ggml-cuda.cu:495: no CUDA-capable device is detected\n"
    )
    assert not any(v.finding.check_id == "platform.wsl_linux_driver" for v in only_wsl.result.verdicts)


def test_cuda_home_unset_beside_nvcc_is_a_cpu_torch() -> None:
    _, summary, first = cause_of(diagnosed("torch2trt-933-jetson-cuda-home.txt"))
    assert (
        summary.startswith("The torch that ran is most likely a CPU build") and "torch.version.cuda" in first
    )
    _, summary, _ = cause_of(diagnosed("deepspeed-2337-cuda-home.txt"))
    assert "CPU build" not in summary  # no toolkit in the paste: the toolkit reading stays


def test_bitsandbytes_newer_wording_of_a_missing_binary() -> None:
    _, summary, first = cause_of(diagnosed("bnb-1651-source-build-no-lib.txt"))
    assert summary.startswith("bitsandbytes has no compiled library") and first.endswith("-U bitsandbytes")


def test_a_pinned_image_release_without_the_gpus_kernels_is_replaced_by_a_newer_release() -> None:
    """rocm/docker#89: rocm/pytorch's py3.7 image on gfx1030; an image at :latest (xinference) is the newest
    already, so the install into it stays first."""
    _, _, first = cause_of(diagnosed("rocmdocker-89-nobinaryforgpu-gfx1030.txt"))
    assert first == "docker pull rocm/pytorch:latest"
    _, _, latest_first = cause_of(diagnosed("e24_xinference_docker_rtx5090_sm120.txt"))
    assert latest_first.startswith("python -m pip install torch==")


def test_nvml_unknown_error_in_kubernetes_gets_the_nodes_lasting_fix() -> None:
    _, _, first = cause_of(diagnosed("akash-266-nvml-unknown-systemd-cgroup.txt"))
    assert first == "sudo nvidia-ctk system create-dev-char-symlinks --create-all"
    d = diagnosed("mattshma-bigdata-150-k8s-nvml-unknown-error.txt")
    assert "--pass-device-specs=true" in _fix_text(d) and cause_of(d)[2] == "kubectl delete pod POD"
    _, _, node_first = cause_of(diagnosed("aks-4869-vgpu-unlicensed-a10-k8s.txt"))  # the node itself fails
    assert not node_first.startswith("kubectl")


def test_xid_38_is_the_drivers_firmware_error() -> None:
    _, summary, _ = cause_of(diagnosed("ogkm-1045-xid38-xid109-idle.txt"))
    assert "firmware reported errors to the driver" in summary


def test_a_torch_said_in_words_older_than_the_gpus_architecture_has_no_kernels_for_it() -> None:
    """SparseConvNet#208: 'Geforce RTX 3080, cudatoolkit 10.0, pytorch 1.3.1with conda' and only cuBLAS's
    EXECUTION_FAILED; torch 2.1.0 said beside the same GPU has builds for it."""
    check, summary, _ = cause_of(diagnosed("scn-208-cublas-rtx3080-cuda10.txt"))
    assert check == "torch.arch_compat" and "every build of it was made with CUDA 10.1 or older" in summary
    newer = said(
        "My environment: Geforce RTX 3080, pytorch 2.1.0 with conda.\n"
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`\n"
    )
    assert "every build of it" not in headline(newer)


def test_an_install_that_replaced_the_cuda_torch_puts_that_build_back() -> None:
    """Lightning#18968 ('changes my pytorch version from cuda118 to cpu', the before-report's 2.0.0+cu118) and
    WhisperJAV#334 (uninstalled torch-2.11.0+cu128); a --user install 'without overwriting the existing one' is
    another story (pytorch#56126)."""
    for name, build in (
        ("lightning-18968-pip-replaced-torch.txt", "2.0.0+cu118"),
        ("whisperjav-334-install-replaced-cuda-torch.txt", "2.11.0+cu128"),
    ):
        check, summary, first = cause_of(diagnosed(name))
        assert check == "torch.installed" and f"replaced torch {build}" in summary
        assert first.startswith(f"python -m pip install torch=={build} --index-url") and "force" not in first
    _, summary, _ = cause_of(diagnosed("pytorch-56126-torch-c-no-attribute-user-site-copy.txt"))
    assert "replaced torch" not in summary


def test_a_healthy_stack_beside_work_on_the_cpu_names_the_programs_choice() -> None:
    """text-generation-webui#2924: 'Fresh install running only on CPU radically slow' beside a collect_env whose
    CUDA works: still no problem (exit 0), with the step that shows whether the process uses the GPU. A healthy
    report without such words gets no such step."""
    d = diagnosed("textgen-2924-healthy-cuda-extension-not-installed.txt")
    assert d.result.cause is None and not d.result.exit_problem()
    assert d.pasted.prose.on_the_cpu == 3
    found = healthy_next_step(d.result, d.pasted, d.facts)
    assert found is not None and found[1].commands[0].argv[0] == "nvidia-smi"
    quiet = diagnosed("pytorch-124007-healthy-gpu-util-0.txt")
    assert healthy_next_step(quiet.result, quiet.pasted, quiet.facts) is None
    assert said("How can I run this code on CPU? I have no GPU\n").pasted.prose.on_the_cpu is None
