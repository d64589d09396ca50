# Sourced by scripts/*: create or refresh .venv and install the project into it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setting up $VENV (the first time takes a minute)..." >&2
    "$PY" -m venv "$VENV"
fi
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
