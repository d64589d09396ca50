"""`pbem key ...`: create and show identities.

Errors are raised as PbemError and left to the main CLI, which prints
`error:` / `hint:` and exits with the error's exit code.
"""

from __future__ import annotations

from typing import Annotated

import typer

from pbem.cli._common import HomeOpt, JsonOpt, PassOpt, only_identity
from pbem.cli.jsonout import json_text
from pbem.errors import UsageError
from pbem.names import check_identity_name
from pbem.seat.home import key_home, key_path, keys_dir
from pbem.ui.words import t

app = typer.Typer(help="Identities: your signing and encryption keys.", no_args_is_help=True)

NameArg = Annotated[str, typer.Argument(help="Identity name: 1-32 of a-z 0-9 _ -.", show_default=False)]


@app.command("new")
def new(
    name: NameArg,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
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
