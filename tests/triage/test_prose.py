"""What a paste says in words (triage/prose.py): GPUs, drivers and platforms people name outside any tool's
output, each taken only when the paste names it once. The lines are real (blind set 5 and the corpus)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.rocm_gfx import gfx_of_product
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.unavailable import Unavailable

HERE = Path(__file__).parent


@pytest.mark.parametrize(
    ("line", "gpu", "capability"),
    [
        ("在5060ti上运行报错", "GeForce RTX 5060 Ti", "12.0"),  # lmdeploy#3844: CJK around the name
        (
            "使用一张3090显卡，参数设置如下",
            "GeForce RTX 3090",
            "8.6",
        ),  # blind set 17: a bare number called a card
        ("       product: GP107 [GeForce GTX 1050 Ti]", "GeForce GTX 1050 Ti", "6.1"),  # lshw
        ("- 显卡型号: GeForce GTX 1650", "GeForce GTX 1650", "7.5"),
        ("I'm on 4xRTX 4090 and it hangs", "GeForce RTX 4090", "8.9"),
        ("training on 8x h100 nodes", "H100", "9.0"),
        ("My GTX 960M laptop", "GeForce GTX 960M", "5.0"),
        ("NVIDIA T4 on colab", "T4", "7.5"),
        ("on a rtx 4070 ti super", "GeForce RTX 4070 Ti SUPER", "8.9"),
        ("two rtx 4090s", "GeForce RTX 4090", "8.9"),  # a plural, not a SUPER
        ("my 1080ti", "GeForce GTX 1080 Ti", "6.1"),
        # krita-ai-diffusion issue template: a Maxwell card by its bare number and suffix
        ("GPU: 980 TI", "GeForce GTX 980 Ti", "5.2"),
        # kohya-ss: "a 2080ti" is one card, not an RTX 2080 and a 2080 Ti
        (
            "I tried flux training on a 2080ti with 22GB of VRAM, but I keep getting an error:",
            "GeForce RTX 2080 Ti",
            "7.5",
        ),
        ("inference on a 2xT4 machine (kaggle)", "T4", "7.5"),  # counted, as people write cloud shapes
    ],
)
def test_a_gpu_named_in_words_has_its_capability(line: str, gpu: str, capability: str) -> None:
    said = read_prose([line]).gpu
    assert said is not None and said.value == gpu
    model = load_matrix().gpu_by_name(said.value)
    assert model is not None and model.compute_capability == capability


@pytest.mark.parametrize(
    "line",
    [
        "port 4090 is in use",  # a bare number is no GPU
        "works on my 3090 but not on the 4090 Ti box, RTX 3090 vs RTX 4090",  # two models: neither
        "0xA100 0xT4 abcH100",  # inside hex and words
        "RTX 6000 Ada and RTX A6000",  # two workstation parts
        "Same script worked on my old RTX 3090, fails after upgrading the card",  # another time
        "I do not have access to A100 cards",  # another machine
        "we run it on an nvidia k8s cluster",  # not a T4-style short name
        "(I would buy a 3090 if I didn't have to pay scalper prices)",  # a card not bought
    ],
)
def test_no_gpu_is_guessed(line: str) -> None:
    assert read_prose([line]).gpu is None


@pytest.mark.parametrize(
    ("line", "driver"),
    [
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.223.02  Sat Oct  7 15:39:11 UTC 2023",
            "470.223.02",
        ),
        ("- 驱动版本: Driver Version: 460.80", "460.80"),
        ("driver 535.104.05 installed", "535.104.05"),
    ],
)
def test_a_driver_named_in_words(line: str, driver: str) -> None:
    assert read_prose([line]).driver is not None
    said = read_prose([line]).driver
    assert said is not None and said.value == driver


@pytest.mark.parametrize(
    "line",
    [
        "the docs say it needs driver 525.60.13 or newer",  # a requirement, not what is installed
        "I upgraded driver 470.82.01 to 535.104.05",  # the old one of an upgrade
    ],
)
def test_a_driver_named_elsewhere_is_not_taken(line: str) -> None:
    assert read_prose([line]).driver is None


@pytest.mark.parametrize(
    "line",
    [
        "There is an issue with the linux kernel driver. Can't run ollama, and this is working fine under windows.",
        "The same model runs fine with the 550 driver.",
        "It works in Windows 11 without any problem.",
        "Every CUDA program crashes the same way.",
    ],
)
def test_work_said_to_run_elsewhere(line: str) -> None:
    assert read_prose([line]).fine_elsewhere == 1


@pytest.mark.parametrize(
    "line",
    [
        "I am running Windows 11 with WSL2.",
        "Please close all applications before installing the driver.",
        "It works on the GPU but slowly.",
    ],
)
def test_no_elsewhere_is_read_into_plain_words(line: str) -> None:
    assert read_prose([line]).fine_elsewhere is None


def test_platforms_named_for_another_machine_are_not_taken() -> None:
    assert (
        read_prose(["Same code works fine under WSL2 on my laptop, but fails on our Ubuntu server"]).wsl
        is None
    )
    mac = ["On macOS this runs on MPS.", '  File "/srv/app/run.py", line 3, in <module>']
    assert read_prose(mac).macos is None  # a Linux path says where it failed
    assert (
        read_prose(["Ignoring mlx: markers 'sys_platform == \"darwin\"' don't match your environment"]).macos
        is None
    )


def test_platforms_and_boards_named_in_words() -> None:
    assert read_prose(["I use WSL 2 on windows 11"]).wsl == 1
    assert read_prose(['  File "/Users/doms/pinokio/api/x.py", line 3']).macos == 1
    assert read_prose(["C:/Users/foo/bar.py"]).macos is None  # a Windows path
    jetson = read_prose(["I am using Jetpack 6.2 with cuda12.4 on a Jetson orin agx developer kit."])
    assert jetson.jetson is not None and jetson.jetson.value == "Orin"
    assert jetson.jetpack is not None and jetson.jetpack.value == "6.2"
    assert read_prose(["Having problems with linux (arch) rocm (amd rx6600)"]).amd_gpu is not None


def _verdict(text: str) -> tuple[str, str]:
    result = diagnose_paste(text.encode(), "paste.txt").result
    assert result.cause is not None
    fix = result.cause.finding.remediation
    first = " ".join(fix.commands[0].argv) if fix is not None and fix.commands else ""
    return result.cause.finding.summary, first


def test_a_gpu_named_in_words_chooses_the_build_for_it() -> None:
    """A driver-too-old error with the GPU and driver named only in words: the build is chosen for that GPU's
    capability (6.1 on CUDA <= 11.4), not for any GPU."""
    text = (
        "       product: GP107 [GeForce GTX 1050 Ti]\n"
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.223.02  Sat Oct  7 15:39:11 UTC 2023\n"
        "/venv/lib/python3.10/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: The "
        "NVIDIA driver on your system is too old (found version 11040).\n"
    )
    summary, first = _verdict(text)
    assert "supports CUDA ≤ 11.4" in summary
    assert "cu118" in first and "--index-url" in first


def test_a_jetson_named_in_words_gets_nvidias_build() -> None:
    text = (
        "I am using Jetpack 6.2 on a Jetson orin agx developer kit, torch from the nightly index.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    summary, first = _verdict(text)
    assert "Jetson" in summary
    assert "pypi.jetson-ai-lab.io/jp6/cu126" in first


def test_a_pinned_stack_gets_the_driver_not_another_torch() -> None:
    """vLLM pins its torch: a driver too old for it is fixed by the driver (verl-omni#133)."""
    text = (
        "Does it mean the CUDA driver 535 is too old to support `vllm==0.20.2`?\n"
        "/env/lib/python3.12/site-packages/torch/cuda/__init__.py:180: UserWarning: CUDA initialization: The "
        "NVIDIA driver on your system is too old (found version 12080).\n"
    )
    summary, first = _verdict(text)
    assert summary.startswith("The NVIDIA driver is older than the CUDA the program was built with")
    assert "pip" not in first
    # the same words as an install command are not evidence of an installed vLLM
    typed = text.replace(
        "Does it mean the CUDA driver 535 is too old to support `vllm==0.20.2`?", "pip install vllm==0.20.2"
    )
    assert "pip" in _verdict(typed)[1]


@pytest.mark.parametrize(
    "words",
    [
        "I don't have any NVIDIA adapter on my laptop since it supports Intel",  # I2L-MeshNet#105
        "I'm using a integrated Intel GPU(iris xe graphics). os is win 11",  # lora-scripts#101
        "运行这一步时我使用的是cpu，请问有办法规避这个报错吗",  # AF-SfMLearner#39: "I am using the CPU"
        "I installed pytorch with cpuonly,but still got the above error,even I didn't have gpu.",  # detectron2
    ],
)
def test_a_machine_said_to_have_no_nvidia_gpu_gets_no_driver_or_cuda_torch(words: str) -> None:
    text = f"{words}\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU\n"
    summary, first = _verdict(text)
    assert summary.startswith("The machine has no NVIDIA GPU")
    assert "modprobe" not in first and "cu1" not in first


@pytest.mark.parametrize(
    "words",
    [
        "I don't have another GPU to test with, so I can't tell if it is the card.",
        "Now torch says I have no GPU, even though nvidia drivers are installed",  # the program's words, reported
        "I didn't have GPU issues before the update",
        "I have no GPU memory left after loading the model",
        "It works when I'm running on CPU, but with cuda it fails:",
        "The Intel GPU driver is also installed.",
    ],
)
def test_words_that_do_not_say_there_is_no_nvidia_gpu(words: str) -> None:
    text = f"{words}\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU\n"
    summary, _ = _verdict(text)
    assert not summary.startswith("The machine has no NVIDIA GPU")


def test_a_driver_in_the_paste_outweighs_words_about_no_gpu() -> None:
    text = (
        "I'm using a integrated Intel GPU(iris xe graphics).\n"
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).\n"
    )
    summary, _ = _verdict(text)
    assert not summary.startswith("The machine has no NVIDIA GPU")


