// lsm Desktop page, the person in charge: the live activity feed of every machine (pushed by
// the server as server-sent events, never polled), take-over of a machine or a window, and
// approval of the model's actions. Uses app.js's `$`, `api`, `st` and `status`.
"use strict";

const FEED_MAX = 200; // entries kept on the page
const TAKE_OVER_KEY = { key: "T", alt: true, shift: true }; // Alt+Shift+T toggles take-over

const person = {
  source: null, // the EventSource
  states: new Map(), // machine -> its take-over and approval state
  feedCount: 0,
  countdown: null,
};

// ------------------------------------------------------------------ the feed
function personStart() {
  $("side").hidden = false;
  if (person.source) return;
  const es = new EventSource("api/events");
  person.source = es;
  es.addEventListener("open", () => { $("feed-state").textContent = "live"; });
  es.addEventListener("error", () => {
    // The browser reconnects by itself; the page says so meanwhile.
    $("feed-state").textContent = es.readyState === EventSource.CLOSED ? "closed" : "reconnecting…";
  });
  es.addEventListener("call", (ev) => { try { addCall(JSON.parse(ev.data)); } catch (_) { /* not JSON */ } });
  es.addEventListener("person", (ev) => { try { setState(JSON.parse(ev.data)); } catch (_) { /* not JSON */ } });
  es.addEventListener("lagged", (ev) => { $("feed-state").textContent = `live (missed ${ev.data} events)`; });
}

function personStop() {
  if (person.source) person.source.close();
  person.source = null;
  $("side").hidden = true;
}

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

/** One action in a few words: `click e3`, `type "abc"`, `key ctrl+s`. */
function describeAction(a) {
  if (!a || typeof a !== "object") return String(a);
  const where = a.element_id || (a.x !== undefined ? `${a.x},${a.y}` : "");
  const what = a.text !== undefined ? JSON.stringify(a.text) : a.keys || a.value || (a.seconds !== undefined ? `${a.seconds} s` : "");
  return [a.type, where, what].filter((x) => x !== "" && x !== undefined).join(" ");
}

/** The small before/after images of a call that had screenshots (data: URLs of a few KB). */
function feedImages(c) {
  const shots = [["before", c.before_image], ["after", c.after_image]].filter(([, src]) => typeof src === "string" &&
    src.startsWith("data:image/"));
  if (!shots.length) return null;
  const box = el("div", "feed-images");
  shots.forEach(([when, src], i) => {
    if (i) box.append(el("span", "", "→"));
    const img = el("img");
    img.src = src;
    img.alt = c.tool === "gui_state" ? "The window as observed" : `The window ${when} the call`;
    img.title = img.alt;
    img.dataset.when = when;
    box.append(img);
  });
  return box;
}

function addCall(c) {
  const list = $("feed-list");
  const li = el("li", c.code === "OK" ? "ok" : "refused");
  li.dataset.machine = c.machine;
  li.dataset.code = c.code;
  li.dataset.tool = c.tool;
  const t = new Date(c.at_ms).toLocaleTimeString();
  const head = el("div");
  head.append(el("time", "", t), " ", el("strong", "", c.machine), " · ",
    `${c.title || c.window_id}${c.app ? " (" + c.app + ")" : ""} · ${c.by} ${c.tool} · `,
    el("span", "code", c.code));
  li.append(head);
  const actions = Array.isArray(c.actions) ? c.actions.map(describeAction).join("; ") : "";
  if (actions) li.append(el("div", "actions", actions));
  if (c.message) li.append(el("div", "info", c.message));
  if (c.effects && c.effects.length) {
    const ul = el("ul", "effects");
    for (const e of c.effects) ul.append(el("li", "", e));
    li.append(ul);
  }
  if (c.changes) li.append(el("div", "changes", "Changed: " + c.changes));
  if (c.stopped) li.append(el("div", "info", c.stopped));
  const images = feedImages(c);
  if (images) li.append(images);
  list.prepend(li); // newest first
  while (list.children.length > FEED_MAX) list.lastElementChild.remove();
  person.feedCount++;
}

