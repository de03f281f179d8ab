"""Read-only views of aggregates, for readers that share one kept state (``fetch_latest``).

A kept state is frozen once, when it is built (its dicts, lists and sets become containers that
refuse every change), and every reader gets the same ``Reading`` of it: the aggregate's own
attributes, properties and methods, through a view whose attributes cannot be set. A method that
would change the state raises ``TypeError`` instead of corrupting what other readers hold. So
sharing costs nothing per read, where a private copy of a long video's graph costs milliseconds.
``copy.deepcopy`` of a reading (or of any frozen container) is an ordinary, changeable copy.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any


def _refuse(self, *args, **kwargs):
    raise TypeError("a reading is read-only: load the aggregate for writing to change it")


class FrozenDict(dict):
    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        thawed: dict = {}
        memo[id(self)] = thawed
        for k, v in self.items():
            thawed[copy.deepcopy(k, memo)] = copy.deepcopy(v, memo)
        return thawed

    def __reduce__(self):
        return dict, (dict(self),)


class FrozenList(list):
    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = remove = pop = clear = _refuse
    sort = reverse = _refuse

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict) -> list:
        thawed: list = []
        memo[id(self)] = thawed
        thawed.extend(copy.deepcopy(v, memo) for v in self)
        return thawed

    def __reduce__(self):
        return list, (list(self),)


class FrozenSet(set):
    __slots__ = ()
    __ior__ = __iand__ = __isub__ = __ixor__ = add = discard = remove = pop = clear = _refuse
    update = difference_update = intersection_update = symmetric_difference_update = _refuse

    def __copy__(self) -> set:
        return set(self)

    def __deepcopy__(self, memo: dict) -> set:
        thawed = {copy.deepcopy(v, memo) for v in self}
        memo[id(self)] = thawed
        return thawed

    def __reduce__(self):
        return set, (set(self),)


def freeze(value: Any) -> Any:
    """``value`` with every dict, list and set in it (however deep) made read-only."""
    if isinstance(value, dict) and not isinstance(value, FrozenDict):
        return FrozenDict((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list) and not isinstance(value, FrozenList):
        return FrozenList(freeze(v) for v in value)
    if isinstance(value, set) and not isinstance(value, FrozenSet):
        return FrozenSet(value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(freeze(v) for v in value)
    return value


class Reading:
    """A read-only view of an aggregate (``isinstance`` sees the aggregate's class)."""

    __slots__ = ("_target",)

    def __init__(self, aggregate: Any) -> None:
        for name, value in vars(aggregate).items():
            vars(aggregate)[name] = freeze(value)
        object.__setattr__(self, "_target", aggregate)

    @property
    def __class__(self):  # noqa: D105  isinstance() and type checks see the aggregate's class
        return type(object.__getattribute__(self, "_target"))

    @property
    def __dict__(self):
        return MappingProxyType(vars(object.__getattribute__(self, "_target")))

    def __getattr__(self, name: str) -> Any:
        target = object.__getattribute__(self, "_target")
        own = vars(target)
        if name in own:
            return own[name]
        cls = type(target)
        for klass in cls.__mro__:
            if name in vars(klass):
                attr = vars(klass)[name]
                # Methods and properties run with this view as ``self``: what they set is refused.
                return attr.__get__(self, cls) if hasattr(attr, "__get__") else attr
        raise AttributeError(name)

    __setattr__ = __delattr__ = _refuse

    def __deepcopy__(self, memo: dict) -> Any:
        return copy.deepcopy(object.__getattribute__(self, "_target"), memo)

    def __copy__(self) -> Any:
        return copy.deepcopy(self)

    def __eq__(self, other: Any) -> bool:
        target = object.__getattribute__(self, "_target")
        if isinstance(other, Reading):
            other = object.__getattribute__(other, "_target")
        return target == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Reading({object.__getattribute__(self, '_target')!r})"

