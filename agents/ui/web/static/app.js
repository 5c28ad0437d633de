// The browser table: renders what the server's JSON API says, sends clicks back.
// No framework and no build step. The server checks every move (the env's mask);
// the page only offers the legal ones as enabled buttons.
"use strict";

const $ = (sel) => document.querySelector(sel);
const params = new URLSearchParams(window.location.search);

const ui = {
  config: null,
  game: null,        // the last game state from the server
  log: [],           // the game's move log so far (the server sends what is new)
  timer: null,       // pending bot move, or the next poll while a bot thinks
  busy: false,       // a request in flight
  replay: null,      // {summary, index, frame}
};

// ------------------------------------------------------------------ helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key === "style") Object.assign(node.style, value);  // CSSOM: allowed by the CSP
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The nodes of a list that are there: replaceChildren and append write a null or an
// undefined as the text "null" / "undefined", so optional parts are dropped first.
function present(...nodes) {
  return nodes.filter((node) => node !== null && node !== undefined);
}

// An entry of a move list with its number in a box of its own: a list's own markers sit
// in its left padding, which clips a number of three digits or more.
function logItem(number, attrs, ...children) {
  return el("li", attrs, el("span", {class: "num"}, `${number}.`),
            el("span", {class: "entry"}, ...children));
}

function showMessage(text) {
  const box = $("#message");
  box.textContent = text;
  box.hidden = false;
}

function clearMessage() {
  $("#message").hidden = true;
  $("#message").textContent = "";
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(method, path, body) {
  const options = {method, headers: {}};
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (e) {
    throw new ApiError(0, "the server does not answer (is pis-serve still running?)");
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!response.ok) {
    const why = data && data.error ? data.error : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, why);
  }
  return data === null ? text : data;
}

function delayMs() { return Number($("#delay").value); }
function policyOn() { return $("#policy-toggle").checked; }

// ------------------------------------------------------------------ cards and the table
function cardNode(card, {action = null, enabled = false, small = false} = {}) {
  const cls = `card ${card.color}${small ? " small" : ""}${enabled ? " legal" : ""}`;
  if (action === null) {
    return el("span", {class: cls, title: card.name, "data-card": card.id}, card.label);
  }
  return el("button", {class: cls, type: "button", title: card.name, "data-card": card.id,
                       "data-action": action, disabled: !enabled}, card.label);
}

function suitNode(suit) {
  return el("span", {class: `suit ${suit.color}`, title: suit.name}, `${suit.symbol} ${suit.name}`);
}

