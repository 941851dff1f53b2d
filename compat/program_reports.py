"""Programs with an environment report or log of their own (compat/program_reports.json): where such a program
fails and the paste shows no error, triage asks for that report rather than torch's collect_env."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.json_fields import lst, obj, regex, text
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class ProgramReport:
    name: str
    words: re.Pattern[str]
    report: str
    shown: re.Pattern[str]
    then: str  # asked for where the report is already in the paste; "" for nothing more of the program's
    source: str


def parse_program_reports(data: Any) -> tuple[ProgramReport, ...]:
    rows = lst(
        obj(data, "program_reports.json").get("programs"), "program_reports.json.programs", non_empty=True
    )
    found = []
    for i, raw in enumerate(rows):
        where = f"program_reports.json.programs[{i}]"
        entry = obj(raw, where)
        then = entry.get("then", "")
        if not isinstance(then, str):
            raise CompatDataError(f"{where}.then: a command, or empty")
        found.append(
            ProgramReport(
                text(entry, "name", where),
                regex(entry, "words", where),
                text(entry, "report", where),
                re.compile(regex(entry, "shown", where).pattern, re.IGNORECASE | re.MULTILINE),
                then,
                text(entry, "source", where),
            )
        )
    return tuple(found)


@functools.cache
def load_program_reports() -> tuple[ProgramReport, ...]:
    return parse_program_reports(json.loads(package_text("torch_gpu_doctor.compat", "program_reports.json")))


def report_to_ask(text: str) -> str | None:
    """The report of the first program the text shows running; its next test where the report is shown already,
    or "" where it has none (nothing more of the program's to ask); None for a text that names none of them."""
    for program in load_program_reports():
        if program.words.search(text):
            return program.then if program.shown.search(text) else program.report
    return None
