"""`pbem key ...`: create and show identities.

Errors are raised as PbemError and left to the main CLI, which prints
`error:` / `hint:` and exits with the error's exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.jsonout import json_text
from pbem.errors import UsageError
from pbem.names import check_identity_name
from pbem.seat.home import key_home, key_path, keys_dir
from pbem.ui import words
from pbem.ui.words import t

app = typer.Typer(help="Identities: your signing and encryption keys.", no_args_is_help=True)

HOME_HELP = "Key home (default: $PBEM_HOME or the platform config dir)."
HomeOpt = Annotated[Path | None, typer.Option("--home", help=HOME_HELP, show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
NameArg = Annotated[str, typer.Argument(help="Identity name: 1-32 of a-z 0-9 _ -.", show_default=False)]


def home_everywhere(command: Any) -> Any:
    """`command` with --home on every command of its tree, as docs/playing.md promises: one
    that does not declare it (it reads no key itself: status, replay, game email...) takes it
    as the key home of the run, $PBEM_HOME, which whatever it calls that reads a key home
    (pbem.seat.home.key_home) then finds."""
    import os

    import typer.core

    from pbem.seat.home import ENV_HOME

    def chosen(ctx: Any, param: Any, value: str | None) -> None:
        if value is not None:
            os.environ[ENV_HOME] = value

    for sub in getattr(command, "commands", {}).values():
        home_everywhere(sub)
    if not hasattr(command, "commands") and not any("--home" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(typer.core.TyperOption(param_decls=["--home"], help=HOME_HELP, expose_value=False,
                                                     callback=chosen, is_eager=True, metavar="PATH"))
    return command


def only_identity(where: Path, question: str) -> str:
    """The one identity in key home `where`; with none or several, `question` and their names."""
    from pbem.seat import keys

    names = [n for n, _ in keys.list_identities(where)]
    if len(names) != 1:
        raise UsageError(question, hint=t("identities in {where}: {names}", where=where,
                                          names=words.listing(names) or t("none (pbem key new NAME)")))
    return names[0]


@app.command("new")
def new(
    name: NameArg,
    home: HomeOpt = None,
    passphrase_file: Annotated[
        Path | None,
        typer.Option("--passphrase-file", help="Read the passphrase from this file (first line).", show_default=False),
    ] = None,
    no_passphrase: Annotated[
        bool, typer.Option("--no-passphrase", help="Store the private key unencrypted (not recommended).")
    ] = False,
) -> None:
    """Create a new identity and print its public key line to share with other players."""
    from pbem.seat import keys

    check_identity_name(name)
    if no_passphrase and passphrase_file is not None:
        raise UsageError(t("--no-passphrase and --passphrase-file contradict each other"))
    where = key_home(home)
    if key_path(where, name).exists():
        # Checked before prompting so nobody types a passphrase for nothing.
        raise UsageError(
            t("identity {name} already exists in {path}", name=repr(name), path=key_path(where, name)),
            hint=t("pick another name; pbem never overwrites a private key"),
        )
    passphrase = None if no_passphrase else keys.get_passphrase(passphrase_file, prompt=True, confirm=True)
    identity = keys.create_identity(where, name, passphrase)
    warning = keys.scrypt_warning() if passphrase is not None else None
    if warning:
        typer.echo(warning, err=True)
    if passphrase is None:
        typer.echo(
            t("warning: the private key {path} is NOT protected by a passphrase; anyone who can read it can play as you",
              path=key_path(where, name)),
            err=True,
        )
    pub = identity.public
    typer.echo(pub.encode())
    typer.echo(t("fingerprint: {fingerprint}", fingerprint=pub.fingerprint()))
    typer.echo(t("created identity {name} in {path}; send the pbem1 line above to the other players", name=repr(name),
                 path=keys_dir(where)), err=True)


@app.command("show")
def show(
    name: Annotated[str | None, typer.Argument(help="Identity name (default: the only one in the key home).",
                                               show_default=False)] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print an identity's public key line and fingerprint."""
    from pbem.seat import keys

    where = key_home(home)
    name = name or only_identity(where, t("which identity? pass its name"))
    pub = keys.load_public(where, name)
    if as_json:
        doc: dict[str, str | bool] = {"name": name, "public": pub.encode(), "fingerprint": pub.fingerprint()}
        if key_path(where, name).exists():
            doc["protected"] = keys.is_protected(where, name)
        typer.echo(json_text(doc))
        return
    typer.echo(pub.encode())
    typer.echo(t("fingerprint: {fingerprint}", fingerprint=pub.fingerprint()))


@app.command("list")
def list_(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """List the identities in the key home."""
    from pbem.seat import keys

    where = key_home(home)
    rows = [
        {"name": n, "fingerprint": pub.fingerprint(), "protected": keys.is_protected(where, n), "public": pub.encode()}
        for n, pub in keys.list_identities(where)
    ]
    if as_json:
        typer.echo(json_text(rows))
        return
    if not rows:
        typer.echo(t("no identities in {path}; create one with 'pbem key new NAME'", path=keys_dir(where)), err=True)
        return
    width = max(len(str(r["name"])) for r in rows)
    for r in rows:
        status = t("protected") if r["protected"] else t("UNPROTECTED")
        typer.echo(f"{r['name']:<{width}}  {r['fingerprint']}  {status}")


def register(root: typer.Typer, only: str | None = None) -> None:
    """Add the `key` group to `root` (the one word this module adds: `only` is it or None)."""
    root.add_typer(app, name="key")