// The table as `pos` (a server position view) shows it. `handActions` maps card ids to
// whether they are clickable (play view); null renders the viewer's hand read-only.
function renderTable(container, pos, viewer, handActions, onPlay) {
  const n = pos.num_players;
  const seats = el("div", {class: "seats"});
  for (let i = 0; i < n; i++) {
    if (i === viewer) continue;
    const hand = pos.hands[i];
    const cards = hand
      ? el("div", {class: "mini-hand"}, hand.map((c) => cardNode(c, {small: true})))
      : el("div", {class: "backs"}, Array.from({length: Math.min(pos.hand_sizes[i], 20)},
                                                () => el("span", {class: "back"})));
    seats.append(el("div", {class: `seat${pos.turn === i ? " to-move" : ""}`, "data-seat": i},
      el("div", {class: "seat-name"}, pos.names[i],
         pos.dealer === i ? el("span", {class: "tag"}, "dealer") : null,
         pos.turn === i ? el("span", {class: "tag turn"}, "to move") : null),
      el("div", {class: "seat-count", "data-hand-size": pos.hand_sizes[i]},
         `${pos.hand_sizes[i]} card${pos.hand_sizes[i] === 1 ? "" : "s"}`),
      cards));
  }
  const top = pos.top ? cardNode(pos.top) : el("span", {class: "card empty"}, "none yet");
  const sevens = pos.pending_sevens
    ? el("div", {id: "sevens", class: "sevens"},
         `Pending sevens: ${pos.pending_sevens} (take ${pos.penalty_cards} cards or answer with a 7)`)
    : el("div", {id: "sevens", class: "sevens none"}, "No sevens pending");
  const turnText = pos.turn === null ? "The deal is over"
    : pos.turn === viewer ? (viewer === 0 && handActions ? "Your turn" : `${pos.names[pos.turn]} to move`)
      : `${pos.names[pos.turn]} to move`;
  const center = el("div", {class: "center"},
    el("div", {class: "pile"}, el("div", {class: "label"}, "Top card"), el("div", {id: "top"}, top)),
    el("div", {class: "facts"},
      el("div", {id: "active-suit"}, "Suit to follow: ", suitNode(pos.active_suit)),
      sevens,
      el("div", {id: "stock"}, `Stock: ${pos.stock_size} cards`),
      el("div", {id: "direction"}, `Direction: ${pos.direction === "clockwise" ? "\u21bb clockwise" : "\u21ba anticlockwise"}`),
      el("div", {id: "turn", class: "turn-text"}, turnText),
      pos.num_deals > 1
        ? el("div", {id: "deal"}, `Deal ${pos.deal + 1} of ${pos.num_deals}; totals: ` +
             pos.names.map((name, i) => `${name} ${pos.totals[i]}`).join(", "))
        : null));
  const parts = [seats, center];
  if (viewer !== null && pos.hands[viewer]) {
    const hand = pos.hands[viewer];
    parts.push(el("div", {class: "own"},
      el("div", {class: "seat-name"}, viewer === 0 && handActions ? "Your hand" : `${pos.names[viewer]}'s hand`,
         ` (${hand.length} cards)`),
      el("div", {id: handActions ? "hand" : null, class: "hand"},
         hand.map((c) => handActions
           ? cardNode(c, {action: c.id, enabled: handActions.has(c.id)})
           : cardNode(c)))));
  }
  if (pos.stock) {
    parts.push(el("div", {class: "stock-cards"}, el("span", {class: "label"}, "Stock, next card first: "),
      pos.stock.slice(0, 12).map((c) => cardNode(c, {small: true})),
      pos.stock.length > 12 ? ` … ${pos.stock.length - 12} more` : ""));
  }
  container.replaceChildren(...parts);
  if (onPlay) {
    for (const button of container.querySelectorAll("button[data-action]")) {
      button.addEventListener("click", () => onPlay(Number(button.dataset.action)));
    }
  }
}

function resultNode(result, names, withTotals) {
  const rows = names.map((name, i) => el("tr", {"data-seat": i},
    el("td", {}, name),
    el("td", {class: "charge"}, String(result.charges[i])),
    el("td", {}, String(result.points[i])),
    el("td", {}, result.winners[i] ? "winner" : ""),
    withTotals ? el("td", {class: "total"}, String(result.totals[i])) : null));
  return [
    el("p", {class: "result-text"}, result.text),
    el("div", {class: "scroll-x"}, el("table", {class: "charges"},
      el("thead", {}, el("tr", {}, el("th", {}, "Player"), el("th", {}, "Charged"),
        el("th", {}, "Points in hand"), el("th", {}, ""), withTotals ? el("th", {}, "Total") : null)),
      el("tbody", {}, rows))),
  ];
}

function policyNode(decision, title) {
  if (!decision) return null;
  if (decision.note) return el("div", {}, el("h2", {}, title), el("p", {class: "note"}, decision.note));
  const rows = decision.moves.map((m) => el("tr",
    {"data-action": m.action, "data-p": m.p, class: m.action === decision.chosen ? "chosen" : null},
    el("td", {}, m.label), el("td", {class: "p"}, (100 * m.p).toFixed(2) + "%"),
    el("td", {}, el("span", {class: "bar-fill", style: {width: `${Math.round(100 * m.p)}px`}}))));
  const value = decision.value === null
    ? el("p", {class: "note"}, decision.value_note || "")
    : el("p", {class: "value", "data-value": decision.value},
         `Value (${decision.value_kind} critic): ${decision.value.toFixed(3)}`);
  return el("div", {},
    el("h2", {}, title),
    el("p", {class: "note"}, `${decision.policy} at seat ${decision.seat}`),
    el("table", {class: "probs"}, el("tbody", {}, rows)),
    value);
}

