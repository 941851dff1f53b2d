"""Blind set 22's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: a failure said in words (a title's "is_available() false", "can not use ... GPU", "无法调用gpu", "Fails with 3
GPUs") is never "No problem found"; a build tag written apart ("PyTorch 2.8.0 + cu129"); what the machine shown
makes likeliest where the error is missing (a driver just reinstalled, a torch build the paste never shows);
accelerate's gpu_ids that CUDA cannot read; CUDA asked for on a Mac."""

from __future__ import annotations

import io

import pytest

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.triage.render import render_text


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


def rendered(d: PasteDiagnosis) -> str:
    out = io.StringIO()
    render_text(d, "paste", out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "line"),
    [
        (
            "accelerate-3510-insufficient-info-training-not-starting.txt",
            1,
        ),  # "Accelerate Config Error - How to"
        ("ollama-10483-ollama-runner-libraries-missing.txt", 7),  # "it wasn't using GPU"
        (
            "ollama-9143-gpu-unusable-after-driver-reinstall.txt",
            1,
        ),  # "Ollama can not use Nvidia 6000 ada GPU"
        ("minimind-215-cpu-only-torch-build.txt", 17),  # "但是无法调用gpu"
        (
            "diffusers-4229-insufficient-info-multigpu-launch.txt",
            3,
        ),  # "Unknown error in configuring multiple GPU"
        ("accelerate-3446-multigpu-fails-with-third-gpu.txt", 1),  # "accelerate Fails with 3 GPUs"
    ],
)
def test_a_failure_said_in_words_is_never_no_problem_found(name: str, line: int) -> None:
    """Blind set 22: eight pastes that say something fails got "No problem found" and exit 0."""
    d = diagnosed(name)
    assert d.result.exit_problem()
    failing = d.pasted.prose.fails
    assert failing is not None and failing.line == line


@pytest.mark.parametrize(
    "text",
    [
        "I couldn't find it in the accelerate docs.",
        "No errors so far, it works fine on 2 GPUs.",
        "The docs say the GPU is detected automatically.",
    ],
)
def test_words_that_report_no_failure_stay_unread(text: str) -> None:
    assert read_prose(text.split("\n")).fails is None


def test_a_build_tag_written_apart_is_the_build() -> None:
    """ComfyUI#9929: "PyTorch 2.8.0 + cu129" on a GTX 1070: 2.8's CUDA 12.8 and 12.9 builds start at sm_70
    (pytorch#157517), so the cause is the missing kernels, the fix the cu126 build of the same release."""
    check, summary, _ = cause_of(diagnosed("comfyui-9929-old-gpu-arch-dropped-pascal.txt"))
    assert check == "torch.arch_compat" and summary.startswith(
        "torch 2.8.0+cu129 has no kernels for GeForce GTX 1070"
    )
    fix = diagnosed("comfyui-9929-old-gpu-arch-dropped-pascal.txt").result.cause
    assert fix is not None and fix.finding.remediation is not None
    assert any("torch==2.8.0+cu126" in c.display() for c in fix.finding.remediation.commands)
    # a "+" that joins two packages is no build tag
    assert read_prose(["PyTorch 2.8.0 + torchvision 0.23"]).torch is not None
    assert read_prose(["PyTorch 2.8.0 + torchvision 0.23"]).torch.value == "2.8.0"  # type: ignore[union-attr]


def test_the_gpu_not_used_since_a_driver_reinstall_guesses_the_reboot() -> None:
    """ollama#9143: "I can use the GPUs correct before I reinstall the Nvidia driver", nvidia-smi answers: the
    guess is the reboot (nvidia_uvm, the driver's libraries), never the cause."""
    d = diagnosed("ollama-9143-gpu-unusable-after-driver-reinstall.txt")
    assert d.result.cause is None and d.result.hunch is not None
    assert d.result.hunch.command == "sudo reboot" and "nvidia_uvm" in d.result.hunch.text
    text = PASTES.joinpath("ollama-9143-gpu-unusable-after-driver-reinstall.txt").read_text(encoding="utf-8")
    unchanged = text.replace("before I reinstall the Nvidia driver", "yesterday")
    assert said(unchanged).result.hunch is None


