"""The checks grouped by area, each with a live status token; a leaf's data is its check id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from torch_gpu_doctor.model import CheckSpec, Finding, Status
from torch_gpu_doctor.render.styles import AREA_TITLES
from torch_gpu_doctor.tui.tokens import token, worst

PROBLEMS = (Status.FAIL, Status.WARN, Status.CRASH)
AREA_PREFIX = "area:"  # an area node's data; a check's is its id
# The order a person reads a machine in: the GPU and its driver, then torch, then the path and the platform.
AREA_ORDER = (
    "gpu",
    "driver",
    "torch",
    "python",
    "env",
    "pcie",
    "egpu",
    "memory",
    "storage",
    "platform",
    "nccl",
    "amd",
    "smoke",
    "compat",
)


class CheckList(Tree[str]):
    """A live view of one diagnosis: `plan()` when it starts, `show()` as each check ends."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("checks", id=id)
        self.show_root = False
        self.guide_depth = 2
        self._leaves: dict[str, TreeNode[str]] = {}
        self._areas: dict[str, TreeNode[str]] = {}
        self._area_of: dict[str, str] = {}
        self._status: dict[str, Status | None] = {}

    def plan(self, specs: Iterable[CheckSpec]) -> None:
        """Every check that will run, as running; a re-run keeps the cursor on the same check."""
        rank = {area: i for i, area in enumerate(AREA_ORDER)}
        ordered = sorted(specs, key=lambda s: rank.get(s.area, len(rank)))  # stable within an area
        if not self._status and list(self._leaves) == [s.id for s in ordered]:
            return  # the diagnosis lists what the shipped index showed: the tree is already this one
        keep = self.selected_check
        self.clear()
        self._leaves.clear()
        self._areas.clear()
        self._area_of.clear()
        self._status.clear()
        for spec in ordered:
            self._add(spec.id, spec.area)
        for area in self._areas:
            self._relabel_area(area)
        if keep in self._leaves:
            self._move_to(self._leaves[keep])

    def show(self, check_id: str, findings: Iterable[Finding]) -> None:
        self.show_all({check_id: findings})

    def show_all(self, results: Mapping[str, Iterable[Finding]]) -> None:
        """Several checks at once (a whole report): each area's tally is redrawn once, not once a check."""
        areas: dict[str, None] = {}
        for check_id, findings in results.items():
            if check_id not in self._leaves:  # a probe or plugin crash: not a planned check
                self._add(check_id, check_id.split(".", maxsplit=1)[0])
            self._status[check_id] = worst([f.status for f in findings])
            self._leaves[check_id].set_label(self._label(check_id))
            areas[self._area_of[check_id]] = None
        for area in areas:
            self._relabel_area(area)

    def status_of(self, check_id: str) -> Status | None:
        return self._status.get(check_id)

    @property
    def selected_check(self) -> str | None:
        node = self.cursor_node
        if node is None or node.data is None or node.data.startswith(AREA_PREFIX):
            return None
        return node.data

    def select_check(self, check_id: str) -> bool:
        node = self._leaves.get(check_id)
        if node is None:
            return False
        self._move_to(node)
        return True

    def _move_to(self, node: TreeNode[str]) -> None:
        # Nodes added since the last frame have no row yet: Tree lays its rows out lazily (on idle), and
        # move_cursor reads the node's row. Reading _tree_lines lays them out now.
        self._tree_lines  # noqa: B018 (a property read for its effect)
        self.move_cursor(node)

    def next_problem(self) -> str | None:
        """The next check (after the cursor, wrapping) that fails, warns or crashed."""
        order = list(self._leaves)
        if not order:
            return None
        start = order.index(self.selected_check) + 1 if self.selected_check in order else 0
        for check_id in order[start:] + order[:start]:
            if self._status.get(check_id) in PROBLEMS:
                self.select_check(check_id)
                return check_id
        return None

    def _add(self, check_id: str, area: str) -> None:
        if area not in self._areas:
            self._areas[area] = self.root.add("", data=AREA_PREFIX + area, expand=True)
        self._area_of[check_id] = area
        self._status[check_id] = None
        self._leaves[check_id] = self._areas[area].add_leaf(self._label(check_id), data=check_id)

    def _label(self, check_id: str) -> Text:
        return Text.assemble(token(self._status.get(check_id)), " ", check_id)

    def _relabel_area(self, area: str) -> None:
        statuses = [self._status[c] for c, a in self._area_of.items() if a == area and c in self._status]
        label = Text(AREA_TITLES.get(area, area.capitalize()), "bold")
        running = sum(1 for s in statuses if s is None)
        tally = [f"{statuses.count(s)} {s.value}" for s in PROBLEMS if statuses.count(s)]
        if running:
            tally.append(f"{running} running")
        if tally:
            label.append(f"  {', '.join(tally)}", "dim")
        self._areas[area].set_label(label)
