// lsm Desktop page: pick a machine and a window, watch it by polling frames, operate it.
// No framework, no build step. Every URL is relative so a reverse proxy's prefix works.
"use strict";

const $ = (id) => document.getElementById(id);
const FAST_MS = 180; // period while the window changes (~5 frames/s)
const IDLE_MS = [400, 700, 1000]; // back-off while it does not
const DRAG_PX = 5; // CSS px the pointer must travel for a drag
const DOUBLE_MS = 350; // second click within this: a double click

const st = {
  csrf: null,
  machine: null,
  windowId: null,
  frame: null, // {geometry:{x,y,width,height}, width, height, scale, etag}
  imgUrl: null,
  timer: null,
  gen: 0, // bumps when the window changes: late answers for the old one are dropped
  unchanged: 0,
  paused: false,
  frames: 0,
  refreshes: 0,
  queue: Promise.resolve(),
};

// ------------------------------------------------------------------ HTTP
async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  if (method !== "GET" && st.csrf) opts.headers["X-CSRF-Token"] = st.csrf;
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (_) { /* empty body */ }
  if (r.status === 401 && path !== "api/login") showLogin("Your session ended; log in again.");
  if (!r.ok) throw apiError(r, data);
  return data;
}

function apiError(r, data) {
  const err = (data && data.error) || {};
  const e = new Error(err.message || r.statusText || "request failed");
  e.code = err.code || "HTTP_" + r.status;
  e.status = r.status;
  return e;
}

// ------------------------------------------------------------------ status line
function status(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.className = "status " + (kind || "");
}

// ------------------------------------------------------------------ login
function showLogin(message) {
  stopPolling();
  if (typeof personStop === "function") personStop();
  $("desk").hidden = true;
  $("picker").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("secret").focus();
}

async function login(secret) {
  try {
    const out = await api("POST", "api/login", { secret });
    st.csrf = out.csrf_token;
    await start();
  } catch (e) {
    // LOGIN_REFUSED says where the secret is; RATE_LIMITED how long to wait.
    showLogin(e.message ? `Login refused: ${e.message}` : "Login refused.");
  }
}

async function start() {
  $("login").hidden = true;
  $("desk").hidden = false;
  $("picker").hidden = false;
  if (typeof personStart === "function") personStart(); // person.js: the feed, take-over, approvals
  await loadMachines();
}

// ------------------------------------------------------------------ machines and windows
let machineList = [];

async function loadMachines() {
  const out = await api("GET", "api/machines");
  machineList = out.machines || [];
  const sel = $("machine");
  const keep = st.machine;
  sel.textContent = "";
  for (const m of machineList) {
    const o = document.createElement("option");
    o.value = m.name;
    let note = "";
    if (!m.connected) note = " (offline)";
    else if (m.gui_error) note = " (no GUI)";
    o.textContent = m.name + note;
    sel.appendChild(o);
  }
  if (keep && machineList.some((m) => m.name === keep)) sel.value = keep;
  await pickMachine(sel.value);
}

function describeMachine(m) {
  if (!m) return "";
  if (!m.connected) return `${m.name} is offline${m.detail ? ": " + m.detail : ""}.`;
  if (m.gui_error) {
    const what = m.gui_error.code === "GUI_UNAVAILABLE" ? "has no graphical session" : "did not answer";
    return `${m.name} ${what}: ${m.gui_error.message}`;
  }
  const b = m.backend || {};
  const caps = (b.capabilities || []).join(", ") || "none";
  return `${m.name}: backend ${b.name || "?"} (${b.platform || m.platform || "?"}, ${b.session || "?"} session); ` +
    `capabilities: ${caps}; windows: ${m.window_count ?? "?"}.`;
}

async function pickMachine(name) {
  st.machine = name || null;
  const m = machineList.find((x) => x.name === name);
  $("machine-info").textContent = describeMachine(m);
  const sel = $("window");
  sel.textContent = "";
  if (!m || !m.connected || m.gui_error) {
    pickWindow(null);
    return;
  }
  await loadWindows();
}