// ------------------------------------------------------------------ play
// The server sends the move log from a version on (`log_from`): append what is new.
// Returns false when the page lacks entries before it (it then asks for the whole log).
function mergeLog(state) {
  const same = ui.game && ui.game.id === state.id;
  if (state.log_from === 0) {
    ui.log = state.log.slice();
  } else if (same && state.log_from <= ui.log.length) {
    ui.log = ui.log.slice(0, state.log_from).concat(state.log);
  } else {
    return false;
  }
  return true;
}

// The running score of a match: each finished deal's charges, then the totals.
function scoresNode(state) {
  const pos = state.position;
  if (pos.num_deals <= 1) return null;
  const head = el("tr", {}, el("th", {}, "Deal"), pos.names.map((name) => el("th", {}, name)));
  const rows = [];
  for (let d = 0; d < pos.num_deals; d++) {
    const done = state.deals.find((x) => x.deal === d);
    const live = !done && d === pos.deal && !pos.deal_over;
    rows.push(el("tr", {"data-deal": d, class: live ? "current" : null},
      el("td", {}, `${d + 1}`),
      pos.names.map((_, i) => el("td", {class: "charge"},
        done ? String(done.charges[i]) : live ? "…" : ""))));
  }
  rows.push(el("tr", {class: "totals"}, el("td", {}, "Total"),
    pos.totals.map((t) => el("td", {class: "total"}, String(t)))));
  return el("div", {},
    el("h2", {}, `Match: ${pos.num_deals} deals, lowest total wins`),
    el("div", {class: "scroll-x"},
      el("table", {class: "charges", id: "score-table"}, el("thead", {}, head),
         el("tbody", {}, rows))));
}

function matchVerdict(pos) {
  if (pos.num_deals <= 1 || !pos.result || !pos.result.match_over) return null;
  const low = Math.min(...pos.totals);
  const best = pos.totals.map((t, i) => t === low ? i : -1).filter((i) => i >= 0);
  const text = best.includes(0)
    ? (best.length > 1 ? "You share the lowest total: the match is tied." : "You win the match!")
    : `${best.map((i) => pos.names[i]).join(" and ")} win${best.length > 1 ? "" : "s"} the match.`;
  return el("p", {id: "match-verdict"}, text);
}

