"""`pbem agent ...`: unlock keys once for a session (pbem.seat.agent)."""

from __future__ import annotations

from typing import Annotated

import typer

from pbem.cli._common import HomeOpt, JsonOpt, PassOpt, optional
from pbem.cli.jsonout import json_text
from pbem.errors import UsageError
from pbem.seat.home import key_home
from pbem.ui import words
from pbem.ui.words import t

app = typer.Typer(help="Unlock your keys once per session (like ssh-agent).", no_args_is_help=True)

DEFAULT_LIFETIME = "1h"


@app.command("start")
def start(
    names: Annotated[list[str] | None, optional("--as", help="Key to unlock; repeat. Default: every "
                                                "protected key in the key home.")] = None,
    timeout: Annotated[str, typer.Option("--timeout", help="Forget the keys after this long: 30m, 2h, 1d.")]
    = DEFAULT_LIFETIME,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Unlock keys and hand them to a background agent; show, move, turn and apply then ask no passphrase."""
    from pbem.host.deadlines import parse_duration
    from pbem.seat import agent, keys

    lifetime = parse_duration(timeout, "--timeout")
    if lifetime > 7 * 86400:
        raise UsageError(t("--timeout {timeout} is longer than a week", timeout=repr(timeout)),
                         hint=t("an agent holds keys for a session"))
    where = key_home(home)
    wanted = names or [n for n, _ in keys.list_identities(where) if keys.is_protected(where, n)]
    if not wanted:
        raise UsageError(t("no protected key in {where} to unlock", where=where),
                         hint=t("unprotected keys need no agent; create one with 'pbem key new NAME'"))
    # Every passphrase is checked before the agent starts, so a typo leaves nothing running.
    unlocked = []
    for name in wanted:
        unlocked.append(keys.unlock_key_file(where, name, passphrase_file))
    client = agent.start_agent(where)
    for identity in unlocked:
        client.add(identity, lifetime)
    listed = words.listing(i.name for i in unlocked)
    typer.echo(t("agent holds {names} for {span} (socket {path}); 'pbem agent stop' forgets them", names=listed,
                 span=words.span(lifetime), path=client.path))


@app.command("status")
def status(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """Show which keys the agent holds and for how long."""
    from pbem.seat import agent

    client = agent.find_agent(key_home(home))
    held = client.keys() if client else []
    if as_json:
        typer.echo(json_text({"running": client is not None,
                               "keys": [{"name": k.get("name"), "seconds_left": k.get("left")} for k in held]}))
        return
    if client is None:
        typer.echo(t("no key agent is running for this key home"))
        return
    for k in held:
        typer.echo(t("{name}  forgotten in {span}", name=k.get("name"), span=words.span(float(k.get("left") or 0))))


@app.command("stop")
def stop(home: HomeOpt = None) -> None:
    """Make the agent forget every key and exit."""
    from pbem.seat import agent

    client = agent.find_agent(key_home(home))
    if client is None:
        typer.echo(t("no key agent is running for this key home"))
        return
    client.stop()
    typer.echo(t("the key agent forgot its keys and stopped"))


def register(root: typer.Typer, only: str | None = None) -> None:
    """Add the `agent` group to `root` (the one word this module adds: `only` is it or None)."""
    root.add_typer(app, name="agent")
