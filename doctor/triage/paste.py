"""A paste → what triage read in it: the collect_env report, nvidia-smi, package lists, kernel-log lines and
the known error messages (the signature catalogue), each with the lines it came from, and the lines nothing
understood."""

from __future__ import annotations

import re
from dataclasses import field

from torch_gpu_doctor.checks.support.signatures import Hit, candidates, match_line
from torch_gpu_doctor.facts.kernel_log import KernelLogFacts, parse_kernel_log
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.build_env import toolkit_beside_torch, toolkit_mismatch
from torch_gpu_doctor.triage.decode import Paste
from torch_gpu_doctor.triage.model import CollectEnvReport, Part, ReportLine
from torch_gpu_doctor.triage.parse import looks_like_collect_env, parse_report
from torch_gpu_doctor.triage.prose import MAX_CHARS, ProseFacts, read_prose
from torch_gpu_doctor.triage.shown_error import ShownError, parse_shown_error
from torch_gpu_doctor.triage.tool_output import (
    CondaShown,
    InterpreterShown,
    LinkedLibrary,
    P2pTest,
    PackageListing,
    PythonShown,
    SessionAnswers,
    SmiOutput,
    TopologyShown,
    XformersInfo,
    compose_without_gpus_line,
    container_shell_line,
    parse_built_for,
    parse_conda_env,
    parse_interpreter_shown,
    parse_ldd,
    parse_nvidia_smi,
    parse_p2p_test,
    parse_package_lists,
    parse_python_shown,
    parse_session,
    parse_topology,
    parse_xformers_info,
    run_without_gpus_line,
    windows_path_line,
)
from torch_gpu_doctor.unavailable import Reason, Unavailable

_KERNEL = lazy(
    r"\bNVRM:|\bnvidia(?:_uvm|_drm|_modeset)?: |Lockdown: |Key was rejected|module verification failed"
    r"|\bXid \(PCI:"  # NVRM's Xid line quoted without its prefix (a title)
)
_NOISE = lazy(r"^(```.*|~~~.*|</?details>.*|<summary>.*|#+\s.*|[-=+|_*\s]*|>\s*)$", re.IGNORECASE)
PASTED_LOG = "the pasted kernel log"


@dataclass(frozen=True)
class PastedText:
    paste: Paste
    lines: int
    collect_env: CollectEnvReport | None  # None: no collect_env line in the paste
    smi: SmiOutput | None
    packages: tuple[PackageListing, ...]
    kernel_log: KernelLogFacts | None
    linked: tuple[LinkedLibrary, ...]  # CUDA libraries in pasted `ldd` output
    built_for: tuple[str, ...]  # sm_XY of torch >= 2.10's capability warning ("- 7.5 which supports ...")
    hits: tuple[Hit, ...]  # known error messages, in the order they appear
    parts: tuple[Part, ...]
    unread: tuple[int, ...]  # lines with text that nothing understood
    python_shown: PythonShown | None = None  # the Python version paths, banners and conda builds show
    windows_line: int | None = None  # the first line with a Windows path (C:\Users\...)
    container_line: int | None = None  # the first line showing a container shell (root@<id>:, docker exec)
    no_gpus_line: int | None = None  # the first `docker run` / `podman run` that passes no GPU in
    conda: CondaShown | None = None  # the conda environment its paths or package lists show
    session: SessionAnswers | None = None  # torch's answers in a pasted Python session (>>> or In [n]:)
    xformers: XformersInfo | None = None  # a `python -m xformers.info` table
    prose: ProseFacts = field(default_factory=ProseFacts)  # the GPU, driver and platform named in words
    interpreter: InterpreterShown | None = None  # the Python a site-packages path belongs to
    shown_error: ShownError | None = None  # the failure the paste shows, known to a signature or not
    topology: TopologyShown | None = None  # a pasted `nvidia-smi topo -m` with two GPUs or more
    p2p_test: P2pTest | None = None  # a pasted p2pBandwidthLatencyTest (CUDA samples)
    # the `image:` line of a pasted Docker Compose service that requests no GPU
    compose_no_gpus_line: int | None = None

    @property
    def empty(self) -> bool:
        """Nothing triage can use: not a report, not tool output, no known error."""
        return (
            self.collect_env is None
            and self.smi is None
            and self.topology is None
            and self.p2p_test is None
            and not self.packages
            and not self.hits
            and (
                self.kernel_log is None or not (self.kernel_log.xid_events or self.kernel_log.signature_lines)
            )
            and not self.said_torch_fails
            and self.session is None
            # NCCL's own log: what it shows is read
            and not any(part.kind == "nccl_log" for part in self.parts)
            and self.xformers is None
            and self.shown_error is None
            and self.prose.gpu is None  # a GPU named in words is enough to judge its architecture
            and self.prose.torch is None  # a tool's environment report names torch and its build
            and self.prose.tool_gpu is None  # ... or its GPU ("- GPU type: NVIDIA A100-PCIE-40GB")
            and self.prose.gpu_cc is None  # a capability said in words judges the GPU too
            and not self.prose.memory_asked  # the memory a model's full fine-tuning needs: an answer
            and (self.prose.cuda is None or self.prose.asks_build is None)  # a build for their CUDA: one
            and self.prose.fails is None  # a failure said in words: named, with what to paste
            and self.prose.replaced_torch is None  # an install that replaced torch: the build to put back
        )

    @property
    def words_only(self) -> bool:
        """A person's words: no program output, no error, nothing but what they say (a question in words,
        pasted into a PyTorch doctor, is about torch)."""
        return (
            self.collect_env is None
            and self.smi is None
            and self.topology is None
            and self.p2p_test is None
            and not self.packages
            and not self.hits
            and self.kernel_log is None
            and self.shown_error is None
            and self.session is None
        )

    @property
    def said_torch_fails(self) -> bool:
        """The words say torch cannot use CUDA; an illegal instruction counts on a Jetson only (PyPI's aarch64
        wheel on its CPU: elsewhere it says nothing of the GPU)."""
        fails = self.prose.torch_fails
        return fails is not None and (fails.value != "illegal_instruction" or self.prose.jetson is not None)


