# Sourced by scripts/*: create or refresh .venv and install the project into it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"
# A venv holds its folder's path (its scripts' first lines, the editable install of pbem): a checkout
# moved elsewhere could no longer start `pbem`, and a copy would quietly run the original folder's
# code. So it names the folder it was made for, and is made again where that is not this one. A
# .venv that is a link is the developer's own arrangement: left as it is.
MADE_FOR="$VENV/.made-for"
if [ ! -L "$VENV" ] && [ -f "$MADE_FOR" ] && [ "$(cat "$MADE_FOR")" != "$ROOT" ]; then
    echo "$VENV was made for $(cat "$MADE_FOR"); making it again for $ROOT..." >&2
    rm -rf "$VENV"
fi
# pbem needs Python 3.11 or newer: a venv an older python made (its pyvenv.cfg says which) is
# made again, and none is made with an older one.
made_by=$(sed -n 's/^version *= *\([0-9]*\.[0-9]*\).*/\1/p' "$VENV/pyvenv.cfg" 2>/dev/null || true)
if [ ! -L "$VENV" ] && [ -n "$made_by" ] && [ "${made_by%%.*}" -eq 3 ] && [ "${made_by#*.}" -lt 11 ]; then
    echo "$VENV was made by Python $made_by; making it again with $PY..." >&2
    rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "error: pbem needs Python 3.11 or newer; $PY is $("$PY" -V 2>&1 || echo "not found")" >&2
        echo "hint: install one and run again with PYTHON=python3.11 (or newer)" >&2
        exit 1
    fi
    echo "setting up $VENV (the first time takes a minute)..." >&2
    "$PY" -m venv "$VENV"
fi
[ -L "$VENV" ] || [ -f "$MADE_FOR" ] || printf '%s\n' "$ROOT" > "$MADE_FOR"
STAMP="$VENV/.installed-$1"
if [ ! -f "$STAMP" ] || [ "$ROOT/pyproject.toml" -nt "$STAMP" ]; then
    # Quiet unless it fails: the build backend's warnings are noise to a newcomer.
    LOG="$VENV/install.log"
    if ! { "$VENV/bin/python" -m pip install -q --upgrade pip && "$VENV/bin/python" -m pip install -q -e "$ROOT[$1]"; } >"$LOG" 2>&1; then
        cat "$LOG" >&2
        echo "error: installing pbem into $VENV failed (log above, also in $LOG)" >&2
        exit 1
    fi
    touch "$STAMP"
fi
# The engine compiled by mypyc (docs/engine-speed.md "mypyc"): built into the venv where a C compiler and
# Python headers exist, again after any change of engine/ (about a minute of CPU; its own line says
# so), and run only while engine/ holds the sources it was built from. Where it was built (or its
# build failed) the compiled engine is expected: PBEM_ENGINE=compiled tells tests/test_compiled_engine.py
# to fail if the pure one runs. PBEM_ENGINE=pure: no build, the pure engine. A second argument
# `no-engine-build` (scripts/demo): no build either, and the compiled engine runs if an earlier build
# is still current (scripts/engine_select.py), else the pure one: a demo's bots need no speed, and on
# a first run the build took about half of the demo's wall time before its first move.
if [ "${PBEM_ENGINE:-}" != pure ] && [ "${2:-}" != no-engine-build ]; then
    engine_rc=0
    "$VENV/bin/python" "$ROOT/scripts/compiled_engine.py" || engine_rc=$?
    if [ "$engine_rc" != 3 ]; then
        export PBEM_ENGINE=compiled
    fi
fi
