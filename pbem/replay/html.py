"""A finished round as one self-contained HTML page (`pbem replay SOURCE --html OUT.html`).

No network resource at all: the CSS, the script and the card drawings are inline. Each card
face the round shows is drawn once (pbem.ui.cards_svg) as an SVG <symbol>; the page places them
with <use>.
The frames are precomputed in Python for every perspective (all cards open, then each seat
as it saw the round then, through engine.views.view) and embedded as JSON in a
<script type="application/json"> tag. A perspective has len(moves) + 1 frames: frame 0 is
the deal, frame n the table right after move n.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from engine.catalog import KINDS, card_kind, is_card_id
from engine.state import PLAYING, THEFT, RoundState
from pbem.replay.rounds import Replay
from pbem.replay.sources import ALL
from pbem.ui import move_words, words
from pbem.ui.cards_svg import CH, CW, board_cells, symbol_id, symbols


def _kind(card: str) -> str:
    return card_kind(card).kind if is_card_id(card) else card


class _Builder:
    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.boards: list[list[list[Any]]] = []
        self._board_index: dict[str, int] = {}
        self.symbols: set[str] = set()
        self.names: dict[str, str] = {}

    def board(self, cells: list[list[Any]]) -> int:
        key = json.dumps(cells)
        if key not in self._board_index:
            self._board_index[key] = len(self.boards)
            self.boards.append(cells)
            self.symbols.update(c[2] for c in cells)
        return self._board_index[key]

    def card(self, card: str) -> str:
        """A card id as the page shows it: its kind (copies look alike), or '?'."""
        if card == "?":
            return card
        kind = _kind(card)
        self.names.setdefault(kind, words.card_name(kind))
        if KINDS[kind].category == "path":
            self.symbols.add(symbol_id(kind, False))
        return kind

    def frame(self, i: int, who: str) -> dict[str, Any]:
        r = self.replay
        v = r.view(i, who)
        players = []
        for p in v.players:
            role = v.role(p)
            players.append([words.role_name(role) if role else None, [self.card(c) for c in v.hands.get(p, [])],
                            [words.card_name(c) for c in v.in_front.get(p, [])], v.gold.get(p, 0)])
        turn = v.player if v.phase in (PLAYING, THEFT) else None
        frame: dict[str, Any] = {"b": self.board(board_cells(v, who)), "p": players, "s": _status(v), "t": turn,
                                 "c": f"{words.t('deck', n=len(v.deck))} · {words.t('discard pile', n=len(v.discard))}"}
        if i > 0:
            step = r.steps[i - 1]
            frame["m"] = [i, step.seat, r.notation(i, who), r.sentences(i, who)]
        said = r.said(i, who)
        if said:
            frame["w"] = said  # table talk after this frame (each line's text escaped: talk_words)
        if who != ALL and v.phase == PLAYING:
            frame["k"] = [line for fact in v.knowledge.get(who, []) if (line := move_words.describe_fact(fact))]
        return frame


def _status(v: RoundState) -> str:
    if v.phase == PLAYING:
        return words.t("to move", player=v.player)
    if v.phase == THEFT:
        return words.t("thief to move", player=v.player)
    line = words.t("round over")
    if v.finder:
        line += " · " + words.t("finder", player=v.finder)
    line += " · " + words.t("winners", players=words.join(list(v.winners)) if v.winners else words.t("nobody"))
    paid = [f"{p} +{g}" for p, g in v.payout.items() if g]
    return line + (" · " + ", ".join(paid) if paid else "")


def _page_words() -> dict[str, str]:
    """Every word the page's script writes, in the current language."""
    return {"deal": words.t("the deal"), "move": words.t("move {n} / {total}"), "deal_n": words.t("deal · 0 / {total}"),
            "player": words.t("player"), "role": words.t("role"), "hand": words.t("hand"),
            "front": words.t("cards in front"), "gold": words.t("gold")}


def page_data(replay: Replay, only: str | None = None) -> tuple[dict[str, Any], set[str]]:
    """The page's data: every perspective, or with `only` a seat's view alone (no other
    perspective's frames are in the page at all)."""
    b = _Builder(replay)
    shown = [only] if only is not None else list(replay.perspectives)
    frames = {who: [b.frame(i, who) for i in range(len(replay) + 1)] for who in shown}
    labels = {ALL: words.t("all cards open"), **{p: words.t("as {seat} saw it then", seat=p) for p in replay.players}}
    views = [[who, labels.get(who, who)] for who in shown]
    data = {"game": replay.game, "round": replay.round, "moves": len(replay), "players": list(replay.players),
            "perspectives": views, "boards": b.boards, "names": b.names, "frames": frames,
            "card": [CW, CH], "words": _page_words()}
    return data, b.symbols