def read_paste(paste: Paste) -> PastedText:
    lines = paste.text.split("\n")
    report = parse_report(paste.text)
    collect_env = report if looks_like_collect_env(report) else None
    smi = parse_nvidia_smi(lines)
    packages = parse_package_lists(lines)
    kernel_lines = [(n, line) for n, line in enumerate(lines, start=1) if _KERNEL.search(line)]
    kernel_log = (
        parse_kernel_log(
            "\n".join(line for _, line in kernel_lines), PASTED_LOG, Unavailable(Reason.NOT_RECORDED)
        )
        if kernel_lines
        else None
    )
    hits, continued = _error_hits(lines)
    mismatch = toolkit_mismatch(collect_env, lines) or toolkit_beside_torch(paste.text[:MAX_CHARS], lines)
    hits = hits if mismatch is None else (*hits, mismatch)
    linked = parse_ldd(lines)
    built_for, built_lines = parse_built_for(lines)
    used: dict[int, str] = {}
    if collect_env is not None:
        for item in (*collect_env.lines.values(), collect_env.cut_line):
            for number in _line_numbers(lines, item) if item is not None else ():
                used.setdefault(number, "collect_env")
        for lib in collect_env.libraries or ():
            used.update({n: "collect_env" for n, line in enumerate(lines, start=1) if line == lib.raw})
    if smi is not None:
        used.update(dict.fromkeys(smi.lines, "nvidia_smi"))
    topology = parse_topology(lines)
    if topology is not None:
        used.update(dict.fromkeys(topology.lines, "nvidia_smi_topo"))
    p2p_test = parse_p2p_test(lines)
    if p2p_test is not None:
        used.update(dict.fromkeys(p2p_test.lines, "p2p_test"))
    for listing in packages:
        kind = "conda_list" if listing.manager == "conda" else "pip_list"
        used.update(dict.fromkeys(listing.lines, kind))
    used.update({n: "kernel_log" for n, _ in kernel_lines})
    used.update(
        {n: "nccl_log" for n, line in enumerate(lines, start=1) if "NCCL " in line and _NCCL_LOG.search(line)}
    )
    used.update({lib.line: "ldd" for lib in linked})
    session = parse_session(lines)
    used.update(dict.fromkeys(session.lines if session is not None else (), "session"))
    xformers = parse_xformers_info(lines)
    used.update(dict.fromkeys(xformers.lines if xformers is not None else (), "xformers_info"))
    used.update(dict.fromkeys(built_lines, "error"))
    used.update({hit.line: "error" for hit in hits if hit.line not in used})
    used.update({n: "error" for n in continued if n not in used})
    shown_error = parse_shown_error(lines)
    if shown_error is not None:
        # next to a known error it is one more line of it (collect2's after ld's "cannot find -lcuda");
        # elsewhere it is an error of its own that nothing knows
        first = shown_error.first or shown_error.line
        beside = any(first - 1 <= h.line <= shown_error.line + 1 for h in hits)
        for number in range(first, shown_error.line + 1):
            used.setdefault(number, "error" if beside else "unknown_error")
    prose = read_prose(lines)
    for said in (
        prose.gpu,
        prose.driver,
        prose.jetson,
        prose.torch_fails,
        prose.windows_build,
        prose.trains_model,
    ):
        if said is not None:
            used.setdefault(said.line, "words")
    unread = tuple(
        n for n, line in enumerate(lines, start=1) if n not in used and not _NOISE.match(line.strip())
    )
    listed = (*(lib for listing in packages for lib in listing.packages), *(report.libraries or ()))
    return PastedText(
        paste,
        len(lines),
        collect_env,
        smi,
        packages,
        kernel_log,
        linked,
        built_for,
        hits,
        _parts(used),
        unread,
        parse_python_shown(lines, listed),
        windows_path_line(lines),
        container_shell_line(lines),
        run_without_gpus_line(lines),
        parse_conda_env(lines, listed),
        session,
        xformers,
        prose,
        parse_interpreter_shown(lines),
        shown_error,
        topology,
        p2p_test,
        compose_without_gpus_line(lines),
    )