def test_an_intel_gpu_beside_an_nvidia_one_is_not_no_nvidia_gpu() -> None:
    """A laptop's Intel GPU named with its NVIDIA GPU (Optimus): the driver error is still the NVIDIA GPU's."""
    text = (
        "My laptop has Intel UHD graphics and a dedicated GPU from NVIDIA\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU\n"
    )
    summary, _ = _verdict(text)
    assert not summary.startswith("The machine has no NVIDIA GPU")


def test_a_source_builds_version_is_not_a_cpu_build() -> None:
    """NGC's banner prints `PyTorch Version 2.1.0a0+29c30b1`: a source build whose CUDA the paste does not say,
    never "CPU-only" (TensorRT-LLM's container, blind set 6)."""
    text = "NVIDIA Release 23.08 (build 66128610)\nPyTorch Version 2.1.0a0+29c30b1\n"
    result = diagnose_paste(text.encode(), "paste.txt").result
    packages = result.report.facts.torch_packages
    assert isinstance(packages, Unavailable) and "source build" in packages.detail


def test_a_container_shell_with_a_gpu_named_in_words_still_lacks_the_gpus() -> None:
    """'win10 + docker + NVIDIA GeForce GTX 1660' names the host's GPU, not one the container sees."""
    text = (
        "win10 + docker + NVIDIA GeForce GTX 1660\n"
        "appuser@2c33616b558b:/det2/demo$ python demo.py --config-file x.yaml\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx\n"
    )
    summary, first = _verdict(text)
    assert "inside this container" in summary
    assert first.startswith("docker run --gpus all")


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            ["   torch.cuda.is_available()", "i get false"],
            "cuda_unavailable",
        ),  # pytorch#67997, over two lines
        (["Cuda available: False, in jetson orin nx"], "cuda_unavailable"),  # blind set 6
        (['assert torch.cuda.is_available(), "cuda device is not available"'], "cuda_unavailable"),
        (['i got  "an illegal instruction" error'], "illegal_instruction"),  # SKKU-ESLAB/ANT#258
    ],
)
def test_torch_failing_said_in_words(lines: list[str], said: str) -> None:
    fails = read_prose(lines).torch_fails
    assert fails is not None and fails.value == said


