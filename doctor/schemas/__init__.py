"""JSON Schemas shipped with the package."""

from __future__ import annotations

from importlib import resources


def report_schema_text() -> str:
    return (
        resources.files("torch_gpu_doctor.schemas").joinpath("report.schema.json").read_text(encoding="utf-8")
    )
