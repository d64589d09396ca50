"""The options of a game's deadlines and webhook (docs/playing.md, "Deadlines and absent players",
"Webhooks"), each written once, and their groups: what `game new` sets and `game config`
changes. They live apart from cli/_common.py so that the commands that take neither (apply,
show, move, status...) do not make them; like it, this module defines no command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import msgspec
import typer

from pbem.cli._common import optional

if TYPE_CHECKING:
    from pbem.host.deadlines import Timing
    from pbem.host.settings import WebhookSetting

DeadlineOpt = Annotated[str | None, optional("--deadline", help="Time to answer each packet: 48h, 90m, 1d12h, 30s.")]
GraceOpt = Annotated[str | None, optional("--grace", help="After the deadline, before --on-timeout acts (e.g. 24h).")]
DaysOpt = Annotated[str | None, optional("--days", help="Only these weekdays count (UTC), e.g. mon-fri.")]
PolicyOpt = Annotated[str | None, optional("--on-timeout", help="wait (default), discard or bot.")]
AbsentOpt = Annotated[int | None, optional("--absent-after", help="Missed deadlines in a row that make a seat "
                                                                  "absent (default 2).")]
BotTurnsOpt = Annotated[int | None, optional("--bot-turns", help="With --on-timeout bot: the search bot's budget a "
                                                                "move, in simulated turns, 1 to 100000 (default 1000).")]
MaxAwayOpt = Annotated[str | None, optional("--max-away", help="The longest a seat may be away (default 14d).")]
RemindOpt = Annotated[list[str], typer.Option("--remind", help="When to remind: 50% (of the time) or 2h (before); "
                                                               "repeat. Default: 50% and 2h.")]


WebhookOpt = Annotated[str | None, optional(
    "--webhook", help="An http(s) URL the host POSTs to when a seat is to move, is late, or a round ends "
                      "(docs/playing.md, \"Webhooks\"); none removes it.")]
WebhookFormatOpt = Annotated[str | None, optional(
    "--webhook-format", help="What the webhook is sent: json (the facts), discord or slack (a line). Default: json.")]


class TimingOptions(msgspec.Struct):
    """A game's deadline rules (docs/playing.md, "Deadlines and absent players"), as `game new`
    sets them and `game config` changes them."""

    deadline: DeadlineOpt = None
    grace: GraceOpt = None
    days: DaysOpt = None
    on_timeout: PolicyOpt = None
    absent_after: AbsentOpt = None
    bot_turns: BotTurnsOpt = None
    remind: RemindOpt = msgspec.field(default_factory=list)
    max_away: MaxAwayOpt = None

    def given(self) -> bool:
        """Whether any of them was given."""
        changes = (self.deadline, self.grace, self.days, self.on_timeout, self.absent_after, self.bot_turns,
                   self.max_away)
        return any(x is not None for x in changes) or bool(self.remind)

    def timing(self, base: Timing | None) -> Timing:
        """The game's timing `base` with the options given changed (the rest as before)."""
        from pbem.host.deadlines import Timing, parse_days, parse_duration, parse_reminder

        t = msgspec.structs.replace(base) if base is not None else Timing()
        if self.deadline is not None:
            t.deadline = parse_duration(self.deadline, "--deadline", off=("none", "off")) or None
        if self.grace is not None:
            t.grace = parse_duration(self.grace, "--grace", off=("none", "0"))
        if self.days is not None:
            t.days = None if self.days.lower() in ("all", "any") else parse_days(self.days)
        if self.on_timeout is not None:
            t.on_timeout = self.on_timeout
        if self.absent_after is not None:
            t.absent_after = self.absent_after
        if self.bot_turns is not None:
            t.bot_turns = self.bot_turns
        if self.max_away is not None:
            t.max_away = parse_duration(self.max_away, "--max-away")
        if self.remind:
            t.reminders = [] if self.remind == ["none"] else [parse_reminder(r) for r in self.remind]
        return t.check()


class WebhookOptions(msgspec.Struct):
    """A game's webhook (docs/playing.md, "Webhooks"), as `game new` sets it and `game config`
    changes it."""

    webhook: WebhookOpt = None
    webhook_format: WebhookFormatOpt = None

    def setting(self, kept: WebhookSetting | None) -> WebhookSetting | None | Literal[False]:
        """The webhook these options make of `kept` (pbem.host.webhooks.setting): None removed,
        False when neither option was given."""
        from pbem.host.webhooks import setting

        return setting(self.webhook, self.webhook_format, kept)
