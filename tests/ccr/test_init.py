"""The package's public surface is deliberate."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ccr


def test_all_lists_exactly_the_public_names_sorted() -> None:
    assert sorted(ccr.__all__) == ccr.__all__
    assert set(ccr.__all__) == set(ccr._EXPORTS)
    for name in ccr.__all__:
        getattr(ccr, name)
    public = {name for name in vars(ccr) if not name.startswith("_")}
    # A submodule becomes an attribute of the package once anything imports it.
    modules = {info.name for info in pkgutil.iter_modules(ccr.__path__)}
    assert set(ccr.__all__) == public - modules - {"annotations", "importlib", "Any", "TYPE_CHECKING"}


def test_importing_ccr_or_a_handle_helper_loads_no_backend() -> None:
    code = "import sys, ccr; ccr.marker; ccr.default_store_path(); print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.strip()[2:-2].split("', '"))
    assert {"ccr", "ccr.handles"} <= loaded
    assert loaded.isdisjoint({"sqlite3", "ccr.store", "ccr._sqlite", "ccr._memory"})


def test_every_exported_name_resolves() -> None:
    for name in ccr.__all__:
        assert getattr(ccr, name) is not None


def test_the_api_other_packages_build_on_is_exported() -> None:
    required = {
        "open_store",
        "default_store_path",
        "Store",
        "Record",
        "StoreStats",
        "Retrieval",
        "handle_for",
        "marker",
        "parse_ref",
        "find_handles",
        "CCRError",
        "InvalidHandle",
        "HandleNotFound",
        "BudgetExceeded",
        "StoreError",
    }
    assert required <= set(ccr.__all__)