// ------------------------------------------------------------------ take-over and approvals
function setState(s) {
  person.states.set(s.machine, s);
  showApprovals();
  if (s.machine === st.machine) personShow();
}

/** The selected machine's state; asked once when none was pushed yet (a machine just picked). */
async function stateOf(machine) {
  if (person.states.has(machine)) return person.states.get(machine);
  try {
    const s = await api("GET", "api/person?" + new URLSearchParams({ machine }));
    person.states.set(machine, s);
    return s;
  } catch (_) {
    return null;
  }
}

/** The hold that covers the selected window (the machine's, or the window's own), if any. */
function holdHere(s) {
  if (!s) return null;
  return s.holds.find((h) => !h.window_id) || s.holds.find((h) => h.window_id && h.window_id === st.windowId) || null;
}

async function personShow() {
  if (!st.machine) return;
  const machine = st.machine;
  const s = await stateOf(machine);
  if (machine !== st.machine) return;
  const hold = holdHere(s);
  const b = $("take-over");
  b.setAttribute("aria-pressed", hold ? "true" : "false");
  b.textContent = hold ? "Release" : "Take over";
  $("view").classList.toggle("held", !!hold);
  $("view").dataset.held = hold ? (hold.window_id ? "window" : "machine") : "";
  $("approve-everything").checked = !!(s && s.approve_everything);
  clearInterval(person.countdown);
  if (hold) {
    const ends = Date.now() + hold.releases_in_s * 1000;
    const say = () => {
      const left = Math.max(0, Math.round((ends - Date.now()) / 1000));
      const what = hold.window_id ? "this window" : `machine ${machine}`;
      $("control-state").textContent =
        `You have control of ${what}: the model's actions there are refused. Released after ${hold.idle_release_s} s ` +
        `without your input (${left} s left).`;
      // Ended by itself: the machine says so (one request, not polling).
      if (left === 0) {
        clearInterval(person.countdown);
        person.states.delete(machine);
        setTimeout(personShow, 1000);
      }
    };
    say();
    person.countdown = setInterval(say, 1000);
  } else {
    $("control-state").textContent = s ? "The model may act here." : "";
  }
}

async function command(body, label) {
  try {
    const s = await api("POST", "api/person", { machine: st.machine, ...body });
    setState(s);
    return s;
  } catch (e) {
    status(`${label} refused (${e.code}): ${e.message}`, "refused");
    return null;
  }
}

async function toggleTakeOver() {
  if (!st.machine) return;
  const s = await stateOf(st.machine);
  const hold = holdHere(s);
  if (hold) {
    await command({ op: "release", window_id: hold.window_id || null }, "Release");
    status("Released: the model may act again.", "ok");
    return;
  }
  const scope = $("take-scope").value;
  if (scope === "window" && !st.windowId) {
    status("Pick a window to take over, or take over the machine.", "refused");
    return;
  }
  const idle = Number($("idle-release").value) || null;
  const s2 = await command({ op: "take_over", window_id: scope === "window" ? st.windowId : null, idle_release_s: idle },
    "Take over");
  if (s2) status(`You have control of ${scope === "window" ? "this window" : "machine " + st.machine}.`, "ok");
}

// Every machine's pending approvals, oldest first.
function showApprovals() {
  const list = $("approval-list");
  const pending = [];
  for (const s of person.states.values()) for (const p of s.pending || []) pending.push(p);
  pending.sort((a, b) => a.asked_ms - b.asked_ms);
  const shown = new Set(pending.map((p) => `${p.machine}/${p.id}`));
  for (const li of [...list.children]) if (!shown.has(li.dataset.key)) li.remove();
  const have = new Set([...list.children].map((li) => li.dataset.key));
  for (const p of pending) {
    const key = `${p.machine}/${p.id}`;
    if (!have.has(key)) list.append(approvalCard(p, key));
  }
  $("approval-count").textContent = pending.length ? `(${pending.length})` : "";
  $("approvals").hidden = pending.length === 0;
}