async function renderGame(state) {
  if (!mergeLog(state)) {
    state = await api("GET", `/api/games/${state.id}?since=0`);
    mergeLog(state);
  }
  ui.game = state;
  const pos = state.position;
  const legal = new Set(state.legal.map((m) => m.action));
  const cards = new Set(state.legal.filter((m) => m.action < 52).map((m) => m.action));
  renderTable($("#table"), pos, 0, cards, playMove);

  const controls = [];
  if (pos.phase === "nominate" && state.status === "your_turn") {
    controls.push(el("span", {class: "label"}, "Name the suit to follow: "));
    for (const m of state.legal.filter((m) => m.action >= 52 && m.action < 56)) {
      controls.push(el("button", {type: "button", class: "nominate legal", "data-action": m.action,
                                  onclick: () => playMove(m.action)}, m.label));
    }
  } else {
    const draw = state.legal.find((m) => m.action === 56);
    controls.push(el("button", {type: "button", id: "draw", "data-action": 56, disabled: !draw,
                                class: draw ? "legal" : null, onclick: () => playMove(56)},
                     draw ? draw.label : "draw"));
    controls.push(el("button", {type: "button", id: "pass", "data-action": 57,
                                disabled: !legal.has(57), class: legal.has(57) ? "legal" : null,
                                onclick: () => playMove(57)}, "pass"));
  }
  $("#controls").replaceChildren(...controls);

  const result = $("#result");
  if (pos.result) {
    const buttons = state.status === "deal_over"
      ? el("button", {type: "button", id: "next-deal", onclick: nextDeal}, "Next deal")
      : el("button", {type: "button", id: "play-again", onclick: () => newGame()}, "New game");
    const winner = pos.result.winners[0] ? "You win the deal!" : "The deal is lost.";
    result.replaceChildren(...present(
      el("h2", {}, state.status === "match_over" ? "Game over" : "Deal over"),
      el("p", {id: "verdict"}, winner), matchVerdict(pos),
      ...resultNode(pos.result, pos.names, pos.num_deals > 1), buttons));
    result.hidden = false;
  } else {
    result.hidden = true;
    result.replaceChildren();
  }

  $("#scores").replaceChildren(...present(scoresNode(state)));
  $("#scores").hidden = pos.num_deals <= 1;
  $("#arranged").hidden = !state.arranged;

  const log = $("#log");
  log.replaceChildren(...ui.log.map((entry, i) => logItem(i + 1, {"data-seat": entry.seat}, entry.text,
    policyOn() && entry.policy
      ? el("span", {class: "p-inline"}, ` (p=${(100 * (entry.policy.moves.find(
          (m) => m.action === entry.action) || {p: 0}).p).toFixed(1)}%)`)
      : null)));
  log.scrollTop = log.scrollHeight;

  const last = [...ui.log].reverse().find((entry) => entry.policy);
  const panel = $("#policy");
  panel.hidden = !policyOn();
  const shown = ui.config.show_bot_policy;
  const label = el("p", {class: "note", id: "policy-label"}, shown
    ? "Shown because this server's operator chose to (--show-bot-policy): a bot's move " +
      "probabilities name cards in its hand."
    : "This server does not show its bots' policies during play (they name cards in " +
      "the bot's hand; its operator can turn them on with --show-bot-policy). Replays " +
      "of finished games show them.");
  panel.replaceChildren(...present(...(last ? [policyNode(last.policy, "Policy at its last decision"), label]
    : [el("h2", {}, "Policy"), el("p", {class: "note"},
        !ui.config.policies.length ? "No ppo bot at this table."
          : shown ? "No ppo bot has moved yet." : ""), label])));

  // The history holds every deck: the server hands it out once the game is over.
  const over = state.status === "match_over";
  $("#download").hidden = !over;
  $("#to-replay").hidden = !over;
  $("#download").href = over ? `/api/games/${state.id}/history` : "#";
  if (state.status === "broken") showMessage(state.error);
  sessionStorage.setItem("pis-game", state.id);
  // What the page shows, for people reading the DOM (and the browser tests).
  Object.assign(document.body.dataset, {game: state.id, status: state.status,
                                        version: String(state.version)});
  scheduleBot();
}

// A bot's move is started with `advance` after the delay, and made by the server off
// the request path: until it is in (status "bot_thinking") the page polls the game. The
// server shows a bot's move no sooner than `bot_min_ms` after it was asked for, so the
// page waits only the rest of its delay.
const POLL_MS = 100;

function scheduleBot() {
  clearTimeout(ui.timer);
  ui.timer = null;
  if (ui.game && ui.game.status === "bot_turn") {
    ui.timer = setTimeout(advance, Math.max(0, delayMs() - ui.config.bot_min_ms));
  } else if (ui.game && ui.game.status === "bot_thinking") {
    ui.timer = setTimeout(poll, POLL_MS);
  }
}

async function poll() {
  if (!ui.game || ui.busy) { scheduleBot(); return; }
  try {
    const state = await api("GET", `/api/games/${ui.game.id}?since=${ui.game.version}`);
    await renderGame(state);
  } catch (e) {
    showMessage(e.message);
  }
}

async function request(method, path, body) {
  ui.busy = true;
  document.body.dataset.busy = "1";
  try {
    const state = await api(method, path, body);
    clearMessage();
    await renderGame(state);
  } catch (e) {
    showMessage(e.message);
    if (e.status === 503 && ui.game) {  // the bots are busy: ask again in a second
      clearTimeout(ui.timer);
      ui.timer = setTimeout(scheduleBot, 1000);
    } else if (e.status === 409 && ui.game) {  // stale view: show the game as it is now
      try { await renderGame(await api("GET", `/api/games/${ui.game.id}?since=0`)); } catch (e2) { /* shown */ }
    }
  } finally {
    ui.busy = false;
    delete document.body.dataset.busy;
  }
}

function playMove(action) {
  if (!ui.game) return;
  return request("POST", `/api/games/${ui.game.id}/move`, {action, version: ui.game.version});
}

function advance() {
  if (!ui.game || ui.busy) { scheduleBot(); return; }
  return request("POST", `/api/games/${ui.game.id}/advance`, {version: ui.game.version});
}

