"""Package attributes imported on first use (PEP 562), so importing a package, or one leaf module in it, does
not import every module the package re-exports (the CLI's start-up imports only what a subcommand uses)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, tuple[str, ...]],
                 namespace: dict[str, Any]) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """(`__all__`, `__getattr__`, `__dir__`) for `package`, whose names live in the modules `homes` maps to
    them; a name is imported from its module on first access and then kept in the package's `namespace`."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home_of))

    return sorted(home_of), __getattr__, __dir__
