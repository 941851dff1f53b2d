"""torch_gpu_doctor.records.dataclass behaves as the standard decorator: each case builds the same class body
with both and compares what a caller can see (arguments, defaults, errors, repr, equality, hashing, freezing,
the dataclasses helpers). And the package's modules use it, so the start-up saving is real."""

from __future__ import annotations

import ast
import copy
import dataclasses
import pickle
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from torch_gpu_doctor import records
from torch_gpu_doctor.records import dataclass as record

ROOT = Path(__file__).resolve().parent.parent
DECORATORS = pytest.mark.parametrize("decorate", [dataclasses.dataclass, record], ids=["standard", "records"])


def _outcome(call: Callable[[], Any]) -> tuple[str, str]:
    """What a call gives, as text: its repr, or its exception's type and message (the qualname aside)."""
    try:
        return ("ok", repr(call()))
    except Exception as exc:  # the exception is the outcome being compared
        return (type(exc).__name__, str(exc).split("__init__()")[-1])


def _both(make: Callable[[Callable[..., Any]], type]) -> tuple[type, type]:
    return make(dataclasses.dataclass), make(record)


def _frozen_point(decorate: Callable[..., Any]) -> type:
    @decorate(frozen=True)
    class Point:
        """A point."""

        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list)
        note: str = field(default="", compare=False, repr=False)

    return Point


def _mutable(decorate: Callable[..., Any]) -> type:
    @decorate
    class Box:
        """A box."""

        size: int
        items: dict[str, int] = field(default_factory=dict)
        cache: list[int] = field(init=False, default_factory=list)
        label: str = field(init=False, default="box")
        count: ClassVar[int] = 0

        def __post_init__(self) -> None:
            self.cache.append(self.size)

    return Box


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1,), {}),
    ((1, 2), {}),
    ((1, 2, ["a"]), {}),
    ((), {"x": 1, "y": 2}),
    ((1,), {"tags": ["t"], "note": "n"}),
    ((), {}),  # missing x
    ((1, 2, [], "n", "extra"), {}),  # too many
    ((1, 2, [], "n", "extra", "more"), {}),
    ((1,), {"x": 2}),  # twice
    ((1,), {"z": 2}),  # unknown
    ((), {"y": 2}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_frozen_init_repr_and_errors_match(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    standard, ours = _both(_frozen_point)
    assert _outcome(lambda: ours(*args, **kwargs)) == _outcome(lambda: standard(*args, **kwargs))


def test_missing_arguments_are_named_as_python_names_them() -> None:
    @record
    class Three:
        a: int
        b: int
        c: int

    with pytest.raises(TypeError, match=r"missing 3 required positional arguments: 'a', 'b', and 'c'"):
        Three()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"missing 2 required positional arguments: 'b' and 'c'"):
        Three(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"Three.__init__\(\) takes 4 positional arguments but 5 were given"):
        Three(1, 2, 3, 4)  # type: ignore[call-arg]


def test_factories_give_each_instance_its_own_value() -> None:
    point = _frozen_point(record)
    one, two = point(1), point(1)
    assert one.tags == [] and one.tags is not two.tags


@DECORATORS
def test_frozen_fields_cannot_be_set_or_deleted(decorate: Callable[..., Any]) -> None:
    thing = _frozen_point(decorate)(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        thing.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
        thing.other = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del thing.y


def test_equality_and_hash_match_over_compared_fields_only() -> None:
    standard, ours = _both(_frozen_point)
    for cls in (standard, ours):
        a, b, c = cls(1, 2, (), note="a"), cls(1, 2, (), note="b"), cls(1, 3, ())
        assert a == b and a != c and hash(a) == hash(b)
        assert a != (1, 2) and (a == object()) is False
        assert len({a, b, c}) == 2
    assert hash(ours(1, 2, ())) == hash(standard(1, 2, ()))  # the same tuple of values is hashed


def test_instances_of_another_class_with_the_same_fields_differ() -> None:
    first, second = _frozen_point(record), _frozen_point(record)
    assert first(1) != second(1)


def test_a_mutable_dataclass_with_eq_is_unhashable_and_assignable() -> None:
    standard, ours = _both(_mutable)
    for cls in (standard, ours):
        box = cls(3)
        box.size = 4
        assert (box.size, box.cache, box.label) == (4, [3], "box")
        assert cls.__hash__ is None
        with pytest.raises(TypeError, match="unhashable"):
            hash(box)
    assert repr(ours(3)) == repr(standard(3))


def test_fields_replace_asdict_and_match_args_are_the_standard_ones() -> None:
    standard, ours = _both(_frozen_point)
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(standard)]
    assert vars(ours)["__match_args__"] == vars(standard)["__match_args__"]
    assert dataclasses.is_dataclass(ours(1))
    moved = dataclasses.replace(ours(1, 2, ["a"]), y=5)
    assert dataclasses.asdict(moved) == dataclasses.asdict(standard(1, 5, ["a"]))


def test_copy_and_pickle_round_trip() -> None:
    point = _frozen_point(record)
    globals()["PicklablePoint"] = point  # pickle finds classes by module and name
    point.__qualname__ = point.__name__ = "PicklablePoint"
    original = point(1, 2, ["t"])
    assert pickle.loads(pickle.dumps(original)) == original
    assert copy.deepcopy(original) == original


def test_a_method_the_body_defines_is_kept() -> None:
    @record(frozen=True)
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name.lower() == self.name.lower()

        def __hash__(self) -> int:
            return hash(self.name.lower())

    assert repr(Named("a")) == "<a>"
    assert Named("A") == Named("a") and hash(Named("A")) == hash(Named("a"))


def test_a_body_setattr_on_a_frozen_class_is_refused_as_the_standard_refuses_it() -> None:
    for decorate in (dataclasses.dataclass, record):
        with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):

            @decorate(frozen=True)
            class Bad:
                x: int

                def __setattr__(self, name: str, value: Any) -> None:
                    object.__setattr__(self, name, value)


