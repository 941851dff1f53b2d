"""`dataclass` with its methods from bytecode: the standard decorator's behaviour, without compiling at start-up.

The standard `dataclasses.dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` and, when
frozen, `__setattr__` and `__delattr__` as source text and compiles them with `exec()` every time the module is
imported: about 0.2 ms a method, 1.3-1.6 ms a class on the 2-core machines this project is measured on.
gpu-doctor defines about 190 dataclasses; `gpu-doctor triage` imports 107 of them, which was 150 of its
450 ms before it read a byte of the paste (issue 17's budget is 300 ms; issue 21's TUI budget pays the same).

This decorator lets the standard one do all the field processing, with the generated methods turned off, so
`fields()`, `replace()`, `asdict()`, `__match_args__` and the type checkers (which see the standard
decorator, below) work as ever; then it attaches shared methods, compiled once into this module's bytecode,
that read the class's fields from a spec made at decoration. Instances behave as the standard decorator's:
the same `__init__` arguments, defaults, default factories, `field(init=False)`, `__post_init__`; the same
`repr`, equality, hashing and `FrozenInstanceError`; a method the class body defines is kept, as there.
Creating an instance costs a few microseconds more (a triage creates about 900).

What the project does not use (`order`, `unsafe_hash`, `slots`, `kw_only`, `InitVar`, `match_args=False`, ...)
goes to the standard decorator unchanged. One visible difference: `__dataclass_params__` holds the flags the
standard decorator ran with (no init, repr, eq or frozen); the class's own are in its `__record_spec__`. `tests/test_records.py` holds the two side by side.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import reprlib
import types
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # the checkers see the standard decorator: frozen fields, generated signatures
    from dataclasses import dataclass as dataclass  # noqa: PLC0414 - the explicit re-export mypy --strict wants
else:

    def dataclass(
        cls: type | None = None,
        /,
        *,
        init: bool = True,
        repr: bool = True,
        eq: bool = True,
        frozen: bool = False,
        **other: Any,
    ) -> Any:
        def wrap(klass: type) -> type:
            return _make(klass, init=init, repr=repr, eq=eq, frozen=frozen, other=other)

        return wrap if cls is None else wrap(cls)


_MISSING = dataclasses.MISSING
_standard = dataclasses.dataclass  # bound once: the field processing, and what the rare features get
_SPEC = "__record_spec__"


class _Spec:
    """What the shared methods need of one decorated class, worked out once."""

    __slots__ = (
        "accepted",
        "compare",
        "fields",
        "frozen",
        "names",
        "owner",
        "post_init",
        "qualname",
        "repr_names",
        "setter",
        "takes",
    )
    owner: type
    setter: Callable[[Any, str, Any], None]
    compare: Callable[[Any], tuple[Any, ...]]

    def __init__(self, cls: type, frozen: bool) -> None:
        every = dataclasses.fields(cls)
        self.owner = cls
        self.qualname = cls.__qualname__
        # (name, in __init__, default, factory) in declaration order, as the standard __init__ assigns them
        self.fields = tuple(
            (f.name, f.init, f.default, f.default_factory)
            for f in every
            if f.init or f.default_factory is not _MISSING
        )
        self.names = tuple(f.name for f in every if f.init)
        self.accepted = frozenset(self.names)
        least = sum(1 for f in every if f.init and f.default is _MISSING and f.default_factory is _MISSING)
        most = len(self.names)  # Python's own words for a call with too many arguments, self counted
        self.takes = (
            f"takes {most + 1} positional argument{'s' if most else ''}"
            if least == most
            else f"takes from {least + 1} to {most + 1} positional arguments"
        )
        self.frozen = frozenset(f.name for f in every) if frozen else frozenset()
        self.setter = object.__setattr__ if frozen else setattr
        self.post_init = hasattr(cls, "__post_init__")
        self.repr_names = tuple(f.name for f in every if f.repr)
        compared = tuple(f.name for f in every if f.compare)
        self.compare = _getter(compared)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function from an instance to the tuple of these fields (attrgetter gives a bare value for one name)."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _plural(names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + (", and " if len(quoted) > 2 else " and ") + quoted[-1]


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    spec: _Spec = getattr(type(self), _SPEC)
    names = spec.names
    if len(args) > len(names):
        raise TypeError(f"{spec.qualname}.__init__() {spec.takes} but {len(args) + 1} were given")
    given = dict(zip(names, args, strict=False))  # fewer args than names: the rest by keyword or default
    for key, value in kwargs.items():
        if key not in spec.accepted:
            raise TypeError(f"{spec.qualname}.__init__() got an unexpected keyword argument {key!r}")
        if key in given:
            raise TypeError(f"{spec.qualname}.__init__() got multiple values for argument {key!r}")
        given[key] = value
    missing: list[str] = []
    setter = spec.setter
    for name, in_init, default, factory in spec.fields:
        if in_init and name in given:
            setter(self, name, given[name])
        elif in_init and default is not _MISSING:
            setter(self, name, default)
        elif factory is not _MISSING:
            setter(self, name, factory())
        else:
            missing.append(name)
    if missing:
        word = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(
            f"{spec.qualname}.__init__() missing {len(missing)} required positional {word}: {_plural(missing)}"
        )
    if spec.post_init:
        self.__post_init__()


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    spec: _Spec = getattr(type(self), _SPEC)
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in spec.repr_names)
    return f"{self.__class__.__qualname__}({inner})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        compare = getattr(type(self), _SPEC).compare
        return compare(self) == compare(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(getattr(type(self), _SPEC).compare(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    spec: _Spec = getattr(type(self), _SPEC)
    if type(self) is spec.owner or name in spec.frozen:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    super(spec.owner, self).__setattr__(name, value)  # type: ignore[arg-type]  # the decorated class


def _frozen_delattr(self: Any, name: str) -> None:
    spec: _Spec = getattr(type(self), _SPEC)
    if type(self) is spec.owner or name in spec.frozen:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    super(spec.owner, self).__delattr__(name)  # type: ignore[arg-type]  # the decorated class


def _standard_only(cls: type, other: dict[str, Any]) -> bool:
    """Whether the class asks for something only the standard decorator does."""
    if other:
        return True
    for value in inspect.get_annotations(cls).values():
        text = value if isinstance(value, str) else repr(value)
        if "InitVar" in text or "KW_ONLY" in text:
            return True
    return any(isinstance(v, dataclasses.Field) and v.kw_only is True for v in cls.__dict__.values())


# What the standard decorator's field processing leaves on a class it was asked for nothing else: its params
# object (the same flags for every record; built once, so that its fields are this Python's own), and the marker
# of a real field. Without the marker (a Python whose dataclasses differ) every class takes the standard path.
_FIELD = getattr(dataclasses, "_FIELD", None)


class _Prototype:
    pass


_PARAMS = vars(_standard(_Prototype, init=False, repr=False, eq=False, frozen=False))["__dataclass_params__"]


def _plain_fields(cls: type) -> bool:
    """The standard decorator's field processing (init, repr and eq off), done here where the class is plain:
    every annotation a string that is no ClassVar (the standard one tests each string against typing's and
    dataclasses' names, 10-14 ms of `gpu-doctor triage`'s start-up for its 131 records). False, and nothing
    done, where the class is not plain: the standard processing then runs. tests/test_records.py compares
    the fields both give for every record of the package."""
    annotations = inspect.get_annotations(cls)
    if _FIELD is None or not all(isinstance(t, str) and "ClassVar" not in t for t in annotations.values()):
        return False
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = getattr(base, "__dataclass_fields__", None)
        if inherited is not None:
            fields.update((f.name, f) for f in inherited.values())
    own: list[dataclasses.Field[Any]] = []
    for name, annotation in annotations.items():
        default = getattr(cls, name, _MISSING)
        if isinstance(default, dataclasses.Field):
            made = default
        else:
            if isinstance(default, types.MemberDescriptorType):  # a slot: no default
                default = _MISSING
            made = cast("dataclasses.Field[Any]", dataclasses.field(default=cast("Any", default)))
        made.name, made.type = name, annotation
        setattr(made, "_field_type", _FIELD)  # noqa: B010 - the standard processing's own attribute
        if made.kw_only is _MISSING:  # field() leaves it unset
            made.kw_only = False
        if made.default.__class__.__hash__ is None:  # the standard decorator's test of a mutable default
            raise ValueError(
                f"mutable default {type(made.default)} for field {name} is not allowed: use default_factory"
            )
        own.append(made)
    for made in own:
        fields[made.name] = made
        if isinstance(getattr(cls, made.name, None), dataclasses.Field):
            if made.default is _MISSING:
                delattr(cls, made.name)
            else:
                setattr(cls, made.name, made.default)
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    setattr(cls, "__dataclass_fields__", fields)  # noqa: B010 - the attribute dataclasses.fields() reads
    setattr(cls, "__dataclass_params__", _PARAMS)  # noqa: B010
    if "__match_args__" not in cls.__dict__:
        setattr(cls, "__match_args__", tuple(f.name for f in fields.values() if f.init and not f.kw_only))  # noqa: B010
    abc.update_abstractmethods(cls)
    return True


def _make(cls: type, *, init: bool, repr: bool, eq: bool, frozen: bool, other: dict[str, Any]) -> type:
    if _standard_only(cls, other):
        return _standard(cls, init=init, repr=repr, eq=eq, frozen=frozen, **other)
    for base in cls.__mro__[1:]:  # the standard decorator's rule: the frozen-ness of a dataclass's bases
        based = base.__dict__.get(_SPEC)  # (its own check sees only the frozen=False it is called with here)
        if based is not None and bool(based.frozen) != frozen:
            raise TypeError(
                "cannot inherit frozen dataclass from a non-frozen one"
                if frozen
                else "cannot inherit non-frozen dataclass from a frozen one"
            )
    own = dict(cls.__dict__)
    if not own.get("__doc__"):
        cls.__doc__ = "-"  # the standard decorator would build one from inspect.signature; ours is set below
    if not _plain_fields(cls):
        _standard(cls, init=False, repr=False, eq=False, frozen=False)
    spec = _Spec(cls, frozen)
    setattr(cls, _SPEC, spec)
    if not own.get("__doc__"):
        cls.__doc__ = f"{cls.__name__}({', '.join(f'{f.name}: {f.type}' for f in dataclasses.fields(cls))})"
    for name, wanted, method in (("__init__", init, _init), ("__repr__", repr, _repr), ("__eq__", eq, _eq)):
        if wanted and name not in own:
            setattr(cls, name, method)
    if frozen:
        for name, method in (("__setattr__", _frozen_setattr), ("__delattr__", _frozen_delattr)):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
            setattr(cls, name, method)
    # dataclasses' hash table for unsafe_hash=False: eq and frozen hash the compared fields; eq alone makes
    # the class unhashable; a __hash__ the body defines stays (Python sets __hash__ = None beside a body __eq__)
    body_hash = own.get("__hash__", _MISSING)
    explicit = not (body_hash is _MISSING or (body_hash is None and "__eq__" in own))
    if eq and not explicit:
        setattr(cls, "__hash__", _hash if frozen else None)  # noqa: B010 - a class attribute mypy would refuse
    return cls