@pytest.mark.parametrize(
    "line",
    [
        "torch.cuda.is_available() returns True",
        "check whether CUDA is available first",
        "legal instruction",
        "Is CUDA available: False",  # collect_env's own line: the report says it, the person did not ask
    ],
)
def test_words_that_do_not_say_torch_fails(line: str) -> None:
    assert read_prose([line]).torch_fails is None


@pytest.mark.parametrize(
    ("name", "board"),
    [
        ("e20_jetson_tx2_pip_torch_illegal_instruction.txt", "NVIDIA Jetson TX2"),  # pip torch dies at import
        (
            "e26_jetson_xavier_nx_conda_torch_cuda_false.txt",
            "NVIDIA Jetson Xavier NX",
        ),  # "jetson NX", conda torch
        (
            "e19_jetson_orin_nx.txt",
            "NVIDIA Jetson Orin",
        ),  # no error line at all, only "Cuda available: False"
    ],
)
def test_a_jetson_said_with_torch_failing_gets_nvidias_build(name: str, board: str) -> None:
    """Words alone (no report, no known error): the board and torch's failure are facts, and platform.jetson
    sends the person to NVIDIA's JetPack build; before, triage found nothing it knows."""
    path = Path(__file__).resolve().parent / "pastes" / name
    d = diagnose_paste(path.read_bytes(), name)
    jetson = d.facts.jetson
    assert not isinstance(jetson, Unavailable) and jetson.model == board
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "platform.jetson"
    assert (
        cause.finding.remediation is not None and "NVIDIA's torch built for" in cause.finding.remediation.text
    )