function approvalCard(p, key) {
  const li = el("li");
  li.dataset.key = key;
  li.dataset.id = String(p.id);
  li.dataset.machine = p.machine;
  li.append(el("div", "", `${p.machine} · ${p.title || p.window_id} (${p.app})`));
  li.append(el("div", "info", `Why: ${p.reason}. Refused after ${p.timeout_s} s without an answer.`));
  const ul = el("ul", "targets");
  const actions = Array.isArray(p.actions) ? p.actions : [];
  actions.forEach((a, i) => {
    const t = (p.targets || []).find((x) => x.index === i);
    const on = t && (t.name || t.role) ? ` on ${t.role} "${t.name}"` : "";
    ul.append(el("li", "", `${i}: ${describeAction(a)}${on}`));
  });
  li.append(ul);
  if (p.image) {
    const box = el("div", "approval-image");
    const img = el("img");
    img.alt = "The window now, the targets marked";
    img.src = p.image;
    box.append(img);
    for (const t of p.targets || []) {
      if (!t.mark || !p.image_width) continue;
      const m = el("div", "mark");
      // Marks in the image's pixels, placed in percent so they follow the image's scaling.
      m.style.left = `${(100 * t.mark.x) / p.image_width}%`;
      m.style.top = `${(100 * t.mark.y) / p.image_height}%`;
      m.style.width = `${(100 * t.mark.width) / p.image_width}%`;
      m.style.height = `${(100 * t.mark.height) / p.image_height}%`;
      m.title = `${t.index}: ${t.type} ${t.role} "${t.name}"`;
      box.append(m);
    }
    li.append(box);
  }
  const row = el("div", "approval-actions");
  const approve = el("button", "approve", "Approve");
  approve.type = "button";
  const reason = el("input");
  reason.placeholder = "reason (optional)";
  reason.setAttribute("aria-label", "Reason for denying");
  reason.size = 16;
  const deny = el("button", "deny", "Deny");
  deny.type = "button";
  const minutes = el("input");
  minutes.type = "number";
  minutes.min = "1";
  minutes.value = "10";
  minutes.style.width = "4em";
  minutes.setAttribute("aria-label", "Minutes");
  const all = el("button", "approve-window", "Approve this window for");
  all.type = "button";
  const decide = async (approve, why) => {
    li.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      setState(await api("POST", "api/person", { machine: p.machine, op: "decide", id: p.id, approve, reason: why || null }));
    } catch (e) {
      status(`The answer was not taken (${e.code}): ${e.message}`, "refused");
      li.remove();
    }
  };
  approve.addEventListener("click", () => decide(true));
  deny.addEventListener("click", () => decide(false, reason.value.trim()));
  all.addEventListener("click", async () => {
    const n = Math.max(1, Number(minutes.value) || 10);
    try {
      await api("POST", "api/person", { machine: p.machine, op: "approve_window", window_id: p.window_id, minutes: n });
    } catch (e) {
      status(`Not approved (${e.code}): ${e.message}`, "refused");
      return;
    }
    await decide(true);
  });
  row.append(approve, reason, deny, all, minutes, el("span", "", "min"));
  li.append(row);
  return li;
}

// ------------------------------------------------------------------ wiring
function wirePerson() {
  $("take-over").addEventListener("click", toggleTakeOver);
  $("approve-everything").addEventListener("change", (ev) => {
    command({ op: "approve_everything", on: ev.target.checked }, "Approve everything");
  });
  // Before the window image's own key handler: this combination is the page's, not the window's.
  document.addEventListener("keydown", (ev) => {
    if (ev.altKey && ev.shiftKey && !ev.ctrlKey && !ev.metaKey && ev.key.toUpperCase() === TAKE_OVER_KEY.key) {
      ev.preventDefault();
      ev.stopPropagation();
      toggleTakeOver();
    }
  }, true);
}

window.lsmPerson = {
  get feedCount() { return person.feedCount; },
  get live() { return !!person.source && person.source.readyState === EventSource.OPEN; },
};

wirePerson();
