"""The GPU smoke test, parent side: the plan and watchdog budgets, the parsed run, the breadcrumb that survives a
hard lock, and the expectations every measured figure is set against. The child is doctor/probes/smoke.py."""