def test_cuda_unavailable_in_words_is_the_cause_when_nothing_says_why() -> None:
    d = diagnose_paste(b"torch.cuda.is_available() returns False on my RTX 3090 with driver 550.54.15\n", "x")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.cuda_init"
    assert cause.finding.summary.startswith("torch.cuda.is_available() is False; the paste does not say why")


def test_names_of_one_amd_chip_count_once() -> None:
    """lspci's "Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]" is one chip,
    gfx1151 (ROCm/legacy-rocm-build#5668); two different cards are still none."""
    said = read_prose(
        ["product: Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]"]
    )
    assert said.amd_gpu is not None and said.amd_gpu.value == "Strix Halo"
    assert read_prose(["an RX 6600 and an RX 7900 XTX"]).amd_gpu is None


def test_a_named_target_the_wheels_build_gets_the_newest_rocm_torch() -> None:
    name = "e11_rocm_strix_halo_invalid_device_function.txt"
    d = diagnose_paste((Path(__file__).resolve().parent / "pastes" / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and "gfx1151" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "--index-url" in fix.commands[0].argv
    assert fix.commands[0].argv[-1].startswith("https://download.pytorch.org/whl/rocm")
    assert "gfx1151" in fix.commands[1].note


@pytest.mark.parametrize(
    ("line", "mac"),
    [
        ("already installed pytorch in my Mac laptop.", True),  # asafamr/bertwsi#1
        ("on a MacBook Pro with an M2 Max", True),
        ("Apple Silicon, torch 2.3", True),
        ("set the MAC address of the NIC", False),
        ("my mac address is 00:11:22", False),
    ],
)
def test_a_mac_said_in_words(line: str, mac: bool) -> None:
    assert (read_prose([line]).macos is not None) is mac


def test_another_sentence_of_a_one_line_post_does_not_move_the_gpu_elsewhere() -> None:
    """justchenhao/STANet#57 is one line: "I use NVIDIA Geforce GT 730 ... how do I make the code run on CPU only,
    instead of the GPU?" The "instead" is another sentence's: the GT 730 is this machine's."""
    name = "e03_gt730_no_kernel_image_stanet.txt"
    text = (Path(__file__).resolve().parent / "pastes" / name).read_text(encoding="utf-8")
    said = read_prose(text.split("\n")).gpu
    assert said is not None and said.value == "GeForce GT 730"
    assert read_prose(["It worked on my old GTX 1080, now it fails."]).gpu is None  # same sentence: elsewhere
    cause = diagnose_paste(text.encode(), name).result.cause
    # "RuntimeError: CUDA error: ..." is torch's own wording: torch's kernels, and no build has them for 3.5
    assert cause is not None and cause.finding.summary.startswith("torch has no kernels for GeForce GT 730")


@pytest.mark.parametrize(
    ("name", "first"),
    [
        # "The GPU is 5700XT (navi10 / gfx1010:xnack-)": RDNA1, no wheel target of its family: build for it
        (
            "pastes/e21_rocm_gfx1010_5700xt.txt",
            ("env", "PYTORCH_ROCM_ARCH=gfx1010", "python", "setup.py", "develop"),
        ),
        # "AMD Radeon RX 6600 (amdgcn-amd-amdhsa--gfx1032": the card and its own target are one chip
        (
            "pastes/e16_rocm_hip_invalid_device_function_igpu_rx6600.txt",
            ("env", "HSA_OVERRIDE_GFX_VERSION=10.3.0", "PROGRAM"),
        ),
    ],
)
def test_a_gfx_target_said_in_words_gives_the_fix_for_that_target(name: str, first: tuple[str, ...]) -> None:
    """The paste already says the target: the first step is its fix, not `rocminfo` (blind set 10, e21)."""
    path = Path(__file__).resolve().parent / name
    cause = diagnose_paste(path.read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "amd.gfx_target"
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv == first


@pytest.mark.parametrize(
    "said",
    ["5700XT (navi10 / gfx1010:xnack-)", "5700XT (navi10)", "5700XT", "a navi 10 card"],
    ids=["target", "code-name", "bare-xt", "code-name-only"],
)
def test_a_radeon_said_by_code_name_or_bare_xt_number_is_its_target(said: str) -> None:
    """The same real post with the card said the ways people say it: "The GPU is 5700XT (navi10 / gfx1010:
    xnack-)" as posted, then without the target, without the code name, by code name only."""
    name = "pastes/e21_rocm_gfx1010_5700xt.txt"
    text = (Path(__file__).resolve().parent / name).read_text(encoding="utf-8")
    posted = "5700XT (navi10 / gfx1010:xnack-)"
    assert posted in text
    cause = diagnose_paste(text.replace(posted, said).encode(), name).result.cause
    assert cause is not None and cause.finding.check_id == "amd.gfx_target"
    fix = cause.finding.remediation
    assert fix is not None and "PYTORCH_ROCM_ARCH=gfx1010" in fix.commands[0].argv


@pytest.mark.parametrize(
    ("words", "target"),
    [
        ("RX 7900 XTX", "gfx1100"),
        ("a 7900XTX", "gfx1100"),
        ("Navi 21", "gfx1030"),
        ("navi23", "gfx1032"),
        ("navi48", "gfx1201"),
        ("Ryzen 5 5600XT and an RTX 3060", None),  # a processor of that number: no Radeon
        ("GTX 1080 Ti", None),
    ],
)
def test_radeon_names_and_code_names_map_to_their_gfx_target(words: str, target: str | None) -> None:
    said = read_prose([words]).amd_gpu
    assert (gfx_of_product(said.value) if said is not None else None) == target


@pytest.mark.parametrize(
    ("text", "asks_for_cpu"),
    [
        ("How can i run this code on CPU\n", True),  # pytorch/pytorch#28111 (blind set 10, e16)
        ("I'd like to run inference on my CPU only", True),
        ("My model is running on CPU.", False),  # the complaint of someone who wants the GPU
        ("how to make it work on gpu not on cpu", False),
        ("It only runs on CPU, how do I get the GPU?", False),
    ],
)
def test_asking_for_the_cpu_is_read_and_wanting_the_gpu_is_not(text: str, asks_for_cpu: bool) -> None:
    prose = read_prose(text.splitlines())
    assert (prose.no_nvidia is not None) is asks_for_cpu
    assert prose.asks_for_cpu is asks_for_cpu


def test_torch_without_cuda_for_someone_who_asks_for_the_cpu_is_the_program_s_device() -> None:
    """'Torch not compiled with CUDA enabled' from someone who asks to run on the CPU: the program's device
    choice is the fix, never installing a CUDA build (blind set 10, e16)."""
    name = "e16_not_compiled_cuda_code_requires_gpu.txt"
    cause = diagnose_paste(
        (Path(__file__).resolve().parent / "pastes" / name).read_bytes(), name
    ).result.cause
    assert cause is not None and "asks to run it on the CPU" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "device='cpu'" in fix.text
    assert not any("download.pytorch.org" in a for c in fix.commands for a in c.argv)


def test_saying_there_is_no_gpu_is_not_asking_for_the_cpu() -> None:
    """Both lead to the program's device option; only the request is worded as the person's choice."""
    prose = read_prose(["I don't have a GPU, only an integrated Intel GPU"])
    assert prose.no_nvidia is not None and prose.asks_for_cpu is False


def test_cuda_false_inside_a_container_said_in_chinese_is_a_container_without_the_gpus() -> None:
    """xinnan-tech/xiaozhi-esp32-server#1166: "进入docker内部，发现torch 的cuda.is_available() 为false". A CJK
    letter is a word character to `re`, so neither "docker内部" nor "为false" met a \\b: the paste read as
    nothing at all (blind set 10, e12). Said in a container, with no GPU listed there and no --gpus in the
    paste: the container was most likely started without them, and nvidia-smi inside it settles it."""
    name = "xiaozhi-1166-docker-cuda-false-chinese-template.txt"
    text = (Path(__file__).resolve().parent / "pastes" / name).read_text(encoding="utf-8")
    assert read_prose(text.split("\n")).torch_fails is not None
    result = diagnose_paste(text.encode(), name).result
    cause = result.cause
    assert cause is not None and cause.finding.check_id == "torch.cuda_init"
    assert cause.finding.summary.startswith("torch.cuda.is_available() is False inside a container (line 2")
    assert cause.find_out is not None and cause.find_out.startswith("nvidia-smi")
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv[:3] == ("docker", "run", "--gpus")
    started = text.replace("进入docker内部", "docker run --gpus all 进入docker内部")
    again = diagnose_paste(started.encode(), name).result.cause
    assert again is None or "started without the GPUs" not in again.finding.summary  # it has them


@pytest.mark.parametrize(
    ("line", "version"),
    [
        (
            "I am using CUDA version 10.0 and torch version 1.5.0. However, torch.cuda.is_available() returns False.",
            "1.5.0",
        ),
        (
            "I was wondering whether the current pyTorch version (v1.10.1) from the `requirements.txt` supports sm_80",
            "1.10.1",
        ),
        ("- **PyTorch:** 2.9.1+cu130", "2.9.1+cu130"),  # an app's system-info block (blind set 11, e22)
        ("Torch: 2.0.1+cu118", "2.0.1+cu118"),
        ("PyTorch 2.1 on my machine", "2.1"),
        ("torch 2.1.0+rocm6.2.", "2.1.0+rocm6.2"),
    ],
)
def test_torchs_version_said_in_words(line: str, version: str) -> None:
    said = read_prose([line]).torch
    assert said is not None and said.value == version


@pytest.mark.parametrize(
    "line",
    [
        "pip install torch==2.1.0",  # a command typed is not what is installed
        "it worked with torch 1.13 but not torch 2.0",  # two versions: neither
        "torchvision 0.16.0",  # a companion, not torch
        "torch.cuda 12.1",
        "It worked with torch 2.0.1 last week.",  # another time
    ],
)
def test_words_that_do_not_say_which_torch_is_installed(line: str) -> None:
    assert read_prose([line]).torch is None


def test_a_tagged_version_in_a_system_info_block_keeps_the_apps_torch() -> None:
    """Blind set 11's e22: a GTX 1080 Ti under torch 2.9.1+cu130 (no Pascal kernels in CUDA 13 builds). The
    block says the version, its tag and Windows: the fix keeps 2.9.1 in its cu126 build, for Windows."""
    d = diagnose_paste(
        (HERE / "pastes/corridorkey-gtx1080ti-torch291-cu130-windows-sysinfo.txt").read_bytes(), "e22"
    )
    packages, os_facts = d.facts.torch_packages, d.facts.os
    assert (
        not isinstance(packages, Unavailable)
        and packages.version == "2.9.1+cu130"
        and packages.cuda == "13.0"
    )
    assert not isinstance(os_facts, Unavailable) and os_facts.system == "Windows"
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.arch_compat"
    assert cause.finding.remediation is not None
    argv = cause.finding.remediation.commands[0].argv
    assert "torch==2.9.1+cu126" in argv and "torchvision==0.24.1+cu126" in argv


def test_an_untagged_version_is_shown_but_not_taken_as_a_build() -> None:
    """People drop the tag of the wheel they installed ("PyTorch: 2.7.1" for a cu128 build): PyPI's default
    would make it the CPU build on Windows. It is shown as said, and the checks do not use it."""
    from torch_gpu_doctor.triage.render import render_text

    d = diagnose_paste((HERE / "pastes/sbert-torch150-cuda100-false-words.txt").read_bytes(), "e31")
    assert isinstance(d.facts.torch_packages, Unavailable)
    out = io.StringIO()
    render_text(d, "e31", out)
    assert "torch 1.5.0 (said on line 1; its build is not in the paste)" in out.getvalue()


@pytest.mark.parametrize(
    "line",
    [
        # blind set 11's e23, as posted
        "This version of torchvision is not available and by using another version I'm not able to train on GPU, "
        "getting no CUDA available at the time of `torch._C._cuda_init()` , even if I have cuda 11.0 installed.",
        "I can't use the GPU with this env",
        "unable to run it on cuda",
    ],
)
def test_a_failure_said_in_other_words_is_never_no_problem(line: str) -> None:
    said = read_prose([line]).torch_fails
    assert said is not None and said.value == "cuda_unavailable"
    d = diagnose_paste(line.encode(), "words.txt")
    assert d.result.cause is not None and d.result.cause.finding.check_id == "torch.cuda_init"


@pytest.mark.parametrize(
    "line", ["I am able to train on GPU fine", "it cannot use the cpu threads", "CUDA is available"]
)
def test_words_that_are_no_failure(line: str) -> None:
    assert read_prose([line]).torch_fails is None


def test_a_driver_said_in_a_sentence_with_its_version_after_is() -> None:
    """Blind set 11's e36, as posted: the driver's version after a few words and "is"."""
    line = "Since the nvidia driver vision of my machine is 381.22, cuda >9 will cause insufficient driver version error."
    said = read_prose([line]).driver
    assert said is not None and said.value == "381.22"
    assert read_prose(["The driver I used before was 470.82.01, on another machine."]).driver is None


@pytest.mark.parametrize(
    ("name", "library"),
    [
        ("jetson-nano-torch14-libcufft-10-0-other-jetpack.txt", "libcufft.so.10.0"),
        ("jetracer-torch12-libcudart-10-2-other-jetpack.txt", "libcudart.so.10.2"),
    ],
)
def test_a_jetsons_missing_cuda_library_is_another_jetpacks_torch(name: str, library: str) -> None:
    """Blind set 11's e06 and e34: NVIDIA's Jetson wheel on a board flashed with another JetPack. Not PyPI's
    build, and no nvidia-* wheels: both findings say so, with the same fix."""
    d = diagnose_paste((HERE / "pastes" / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "platform.jetson"
    assert cause.finding.summary.startswith(
        f"torch was built for another JetPack: its import looks for {library}"
    )
    library_path = next(v.finding for v in d.result.verdicts if v.finding.check_id == "env.library_path")
    assert "nvidia-*" not in library_path.summary and library_path.remediation == cause.finding.remediation
    assert (
        cause.finding.remediation is not None
        and "PyPI's torch does not use" not in cause.finding.remediation.text
    )


def test_a_gpu_the_shell_sees_and_the_program_does_not_is_hidden_by_the_program() -> None:
    """Blind set 11's e11: "No CUDA GPUs are available" from a repository's script, while the person got True from
    is_available() in a plain shell. The program hides the GPU: find where it sets CUDA_VISIBLE_DEVICES."""
    name = "hfgi3d-no-cuda-gpus-while-shell-says-true.txt"
    d = diagnose_paste((HERE / "pastes" / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith("The program hides the GPU")
    assert cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv == ("grep", "-rn", "CUDA_VISIBLE_DEVICES", ".")
    alone = (HERE / "pastes" / name).read_text().replace("But CUDA is available (got True", "(got nothing")
    other = diagnose_paste(alone.encode(), name).result.cause
    assert other is not None and not other.finding.summary.startswith("The program hides the GPU")


@pytest.mark.parametrize(
    ("line", "works"),
    [
        ("torch.cuda.is_available() returns True in python", True),
        ("But CUDA is available (got True when I run it)", True),
        ("CUDA is not available", False),
        ("is_available() returns False", False),
    ],
)
def test_cuda_working_said_in_words(line: str, works: bool) -> None:
    assert (read_prose([line]).torch_works is not None) is works


@pytest.mark.parametrize(
    "line",
    [
        "Warning: cannot use CUDA graphs with dynamic shapes; training runs fine on the GPU",
        "unable to use GPU 1, but GPU 0 works fine",
        "Cannot use cuda:1 as device",
        "I can't use the GPU because another job holds it",
    ],
)
def test_a_gpu_that_is_not_the_clauses_end_is_no_failure_of_cuda(line: str) -> None:
    assert read_prose([line]).torch_fails is None


def test_a_size_in_gigabytes_is_no_driver_version() -> None:
    assert read_prose(["My driver is fine and my RAM is 128.00 GB"]).driver is None


@pytest.mark.parametrize(
    ("text", "torch"),
    [
        ("The requirement in the txt file, torch==1.7.1+cu101, is too low for this card.", "1.7.1+cu101"),
        ("torch==1.10.0+cu113", "1.10.0+cu113"),  # a requirements file's line
        (
            "pip install torch==1.7.1+cu110 -f https://download.pytorch.org/whl/torch_stable.html",
            None,
        ),  # typed
        ("The requirement is torch==1.7.1", None),  # untagged: its build is the index's, not said
    ],
)
def test_a_pin_with_its_builds_tag_names_the_torch(text: str, torch: str | None) -> None:
    said = read_prose([text]).torch
    assert (said.value if said else None) == torch


@pytest.mark.parametrize(
    ("text", "torch", "windows", "jetson", "fails"),
    [
        ("Also checking the torch version reveals 2.0.0+cpu", "2.0.0+cpu", None, None, None),  # textgen#369
        ("后来我本地win10机器，本来就有cuda12.2", None, 1, None, None),  # yolov10#218
        ("I am running windows 10, and ran the install script with no errors", None, 1, None, None),
        ("I run Windows 11 with WSL2", None, None, None, None),  # WSL: its Linux is the machine
        ("I need python>10 to run Llama and Jetpack<6 to support ubuntu20.", None, None, "Jetson", None),
        (
            'when I checked "torch.cuda.is_available", it returned false.',
            None,
            None,
            None,
            "cuda_unavailable",
        ),
    ],
)
def test_what_the_words_say_in_passing(
    text: str, torch: str | None, windows: int | None, jetson: str | None, fails: str | None
) -> None:
    said = read_prose([text])
    assert (said.torch.value if said.torch else None) == torch
    assert said.runs_on_windows == windows
    assert (said.jetson.value if said.jetson else None) == jetson
    assert (said.torch_fails.value if said.torch_fails else None) == fails


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        # interiordesign-for-comfyui#5: the card they want it to work on, beside the one it works on
        (
            "Works well now on my 4070ti.\nDo you know how I could get It to work on the 5090 with ComfyUi?",
            "GeForce RTX 5090",
        ),
        ("my 3090 runs hot", "GeForce RTX 3090"),
        ("port 5090 is open", None),  # a bare number alone is not a card
        ("the 4090 MHz clock", None),
        ("有两张3090卡", "GeForce RTX 3090"),  # Chinese calls it a card
        ("端口3090上", None),
    ],
)
def test_a_bare_card_number_after_an_article_is_a_card(text: str, gpu: str | None) -> None:
    said = read_prose(text.split("\n")).gpu
    assert (said.value if said else None) == gpu


@pytest.mark.parametrize(
    ("words", "l4t", "jetpack"),
    [
        ("* **L4T Release:** R35.4.1 (Check via `cat /etc/nv_tegra_release`)", "35.4.1", None),
        ("* **JetPack Version:** 5.1.2", None, "5.1.2"),
        ("我的Xavier是JETPACK5.1.5", None, "5.1.5"),  # JetPack beside CJK letters
    ],
)
def test_jetpack_and_l4t_as_labels_and_beside_other_scripts(
    words: str, l4t: str | None, jetpack: str | None
) -> None:
    said = read_prose([words])
    assert (said.l4t.value if said.l4t else None) == l4t
    assert (said.jetpack.value if said.jetpack else None) == jetpack
    assert said.jetson is not None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # deep-daze: the builds went into another Python than the program's
        (
            "I have installed a ton of new pytorch builds and yet it doesn't work and gives me the same error",
            True,
        ),
        ("Reinstalled torch three times, still the same error.", True),
        ("重装了好几次还是不行", True),
        ("I reinstalled torch with the cu121 index and now it works.", False),
        ("I reinstalled the NVIDIA driver but I still get this", False),  # not torch
        ("Should I reinstall torch? I don't know how", False),  # a question, no outcome
        ("Please reinstall the driver.", False),
    ],
)
def test_reinstalling_without_effect_is_read(text: str, said: bool) -> None:
    assert (read_prose(text.split("\n")).reinstalled is not None) is said


def test_no_gpu_said_beside_an_extension_without_cuda_ops_is_the_device_setting() -> None:
    """facebookresearch/detectron2#5: "even I didn't have gpu" with detectron2 built without CUDA: the program's
    device setting, never a CUDA rebuild of detectron2."""
    name = "pastes/detectron2-5-cpu-wheel.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.summary.startswith("The machine has no NVIDIA GPU")
    fix = cause.finding.remediation
    assert fix is not None and "MODEL.DEVICE" in fix.text and not fix.commands


@pytest.mark.parametrize(
    ("text", "torch"),
    [
        # DeepSpeed's ds_report (deepspeed#4576, blind set 17): the installed torch, then the one the wheel was
        # built against, which is not installed
        (
            "torch version .................... 1.13.1+cu117 , and deepspeed wheel compiled w. ...... torch 1.9, "
            "cuda 11.1",
            "1.13.1+cu117",
        ),
        ("deepspeed wheel compiled w. ...... torch 1.9, cuda 11.1", None),
    ],
)
def test_ds_reports_torch_is_the_installed_one(text: str, torch: str | None) -> None:
    said = read_prose([text]).torch
    assert (said.value if said else None) == torch
