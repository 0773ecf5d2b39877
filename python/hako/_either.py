"""e2b's methods that work on an instance and on the class by id:
``sb.kill()`` and ``Sandbox.kill(sandbox_id)``, the same for ``get_info``,
``set_timeout``, ``get_metrics``, ``pause``, ``fork`` and ``connect`` (e2b's
``class_method_variant``)."""

from __future__ import annotations

import functools
from typing import Any, Callable, Generic, Optional, TypeVar

T = TypeVar("T")


class either(Generic[T]):
    """A method that is ``on_instance(self, ...)`` when looked up on an
    instance and the class's classmethod named ``on_class`` when looked up
    on the class (``Sandbox.kill(sandbox_id)``)."""

    def __init__(self, on_instance: Callable[..., T], on_class: str) -> None:
        self._on_instance = on_instance
        self._on_class = on_class
        self.__doc__ = on_instance.__doc__

    def __get__(self, obj: Optional[object], owner: Any) -> Callable[..., T]:
        if obj is None:
            by_id: Callable[..., T] = getattr(owner, self._on_class)
            return by_id
        return functools.partial(self._on_instance, obj)
