"""pymap as the tests run it: `python tests/pymap_server.py ARGS` with pymap's own arguments.

While a client IDLEs, pymap's Maildir backend looks at the folder for new mail once a second
(its mail arrives as files the SMTP server writes, which pymap cannot be told of). A real server
tells an idling client within moments (Dovecot: half a second, by inotify), so here it looks every
IDLE_CHECK seconds: whole games can wait for each mail by IDLE, as pbem does by default, rather
than by polling.
"""

from __future__ import annotations

from pymap.backend.maildir.mailbox import MailboxData
from pymap.concurrent import Event
from pymap.main import main
from pymap.selected import SelectedMailbox

IDLE_CHECK = 0.02  # seconds: each move waits for two IDLE wake-ups; a look at a folder is cheap

_update_selected = MailboxData.update_selected


async def _update_selected_soon(self: MailboxData, selected: SelectedMailbox, *,
                                wait_on: Event | None = None) -> SelectedMailbox:
    if wait_on is not None:
        await wait_on.wait(timeout=IDLE_CHECK)
    return await _update_selected(self, selected)


MailboxData.update_selected = _update_selected_soon  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