def test_a_torch_program_without_the_gpu_and_no_build_shown_guesses_a_cpu_build() -> None:
    """minimind#215: Windows, a requirements file, "无法调用gpu", a pip list cut before torch: the check in the
    env's own python.exe; a paste that shows a CUDA build, or a program that is not torch's, guesses nothing."""
    d = diagnosed("minimind-215-cpu-only-torch-build.txt")
    assert d.result.hunch is not None and "CPU-only build" in d.result.hunch.text
    assert d.result.hunch.command == (
        'D:\\softwares\\Anaconda\\envs\\minimind\\python.exe -c "import torch; print(torch.__version__, '
        'torch.version.cuda, torch.cuda.is_available())"'
    )
    shown = "torch 2.5.1+cu121 is installed, but my script can not use the GPU\n"
    assert said(shown).result.hunch is None
    assert diagnosed("ollama-10483-ollama-runner-libraries-missing.txt").result.hunch is None


def test_accelerate_gpu_ids_cuda_cannot_read_hide_every_gpu() -> None:
    """accelerate#3225: gpu_ids '[1,2,3,4]' in the config, is_available() false only under accelerate launch:
    accelerate passes the value as CUDA_VISIBLE_DEVICES, brackets and all."""
    check, summary, first = cause_of(
        diagnosed("accelerate-3225-not-gpu-fault-launcher-gpu-ids-misconfig.txt")
    )
    assert check == "torch.cuda_init" and summary.startswith(
        "accelerate's config sets gpu_ids to '[1,2,3,4]'"
    )
    assert first == "accelerate launch --gpu_ids=0,1,2,3 SCRIPT.py"  # CUDA counts from 0
    text = PASTES.joinpath("accelerate-3225-not-gpu-fault-launcher-gpu-ids-misconfig.txt").read_text(
        encoding="utf-8"
    )
    for readable in ("0,1,2,3", "all", "'0,1'"):
        d = said(text.replace("'[1,2,3,4]'", readable))
        assert d.result.cause is None or not d.result.cause.finding.summary.startswith("accelerate's config")


def test_cuda_asked_for_on_a_mac_is_answered_by_the_mac() -> None:
    """LlamaFactory#6427: an Intel MacBook with a Radeon, "I get Cuda Environment was not detected": no CUDA on
    macOS, never "found nothing it knows"; a Mac with an NVIDIA eGPU keeps its own answer."""
    check, summary, _ = cause_of(diagnosed("llamafactory-6427-not-gpu-fault-no-cuda-on-mac.txt"))
    assert check == "gpu.present" and summary.startswith("This is a Mac")
    egpu = diagnosed("macos-egpu-17-egpu-tb2-macos.txt")
    assert egpu.result.cause is None or not egpu.result.cause.finding.summary.startswith("This is a Mac")


@pytest.mark.parametrize(
    ("name", "signature", "first"),
    [
        # a D-state process inside nvidia_uvm, from dmesg: the driver's state, read before a reboot
        ("returnn-1480-kernel-uvm-hang-d-state.txt", "kernel_call_trace_in_nvidia_driver", "sudo dmesg -T"),
        # go-nvml's ERROR_LIBRARY_NOT_FOUND, written inline in a pod's log
        # (in a Kubernetes pod: the pod's GPU request and runtime, not the node's driver)
        (
            "kai-scheduler-261-k8s-nvml-library-not-found.txt",
            "nvml_library_not_found",
            "kubectl describe pod POD",
        ),
        # cuDNN 9's own loader, in brackets, on Windows: the DLL's folder on PATH, not a torch reinstall
        (
            "whisper-webui-485-windows-cudnn-dll-not-found.txt",
            "missing_library_cudnn_dll_not_located",
            'where /r "C:\\Program Files\\NVIDIA" cudnn_ops64_9.dll',
        ),
        # docker asked for /dev/kfd on a Windows host (Docker Desktop's VM): a Linux host, no command to run there
        ("legacy-rocm-build-1893-rocm-container-on-windows-host.txt", "rocm_docker_device_missing", ""),
    ],
)
def test_an_error_written_inline_or_in_a_log_is_read(name: str, signature: str, first: str) -> None:
    """Blind set 22: each of these errors was in the paste and answered "shows no error" or "found nothing"."""
    d = diagnosed(name)
    assert signature in {h.signature.id for h in d.pasted.hits}
    _, _, command = cause_of(d)
    assert command == first