async function loadWindows() {
  const sel = $("window");
  const keep = st.windowId;
  let list;
  try {
    list = await api("GET", "api/windows?" + new URLSearchParams({ machine: st.machine }));
  } catch (e) {
    status(`Cannot list windows: ${e.message}`, "refused");
    return;
  }
  sel.textContent = "";
  const none = document.createElement("option");
  none.value = "";
  none.textContent = "— pick a window —";
  sel.appendChild(none);
  for (const w of list.windows || []) {
    const o = document.createElement("option");
    o.value = w.window_id;
    // The machine's policy for the model (docs/policy.md), when it is not `allow`.
    const policy = w.policy ? ` [model: ${w.policy}]` : "";
    o.textContent = `${w.title || "(untitled)"} — ${w.app}${w.minimized ? " (minimized)" : ""}${policy}`;
    sel.appendChild(o);
  }
  if (keep && (list.windows || []).some((w) => w.window_id === keep)) sel.value = keep;
  pickWindow(sel.value || null);
}

function pickWindow(id) {
  if (id === st.windowId && st.timer) return;
  st.windowId = id;
  if (typeof personShow === "function") personShow();
  st.gen++;
  st.frame = null;
  st.unchanged = 0;
  $("frame").removeAttribute("src");
  $("frame").hidden = !id;
  $("placeholder").hidden = !!id;
  $("frame-info").textContent = "";
  $("view").dataset.geometry = "";
  stopPolling();
  if (id) poll();
}

// ------------------------------------------------------------------ polling
function stopPolling() {
  clearTimeout(st.timer);
  st.timer = null;
}

function schedule(ms) {
  clearTimeout(st.timer);
  st.timer = setTimeout(poll, ms);
}

/** Polls now and resets the back-off (after input, the window is likely to change). */
function kick() {
  st.unchanged = 0;
  schedule(0);
}

function parseGeometry(h) {
  const [x, y, width, height] = (h || "").split(",").map(Number);
  return { x, y, width, height };
}

async function poll(force) {
  if (!st.windowId) return;
  if ((st.paused || document.hidden) && !force) {
    schedule(500);
    return;
  }
  clearTimeout(st.timer);
  st.timer = -1; // polling is on, a request is out
  const gen = st.gen;
  const started = performance.now();
  const q = new URLSearchParams({ machine: st.machine, window_id: st.windowId });
  if (st.frame && !force) q.set("etag", st.frame.etag);
  let next = FAST_MS;
  try {
    const r = await fetch("api/frame?" + q, { credentials: "same-origin", cache: "no-store" });
    if (gen !== st.gen) return;
    if (r.status === 401) { showLogin("Your session ended; log in again."); return; }
    if (!r.ok) {
      let data = null;
      try { data = await r.json(); } catch (_) { /* not JSON */ }
      const e = apiError(r, data);
      $("view").classList.add("offline");
      if (e.code === "WINDOW_NOT_FOUND") {
        status("The window is gone; pick another.", "refused");
        await loadWindows();
        return;
      }
      status(`No frame: ${e.message}`, "refused");
      next = 2000;
    } else {
      $("view").classList.remove("offline");
      const [w, h, scale] = (r.headers.get("X-Lsm-Space") || "").split(",").map(Number);
      const frame = {
        geometry: parseGeometry(r.headers.get("X-Lsm-Geometry")),
        width: w, height: h, scale: scale || 1,
        etag: r.headers.get("X-Lsm-Etag") || "",
      };
      if (r.status === 204 && st.frame) {
        // Same pixels; the window may still have moved: keep its current geometry.
        st.frame.geometry = frame.geometry;
        st.unchanged++;
        next = st.unchanged < 3 ? FAST_MS : IDLE_MS[Math.min(st.unchanged - 3, IDLE_MS.length - 1)];
      } else {
        const blob = await r.blob();
        if (gen !== st.gen) return;
        await showImage(blob);
        st.frame = frame;
        st.frames++;
        st.unchanged = 0;
      }
      showFrameInfo();
    }
  } catch (e) {
    if (gen !== st.gen) return;
    status(`No frame: ${e.message}`, "refused");
    next = 2000;
  }
  if (gen === st.gen && st.timer === -1) schedule(Math.max(0, next - (performance.now() - started)));
}

