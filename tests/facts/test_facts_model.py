"""facts/model.py imports its field types only for type checkers; annotation_names() gives them to the code that
resolves annotations at run time (serialize, decoding a capture). The two lists must stay equal."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing

from tests.factories import facts as make_facts
from torch_gpu_doctor.facts import model
from torch_gpu_doctor.facts.model import Facts, annotation_names
from torch_gpu_doctor.serialize import from_json, to_json


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(inspect.getsource(model))
    block = next(n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
    return {
        alias.name: node.module or ""
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_annotation_names_are_the_type_checking_imports() -> None:
    names = annotation_names()
    assert set(names) == set(_type_checking_imports())
    for name, module in _type_checking_imports().items():
        assert getattr(names[name], "__module__", None) == module, name


def test_every_field_of_facts_resolves() -> None:
    hints = typing.get_type_hints(Facts, localns=annotation_names())
    assert set(hints) == {f.name for f in dataclasses.fields(Facts)}
    # proves the test can fail: without the names, the annotations do not resolve
    try:
        typing.get_type_hints(Facts)
    except NameError:
        pass
    else:
        raise AssertionError(
            "Facts' annotations resolved without annotation_names(): the test proves nothing"
        )


def test_facts_round_trip_through_serialize() -> None:
    facts = make_facts()
    assert from_json(Facts, to_json(facts)) == facts
