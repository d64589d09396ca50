"""How scripts/test spreads the suite over its processes (pytest-xdist): which tests run together
on one process, in which order, and what happens to a test whose process dies."""
import functools
import re
from pathlib import Path

import pytest

_SHARED = re.compile(r"""scope=["'](module|class|package)["']""")


@functools.cache
def _shares_fixtures(path: Path) -> bool:
    """Whether a test file makes a module- (or class-) scoped fixture: its tests share it."""
    return bool(_SHARED.search(path.read_text(encoding="utf-8")))


def _unit(config: pytest.Config, nodeid: str) -> str:
    """What runs on one process, in order: a file whose tests share a module fixture is one unit
    (the fixture is made once, and what its tests leave for each other is there); any other test
    is a unit of its own, free to run beside the rest of its file."""
    path = nodeid.split("::", 1)[0]
    return path if _shares_fixtures(config.rootpath / path) else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: unknown with -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """scripts/test's `--dist loadfile`, by units (_unit) rather than by files: one slow file of
    whole games no longer holds one process while the other has run out of work. (xdist's own
    --dist loadgroup would do it with xdist_group marks, but with pytest 9 it no longer groups:
    the group it appends to a test's id is lost.)

    A process that dies (the OOM killer, a crash) costs its test one failure report, "worker
    'gwN' crashed while running ...", and nothing else: the rest of its unit goes to the next
    free process and the crashed test is not run again (xdist's LoadScopeScheduling would run
    it again, and fail with a KeyError, an INTERNALERROR that ends the run, when it hands work
    to a replacement process that has not collected the tests yet)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(config, nodeid)

        def remove_node(self, node) -> str | None:
            workload = self.assigned_work.pop(node)
            pending = [(scope, nodeid) for scope, unit in workload.items()
                       for nodeid, done in unit.items() if not done]
            if not pending:
                return None
            scope, crashed = pending[0]
            workload[scope][crashed] = True  # reported as crashed by xdist, not run again
            left = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
            # Ahead of the queue: a unit that had begun goes on where it stopped.
            for scope, unit in reversed(left.items()):
                self.workqueue[scope] = unit
                self.workqueue.move_to_end(scope, last=False)
            for other in self.nodes:
                self._reschedule(other)
            return crashed

        def _assign_work_unit(self, node) -> None:
            # A process that replaces a dead one gets work once its collection is in.
            if node in self.registered_collections:
                super()._assign_work_unit(node)

    return UnitScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow units first (each unit keeps its order): on several processes (scripts/test) the whole
    games start early, each on whichever process is free, and the quick tests fill in around
    them, not after them. (scripts/test passes --no-loadscope-reorder: xdist would otherwise
    put the units with the most tests first, so the slow single tests came last.)

    First of all the longest whole games (`@pytest.mark.game`): in file order they started
    minutes in and were the run's last minute. They wait on their mail far more than they
    compute, so they run beside the rest, but never on every process at once: one process of
    the first ones xdist hands out gets a unit that computes."""
    slow = {_unit(config, item.nodeid) for item in items if item.get_closest_marker("slow")}
    games = {_unit(config, item.nodeid) for item in items if item.get_closest_marker("game")}
    order = list(dict.fromkeys(_unit(config, item.nodeid) for item in items))
    at_once = max(getattr(config, "workerinput", {}).get("workercount", 1) - 1, 1)
    first = [u for u in order if u in games]
    rest = [u for u in order if u not in games and u in slow] + [u for u in order if u not in slow]
    order = first[:at_once] + rest[:1] + first[at_once:] + rest[1:]
    rank = {u: i for i, u in enumerate(order)}
    items.sort(key=lambda item: rank[_unit(config, item.nodeid)])
