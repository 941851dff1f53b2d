"""The Python a site-packages path belongs to is the one whose pip the fix names: a portable ComfyUI's
python_embeded, a project's venv, an installed or bundled Python. Built on real pastes of the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage.decode import decode_paste
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.tool_output import parse_interpreter_shown

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("name", "interpreter"),
    [
        # Windows venv (.venv\Lib\site-packages): its Scripts\python.exe
        ("pastes/comfyui-to-python-55-cpu-torch-venv.txt", "D:\\ComfyUI\\.venv\\Scripts\\python.exe"),
        # a bundled Python (FramePack's system\python): python.exe in the folder itself
        (
            "pastes/e02_rtx5080_sm120_framepack_cu126.txt",
            "F:\\tmp\\framepack_cu126_torch26\\system\\python\\python.exe",
        ),
        # an installed Python for Windows
        (
            "pastes/chatglm-webui-1-cpu-torch-windows-half-cuda.txt",
            "C:\\Users\\Administrator\\AppData\\Local\\Programs\\Python\\Python310\\python.exe",
        ),
        # Linux venv (lib/python3.11/site-packages): bin/python
        ("pastes/e01_wyomingxtts_sm120.txt", "/opt/venv/bin/python"),
        # an app installer's own env
        (
            "pastes/tldream-3-xformers-built-for-cu118-you-have-cpu.txt",
            "E:\\lama-tldream\\installer\\python.exe",
        ),
    ],
)
def test_the_interpreter_is_read_from_its_site_packages(name: str, interpreter: str) -> None:
    lines = decode_paste((HERE / name).read_bytes(), name).text.splitlines()
    shown = parse_interpreter_shown(lines)
    assert shown is not None and shown.path == interpreter
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv[:3] == (interpreter, "-m", "pip")
    # and a question that settles the rest asks the same Python: no two lines name two interpreters (none is
    # asked when the paste shows its answer, as torch's capability warning shows the GPU and the arch list)
    asked = [
        v.find_out for v in diagnose_paste((HERE / name).read_bytes(), name).result.verdicts if v.find_out
    ]
    python_questions = [a for a in asked if " -c " in a]
    assert python_questions and all(
        a.startswith(Command((interpreter,)).display() + " -c ") for a in python_questions
    )


@pytest.mark.parametrize(
    "line",
    [
        # the user site belongs to whichever Python runs it
        '  File "/home/skl/.local/lib/python3.6/site-packages/torch/__init__.py", line 81, in <module>',
        # the system's own Python is what a bare `python` already is
        '  File "/usr/local/lib/python3.10/site-packages/torch/cuda/__init__.py", line 284, in _lazy_init',
        # the Nix store is read-only: pip cannot install there
        '  File "/nix/store/a1jm-python3-3.11.13-env/lib/python3.11/site-packages/torch/cuda/__init__.py", line 1',
        # Windows' user site (AppData\Roaming\Python\Python310\site-packages) has no Lib folder
        r'  File "C:\Users\tenra\AppData\Roaming\Python\Python310\site-packages\torch\__init__.py", line 1',
        # not the start of a path
        "see lib/python3.10/site-packages/torch for the files",
        # a path that starts at its lib folder (cut by the program that printed it): no prefix to name
        '  File "/lib/python3.8/site-packages/torch/nn/modules/conv.py", line 345, in forward',
    ],
)
def test_paths_that_name_no_interpreter(line: str) -> None:
    assert parse_interpreter_shown([line]) is None


def test_a_quoted_path_with_a_space_and_torch_s_own_path_first() -> None:
    lines = [
        r'  File "C:\Users\Jo Doe\app\venv\lib\site-packages\gradio\routes.py", line 3, in run',
        r'  File "C:\Users\Jo Doe\app\env2\Lib\site-packages\torch\cuda\__init__.py", line 284, in _lazy_init',
    ]
    shown = parse_interpreter_shown(lines)
    assert shown is not None and (shown.path, shown.line) == (
        "C:\\Users\\Jo Doe\\app\\env2\\Scripts\\python.exe",
        2,
    )


def test_a_windows_program_is_quoted_for_cmd_and_powershell_not_for_a_posix_shell() -> None:
    spaced = Command(
        ("C:\\Users\\Jo Doe\\venv\\Scripts\\python.exe", "-m", "pip", "install", "bitsandbytes>=0.43")
    )
    assert (
        spaced.display()
        == '"C:\\Users\\Jo Doe\\venv\\Scripts\\python.exe" -m pip install "bitsandbytes>=0.43"'
    )
    plain = Command(("D:\\ComfyUI\\python_embeded\\python.exe", "-m", "pip", "install", "torch==2.1"))
    assert plain.display() == "D:\\ComfyUI\\python_embeded\\python.exe -m pip install torch==2.1"
    assert Command(("python", "-c", "print(1)")).display() == "python -c 'print(1)'"


def test_an_unquoted_windows_path_with_a_space_names_its_interpreter() -> None:
    """Blind set 11's e32: a portable ComfyUI in a folder whose name has a space, its path unquoted in torch's
    warning. The pip command names its python_embeded, and every command with that path is quoted for cmd."""
    name = "comfyui-portable-5070ti-sm120-path-with-space.txt"
    d = diagnose_paste((HERE / "pastes" / name).read_bytes(), name)
    python = "A:\\Sin Sincronización\\Chrome\\ComfyUI_windows_portable\\python_embeded\\python.exe"
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    shown = [c.display() for c in cause.finding.remediation.commands]
    assert shown[0].startswith(f'"{python}" -m pip install torch==')
    assert f'--python "{python}"' in shown[1] and "'" not in shown[1]  # cmd has no single quotes
    assert "the interpreter is not known here" not in cause.finding.remediation.text


@pytest.mark.parametrize(
    ("line", "interpreter"),
    [
        (
            r"Models from C:\AI Art\models; torch from C:\AI Art\venv\Lib\site-packages\torch\cuda\__init__.py:235:",
            r"C:\AI Art\venv\Scripts\python.exe",
        ),
        (
            r"Warning (from C:\Program Files\x) D:\AI\Stable Diffusion\venv\Lib\site-packages\torch\__init__.py",
            r"D:\AI\Stable Diffusion\venv\Scripts\python.exe",
        ),
    ],
)
def test_the_nearest_drive_letter_starts_an_unquoted_path(line: str, interpreter: str) -> None:
    """A drive colon cannot be inside a Windows path: an earlier path on the line is not part of this one."""
    shown = parse_interpreter_shown([line])
    assert shown is not None and shown.path == interpreter


@pytest.mark.parametrize(
    "lines",
    [
        # pip's isolated build environment: deleted when pip exits, and its torch is not the user's
        [
            '  File "/tmp/pip-build-env-8f3k2l1q/overlay/lib/python3.10/site-packages/torch/utils/cpp_extension.py",'
            " line 1076, in CUDAExtension"
        ],
        # what `find` lists: any Python's folder, not the failing program's
        ["/home/me/ComfyUI/venv/lib/python3.10/site-packages/torch/lib/libcudnn_ops_infer.so.8"],
    ],
)
def test_no_interpreter_from_a_build_environment_or_a_file_listing(lines: list[str]) -> None:
    assert parse_interpreter_shown(lines) is None


def test_a_cmd_prompt_that_runs_python_by_its_path_names_it() -> None:
    line = r"C:\ComfyUI_windows_portable>.\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"
    shown = parse_interpreter_shown([line])
    assert shown is not None and shown.path == r"C:\ComfyUI_windows_portable\python_embeded\python.exe"
    assert parse_interpreter_shown([r"C:\x> python main.py"]) is None  # a bare `python`: nothing to name