# NCCL's own debug lines (NCCL_DEBUG=INFO): "host:pid:tid [0] NCCL INFO NCCL version 2.25.1+cuda12.2"; its WARN lines
# are read as errors where a signature knows them
_NCCL_LOG = lazy(r"\[\d+\] NCCL (?:INFO|WARN|TRACE) ")


# A command the person typed to install something ("pip install torch==2.7.0+cpu ...") says what they asked for,
# not what is installed or what failed: no signature is matched in it.
INSTALL_COMMAND = lazy(
    r"^[\s`$>#]*(?:sudo\s+)?(?:(?:python[\d.]*\s+-m\s+)?pip[\d.]*|uv\s+pip|conda|mamba|micromamba)\s+install\b",
    re.IGNORECASE,
)
IN_WORDS = "_in_words"  # the catalogue's entries for what a person says happens
# entries that read a fact from a healthy tool's output (nvidia-smi's header, WSL's harmless ldconfig warning):
# no failure on their own
INFORMATIONAL = frozenset(
    {
        "other_nvidia_smi_header_driver_version",
        "wsl_libcuda_not_symbolic_link",
        "other_bitsandbytes_duplicate_cudart_warning",  # one library's two names: no fault of its own
        "other_bf16_supported_false_before_ampere",  # expected before Ampere: bf16 runs there by emulation
        "other_ollama_inference_compute_on_a_gpu",  # Ollama's server found a GPU to run on
        "other_numba_mapped_libcuda_paths",  # numba's heading: the paths after it say whether a stub loaded
    }
)
_SENTENCE_END = lazy(r"[.!?。！？](?:\s|$)")
# in the matched sentence: a question, or "no errors"; anywhere in the line: asking how, or a plan
_NOT_AN_ACCOUNT = lazy(
    r"\?|\bno[ \t]+(?:errors?|timeouts?|problems?|issues?)\b|\bwithout[ \t]+(?:errors?|problems?|issues?)\b",
    re.IGNORECASE,
)
_ASKS_OR_PLANS = lazy(
    r"\bhow[ \t]+(?:do|can|to|should)\b|\bwould[ \t]+like\b|\bwant[ \t]+to\b|\bplan[ \t]+to\b", re.IGNORECASE
)
# a sentence that passes on what the person read or heard ("It is said that bfloat16 is only supported on GPUs
# with compute capability of at least 8.0", blind set 21 #01) quotes a message; no program printed it
_HEARSAY = lazy(
    r"(?:^|[\s>*(\"'])(?:it[ \t]+is[ \t]+said|i(?:'ve|[ \t]+have)?[ \t]+(?:read|heard)|according[ \t]+to"
    r"|(?:the[ \t]+)?(?:docs?|documentation|readme)[ \t]+says?|supposedly|they[ \t]+say)\b",
    re.IGNORECASE,
)
WRAP_FROM = 60  # a line this long may go on in the next one: terminals and setup.py wrap at about 80 columns