function nextDeal() {
  return request("POST", `/api/games/${ui.game.id}/next-deal`, {version: ui.game.version});
}

async function newGame(extra = {}) {
  const bots = [...document.querySelectorAll("#bot-choice select")].map((s) => s.value);
  return request("POST", "/api/games", {bots: bots.length ? bots : null, ...extra});
}

function buildBotChoice() {
  const cfg = ui.config;
  const box = $("#bot-choice");
  const selects = cfg.bots.map((bot, i) => el("select", {"data-seat": i + 1, title: `seat ${i + 1}`},
    cfg.offered.map((spec) => el("option", {value: spec, selected: spec === bot}, spec))));
  box.replaceChildren(el("span", {class: "label"}, "Opponents: "), ...selects);
}

// ------------------------------------------------------------------ replay
async function loadReplay(text) {
  try {
    const summary = await api("POST", "/api/replays", {history: text});
    clearMessage();
    ui.replay = {summary, index: 0, frame: null, page: -1};
    const seat = $("#replay-seat");
    seat.replaceChildren(el("option", {value: "table"}, "Full table"),
      ...summary.names.map((name, i) => el("option", {value: String(i)}, `${name}'s view`)));
    $("#rp-slider").max = String(summary.frames - 1);
    $("#rp-jump").max = String(summary.frames - 1);
    $("#replay-moves").replaceChildren();
    showTab("replay");
    await showFrame(0);
  } catch (e) {
    showMessage(e.message);
  }
}

// The move list comes in pages (`moves_page` entries): the page holding frame k is shown.
async function showMovesAround(k) {
  const rp = ui.replay;
  const size = rp.summary.moves_page;
  const page = Math.floor(k / size);
  if (page === rp.page) return;
  const data = await api("GET", `/api/replays/${rp.summary.id}/moves?start=${page * size}&count=${size}`);
  rp.page = page;
  const list = $("#replay-moves");
  list.replaceChildren(...data.moves.map((m) =>
    logItem(m.frame, {"data-frame": m.frame, onclick: () => showFrame(m.frame)}, m.text)));
}

async function showFrame(k) {
  const rp = ui.replay;
  if (!rp) { showMessage("load a history file first"); return; }
  try { await showMovesAround(k); } catch (e) { showMessage(e.message); }
  const view = $("#replay-seat").value || "table";
  try {
    const frame = await api("GET",
      `/api/replays/${rp.summary.id}/frames/${k}?view=${view}&policy=${policyOn() ? 1 : 0}`);
    clearMessage();
    rp.index = k;
    rp.frame = frame;
    renderFrame(frame);
  } catch (e) {
    showMessage(e.message);
  }
}

function renderFrame(frame) {
  const pos = frame.position;
  const viewer = frame.view === "table" ? null : Number(frame.view);
  renderTable($("#replay-table"), pos, viewer, null, null);
  $("#rp-pos").textContent = `position ${frame.index} of ${frame.count - 1}`;
  $("#rp-text").textContent = frame.text;
  document.body.dataset.frame = `${frame.index}:${frame.view}:${frame.policy ? 1 : 0}`;
  $("#rp-slider").value = String(frame.index);
  $("#rp-jump").value = String(frame.index);
  for (const li of document.querySelectorAll("#replay-moves li")) {
    li.classList.toggle("current", Number(li.dataset.frame) === frame.index);
  }
  const current = document.querySelector("#replay-moves li.current");
  if (current) current.scrollIntoView({block: "nearest"});
  const result = $("#replay-result");
  if (pos.result) {
    result.replaceChildren(el("h2", {}, "Deal over"), ...resultNode(pos.result, pos.names, pos.num_deals > 1));
    result.hidden = false;
  } else {
    result.hidden = true;
  }
  const panel = $("#replay-policy");
  panel.hidden = !policyOn();
  if (frame.policy && !frame.policy.note) frame.policy.chosen = frame.next;
  panel.replaceChildren(...present(frame.policy ? policyNode(frame.policy, "Policy at this decision") : null));
}

function step(delta) {
  const rp = ui.replay;
  if (!rp) return;
  const k = Math.max(0, Math.min(rp.summary.frames - 1, rp.index + delta));
  if (k !== rp.index) showFrame(k);
}