def test_dev_kfd_missing_for_docker_on_linux_asks_which_engine_docker_talks_to() -> None:
    """The same docker error from a Linux shell: Docker Desktop's context or the host's amdgpu, `docker context ls`
    first; from a Windows prompt (legacy-rocm-build#1893) the answer is that no ROCm container runs there."""
    line = (
        "docker: Error response from daemon: error gathering device information while adding custom device "
        '"/dev/kfd": no such file or directory.\n'
    )
    _, summary, first = cause_of(said("user@box:~$ docker run --device=/dev/kfd rocm/pytorch\n" + line))
    assert first == "docker context ls" and not summary.startswith("Docker on this Windows host")
    _, summary, _ = cause_of(diagnosed("legacy-rocm-build-1893-rocm-container-on-windows-host.txt"))
    assert summary.startswith("Docker on this Windows host has no /dev/kfd")


def test_the_catalogues_new_entries_keep_to_their_own_lines() -> None:
    """A user-space traceback, NVML's other errors and a plain missing cuDNN .so are not these entries."""
    for text in (
        '  File "/usr/lib/python3/site-packages/torch/cuda/__init__.py", line 293, in _lazy_init\n',
        "Failed to initialize NVML: Driver/library version mismatch\n",
        "Could not load library libcudnn_ops.so.9: cannot open shared object file\n",
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n',
    ):
        ids = {h.signature.id for h in said(text).pasted.hits}
        assert not ids & {
            "kernel_call_trace_in_nvidia_driver",
            "nvml_library_not_found",
            "missing_library_cudnn_dll_not_located",
            "rocm_docker_device_missing",
        }, text


@pytest.mark.parametrize(
    "name",
    [
        "scalellm-20-driver-too-old-for-container-cuda.txt",
        "lvllmds4-46-driver-too-old-for-container-cuda.txt",
    ],
)
def test_a_driver_too_old_for_a_containers_torch_is_the_hosts_driver_or_the_image(name: str) -> None:
    """ScaleLLM#20 (docker run ... scalellm:latest on driver 520), Lvllmds4#46 (an image for CUDA 12.8.1 on a 570
    driver): the torch is the image's, so no pip install on the host."""
    d = diagnosed(name)
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "update the NVIDIA driver on the host" in fix.text
    assert not any("pip" in c.argv for c in fix.commands)
    # the same error outside a container keeps torch's own fix (another build for the driver)
    text = (
        'File "/home/me/venv/lib/python3.10/site-packages/torch/cuda/__init__.py", line 293, in _lazy_init\n'
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11080).\n"
    )
    own = said(text).result.cause
    assert own is not None and own.finding.remediation is not None
    assert any("pip" in c.argv for c in own.finding.remediation.commands)


def test_a_torch_whose_version_the_paste_never_shows_gets_the_newest_build_not_an_old_one() -> None:
    """InvokeAI#5773: "Torch not compiled with CUDA enabled" from the app's venv, no version shown: the newest
    CUDA build, not torch 1.13.1 "closest to" a placeholder."""
    _, _, first = cause_of(diagnosed("invokeai-5773-cpu-only-torch-build.txt"))
    assert "torch==1.13.1" not in first and "torch==2." in first


def test_a_hugging_face_env_dump_never_says_a_companion_is_missing() -> None:
    """diffusers#4229, accelerate#3446: `accelerate env` lists numpy and accelerate, never torchvision: whether it
    is installed stays unknown, with pip list to say."""
    for name in (
        "diffusers-4229-insufficient-info-multigpu-launch.txt",
        "accelerate-3446-multigpu-fails-with-third-gpu.txt",
    ):
        out = rendered(diagnosed(name))
        assert "Neither torchvision nor torchaudio is installed" not in out
        assert "torch.companions" in out.split("Unknown from this paste")[1]


