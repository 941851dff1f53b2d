"""The doctor's saving half: the report as JSON (`e`) and a redacted support bundle (`b`), recorded in a
worker, previewed, written only on yes. MainScreen (main.py) is this plus the list, the pane and the fixes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.tui.messages import BundleFailed, BundleRecorded
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen
from torch_gpu_doctor.tui.screens.main_fixes import FixFlow
from torch_gpu_doctor.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from torch_gpu_doctor.report import Report


class SaveFlow(FixFlow):
    """Saving what the doctor found; MainScreen provides `_hint`."""

    def _hint(self, report: Report) -> tuple[str, ...]:
        raise NotImplementedError  # MainScreen's

    def action_export(self) -> None:
        if self.report is None:
            self.notify("Wait for the checks to finish.")
            return
        from torch_gpu_doctor.render.json_report import render_json

        path = Path.cwd() / f"{TOOL_NAME}-report-{datetime.now():%Y%m%d-%H%M%S}.json"
        try:
            with path.open("x", encoding="utf-8") as out:
                out.write(render_json(self.report))
        except OSError as exc:
            self.notify(f"Could not write {path}: {exc.strerror or exc}", severity="error")
            return
        self.notify(str(path), title="Report saved (JSON)")

    def action_bundle(self) -> None:
        if not self.session.can_apply:
            self.notify(
                "This is a capture (--root): a bundle records this machine, so run gpu-doctor without --root."
            )
            return
        if self.report is None or self.running:
            self.notify("Wait for the checks to finish.")
            return
        self.query_one(StatusLine).message("Recording this machine for a support bundle…")
        self._record_bundle()

    @work(thread=True, exit_on_error=False, group="bundle", exclusive=True)
    def _record_bundle(self) -> None:
        try:
            self.post_message(BundleRecorded(self.session.bundle()))
        except Exception as exc:  # a bundle that cannot be made is said on screen, never a traceback
            self.post_message(BundleFailed(f"{type(exc).__name__}: {exc}"))

    def on_bundle_failed(self, message: BundleFailed) -> None:
        self._restore_status()
        self.notify(f"No bundle was made: {message.error}", severity="error")

    def on_bundle_recorded(self, message: BundleRecorded) -> None:
        from torch_gpu_doctor.bundle.model import BundleError
        from torch_gpu_doctor.tui.bundle_save import bundle_path, preview, write_bundle

        self._restore_status()
        bundle = message.bundle
        output = bundle_path(bundle)

        def confirmed(yes: bool | None) -> None:
            if not yes:
                self.notify("Nothing written.")
                return
            try:
                said = write_bundle(bundle, output)
            except BundleError as exc:
                self.notify(f"Could not write the bundle: {exc}", severity="error")
                return
            self.notify(said, title="Support bundle saved", timeout=15)

        body = Text(preview(bundle, output))
        self.app.push_screen(ConfirmScreen("Write this support bundle?", body, "Write it"), confirmed)

    def _restore_status(self) -> None:
        if self.report is not None:
            self.query_one(StatusLine).done(self.report.summary().counts, self._hint(self.report))
