"""The ``debatrix`` command line: the app and its entry point; each command lives in the module named for its job
(:mod:`.cli_judge`, :mod:`.cli_bench`, :mod:`.cli_models`, :mod:`.cli_serve`; what they share in :mod:`.cli_common`)."""

from __future__ import annotations

import logging
import sys
from typing import Any

import typer

from debatrix import __version__
from debatrix.core.errors import ExitCode

from .cli_bench import bench_app, profile
from .cli_common import app
from .cli_judge import judge, list_dimensions, list_modes, report, validate
from .cli_models import models_app
from .cli_review import review
from .cli_serve import serve, ui
from .options import JUDGE_EXAMPLES, PanelledCommand
from .terminal import console, out_console

# every command, in the order `debatrix --help` lists them
app.command()(validate)
app.command(cls=PanelledCommand, epilog=JUDGE_EXAMPLES)(judge)
app.command("modes")(list_modes)
app.command("dimensions")(list_dimensions)
app.command()(review)
app.add_typer(models_app, name="models")
app.command()(serve)
app.add_typer(bench_app, name="bench")
app.command()(profile)
app.command()(ui)
app.command()(report)


@app.command()
def version() -> None:
    """Print the version."""
    out_console.print(__version__)


_METAVARS = {"int": "N", "int range": "N", "float": "X", "float range": "X", "path": "PATH", "Path": "PATH",
             "str": "TEXT"}


def plain_metavars(command: Any) -> Any:
    """``command`` (typer's click command) with its values named as a reader says them (``--orders N``,
    ``PATHS...``) instead of Python's types (``<int>``, ``<list[Path]>``); choices and flags keep theirs."""
    import types

    for param in getattr(command, "params", []):
        if param.type_descriptor.is_choice or getattr(param, "is_flag", False) or param.metavar:
            continue
        label = param.display_type(None).strip("<>")
        label = label.removeprefix("list[").removesuffix("]")
        if param.param_type_name == "argument":
            param.metavar = param.name.upper()
            param.display_type = types.MethodType(lambda self, ctx: "", param)  # the name says it
        else:
            param.metavar = _METAVARS.get(label, label.upper())
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
    return command


#: what every usage error the command line raises is (typer exposes only its subclass BadParameter)
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def main() -> None:
    # psycopg's pool logs each reconnection attempt to a lost database; the run says once what was lost (exit 4)
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    command = plain_metavars(typer.main.get_command(app))
    try:
        code = command.main(prog_name="debatrix", standalone_mode=False)
    except (KeyboardInterrupt, typer.Abort):
        console.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except _UsageError as e:  # a value the options refuse: one line in plain words (typer's checks read like
        # pydantic's, "Value error, 'flwo' is not one of ..."), the usage line above it, exit 2 as before
        e.message = e.message.removeprefix("Value error, ")
        e.show()
        sys.exit(e.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