def test_a_job_that_fails_on_more_gpus_than_it_runs_on_guesses_peer_to_peer() -> None:
    """accelerate#3446: "Fails with 3 GPUs but Works with 2 GPUs": nvidia-smi topo -m, NCCL_P2P_DISABLE=1."""
    d = diagnosed("accelerate-3446-multigpu-fails-with-third-gpu.txt")
    assert d.result.hunch is not None and d.result.hunch.command == "nvidia-smi topo -m"
    assert said("# training fails with 3 GPUs\nno error shown\n").result.hunch is None  # no contrast said


def test_memory_left_to_a_running_program_after_empty_cache_is_its_cuda_context() -> None:
    """pytorch#60150: `del temp; torch.cuda.empty_cache(); time.sleep(1000)` and nvidia-smi still shows 1105M:
    the context, no fault and no process to kill; memory still held after the program exits keeps the entry's
    answer (a leftover process)."""
    name = "pytorch-60150-not-gpu-fault-expected-cuda-context-memory.txt"
    _, summary, first = cause_of(diagnosed(name))
    assert summary.startswith("Not a fault: the GPU memory nvidia-smi still shows") and first == ""
    text = PASTES.joinpath(name).read_text(encoding="utf-8")
    ended = text.replace("use the code below:", "after the script exits, with the code below:")
    _, summary, first = cause_of(said(ended))
    assert summary.startswith("A process that outlived the program") and first.startswith("sudo fuser")


def test_a_stale_compiled_module_named_in_the_title_over_a_cut_traceback() -> None:
    """detectron2#104: the title "module 'detectron2._C' has no attribute 'get_cuda_version'" over a traceback cut
    before its exception: the title is the error, a stale build of the extension, rebuilt from its checkout."""
    d = diagnosed("detectron2-104-stale-compiled-extension.txt")
    _, summary, first = cause_of(d)
    assert summary.startswith("detectron2's compiled _C module was built from other sources")
    assert first == "python -m pip install --no-build-isolation --no-deps -e ."
    # torch's own _C is no project's stale build; an unknown title error still stands in for the cut traceback
    assert not said("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'\n").pasted.hits
    cut = "# No module named 'fused_adam'\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
    shown = said(cut).result.unrecognised
    assert shown is not None and shown.title and shown.line == 1


def test_no_kernel_image_from_an_engines_image_is_that_images_build() -> None:
    """vllm#18995: `docker run ... vllm/vllm-openai:latest` and "no kernel image", the GPU not named: the image's
    build, checked with the image's own torch, not a torch for the host."""
    check, summary, first = cause_of(diagnosed("vllm-18995-blackwell-sm120-prebuilt-kernels-missing.txt"))
    assert check == "torch.arch_compat" and summary.startswith("The vllm/vllm-openai:latest image's build")
    assert first.startswith("docker run --rm --gpus all --entrypoint python3 vllm/vllm-openai:latest -c")
    # without the engine's image the generic answer stays
    text = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    _, summary, _ = cause_of(said("docker run --rm --gpus all myorg/app:1.0\n" + text))
    assert "image's build" not in summary


def test_wsl_that_works_when_started_another_way_is_its_session_not_its_driver() -> None:
    """WSL#9640: nvidia-smi fails after `wsl -d Ubuntu-22.04` from PowerShell and works when MobaXterm starts the
    same distribution: no Windows driver update, the elevated/normal session split (WSL#9099) and wsl --shutdown."""
    _, summary, first = cause_of(diagnosed("wsl-9640-wsl2-nvidia-smi-driver-not-loaded.txt"))
    assert summary.startswith("The same WSL distribution reaches the GPU when started another way")
    assert first == "wsl.exe --shutdown"


