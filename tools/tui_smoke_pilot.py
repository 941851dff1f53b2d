"""Open the TUI's smoke view on this machine (a real GPU, when one is lent) and save what it shows.

`gpu-doctor --smoke` in a terminal does the same; this drives the real app with Textual's Pilot so that a
machine without tmux or a person at the keyboard still gives the screen back: an SVG of the Results tab, an
SVG of the Steps tab, and the status line with the time from start to the smoke test's end.

    python tools/tui_smoke_pilot.py --python /opt/torch/.venv/bin/python --out DIR [--mode quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens.smoke import SmokeScreen
from torch_gpu_doctor.tui.session import Session


async def drive(python: str, mode: SmokeMode, out: Path, size: tuple[int, int], limit_s: float) -> int:
    session = Session(RealHost(), python, smoke_mode=mode)
    app = DoctorApp(session, start="smoke")
    began = time.monotonic()
    async with app.run_test(size=size) as pilot:
        screen: SmokeScreen | None = None
        while time.monotonic() - began < limit_s:
            await pilot.pause(0.25)
            if isinstance(app.screen, SmokeScreen):
                screen = app.screen
                if screen.result is not None or _failed(screen):
                    break
        took = time.monotonic() - began
        if screen is None:
            print(f"the smoke view never opened within {limit_s:.0f} s", file=sys.stderr)
            (out / "tui-smoke.svg").write_text(app.export_screenshot())
            return 1
        await pilot.pause(0.5)
        status = _status(screen)
        (out / "tui-smoke.svg").write_text(app.export_screenshot())
        await pilot.press("t")  # the Steps tab
        await pilot.pause(0.3)
        (out / "tui-smoke-steps.svg").write_text(app.export_screenshot())
        print(f"smoke view: {status} · {took:.1f} s from start to the end of the smoke test")
        return 0 if screen.result is not None else 1


def _status(screen: SmokeScreen) -> str:
    content = screen.query_one("#smoke-status", Static).render()
    return content.plain if isinstance(content, Text) else str(content)


def _failed(screen: SmokeScreen) -> bool:
    return "itself failed" in _status(screen)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter with a CUDA torch")
    parser.add_argument("--mode", default="standard", choices=[m.value for m in SmokeMode])
    parser.add_argument("--out", type=Path, default=Path(), help="folder for the SVG screenshots")
    parser.add_argument("--size", default="110x40", help="terminal size, COLUMNSxROWS")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds to wait for the smoke test")
    args = parser.parse_args()
    columns, rows = (int(n) for n in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    return asyncio.run(drive(args.python, SmokeMode(args.mode), args.out, (columns, rows), args.limit))


if __name__ == "__main__":
    raise SystemExit(main())