def _error_hits(lines: list[str]) -> tuple[tuple[Hit, ...], set[int]]:
    """The known error messages, line by line; a long line that matches nothing is tried again joined with the
    next, where a message wrapped by the terminal or the printing program goes on ("...used to compile" /
    "PyTorch (11.8)."). A joined match counts only for signatures the next line does not match alone. The
    hits, and the numbers of the lines that continued one."""
    # the lines stripped and joined with a space hold every line and every pair joined below
    likely = candidates(" ".join(line.strip() for line in lines))
    alone = [
        [] if INSTALL_COMMAND.match(line) else match_line(line, number, likely)
        for number, line in enumerate(lines, start=1)
    ]
    hits: list[Hit] = []
    continued: set[int] = set()
    for i, line in enumerate(lines):
        found = alone[i]
        if (
            not found
            and len(line) >= WRAP_FROM
            and i + 1 < len(lines)
            and lines[i + 1].strip()
            and not INSTALL_COMMAND.match(line)
        ):
            own = {h.signature.id for h in alone[i + 1]}
            found = [
                h
                for h in match_line(f"{line.rstrip()} {lines[i + 1].strip()}", i + 1, likely)
                if h.signature.id not in own
            ]
            if found:
                continued.add(i + 2)
        hits.extend(found)
    # a person's words that plan, ask or deny ("now I would like to try 2 gpus", "multinode works, no errors")
    # are no account of a failure: the catalogue's entries for what a person says skip them
    said = [
        h for h in hits if not (h.signature.id.endswith(IN_WORDS) and not _an_account(h)) and not _hearsay(h)
    ]
    # a line a program's own message matched is that message, not a person's words about it (torch's OOM
    # translated: "CUDA 内存不足。尝试分配 108.00 MiB ..." is also "内存 ... 不足" in words), where the two overlap: a
    # paragraph pasted as one line may quote a message and then say something else (blind set 25's MOK)
    printed = [h for h in said if not h.signature.id.endswith(IN_WORDS)]
    said = [h for h in said if not (h.signature.id.endswith(IN_WORDS) and _inside_a_message(h, printed))]
    # a context entry counts only beside the error it explains (tokens added to a tokenizer: a device-side
    # assertion's likely cause, and nothing at all in a paste without one)
    named = {h.signature.id for h in said}
    said = [h for h in said if h.signature.within is None or h.signature.within in named]
    return tuple(said), continued


def _hearsay(hit: Hit) -> bool:
    """The message stands in a sentence that opens with what the person read or heard: a quotation."""
    text = hit.text
    found = hit.signature.pattern.search(text)
    if found is None:
        return False
    opening = text[_sentence_start(text, found.start()) : found.start()]
    return len(opening) <= 80 and _HEARSAY.match(" " + opening.lstrip()) is not None


def _span(hit: Hit) -> tuple[int, int]:
    found = hit.signature.pattern.search(hit.text)
    return (found.start(), found.end()) if found is not None else (0, len(hit.text))


def _inside_a_message(words: Hit, printed: list[Hit]) -> bool:
    """A words entry's match overlaps a program's message matched on the same line."""
    start, end = _span(words)
    return any(p.line == words.line and _span(p)[0] < end and start < _span(p)[1] for p in printed)


def _an_account(hit: Hit) -> bool:
    """The sentence a words entry matched in (its line may hold several) tells of a failure: it does not ask,
    plan or deny."""
    text = hit.text
    found = hit.signature.pattern.search(text)
    if found is None or _ASKS_OR_PLANS.search(text):
        return found is None
    after = _SENTENCE_END.search(text, found.end())
    sentence = text[_sentence_start(text, found.start()) : after.end() if after else len(text)]
    return _NOT_AN_ACCOUNT.search(sentence) is None


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding position `at` of a line starts: after the last sentence end before it."""
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, at)]
    return starts[-1] if starts else 0


def _line_numbers(lines: list[str], item: ReportLine) -> list[int]:
    """The paste's lines a report line was read from: its first, then each continuation row in order (blank
    lines may lie between them)."""
    numbers = [item.line]
    for row in item.raw.split("\n")[1:]:
        at = next((n for n in range(numbers[-1] + 1, len(lines) + 1) if lines[n - 1] == row), None)
        if at is None:
            break
        numbers.append(at)
    return numbers


def _parts(used: dict[int, str]) -> tuple[Part, ...]:
    """Consecutive lines of one kind (gaps of up to 3 unread lines kept inside) as parts, in order."""
    parts: list[Part] = []
    for number in sorted(used):
        kind = used[number]
        last = parts[-1] if parts else None
        if last is not None and last.kind == kind and number - last.last_line <= 4:
            parts[-1] = Part(kind, last.first_line, number)
        else:
            parts.append(Part(kind, number, number))
    return tuple(parts)