def test_recursive_repr_does_not_recurse_forever() -> None:
    @record
    class Node:
        children: list[Any] = field(default_factory=list)

    node = Node()
    node.children.append(node)
    assert repr(node) == "test_recursive_repr_does_not_recurse_forever.<locals>.Node(children=[...])"


def test_subclass_adds_fields_after_its_base() -> None:
    standard_base, ours_base = _both(_frozen_point)

    def sub(decorate: Callable[..., Any], base: type) -> type:
        @decorate(frozen=True)
        class Point3(base):  # type: ignore[misc]
            z: int = 9

        return Point3

    standard, ours = sub(dataclasses.dataclass, standard_base), sub(record, ours_base)
    assert repr(ours(1, 2, [], "n", 3)) == repr(standard(1, 2, [], "n", 3))
    assert ours(1) != ours_base(1)


def test_a_class_without_a_docstring_gets_one_naming_its_fields() -> None:
    @record
    class Bare:
        a: int
        b: str = ""

    assert Bare.__doc__ == "Bare(a: int, b: str)"


def test_rare_features_go_to_the_standard_decorator() -> None:
    @record(order=True)
    class Ordered:
        a: int

    @record
    class KeywordOnly:
        a: int = field(kw_only=True)

    assert Ordered(1) < Ordered(2)
    assert not hasattr(Ordered, records._SPEC)
    with pytest.raises(TypeError):
        KeywordOnly(1)  # type: ignore[call-arg]
    assert KeywordOnly(a=1).a == 1


def test_the_package_uses_the_fast_decorator() -> None:
    """A module that imports the standard decorator would compile its methods again at every start."""
    standard: list[str] = []
    for folder in ("doctor", "checks", "fixes", "compat"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parts[-2:] == ("doctor", "records.py") or "probes" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "dataclasses":
                    if any(alias.name == "dataclass" for alias in node.names):
                        standard.append(str(path.relative_to(ROOT)))
                elif isinstance(node, ast.Attribute) and ast.unparse(node) == "dataclasses.dataclass":
                    standard.append(str(path.relative_to(ROOT)))
    assert standard == []


def test_frozen_and_non_frozen_do_not_mix_in_one_hierarchy_as_the_standard_refuses() -> None:
    for decorate in (dataclasses.dataclass, record):

        @decorate
        class Loose:
            a: int = 0

        @decorate(frozen=True)
        class Firm:
            b: int = 0

        with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
            decorate(frozen=True)(type("FirmOnLoose", (Loose,), {"__annotations__": {"c": "int"}, "c": 0}))
        with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
            decorate(type("LooseOnFirm", (Firm,), {"__annotations__": {"c": "int"}, "c": 0}))


_FIELDS_OF_EVERY_RECORD = """
import dataclasses, importlib, json, re, sys
from torch_gpu_doctor import records
def show(value):  # a repr without the address an object has in this one process
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))
if sys.argv[1] == "standard":
    records._plain_fields = lambda cls: False  # every class through dataclasses' own processing
out = {}
for name in sys.argv[2:]:
    module = importlib.import_module(name)
    for value in vars(module).values():
        if isinstance(value, type) and "__record_spec__" in value.__dict__ and value.__module__ == name:
            out[f"{name}.{value.__qualname__}"] = {
                "fields": [
                    [f.name, str(f.type), show(f.default), show(f.default_factory), f.init, f.repr, f.compare,
                     f.hash, f.kw_only, dict(f.metadata), str(f._field_type)]
                    for f in dataclasses.fields(value)
                ],
                "match_args": list(value.__match_args__),
                "attributes": {f.name: show(value.__dict__.get(f.name, "ABSENT")) for f in dataclasses.fields(value)},
                "params": repr(value.__dataclass_params__),
            }
print(json.dumps(out, sort_keys=True))
"""


def test_every_record_of_the_package_gets_the_fields_the_standard_processing_gives() -> None:
    """records._plain_fields stands in for dataclasses' field processing on plain classes: for each record of
    the package, its fields (every attribute), match_args, class attributes and params are the standard ones."""
    import subprocess
    import sys

    from tests.test_architecture import modules

    names = [n for n in modules() if ".tui" not in n and not n.endswith("__main__")]

    def fields(how: str) -> dict[str, Any]:
        run = subprocess.run(
            [sys.executable, "-c", _FIELDS_OF_EVERY_RECORD, how, *names],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        import json

        found: dict[str, Any] = json.loads(run.stdout)
        return found

    fast, standard = fields("fast"), fields("standard")
    assert len(fast) > 150
    assert fast == standard
    # and most of them took the fast path (the standard one makes a params object per class)
    import importlib

    plain = [
        value
        for name in names
        for value in vars(importlib.import_module(name)).values()
        if isinstance(value, type) and getattr(value, "__dataclass_params__", None) is records._PARAMS
    ]
    assert len(set(plain)) > 150
