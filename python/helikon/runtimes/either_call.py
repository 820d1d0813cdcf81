"""Methods callable on the class or on an instance: ``Runner.run(agent, q)`` and
``Runner().run(agent, q)`` alike.

The OpenAI Agents SDK spells a run ``Runner.run(agent, input)`` (a classmethod); helikon's
:class:`~helikon.Runner` holds no state, so both spellings run the same code. A method
wrapped in :class:`either_call` is bound, when read from the class, to a new instance made
with no arguments (a subclass that needs arguments must be instantiated); read from an
instance it is an ordinary bound method.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["either_call"]

_S = TypeVar("_S")
_P = ParamSpec("_P")
_R = TypeVar("_R")


class either_call(Generic[_S, _P, _R]):
    """Decorator: the method works as ``Cls.method(...)`` and ``Cls().method(...)``.

    Example:
        >>> class Greeter:
        ...     @either_call
        ...     def hello(self, name: str) -> str:
        ...         return f"hello {name}"
        >>> Greeter.hello("ada"), Greeter().hello("bob")
        ('hello ada', 'hello bob')
    """

    def __init__(self, fn: Callable[Concatenate[_S, _P], _R]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type[_S]) -> Callable[_P, _R]: ...

    @overload
    def __get__(self, obj: _S, owner: type[_S] | None = None) -> Callable[_P, _R]: ...

    def __get__(self, obj: Any, owner: Any = None) -> Callable[_P, _R]:
        bound_to = obj if obj is not None else owner()
        return functools.partial(self.fn, bound_to)
