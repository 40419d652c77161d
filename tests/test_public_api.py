"""The public API stays importable under its names (issue 13).

Each public module's ``__all__`` equals the snapshot in ``tests/public_api.py``,
and every name in it resolves: moving a module inside the package must not
change what an embedder imports.
"""

from __future__ import annotations

import importlib

import pytest

from tests.public_api import PINNED


@pytest.mark.parametrize("module", sorted(PINNED))
def test_the_exported_names_are_the_pinned_ones(module: str) -> None:
    exported = importlib.import_module(module).__all__
    assert tuple(sorted(exported)) == PINNED[module]
    assert len(set(exported)) == len(exported), "a name is exported twice"


@pytest.mark.parametrize("module", sorted(PINNED))
def test_every_pinned_name_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [name for name in PINNED[module] if not hasattr(mod, name)]
    assert missing == []