def script_json(data: Any) -> str:
    """JSON safe inside <script>: no '<', '>' or '&' can end the tag or open a comment."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(replay: Replay, only: str | None = None) -> str:
    data, ids = page_data(replay, only)
    title = html.escape(f"{words.t('title')} · {replay.game} · {words.t('round', n=replay.round)}")
    page = TEMPLATE
    for key, text in _template_words().items():
        page = page.replace(f"%{key}%", html.escape(text))
    return (page.replace("%LANG%", words.language())
            .replace("%TITLE%", title)
            .replace("%SYMBOLS%", symbols(ids))
            .replace("%DATA%", script_json(data)))


def _template_words() -> dict[str, str]:
    """The page's fixed words, by their place in TEMPLATE."""
    return {"FIRST": words.t("first (Home)"), "BACK": words.t("back (Left)"), "FORWARD": words.t("forward (Right)"),
            "LAST": words.t("last (End)"), "PERSPECTIVE": words.t("perspective"),
            "KEYS": words.t("Keys: Left/Right step, Home/End first/last, V changes the perspective.")}


def write_html(replay: Replay, path: Path, only: str | None = None) -> int:
    from pbem.atomic import write_atomic

    text = render_html(replay, only).encode("utf-8")
    write_atomic(path, text)
    return len(text)