function showImage(blob) {
  return new Promise((resolve) => {
    const img = $("frame");
    const url = URL.createObjectURL(blob);
    img.onload = img.onerror = () => {
      if (st.imgUrl) URL.revokeObjectURL(st.imgUrl);
      st.imgUrl = url;
      resolve();
    };
    img.src = url;
  });
}

function showFrameInfo() {
  const f = st.frame;
  if (!f) return;
  const g = f.geometry;
  const v = $("view");
  v.dataset.geometry = `${g.x},${g.y},${g.width},${g.height}`;
  v.dataset.frames = String(st.frames);
  v.dataset.refreshes = String(st.refreshes);
  $("frame-info").textContent =
    `Window at ${g.x},${g.y} size ${g.width}×${g.height}` +
    (f.scale !== 1 ? `, image scaled ×${f.scale.toFixed(3)}` : "") + ` · frame ${f.etag.slice(0, 8)}`;
}

/** A fresh full frame (after a refusal). */
async function refresh() {
  st.refreshes++;
  st.unchanged = 0;
  await poll(true);
}

// ------------------------------------------------------------------ input
/** Pointer position -> window logical pixels (image px / scale), or null outside the image. */
function toWindow(ev) {
  const img = $("frame");
  const f = st.frame;
  if (!f || !img.naturalWidth) return null;
  const r = img.getBoundingClientRect();
  const ix = (ev.clientX - r.left) * (img.naturalWidth / r.width);
  const iy = (ev.clientY - r.top) * (img.naturalHeight / r.height);
  return { x: Math.floor(ix / f.scale), y: Math.floor(iy / f.scale) };
}

/** Sends actions in order (one request at a time), quoting the frame's geometry. */
function act(actions, label) {
  st.queue = st.queue.then(() => send(actions, label));
  return st.queue;
}

async function send(actions, label) {
  if (!st.frame || !st.windowId) {
    status("No frame yet: pick a window first.", "refused");
    return;
  }
  const body = { machine: st.machine, window_id: st.windowId, geometry: st.frame.geometry, actions };
  try {
    await api("POST", "api/action", body);
    status(`${label}: done.`, "ok");
    kick();
  } catch (e) {
    if (e.code === "WINDOW_CHANGED") {
      status(`${label} refused: the window moved or changed size since this frame; refreshed, look and try again.`, "refused");
      await refresh();
    } else if (e.code === "OUT_OF_BOUNDS") {
      status(`${label} refused: that point is outside the window.`, "refused");
    } else if (e.code === "WINDOW_NOT_FOUND") {
      status(`${label} refused: the window is gone.`, "refused");
      await loadWindows();
    } else if (e.status !== 401) {
      status(`${label} refused (${e.code}): ${e.message}`, "refused");
    }
  }
}

let down = null; // {x, y (client), at (window px)}
let pendingClick = null; // {timer, at, t}

function onMouseDown(ev) {
  if (ev.button !== 0) return;
  ev.preventDefault();
  $("view").focus();
  const at = toWindow(ev);
  if (at) down = { cx: ev.clientX, cy: ev.clientY, at };
}