def test_wsl_driver_not_loaded_without_a_contrast_is_hedged_with_the_check_that_separates_its_causes() -> (
    None
):
    """WSL#9134: nvidia-smi fails in WSL, works on Windows: a Linux package, WSL 1 or the session split; WSL's own
    nvidia-smi first, the guess said as the usual cause, no check id in the words a person reads."""
    d = diagnosed("wsl-9134-wsl-nvidia-smi-driver-not-loaded.txt")
    _, summary, first = cause_of(d)
    assert first == "/usr/lib/wsl/lib/nvidia-smi" and "most often" in summary
    assert d.result.confidence != "stated"
    assert "platform.wsl_linux_driver" not in rendered(d).split("What the paste shows")[0]


def test_torchs_out_of_memory_message_translated_is_torchs_message() -> None:
    """GLM-4#730: the title is torch's OOM message in Chinese (尝试分配 108.00 MiB ... 空闲内存为 34.88 MiB): read as
    that message with its figures, said as stated, not as a person's words about memory."""
    d = diagnosed("glm-4-730-cuda-oom.txt")
    hits = {h.signature.id: h for h in d.pasted.hits}
    assert "oom_said_in_words" not in hits
    zh = hits["oom_cuda_out_of_memory_total_capacity_zh"]
    assert (
        zh.values["tried"] == "108.00 MiB"
        and zh.values["free"] == "34.88 MiB"
        and zh.values["pid"] == "1170126"
    )
    assert d.result.confidence == "stated"
    # words alone about memory, on a line with no program's message, stay words
    assert {h.signature.id for h in said("训练时显存不足，怎么办\n").pasted.hits} == {"oom_said_in_words"}


def test_no_kernel_image_in_an_openmmlab_project_is_mmcvs_wheel_for_the_installed_torch() -> None:
    """Boosting-R-CNN#10: OpenMMLab's collect_env (torch 1.8.1+cu111, whose arch list has sm_86) and "the mmcv and
    mmdet versions": mmcv-full from OpenMMLab's page for torch 1.8 + cu111, and no probe of torch's arch list,
    which the report shows already; the source build in cmd's words on Windows."""
    d = diagnosed("boosting-r-cnn-10-extension-not-built-for-arch.txt")
    _, summary, first = cause_of(d)
    assert summary.endswith("the kernel that is missing is in mmcv, not in torch.")
    assert first == (
        "python -m pip install --no-cache-dir --force-reinstall --no-deps --only-binary :all: mmcv-full "
        "-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.8.0/index.html"
    )
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and len(fix.commands) == 1 and "set TORCH_CUDA_ARCH_LIST=8.6" in fix.text


def test_a_launch_across_gpus_that_fails_on_windows_guesses_torch_distributed_there() -> None:
    """LlamaFactory#5651: "Initializing distributed tasks" (torchrun, several GPUs) under C:\\ and 报错 with no
    error: no NCCL on Windows, no libuv from torch 2.4: one GPU first; the same on Linux guesses nothing of it."""
    d = diagnosed("llamafactory-5651-windows-torchrun-distributed-launch-fails.txt")
    assert d.result.hunch is not None and d.result.hunch.command == "set CUDA_VISIBLE_DEVICES=0"
    linux = "# training fails\n(llama) user@box:~/LLaMA-Factory$ llamafactory-cli train x.yaml\nInitializing distributed tasks at: 127.0.0.1:29500\n"
    guess = said(linux).result.hunch
    assert guess is None or "Windows" not in guess.text


def test_pods_without_gpus_on_a_dockershim_node_restart_docker_not_containerd() -> None:
    """k8s-device-plugin#60: Kubernetes 1.10 with /etc/docker/daemon.json's default-runtime nvidia: Docker is the
    pods' runtime, restarted to read it; where daemon.json does not say so, a Kubernetes before 1.24 still runs
    pods through Docker, whose default runtime is then set (set 24); containerd's is for newer ones."""
    _, _, first = cause_of(diagnosed("k8s-device-plugin-60-k8s-device-plugin-nvml-not-loaded.txt"))
    assert first == "sudo systemctl restart docker"
    text = PASTES.joinpath("k8s-device-plugin-60-k8s-device-plugin-nvml-not-loaded.txt").read_text(
        encoding="utf-8"
    )
    _, _, first = cause_of(said(text.replace('"default-runtime": "nvidia"', '"runtimes": {}')))
    assert first == "sudo nvidia-ctk runtime configure --runtime=docker --set-as-default"


