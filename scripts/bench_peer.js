// Random playouts on saboteur-game/engine (TypeScript, compiled to JavaScript; docs/bots.md says how),
// for scripts/bench-engine --peer: every legal move of the player to move is listed each turn and
// one is picked uniformly, the policy of pbem's RandomBot. Legality is asked of the peer's own
// code (its open cells, canCardsConnect, tools); a card that turning does not change is tried once.
// usage: node --single-threaded scripts/bench_peer.js BUILD_DIR SECONDS [nouuid]
//   -> classic 5p rounds per CPU-second, turns per round. "nouuid": the peer's ids from a counter.
// --single-threaded: V8 compiles and collects on this thread, so the CPU time is the work itself
// (with helper threads, their CPU time on a busy machine made the peer look up to 2x slower).
const B = require("path").resolve(process.argv[2]) + "/src/";
const utils = require(B + "utils");
if (process.argv[4] === "nouuid") { let n = 0; utils.generateId = () => String(++n); }
const Game = require(B + "models/game").default;
const Player = require(B + "models/player").default;
const Position = require(B + "models/position").default;
const { PassageCard, DeadendCard, FinishPathCard } = require(B + "models/cards/path-cards");
const { BreakActionCard, RepairActionCard, RockfallActionCard, MapActionCard } = require(B + "models/cards/action-cards");
const canCardsConnect = require(B + "utils/can-cards-connect").default;
const { topFinishPosition, middleFinishPosition, bottomFinishPosition } = require(B + "models/board");
const FINISHES = [topFinishPosition, middleFinishPosition, bottomFinishPosition];

// Whether turning the card changes nothing (then it is tried unturned only, as pbem lists it).
function symmetric(card) {
  if (card._symmetric === undefined) {
    const turned = card.connectors.map((c) => ((c + 1) % 4) + 1).sort().join();
    card._symmetric = turned === [...card.connectors].sort().join();
  }
  return card._symmetric;
}

function legalMoves(game, player) {
  const board = game.board, hand = player.getHand(), moves = [];
  const players = game.getPlayers();
  const tools = player.getTools();
  let everyTools = null;  // each player's tools, once per turn
  const blocked = !tools.pick || !tools.lamp || !tools.wagon;
  let open = null;
  for (const card of hand) {
    if (card instanceof PassageCard || card instanceof DeadendCard) {
      if (!blocked && open === null) open = board.getAvailablePositions().map((pos) => [pos, board.getAdjacentCards(pos)]);
      if (!blocked) for (const [pos, adj] of open) {
        for (const flip of symmetric(card) ? [false] : [false, true]) {
          if (flip) card.rotate();
          if (adj.every((a, i) => canCardsConnect(i + 1, a, card))) moves.push({ card, pos, flip });
          if (flip) card.rotate();
        }
      }
    } else if (card instanceof BreakActionCard || card instanceof RepairActionCard) {
      const wantBroken = card instanceof RepairActionCard;
      if (everyTools === null) everyTools = players.map((p) => [p, p.getTools()]);
      for (const [p, t] of everyTools) {
        for (const tool of card.appliesTo) if (t[tool] === !wantBroken) moves.push({ card, params: { player: p, appliedTo: tool } });
      }
    } else if (card instanceof RockfallActionCard) {
      for (const key of Object.keys(board.grid)) {
        const c = board.grid[key];
        if (c instanceof PassageCard || c instanceof DeadendCard) {
          const [x, y] = key.split(",").map(Number);
          moves.push({ card, params: { position: new Position(x, y) } });
        }
      }
    } else if (card instanceof MapActionCard) {
      for (const position of FINISHES) moves.push({ card, params: { position } });
    }
    moves.push({ card, discard: true });
  }
  return moves;
}

function playRound(players) {
  const game = new Game();
  for (let i = 0; i < players; i++) game.addPlayer(new Player("p" + i, 10 + i));
  game.start();
  let turns = 0;
  while (game.roundResults.length === 0) {
    const me = game.getActivePlayer();
    if (me.getHandCardCount() === 0) { game.discardCard(me); turns++; continue; }
    const moves = legalMoves(game, me);
    const m = moves[Math.floor(Math.random() * moves.length)];
    if (m.discard) game.discardCard(me, m.card.id);
    else if (m.pos) { if (m.flip) m.card.rotate(); game.playCard(me, m.card.id, { position: m.pos }); }
    else game.playCard(me, m.card.id, m.params);
    turns++;
  }
  return turns;
}

const seconds = Number(process.argv[3] || 3);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
for (let i = 0; i < 30; i++) playRound(5); // warm the JIT
const t0 = cpu(); let rounds = 0, turns = 0;
while (rounds % 10 !== 0 || cpu() - t0 < seconds) { turns += playRound(5); rounds++; }
console.log((rounds / (cpu() - t0)).toFixed(1), (turns / rounds).toFixed(1));