function onMouseUp(ev) {
  if (ev.button !== 0 || !down) return;
  const start = down;
  down = null;
  const at = toWindow(ev) || start.at;
  const moved = Math.hypot(ev.clientX - start.cx, ev.clientY - start.cy);
  if (moved >= DRAG_PX) {
    act([{ type: "drag", x: start.at.x, y: start.at.y, to_x: at.x, to_y: at.y }],
      `Drag ${start.at.x},${start.at.y} → ${at.x},${at.y}`);
    return;
  }
  // Hold a click briefly: a second one makes it a double click, sent as one action.
  if (pendingClick && Math.hypot(at.x - pendingClick.at.x, at.y - pendingClick.at.y) < 6) {
    clearTimeout(pendingClick.timer);
    const p = pendingClick;
    pendingClick = null;
    act([{ type: "double_click", x: p.at.x, y: p.at.y }], `Double-click at ${p.at.x},${p.at.y}`);
    return;
  }
  if (pendingClick) flushClick();
  pendingClick = { at: start.at, timer: setTimeout(flushClick, DOUBLE_MS) };
}

function flushClick() {
  if (!pendingClick) return;
  const p = pendingClick;
  clearTimeout(p.timer);
  pendingClick = null;
  act([{ type: "click", x: p.at.x, y: p.at.y }], `Click at ${p.at.x},${p.at.y}`);
}

function onContextMenu(ev) {
  ev.preventDefault();
  const at = toWindow(ev);
  if (at) act([{ type: "right_click", x: at.x, y: at.y }], `Right-click at ${at.x},${at.y}`);
}

let wheel = null; // {dy, dx, at, timer}
function onWheel(ev) {
  ev.preventDefault();
  const at = toWindow(ev);
  if (!at) return;
  const unit = ev.deltaMode === 1 ? 3 : ev.deltaMode === 2 ? 1 / 10 : 100; // per wheel click
  if (!wheel) wheel = { dx: 0, dy: 0, at, timer: null };
  wheel.dx += ev.deltaX / unit;
  wheel.dy += ev.deltaY / unit;
  wheel.at = at;
  clearTimeout(wheel.timer);
  wheel.timer = setTimeout(() => {
    const w = wheel;
    wheel = null;
    const clicks = (v) => (v === 0 ? 0 : Math.sign(v) * Math.max(1, Math.round(Math.abs(v))));
    const dx = clicks(w.dx);
    const dy = clicks(w.dy);
    if (dx || dy) act([{ type: "scroll", x: w.at.x, y: w.at.y, delta_x: dx, delta_y: dy }], `Wheel ${dy || dx}`);
  }, 90);
}

const KEY_NAMES = {
  " ": "space", Enter: "enter", Tab: "tab", Escape: "escape", Backspace: "backspace", Delete: "delete",
  Insert: "insert", Home: "home", End: "end", PageUp: "pageup", PageDown: "pagedown",
  ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down", ContextMenu: "menu",
  PrintScreen: "print", Pause: "pause", CapsLock: "capslock", "+": "plus", "-": "minus",
};
const MODIFIER_KEYS = new Set(["Control", "Shift", "Alt", "Meta", "AltGraph", "OS", "Super", "Hyper"]);

function keyName(ev) {
  if (KEY_NAMES[ev.key]) return KEY_NAMES[ev.key];
  if (/^F([1-9]|1[0-2])$/.test(ev.key)) return ev.key.toLowerCase();
  if ([...ev.key].length === 1) return ev.key.toLowerCase();
  return null;
}

function onKeyDown(ev) {
  if (ev.isComposing || MODIFIER_KEYS.has(ev.key) || !st.frame) return;
  const withMods = ev.ctrlKey || ev.altKey || ev.metaKey;
  // A character without shortcut modifiers is typed as text (layout-independent).
  if (!withMods && [...ev.key].length === 1 && ev.key !== " ") {
    ev.preventDefault();
    act([{ type: "type", text: ev.key }], `Type ${JSON.stringify(ev.key)}`);
    return;
  }
  const name = keyName(ev);
  if (!name) {
    status(`The key ${ev.key} cannot be sent.`, "refused");
    return;
  }
  ev.preventDefault();
  const mods = [];
  if (ev.ctrlKey) mods.push("ctrl");
  if (ev.altKey) mods.push("alt");
  if (ev.shiftKey && (withMods || [...ev.key].length !== 1)) mods.push("shift");
  if (ev.metaKey) mods.push("super");
  const keys = [...mods, name].join("+");
  act([{ type: "key", keys }], `Keys ${keys}`);
}