def test_a_cuda_library_of_the_boards_own_cuda_missing_is_that_cuda_not_another_jetpack() -> None:
    """PyTorch-Jetson-Nano#9: Ubuntu 20.04 on a Nano, torch's import wants libcufft.so.10: a Nano's JetPack ends at
    4.6 (CUDA 10.2), so the board's CUDA libraries are missing from the loader path; on an Orin (JetPack 5 and
    6: CUDA 11.4, 12.x) the same library is another JetPack's torch."""
    name = "pytorch-jetson-nano-9-jetson-cuda-libs-missing.txt"
    check, summary, first = cause_of(diagnosed(name))
    assert check == "platform.jetson" and "a library of CUDA 10.2, this board's own" in summary
    assert first == "ls /usr/local/cuda-10.2/lib64"
    text = PASTES.joinpath(name).read_text(encoding="utf-8")
    _, summary, _ = cause_of(said(text.replace("Jetson Nano", "Jetson AGX Orin")))
    assert summary.startswith("torch was built for another JetPack")
    # a versioned soname (libcudart.so.10.2) on a Nano whose release is not known may be another JetPack's (4.2
    # and 4.3 had CUDA 10.0): jetracer#88 keeps that answer
    _, summary, _ = cause_of(diagnosed("jetracer-torch12-libcudart-10-2-other-jetpack.txt"))
    assert summary.startswith("torch was built for another JetPack")


@pytest.mark.parametrize(
    ("text", "across"),
    [
        ("DDP for multi node (two node, two GPUs each) training fails with nccl", True),
        ("training on two nodes hangs", True),
        ("a multinode job", True),
        ("the node_modules folder and a single node", False),
    ],
)
def test_a_job_across_machines_is_read_however_it_is_spelled(text: str, across: bool) -> None:
    """pytorch#39388: "multi node (two node, two GPUs each)": NCCL's path between the machines, not /dev/shm."""
    assert (read_prose([text]).across_nodes is not None) is across


def test_bitsandbytes_that_searched_for_cudart_on_linux_says_so_without_windows() -> None:
    """bitsandbytes#680: its own search ("did not contain ['libcudart.so', ...]") in a Linux container found no
    runtime: that, and the upgrade; no word of Windows builds in the headline."""
    _, summary, first = cause_of(diagnosed("bitsandbytes-680-bitsandbytes-cpu-binary-loaded.txt"))
    assert (
        summary.startswith("bitsandbytes (before 0.43) searched for a CUDA runtime")
        and "Windows" not in summary
    )
    assert first.endswith("-m pip install -U 'bitsandbytes>=0.43'")


def test_the_reboot_guess_after_a_driver_change_is_a_windows_restart_on_windows() -> None:
    """No `sudo reboot` for a Windows machine: its driver change asks for a restart of Windows."""
    text = (
        "# the app can not use the GPU since I reinstalled the Nvidia driver\n"
        "C:\\Users\\me> nvidia-smi\n"
        "| NVIDIA-SMI 572.16                 Driver Version: 572.16         CUDA Version: 12.8     |\n"
    )
    guess = said(text).result.hunch
    assert guess is not None and guess.command is None and "Restart Windows" in guess.text


def test_a_mac_is_asked_nothing_of_rocm_and_a_gpu_not_used_is_asked_for_the_start_up_log() -> None:
    """LlamaFactory#6427: a Mac with a Radeon has no ROCm to ask rocminfo of; ollama#10483: "it wasn't using GPU"
    has no error to paste, but the program's start-up lines say where it chose its device."""
    out = rendered(diagnosed("llamafactory-6427-not-gpu-fault-no-cuda-on-mac.txt"))
    assert "rocminfo" not in out
    out = rendered(
        said("Just upgraded. Noticed that it wasn't using GPU, but in the logs i can see it detected GPU\n")
    )
    assert "Next: paste what the program prints as it starts" in out
    assert "Next: paste the error's last lines" in rendered(said("# training does not work on two 3090\n"))


