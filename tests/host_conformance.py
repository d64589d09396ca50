"""Checked by mypy, not run (tests/test_host_interface.py): each kind of host is accepted where
the one declared host interface, pbem.host.interface.GameHost, is expected."""

from __future__ import annotations

from pbem.host.blind import BlindHost
from pbem.host.interface import GameHost
from pbem.host.referee import Host


def as_game_hosts(referee: Host, blind: BlindHost) -> list[GameHost]:
    return [referee, blind]
