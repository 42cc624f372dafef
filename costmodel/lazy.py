"""Package attributes imported on first use (PEP 562), so importing a package, or one leaf module in it, does
not import every module the package re-exports (the CLI's start-up imports only what a subcommand uses)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, tuple[str, ...]], namespace: dict[str, Any], *,
                 exported: list[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`, whose names live in the modules `homes` maps to them; a name
    is imported from its module on first access and then kept in the package's `namespace`. `exported` is the
    package's literal `__all__` (literal so linters see the re-exports); it must list exactly those names."""
    home_of = {name: module for module, names in homes.items() for name in names}
    if sorted(home_of) != sorted(exported):
        raise ImportError(f"{package}: __all__ and the lazy exports differ: {sorted(set(home_of) ^ set(exported))}")

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home_of))

    return __getattr__, __dir__
