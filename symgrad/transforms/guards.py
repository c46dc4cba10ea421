"""Guards: how one value a trace read from outside its arguments is read again and
compared on each call (:mod:`.captured` finds the reads).

A getter reads the value now (from the call's arguments, a global, a cell, an attribute
or item of another getter's value) and never raises: a read that fails gives
:data:`MISSING`, which differs from anything read before. :func:`check` makes the guard
of one read; :class:`World` holds all of a trace's guards.
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.tracing import Traced, Tracer

Getter = Callable[[tuple], Any]
#: what a getter gives for a value that is gone (a deleted attribute, a shorter list)
MISSING = object()
VALUE_TYPES = (int, float, complex, str, bytes, bool, type(None), np.generic)
#: C methods bound anew at every attribute access (guarded by owner and name)
_BOUND_ANEW = (types.BuiltinMethodType, types.MethodWrapperType)
_SMALL = 4096  # bytes: up to this, an array's snapshot is its bytes


def arg(i: int) -> Getter:
    return lambda a: a[i] if i < len(a) else MISSING


class Fixed:
    """A getter of an object that cannot change (a bound method's ``self``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, args: tuple) -> Any:
        return self.value


def attr(parent: Getter, name: str) -> Getter:
    if isinstance(parent, Fixed):  # one call less on every check
        obj = parent.value
        return lambda a: getattr(obj, name, MISSING)
    return lambda a: getattr(parent(a), name, MISSING)


def item(parent: Getter, key: Any) -> Getter:
    def item(a: tuple) -> Any:
        try:
            return parent(a)[key]
        except Exception:  # noqa: BLE001 -- gone: differs from what was read
            return MISSING
    return item


def global_(namespace: dict, name: str) -> Getter:
    return lambda a: namespace.get(name, MISSING)


def cell(c: types.CellType) -> Getter:
    def contents(a: tuple) -> Any:
        try:
            return c.cell_contents
        except ValueError:  # emptied (del): differs from what was read
            return MISSING
    return contents


def unbound(namespace: dict, names: tuple[str, ...]) -> Getter:
    """Whether none of ``names`` is in ``namespace`` (a global defined after the trace,
    one that shadows a builtin, is a change)."""
    return lambda a: not any(map(namespace.__contains__, names))


def absent(parent: Getter, names: tuple[str, ...], obj: Any) -> Getter:
    """Whether none of ``names`` is an attribute of ``parent``'s value, ``obj`` when
    traced (one added after the trace, which ``getattr(o, "k", default)`` or ``hasattr``
    reads, is a change). An object of a class with Python's plain lookup is checked by
    its and its classes' ``__dict__`` (a ``getattr`` that fails costs ~100 ns a name),
    any other by ``getattr``."""
    def by_getattr(a: tuple) -> bool:
        now = parent(a)
        try:
            return all(getattr(now, name, MISSING) is MISSING for name in names)
        except Exception:  # noqa: BLE001 -- a property that now fails: a change
            return False

    cls = type(obj)
    classes = cls.__mro__[:-1]  # (object's __dict__ cannot change)
    wanted = frozenset(names)

    def none_in_dicts(now: Any) -> bool:  # (isdisjoint walks the small __dict__ in C)
        try:
            return type(now) is cls and wanted.isdisjoint(now.__dict__) and all(
                wanted.isdisjoint(c.__dict__) for c in classes)
        except Exception:  # noqa: BLE001 -- (its __dict__ gone): a change
            return False
    plain = (cls.__getattribute__ is object.__getattribute__
             and isinstance(getattr(obj, "__dict__", None), dict)
             and not hasattr(cls, "__getattr__")
             and not any("__slots__" in c.__dict__ for c in classes)
             and none_in_dicts(obj))  # (not a property that raised AttributeError)
    if plain and len(classes) == 1:  # (one call less for the common case)
        (only,) = classes
        return lambda a: type(now := parent(a)) is cls and wanted.isdisjoint(
            now.__dict__) and wanted.isdisjoint(only.__dict__)
    return (lambda a: none_in_dicts(parent(a))) if plain else by_getattr


def held(get: Getter) -> Getter:
    """The values of the Tensor ``get`` gives (a Tensor changed in place is a change)."""
    def values(a: tuple) -> Any:
        now = get(a)
        return now._held_value() if isinstance(now, Traced) and not isinstance(
            now, Tracer) else MISSING
    return values


def check(get: Getter, value: Any) -> Callable[[tuple], bool]:
    """A guard on one read: whether ``get(args)`` still gives what it gave when the
    function was traced (``value``): an array by type, shape, dtype and bytes, a number
    or string by value, anything else by identity."""
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        shape, dtype, kind = value.shape, value.dtype, type(value)
        if value.nbytes <= _SMALL:
            snapshot = value.tobytes()  # a copy

            def small(args: tuple) -> bool:
                now = get(args)
                return (type(now) is kind and now.shape == shape
                        and (now.dtype is dtype or now.dtype == dtype)
                        and now.tobytes() == snapshot)
            return small
        bits = _bits(np.array(value, order="C"))  # a copy

        def large(args: tuple) -> bool:
            now = get(args)
            return (type(now) is kind and now.shape == shape and now.dtype == dtype
                    and bool((_bits(now) == bits).all()))
        return large
    if isinstance(value, VALUE_TYPES):
        kind, key = type(value), _value_key(value)

        def same_value(args: tuple) -> bool:
            now = get(args)
            return now is value or type(now) is kind and _value_key(now) == key
        return same_value
    if isinstance(value, os._Environ):  # (its dict is no attribute): by its contents
        environ = dict(value)
        return lambda args: get(args) is value and dict(value) == environ
    if isinstance(value, types.MappingProxyType):  # a class's __dict__: new at every read
        items = dict(value)
        return lambda args: isinstance(now := get(args), types.MappingProxyType) and (
            now.keys() == items.keys() and all(now[k] is v for k, v in items.items()))
    owner = getattr(value, "__self__", None)
    if isinstance(value, _BOUND_ANEW) and owner is not None:
        # a C method bound to an object (``Cls.__call__``, ``lst.append``, a module's
        # ``__setattr__``): new at every read, so by its owner and name
        kind, name = type(value), value.__name__
        return lambda args: type(now := get(args)) is kind and getattr(
            now, "__self__", None) is owner and now.__name__ == name
    return lambda args: get(args) is value



def _bits(a: np.ndarray) -> np.ndarray:
    """An array's elements as unsigned integers of the same size, flat: compared bit
    for bit (so equal NaNs are equal, and 0.0 differs from -0.0) in one numpy pass."""
    flat = np.ascontiguousarray(a).reshape(-1)
    if flat.dtype.itemsize in (1, 2, 4, 8) and flat.dtype.kind != "O":
        return flat.view(f"u{flat.dtype.itemsize}")
    return flat.view(np.uint8)


def _value_key(x: Any) -> Any:
    """A number as a comparable key that tells 0.0 from -0.0 and finds nan again (each
    part of a complex number: sqrt(-4 - 0j) is -2j)."""
    if isinstance(x, (float, np.floating)):
        return float(x).hex()
    if isinstance(x, (complex, np.complexfloating)):
        return float(x.real).hex(), float(x.imag).hex()
    return x


def _all_hold(guards: tuple[Callable[[tuple], bool], ...], args: tuple) -> bool:
    for holds in guards:
        if not holds(args):
            return False
    return True


def _never(args: tuple) -> bool:
    return False


class World:
    """The reads of one trace, checked on each call: ``world.holds(args)``.

    A guard never raises: a read that fails now (a deleted attribute, a shorter
    list) gives a marker that differs from what the trace read. ``unguarded``: what
    the analysis could not cover (then ``holds`` is always false: the function is
    traced on every call), or None; ``known`` checks the guards there are."""

    __slots__ = ("guards", "holds", "known", "numbers", "unguarded")

    def __init__(self, guards: tuple[Callable[[tuple], bool], ...],
                 numbers: frozenset[int] = frozenset(), unguarded: str | None = None):
        self.guards = guards
        #: ids of the floats read (alive while the function is traced): scalar consts
        self.numbers = numbers
        self.unguarded = unguarded
        if not guards:
            self.known: Callable[[tuple], bool] = lambda args: True
        elif len(guards) == 1:
            self.known = guards[0]  # one call less for the common case
        elif len(guards) == 2:  # (a generator costs 200 ns more)
            first, second = guards
            self.known = lambda args: first(args) and second(args)
        else:
            self.known = functools.partial(_all_hold, guards)
        self.holds = _never if unguarded is not None else self.known

    def __len__(self) -> int:
        return len(self.guards)
