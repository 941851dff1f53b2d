"""JSON Schemas shipped with the package."""

from __future__ import annotations

from torch_gpu_doctor.package_data import package_text


def report_schema_text() -> str:
    return package_text("torch_gpu_doctor.schemas", "report.schema.json")
