"""Textual's Footer, recomposed only when the keys it shows change (issue 21: the full screen's pace).

Textual's Footer rebuilds every key widget at each bindings signal, and Textual sends that signal twice for a
single focus change, and three times while the app starts, with the same keys each time. On the doctor's
first screen that was five rebuilds of the footer before the findings were in, each a mount, a style pass and
a layout of a dozen widgets, holding the main thread while the findings waited. This footer rebuilds when
what it would show differs from what it shows.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

Shown = tuple[tuple[str, str, str, bool, str], ...]


class SteadyFooter(Footer):
    """A Footer that skips rebuilding itself with the keys it already shows."""

    def __init__(self, *, compact: bool = False) -> None:
        super().__init__(compact=compact)
        self._shown: Shown | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        shown = _shown_keys(screen)
        if shown == self._shown:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = shown  # what the rebuild this schedules will show
        super().bindings_changed(screen)


def _shown_keys(screen: Screen[object]) -> Shown:
    """What Footer.compose draws from: the bindings it shows (and the command palette's), each enabled or not."""
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (binding.key, binding.action, binding.description, enabled, tooltip)
        for key, (_, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette
    )
