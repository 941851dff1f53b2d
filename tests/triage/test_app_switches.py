"""An application's own switches (compat/app_pythons.json): where the answer is the CPU, its CPU switch comes first,
and the CPU build itself replaces the installed torch (a plain `pip install torch --index-url .../cpu` over a CUDA
torch is "Requirement already satisfied" and changes nothing: blind set 23 #04); out of GPU memory, its low-VRAM
mode comes first (blind set 24 #09)."""

from __future__ import annotations

from tests.factories import facts, gpu, torch_packages
from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.fixes.torch_wheel import INDEX_CPU, cpu_build_command, older_than_every_build
from torch_gpu_doctor.triage.pipeline import diagnose_paste


def test_an_app_on_a_gpu_older_than_every_build_starts_on_the_cpu_first() -> None:
    """stable-diffusion-webui#1611: a GT 710 (3.5) under the web UI on Windows: its own CPU flags, for
    webui.bat (the paste is on Windows), then the CPU build into the web UI's venv, replacing its torch."""
    d = diagnosed("stable-diffusion-webui-1611-gt710-sm35-too-old.txt")
    _, summary, first = cause_of(d)
    assert "GT 710" in summary and "3.5" in summary
    assert first == "webui.bat --use-cpu all --precision full --no-half --skip-torch-cuda-test"
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    fix = d.result.cause.finding.remediation
    assert fix.text.startswith("Stable Diffusion web UI runs on the CPU with its own switch")
    install = fix.commands[1].argv
    assert install[0] == "E:\\ai\\stable-diffusion-webui\\venv\\Scripts\\python.exe"
    assert install[-2:] == ("--index-url", INDEX_CPU)
    assert next(word for word in install if word.startswith("torch==")).endswith("+cpu")
    # torchvision 0.29.2 is one py3-none wheel for every variant: no +cpu (compat-errata §3)
    assert "torchvision==0.29.2" in install


def test_a_cuda_build_where_the_cpu_one_was_asked_gets_no_switch() -> None:
    """comfy-cli#344: `comfy install --cpu` put a CUDA torch there; the build is the problem, so the reinstall
    from the CPU index stays first, not ComfyUI's --cpu."""
    _, _, first = cause_of(diagnosed("comfy-cli-344-cpu-flag-installs-cuda-torch.txt"))
    assert "--index-url https://download.pytorch.org/whl/cpu" in first and "main.py" not in first


def test_an_app_whose_gpu_a_build_supports_gets_that_build_not_the_cpu() -> None:
    """A Blackwell card under ComfyUI's portable build: a CUDA 12.8+ wheel is the fix, no CPU switch."""
    d = diagnosed("comfyui-portable-5070ti-sm120-path-with-space.txt")
    _, _, first = cause_of(d)
    assert "--cpu" not in first and "/whl/cu1" in first


def test_an_app_out_of_gpu_memory_starts_in_its_low_vram_mode_first() -> None:
    """ComfyUI#1443: a 6 GB card full after an update; --lowvram before a training script's remedies, which
    remain after it. The same error without an application named keeps the general fix."""
    name = "comfyui-1443-6gb-vram-oom-after-update.txt"
    d = diagnosed(name)
    check, _, first = cause_of(d)
    assert check == "torch.out_of_memory" and first == "python main.py --lowvram"
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "batch size" in d.result.cause.finding.remediation.text
    bare = (PASTES / name).read_text().replace("ComfyUI", "my app").replace("comfy", "app")
    _, _, first = cause_of(diagnose_paste(bare.encode(), name))
    assert "--lowvram" not in first


def test_the_cpu_build_replaces_an_installed_cuda_torch() -> None:
    data = load_torch_releases()
    old = facts(
        gpus=(gpu(name="NVIDIA GeForce GT 710", cc="3.5"),),
        torch_packages=torch_packages("2.1.0+cu121", "12.1"),
    )
    argv = cpu_build_command(old, data).argv
    assert "--index-url" in argv and argv[-1] == INDEX_CPU
    assert "torch==2.1.0+cpu" in argv  # the installed release, as the CPU build: pip swaps it
    fix = older_than_every_build(old, data)
    assert fix is not None and fix.commands[0].argv == argv