// The text field: composed (IME) text is sent when the composition ends, never half-way.
let composing = false;
function sendText() {
  const field = $("text");
  const text = field.value;
  if (!text) return;
  field.value = "";
  act([{ type: "type", text }], `Type ${JSON.stringify(text)}`);
}

// ------------------------------------------------------------------ wiring
function wire() {
  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    login($("secret").value);
    $("secret").value = "";
  });
  $("logout").addEventListener("click", async () => {
    try { await api("POST", "api/logout"); } catch (_) { /* logged out anyway */ }
    st.csrf = null;
    pickWindow(null);
    showLogin("Logged out.");
  });
  $("reload").addEventListener("click", () => loadMachines().catch((e) => status(e.message, "refused")));
  $("machine").addEventListener("change", (ev) => {
    st.windowId = null;
    pickMachine(ev.target.value);
  });
  $("window").addEventListener("change", (ev) => pickWindow(ev.target.value || null));
  const img = $("frame");
  img.addEventListener("mousedown", onMouseDown);
  window.addEventListener("mouseup", onMouseUp);
  img.addEventListener("contextmenu", onContextMenu);
  img.addEventListener("dragstart", (ev) => ev.preventDefault());
  img.addEventListener("wheel", onWheel, { passive: false });
  $("view").addEventListener("keydown", onKeyDown);
  for (const b of document.querySelectorAll("button[data-keys]")) {
    b.addEventListener("click", () => act([{ type: "key", keys: b.dataset.keys }], `Keys ${b.dataset.keys}`));
  }
  const sendCombo = () => {
    const keys = $("combo").value.trim();
    if (keys) act([{ type: "key", keys }], `Keys ${keys}`);
  };
  $("send-combo").addEventListener("click", sendCombo);
  $("combo").addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); sendCombo(); } });
  const text = $("text");
  text.addEventListener("compositionstart", () => { composing = true; });
  text.addEventListener("compositionend", () => {
    composing = false;
    // The field holds the committed text once this event has run.
    setTimeout(sendText, 0);
  });
  text.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing && !composing) {
      ev.preventDefault();
      sendText();
    }
  });
  $("send-text").addEventListener("click", () => { if (!composing) sendText(); });
  document.addEventListener("visibilitychange", () => { if (!document.hidden && st.windowId) kick(); });
}

// For tests and the benchmark: read-only counters plus a polling pause.
window.lsmDesk = {
  get frames() { return st.frames; },
  get refreshes() { return st.refreshes; },
  get geometry() { return st.frame && { ...st.frame.geometry }; },
  pause(on) { st.paused = !!on; },
};

// The login URL carries the secret in its fragment, which browsers never send to a server:
// use it, then drop it from the address bar. True when there was one.
async function loginFromUrl() {
  const m = /[#&]secret=([^&]+)/.exec(location.hash);
  if (!m) return false;
  history.replaceState(null, "", location.pathname + location.search);
  await login(decodeURIComponent(m[1]));
  return true;
}

async function boot() {
  wire();
  // A login URL pasted into this tab changes only the fragment: no reload, so log in here.
  window.addEventListener("hashchange", () => { loginFromUrl(); });
  if (await loginFromUrl()) return;
  try {
    const out = await api("GET", "api/session");
    st.csrf = out.csrf_token;
    await start();
  } catch (_) {
    showLogin("");
  }
}

boot();