TEMPLATE = """<!doctype html>
<html lang="%LANG%">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>
body { font: 15px/1.4 system-ui, sans-serif; background: #161b22; color: #e6edf3; margin: 0; padding: 16px; }
h1 { font-size: 20px; margin: 0 0 8px; }
.bar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0; }
button, select { font: inherit; background: #21262d; color: #e6edf3; border: 1px solid #30363d; border-radius: 6px; padding: 4px 10px; }
button:hover { background: #30363d; }
input[type=range] { flex: 1; min-width: 160px; }
#maze, .wide { overflow-x: auto; max-width: 100%; }
#maze { background: #0d1117; border-radius: 8px; padding: 8px; box-sizing: border-box; }
#maze svg { display: block; width: 100%; height: auto; }
#move { font-size: 17px; margin: 8px 0; min-height: 2.8em; }
#move .n { color: #8b949e; }
#move .talk { color: #d2a8ff; }
#move code { background: #21262d; padding: 1px 6px; border-radius: 4px; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { padding: 3px 10px 3px 0; text-align: left; vertical-align: middle; }
th { color: #8b949e; font-weight: normal; }
tr.turn td { font-weight: bold; }
.hand { display: flex; flex-wrap: wrap; gap: 3px; }
.chip { border: 1px solid #30363d; border-radius: 4px; padding: 0 5px; font-size: 12px; background: #21262d; }
.chip.back { background: #26324a; color: #8b949e; }
.mini { width: 25px; height: 36px; }
#status, #counts, #know { color: #c9d1d9; }
#log { color: #8b949e; font-size: 13px; max-height: 14em; overflow-y: auto; position: relative; }
#log a { color: inherit; text-decoration: none; display: block; }
#log a:hover { text-decoration: underline; }
#log .now { color: #e6edf3; }
.keys { color: #8b949e; font-size: 12px; }
</style>
</head>
<body>
<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>%SYMBOLS%</defs></svg>
<h1 id="title">%TITLE%</h1>
<div class="bar">
  <button id="first" title="%FIRST%">&laquo;</button>
  <button id="prev" title="%BACK%">&#x25C0;</button>
  <button id="next" title="%FORWARD%">&#x25B6;</button>
  <button id="last" title="%LAST%">&raquo;</button>
  <input id="slider" type="range" min="0" value="0">
  <span id="counter"></span>
  <select id="who" title="%PERSPECTIVE%"></select>
</div>
<div id="move"></div>
<div id="maze"></div>
<div id="status"></div>
<div id="counts"></div>
<div id="know"></div>
<div class="wide"><table id="players"></table></div>
<div id="log"></div>
<p class="keys">%KEYS%</p>
<script type="application/json" id="data">%DATA%</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const [CW, CH] = D.card;
const $ = (id) => document.getElementById(id);
const W = D.words;
const fill = (text, values) => text.replace(/\\{(\\w+)\\}/g, (_, k) => values[k]);
let who = D.perspectives[0][0], step = 0;

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function maze(cells) {
  let x0 = 0, x1 = 8, y0 = -2, y1 = 2;
  for (const [x, y] of cells) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
  const pad = 18, w = (x1 - x0 + 1) * CW + pad, h = (y1 - y0 + 1) * CH + pad;
  // Scaled down to the page's width (a phone's 390 px shows all 9 columns), never below 30 px a
  // card: a wider maze scrolls sideways in its box instead.
  const least = Math.min(w, (x1 - x0 + 1) * 30 + pad);
  let s = `<svg viewBox="${-pad} ${-pad} ${w} ${h}" width="${w}" height="${h}" role="img" ` +
    `style="max-width:${w}px;min-width:${least}px">`;
  for (let x = x0; x <= x1; x++) {
    s += `<text x="${(x - x0) * CW + CW / 2}" y="-5" font-size="11" fill="#8b949e" text-anchor="middle">${x}</text>`;
    for (let y = y0; y <= y1; y++)
      s += `<rect x="${(x - x0) * CW + 2}" y="${(y - y0) * CH + 2}" width="${CW - 4}" height="${CH - 4}" rx="4" fill="none" stroke="#21262d"/>`;
  }
  for (let y = y0; y <= y1; y++)
    s += `<text x="-6" y="${(y - y0) * CH + CH / 2 + 4}" font-size="11" fill="#8b949e" text-anchor="end">${y}</text>`;
  for (const [x, y, sym] of cells)
    s += `<use href="#${sym}" x="${(x - x0) * CW}" y="${(y - y0) * CH}" width="${CW}" height="${CH}"/>`;
  return s + "</svg>";
}

function hand(cards) {
  const box = el("div", undefined, "hand");
  for (const c of cards) {
    if (c === "?") { box.appendChild(el("span", "?", "chip back")); continue; }
    const chip = el("span", D.names[c] || c, "chip");
    chip.title = c;
    if (document.getElementById("c-" + c)) {
      chip.textContent = "";
      chip.innerHTML = `<svg class="mini" viewBox="0 0 ${CW} ${CH}"><use href="#c-${c}"/></svg>`;
      chip.title = D.names[c] || c;
    }
    box.appendChild(chip);
  }
  return box;
}

function show() {
  const frames = D.frames[who], f = frames[step];
  $("slider").value = step;
  $("counter").textContent = step === 0 ? fill(W.deal_n, {total: D.moves}) : fill(W.move, {n: step, total: D.moves});
  const mv = $("move");
  mv.textContent = "";
  if (f.m) {
    const [n, seat, text, sentences] = f.m;
    mv.appendChild(el("span", `${n}. ${seat}: `, "n"));
    mv.appendChild(el("code", text));
    mv.appendChild(el("div", sentences.join(" · ")));
  } else {
    mv.appendChild(el("span", W.deal, "n"));
  }
  for (const line of f.w || []) mv.appendChild(el("div", line, "talk"));
  $("maze").innerHTML = maze(D.boards[f.b]);
  $("status").textContent = f.s;
  $("counts").textContent = f.c;
  $("know").textContent = (f.k || []).join(" · ");
  const t = $("players");
  t.textContent = "";
  const head = el("tr");
  for (const h of [W.player, W.role, W.hand, W.front, W.gold]) head.appendChild(el("th", h));
  t.appendChild(head);
  D.players.forEach((p, i) => {
    const [role, cards, front, gold] = f.p[i];
    const tr = el("tr");
    if (f.t === p) tr.className = "turn";
    tr.appendChild(el("td", p + (p === who ? " *" : "")));
    tr.appendChild(el("td", role === null ? "?" : role));
    const td = el("td");
    td.appendChild(hand(cards));
    tr.appendChild(td);
    tr.appendChild(el("td", front.join(", ") || "-"));
    tr.appendChild(el("td", String(gold)));
    t.appendChild(tr);
  });
  const log = $("log");
  log.textContent = "";
  let now = null;
  for (let i = 1; i <= step; i++) {
    const [n, seat, text] = frames[i].m;
    const line = el("a", `${n}. ${seat}: ${text}`, i === step ? "now" : undefined);
    line.href = "#" + anchor(n);  // each move's own link: the page opens at it
    if (i === step) now = line;
    log.appendChild(line);
  }
  if (location.hash !== "#" + anchor(step)) {
    try { history.replaceState(null, "", "#" + anchor(step)); } catch (e) { /* a page with no history (about:blank) */ }
  }
  // The move list follows the current move: keep it in the middle of the box.
  if (now) log.scrollTop = Math.max(0, now.offsetTop - log.clientHeight / 2);
}

function go(n) { step = Math.max(0, Math.min(D.moves, n)); show(); }
// A move's fragment: #r1-m12 is move 12 of round 1 (#r1-m0 the deal).
function anchor(n) { return `r${D.round}-m${n}`; }
function linked() {
  const m = /^#r(\\d+)-m(\\d+)$/.exec(location.hash);
  return m && Number(m[1]) === D.round ? Math.min(Number(m[2]), D.moves) : null;
}
window.addEventListener("hashchange", () => { const n = linked(); if (n !== null && n !== step) go(n); });
function cycle() {
  const ids = D.perspectives.map((p) => p[0]);
  who = ids[(ids.indexOf(who) + 1) % ids.length];
  $("who").value = who;
  show();
}

for (const [id, label] of D.perspectives) {
  const o = el("option", label);
  o.value = id;
  $("who").appendChild(o);
}
$("who").addEventListener("change", (e) => { who = e.target.value; show(); });
$("slider").max = D.moves;
$("slider").addEventListener("input", (e) => go(Number(e.target.value)));
$("first").onclick = () => go(0);
$("prev").onclick = () => go(step - 1);
$("next").onclick = () => go(step + 1);
$("last").onclick = () => go(D.moves);
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT" || e.altKey || e.ctrlKey || e.metaKey) return;
  const k = e.key;
  if (k === "ArrowRight" || k === "n") go(step + 1);
  else if (k === "ArrowLeft" || k === "p") go(step - 1);
  else if (k === "Home") go(0);
  else if (k === "End") go(D.moves);
  else if (k === "v") cycle();
  else return;
  e.preventDefault();
});
step = linked() ?? 0;
show();
</script>
</body>
</html>
"""
