"""`pbem key ...`: create and show identities, and keep other players' keys (contacts).

Errors are raised as PbemError and left to the main CLI, which prints
`error:` / `hint:` and exits with the error's exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pbem.cli._common import HomeOpt, JsonOpt, PassOpt, argument, only_identity
from pbem.cli.jsonout import json_text
from pbem.errors import PbemError, UsageError
from pbem.names import check_contact_name, check_identity_name
from pbem.seat.home import key_home, key_path, keys_dir
from pbem.ui import failures
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.protocol.crypto import PublicKey
    from pbem.seat.contacts import Stored

app = typer.Typer(help="Identities: your signing and encryption keys; contacts: other players' keys.",
                  no_args_is_help=True)

ReplaceOpt = Annotated[bool, typer.Option("--replace", help="Let a contact you hold with another key take this one "
                                           "(the old and new fingerprints are said).")]
NameArg = Annotated[str, argument("Identity name: 1-32 of a-z 0-9 _ -.")]


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
    name: Annotated[str | None, argument("Identity name (default: the only one in the key home).")] = None,
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
    """List the identities in the key home, then your contacts (other people's keys)."""
    from pbem.seat import keys
    from pbem.seat.contacts import load_contacts

    where = key_home(home)
    rows = [
        {"name": n, "fingerprint": pub.fingerprint(), "protected": keys.is_protected(where, n), "public": pub.encode(),
         "contact": False}
        for n, pub in keys.list_identities(where)
    ]
    contacts = [{"name": n, "fingerprint": pub.fingerprint(), "public": pub.encode(), "contact": True}
                for n, pub in sorted(load_contacts(where).items())]
    if as_json:
        typer.echo(json_text(rows + contacts))
        return
    if not rows:
        typer.echo(t("no identities in {path}; create one with 'pbem key new NAME'", path=keys_dir(where)), err=True)
    width = max((len(str(r["name"])) for r in rows + contacts), default=0)
    for r in rows:
        status = t("protected") if r["protected"] else t("UNPROTECTED")
        typer.echo(f"{r['name']:<{width}}  {r['fingerprint']}  {status}")
    if contacts:
        typer.echo(t("contacts:"))
        for r in contacts:
            typer.echo(f"{r['name']:<{width}}  {r['fingerprint']}")


@app.command("add")
def add(
    name: Annotated[str, argument("The contact's name: the seat 'game new --player NAME' gives it.")],
    key: Annotated[str, argument("Their public key line (pbem1...), as 'pbem key new' printed it.")],
    replace: ReplaceOpt = False,
    home: HomeOpt = None,
) -> None:
    """Keep another player's public key in your key home, under NAME: 'pbem game new ...
    --player NAME' then seats them with it. Check the fingerprint with its owner."""
    from pbem.protocol.crypto import PublicKey
    from pbem.seat.contacts import add_contacts

    check_contact_name(name)
    try:
        public = PublicKey.decode(key)
    except PbemError as exc:
        raise UsageError(t("not a public key line: {error}", error=failures.message(exc)),
                         hint=t("paste the whole pbem1... line 'pbem key new' or 'pbem key show' printed")) from None
    _said(add_contacts(key_home(home), {name: public}, replace=replace), {name: public})


@app.command("import")
def import_(
    file: Annotated[Path, argument("A contact file: a line NAME pbem1... per contact; # comments.")],
    replace: ReplaceOpt = False,
    home: HomeOpt = None,
) -> None:
    """Keep every contact of a club's contact file (a line 'NAME pbem1...' each) in your key
    home: all of them, or none when a line is bad or a name you hold has another key (unless --replace)."""
    from pbem.seat.contacts import add_contacts, read_contact_file

    new = read_contact_file(file)
    if not new:
        typer.echo(t("no contacts in {path}", path=file), err=True)
    _said(add_contacts(key_home(home), new, replace=replace), new)


def _said(done: Stored, new: dict[str, PublicKey]) -> None:
    """What a contact change did, a line a contact, with its fingerprint."""
    for name in done.added:
        typer.echo(t("added contact {name}: fingerprint {fingerprint}", name=name, fingerprint=new[name].fingerprint()))
    for name in done.same:
        typer.echo(t("contact {name} holds this key already: fingerprint {fingerprint}", name=name,
                     fingerprint=new[name].fingerprint()))
    for name, old in done.replaced:
        typer.echo(t("warning: contact {name} held another key ({old}); it now holds {new}", name=name,
                     old=old.fingerprint(), new=new[name].fingerprint()), err=True)
    for name, other in done.twins:
        typer.echo(t("note: contact {other} holds the same key as {name}", other=other, name=name), err=True)


def register(root: typer.Typer, only: str | None = None) -> None:
    """Add the `key` group to `root` (the one word this module adds: `only` is it or None)."""
    root.add_typer(app, name="key")