// ------------------------------------------------------------------ wiring
function showTab(name) {
  $("#play-view").hidden = name !== "play";
  $("#replay-view").hidden = name !== "replay";
  $("#tab-play").classList.toggle("active", name === "play");
  $("#tab-replay").classList.toggle("active", name === "replay");
}

async function start() {
  try {
    ui.config = await api("GET", "/api/config");
  } catch (e) {
    showMessage(e.message);
    return;
  }
  const delay = params.get("delay") ?? localStorage.getItem("pis-delay") ?? ui.config.delay_ms;
  $("#delay").value = String(delay);
  $("#delay-value").textContent = `${$("#delay").value} ms`;
  $("#policy-setting").hidden = ui.config.policies.length === 0;
  $("#policy-toggle").checked = params.get("policy") === "1";
  buildBotChoice();

  $("#delay").addEventListener("input", () => {
    $("#delay-value").textContent = `${$("#delay").value} ms`;
    localStorage.setItem("pis-delay", $("#delay").value);
  });
  $("#policy-toggle").addEventListener("change", () => {
    if (ui.game) renderGame(Object.assign({}, ui.game, {log_from: 0, log: ui.log}));
    if (ui.replay) showFrame(ui.replay.index);
  });
  $("#tab-play").addEventListener("click", () => showTab("play"));
  $("#tab-replay").addEventListener("click", () => showTab("replay"));
  $("#new-game").addEventListener("click", () => newGame());
  $("#to-replay").addEventListener("click", async () => {
    try {
      const text = await api("GET", `/api/games/${ui.game.id}/history`);
      await loadReplay(typeof text === "string" ? text : JSON.stringify(text));
    } catch (e) { showMessage(e.message); }
  });
  $("#replay-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) await loadReplay(await file.text());
  });
  $("#replay-seat").addEventListener("change", () => ui.replay && showFrame(ui.replay.index));
  $("#rp-first").addEventListener("click", () => ui.replay && showFrame(0));
  $("#rp-last").addEventListener("click", () => ui.replay && showFrame(ui.replay.summary.frames - 1));
  $("#rp-back").addEventListener("click", () => step(-1));
  $("#rp-forward").addEventListener("click", () => step(1));
  $("#rp-slider").addEventListener("change", () => ui.replay && showFrame(Number($("#rp-slider").value)));
  $("#rp-go").addEventListener("click", () => {
    if (!ui.replay) { showMessage("load a history file first"); return; }
    const k = Number($("#rp-jump").value);
    if (!Number.isInteger(k) || k < 0 || k >= ui.replay.summary.frames) {
      showMessage(`no position ${$("#rp-jump").value}: this replay has positions 0..${ui.replay.summary.frames - 1}`);
      return;
    }
    showFrame(k);
  });
  document.addEventListener("keydown", (event) => {
    if ($("#replay-view").hidden || event.target.tagName === "INPUT") return;
    if (event.key === "ArrowLeft") step(-1);
    if (event.key === "ArrowRight") step(1);
  });

  // A stacked deck or seed in the address starts that game; otherwise this tab's game
  // (sessionStorage is per tab, so tabs play separate games) or a new one.
  // Only a server started with --allow-arranged takes them (the game is then marked).
  const extra = {};
  if (params.get("deck")) extra.deck = params.get("deck").split(",");
  if (params.get("dealer")) extra.dealer = Number(params.get("dealer"));
  if (params.get("seed")) extra.seed = Number(params.get("seed"));
  if (Object.keys(extra).length && !ui.config.allow_arranged) {
    await newGame();
    showMessage("this server deals every game itself: the seed, deck or dealer in the " +
                "address was ignored (its operator can allow them with --allow-arranged)");
    return;
  }
  const saved = sessionStorage.getItem("pis-game");
  if (saved && Object.keys(extra).length === 0) {
    try {
      await renderGame(await api("GET", `/api/games/${saved}?since=0`));
      return;
    } catch (e) {
      await newGame();
      showMessage(`${e.message} (a new game was started)`);
      return;
    }
  }
  await newGame(extra);
}

start();
