"""What people paste, as bytes: encodings, line ends, escape sequences, sizes and garbage. Each case gives a
verdict or one clear message, never a traceback, and nothing from the paste reaches the terminal raw."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.triage.decode import MAX_BYTES, MAX_LINES, UnreadablePaste, decode_paste
from torch_gpu_doctor.triage.pipeline import diagnose_paste

HERE = Path(__file__).parent
REPORT = HERE / "reports" / "windows-cpu-torch-rtx4080.txt"  # a CPU torch beside an RTX 4080: one clear cause
CAUSE = "torch.cpu_build"


def _cause(data: bytes) -> str | None:
    cause = diagnose_paste(data, "paste").result.cause
    return None if cause is None else cause.finding.check_id


@pytest.mark.parametrize(
    ("encode", "name"),
    [
        (lambda t: t.encode("utf-8"), "utf-8"),
        (lambda t: b"\xef\xbb\xbf" + t.encode("utf-8"), "utf-8 (BOM)"),
        (lambda t: t.encode("utf-16"), "utf-16-le"),  # PowerShell's `>`: a BOM, then UTF-16 LE
        (lambda t: t.encode("utf-16-le"), "utf-16-le"),
        (lambda t: t.encode("utf-16-be"), "utf-16-be"),
        (lambda t: t.replace("\n", "\r\n").encode("utf-8"), "utf-8"),
    ],
    ids=["utf8", "utf8-bom", "utf16-bom", "utf16le", "utf16be", "crlf"],
)
def test_every_encoding_gives_the_same_verdict(encode: object, name: str) -> None:
    text = REPORT.read_text(encoding="utf-8")
    data = encode(text)  # type: ignore[operator]
    assert decode_paste(data, "p").encoding == name
    assert _cause(data) == CAUSE


def test_escape_sequences_are_removed_before_anything_reads_or_shows_the_text() -> None:
    text = REPORT.read_text(encoding="utf-8")
    hostile = "\x1b]0;owned\x07\x1b[2J\x1b[31m" + text.replace(
        "PyTorch version", "\x1b[1mPyTorch version\x1b[0m"
    )
    paste = decode_paste(hostile.encode(), "p")
    assert "\x1b" not in paste.text and "\x07" not in paste.text
    assert "terminal escape sequences (colours) were removed" in paste.notes
    assert _cause(hostile.encode()) == CAUSE


def test_the_text_output_carries_no_control_character(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "paste.txt"
    path.write_bytes(b"\x1b]2;title\x07RuntimeError: Found no NVIDIA driver on your system.\x1b[0m\x9b31m\n")
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["triage", str(path)]) == 1
    assert not any(ch in out.getvalue() for ch in "\x1b\x07\x9b")


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "is empty"),
        (b"   \n\n\t\n", "is empty"),
        (bytes(range(256)) * 40, "binary data"),
        (b"\x00\x01\x02\x03" * 1000, "binary data"),
    ],
    ids=["empty", "blank", "all-bytes", "nul"],
)
def test_what_is_not_text_is_refused_with_a_reason(data: bytes, says: str) -> None:
    with pytest.raises(UnreadablePaste, match=says):
        decode_paste(data, "p")


def test_unrelated_text_exits_2_with_what_to_paste(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "poem.txt"
    path.write_text("Roses are red,\nviolets are blue.\n", encoding="utf-8")
    assert main(["triage", str(path)]) == 2
    assert "python -m torch.utils.collect_env" in capsys.readouterr().err
    assert main(["triage", "--json", str(path)]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["error"]["kind"] == "unreadable_input"


def test_a_huge_paste_is_read_in_part_and_says_so() -> None:
    line = b"some log line that says nothing in particular\n"
    data = REPORT.read_bytes() + line * (MAX_BYTES // len(line) + 10)
    diagnosis = diagnose_paste(data[: MAX_BYTES + 1], "big")
    notes = " ".join(diagnosis.pasted.paste.notes)
    assert f"only the first {MAX_BYTES >> 20} MiB were read" in notes
    assert diagnosis.result.cause is not None and diagnosis.result.cause.finding.check_id == CAUSE


def test_a_100k_line_paste_is_cut_at_the_line_limit() -> None:
    data = b"RuntimeError: Found no NVIDIA driver on your system.\n" + b"x\n" * 100_000
    diagnosis = diagnose_paste(data, "long")
    assert f"only the first {MAX_LINES} lines were read" in diagnosis.pasted.paste.notes
    assert (
        diagnosis.result.cause is not None and diagnosis.result.cause.finding.check_id == "driver.installed"
    )


def test_json_names_the_parts_and_the_lines_not_understood(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["triage", "--json", str(HERE / "pastes" / "fooocus-1313-driver-too-old-11040-rtx3050.txt")])
        == 1
    )
    document = json.loads(capsys.readouterr().out)
    kinds = [p["kind"] for p in document["parts"]]
    assert "error" in kinds and "nvidia_smi" in kinds
    assert all(p["first_line"] <= p["last_line"] for p in document["parts"])
    assert document["unread_lines"] and all(isinstance(n, int) for n in document["unread_lines"])
    assert document["cause"]["check_id"] == "torch.driver_compat"
    assert document["cause"]["confidence"] == "stated"
    assert document["to_be_sure"] is None  # the paste holds nvidia-smi's output: not asked for again
    assert document["errors"][0]["signature"] == "driver_too_old_found_version"


SMI_ONE_GPU = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce RTX 3090  Off  | 00000000:01:00.0 Off |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("$ CUDA_VISIBLE_DEVICES=2 python main.py", "2"),
        ("export CUDA_VISIBLE_DEVICES=1,2", "1,2"),
        ("os.environ['CUDA_VISIBLE_DEVICES'] = \"3\"", "3"),
        ('CUDA_VISIBLE_DEVICES="" python train.py', ""),
        (
            "CUDA_VISIBLE_DEVICES=MIG-feee0c61-26ec-5616-bb59-b6d777cc4f34 ipython",
            None,
        ),  # no UUIDs in a paste
        ("echo MY_CUDA_VISIBLE_DEVICES=4", None),
    ],
)
def test_cuda_visible_devices_set_in_the_paste_is_judged_against_its_gpus(
    line: str, value: str | None
) -> None:
    d = diagnose_paste(f"{line}\n{SMI_ONE_GPU}".encode(), "p.txt")
    assert d.facts.env.get("CUDA_VISIBLE_DEVICES") == value
    if value in ("2", "3", "1,2", ""):
        verdict = next(v for v in d.result.verdicts if v.finding.check_id == "env.cuda_visible_devices")
        assert verdict.finding.status is Status.FAIL and "hides every GPU" in verdict.finding.summary
    without_list = diagnose_paste(f"{line}\nRuntimeError: No CUDA GPUs are available\n".encode(), "q.txt")
    assert "CUDA_VISIBLE_DEVICES" not in without_list.facts.env  # nothing to judge it against


@pytest.mark.parametrize(
    ("line", "container"),
    [
        ("root@185d009a60c8:/workspace# python3 -m torch.utils.collect_env", True),
        ("(base) user@0a1b2c3d4e5f:~$ nvidia-smi", True),
        ("$ docker exec -it icefall /bin/bash", True),
        ("kubectl exec -it pod-0 -- python train.py", True),
        ("user@my-workstation:~$ nvidia-smi", False),
        ("root@deadbeef:/# ls", False),  # 8 hex digits: a host name, not Docker's 12
    ],
)
def test_a_container_shell_turns_no_driver_into_no_gpus_passed_in(line: str, container: bool) -> None:
    """No driver answers inside a container: it was started without the GPUs (k2-fsa/icefall#646)."""
    paste = (
        f"{line}\nPyTorch version: 2.5.1+cu124\nCUDA used to build PyTorch: 12.4\nIs CUDA available: False\n"
    )
    paste += "GPU models and configuration: Could not collect\nNvidia driver version: Could not collect\n"
    cause = diagnose_paste(paste.encode(), "c.txt").result.cause
    assert cause is not None and cause.finding.check_id == "driver.installed"
    assert ("inside this container" in cause.finding.summary) is container
    fix = cause.finding.remediation
    assert fix is not None and (fix.commands[0].argv[:4] == ("docker", "run", "--gpus", "all")) is container


def test_to_be_sure_is_not_asked_of_what_the_paste_shows() -> None:
    """The driver too old for torch, with nvidia-smi's output in the paste: asking for nvidia-smi again spends the
    person's turn on an answer they gave. Without that output it is the question that settles it."""
    from torch_gpu_doctor.triage.pipeline import diagnose_paste

    text = (HERE / "pastes" / "fooocus-1313-driver-too-old-11040-rtx3050.txt").read_text(encoding="utf-8")
    with_smi = diagnose_paste(text.encode(), "p.txt").result.cause
    assert (
        with_smi is not None
        and with_smi.finding.check_id == "torch.driver_compat"
        and with_smi.find_out is None
    )
    error_only = text.split("\n", 1)[0] + "\n"
    alone = diagnose_paste(error_only.encode(), "p.txt").result.cause
    assert alone is not None and alone.find_out == "nvidia-smi"