def test_nvml_missing_outside_a_pod_asks_the_machine_for_its_driver() -> None:
    """The same NVML error on a plain machine: the driver there (nvidia-smi), not a pod's runtime."""
    _, _, first = cause_of(said("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found\n"))
    assert first == "nvidia-smi"


@pytest.mark.parametrize(
    "line",
    [
        # ollama#9842 (0.6): the maintainer quotes the log line that says no GPU runner was found
        'time=2025-03-18T11:15:57.784+09:00 level=DEBUG source=server.go:259 msg="compatible gpu libraries" '
        "compatible=[]",
        # ollama#8349 (0.5): "It's using CPU because that's the only runner available"
        "Jan 14 16:41:34 architect ollama[16241]: time=2025-01-14T16:41:34.306Z level=INFO source=routes.go:1339 "
        'msg="Dynamic LLM libraries" runners=[cpu]',
    ],
)
def test_ollama_without_its_gpu_runners_says_so_and_lists_its_library_folder(line: str) -> None:
    """Ollama sees the GPU but its installation has no CUDA runner: the folder it loads them from is listed."""
    _, summary, first = cause_of(said(line + "\n"))
    assert summary.startswith("Ollama's installation has no GPU runner libraries")
    assert first == "ls -R /usr/local/lib/ollama"


def test_ollama_with_its_cuda_runner_or_a_words_hit_of_its_real_paste() -> None:
    """A runner list that holds a CUDA runner is a working install; ollama#10483 quotes "compatible libraries=[ ]"
    in words after an upgrade, and that is the cause it gets."""
    d = said('msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v12 rocm_v6]"\n')
    assert d.result.cause is None or "runner" not in d.result.cause.finding.summary
    _, summary, _ = cause_of(diagnosed("ollama-10483-ollama-runner-libraries-missing.txt"))
    assert summary.startswith("Ollama's installation has no GPU runner libraries")


_NO_RUNTIME = (
    'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
)
_NO_KFD = (
    "docker: Error response from daemon: error gathering device information while adding custom device "
    '"/dev/kfd": no such file or directory.\n'
)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (  # docker/docs#19366: "I do indeed use Docker Desktop ... systemctl --user start docker-desktop"
            "I start it by running `systemctl --user start docker-desktop`\n"
            "$ docker run -it --rm --gpus all ubuntu nvidia-smi\n" + _NO_RUNTIME,
            "docker context use default",
        ),
        (  # ROCm's container "specifically when Docker Desktop is running the background" (set 22 #31)
            "This however leads to the following specifically when Docker Desktop is running the background.\n"
            "$ docker run -it --device=/dev/kfd --device=/dev/dri rocm/pytorch:latest\n" + _NO_KFD,
            "docker context use default",
        ),
        (
            "$ docker run -it --rm --gpus all ubuntu nvidia-smi\n" + _NO_RUNTIME,
            "sudo nvidia-ctk runtime configure",
        ),
        (  # Docker Desktop on Windows: its WSL 2 engine, not a context
            "Docker Desktop 4.23 on Windows 11\nC:\\Users\\me> docker run --rm --gpus all ubuntu nvidia-smi\n"
            + _NO_RUNTIME,
            "wsl.exe --update",
        ),
    ],
)
def test_docker_desktop_on_linux_has_no_gpu_to_give(text: str, first: str) -> None:
    """Docker Desktop for Linux runs containers in a VM without a GPU: the host engine's context, not the
    toolkit; without Docker Desktop named the toolkit stands, and on Windows its WSL 2 engine."""
    _, summary, command = cause_of(said(text))
    assert command.startswith(first)
    assert ("Docker Desktop's virtual machine" in summary) is (first == "docker context use default")
