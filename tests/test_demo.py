"""The README's main job: `pbem demo` plays a whole game through real processes and files."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import pbem


@pytest.mark.slow
def test_demo_plays_three_rounds_that_replay_and_audit(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    run = pbem("demo", "--dir", work, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    for n in (1, 2, 3):
        assert f"round {n}:" in out
    assert "final scores" in out and "pbem replay" in out
    audit = pbem("audit", work / "shared")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert audit.stdout.count("audit ok") == 3
    # every seat's process held only its own key
    for home in (work / "homes").iterdir():
        assert [p.stem for p in (home / "keys").glob("*.key")] == [home.name]


@pytest.mark.slow
def test_demo_without_dir_removes_its_temporary_folder(tmp_path: Path) -> None:
    """Issue 15.14: every scripts/demo run used to leave a pbem-demo-* folder behind."""
    run = pbem("demo", env={"TMPDIR": str(tmp_path)}, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    assert "final scores" in run.stdout and "demo --dir DIR" in run.stdout
    # only the demo's own folder counts: libraries may leave their own temporary files (ffi .so stubs)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("pbem-demo-")] == []
