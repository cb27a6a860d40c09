// The Desktop page in real Chromium, driven step by step by a Python test (tests/e2e/test_person.py)
// that makes the model's calls through the official MCP client in between: one JSON command a
// line on stdin, one JSON answer a line on stdout ({"ok", "out"} or {"ok": false, "error"}).
//
// Commands (`op`): start {url, secret, machine, title}; feed_count; wait_feed {tool, code, min_count,
// timeout}; take_over {scope, shortcut}; release; held; click_at {x, y}; wait_approval {timeout};
// decide {approve, reason}; approve_everything {on}; viewport {width}; show_window {machine, window_id};
// screenshot {path}; stop.
import { createInterface } from "node:readline";
import { launch, login, pickWindow, pagePoint, waitFor } from "./lib.mjs";

let browser = null;
let page = null;

const handlers = {
  async start({ url, secret, machine, title }) {
    browser = await launch();
    const context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
    page = await context.newPage();
    await login(page, url, secret);
    const windowId = await pickWindow(page, machine, title);
    await waitFor(() => page.evaluate(() => window.lsmPerson.live), { what: "the live feed", timeout: 10_000 });
    return { windowId };
  },

  async feed_count() {
    return page.evaluate(() => window.lsmPerson.feedCount);
  },

  /** The newest feed entry of `tool` with `code`, once the page holds at least `min_count` entries. */
  async wait_feed({ tool, code, min_count = 0, timeout = 5000 }) {
    const found = await waitFor(
      () => page.evaluate(([tool, code, min]) => {
        if (window.lsmPerson.feedCount < min) return null;
        const li = [...document.querySelectorAll("#feed-list > li")]
          .find((x) => x.dataset.tool === tool && (!code || x.dataset.code === code));
        if (!li) return null;
        // Its before/after images as shown: decoded size and the size of the data they came in.
        const images = [...li.querySelectorAll(".feed-images img")].map((img) => ({
          when: img.dataset.when, loaded: img.complete && img.naturalWidth > 0,
          width: img.naturalWidth, height: img.naturalHeight, chars: img.src.length,
        }));
        return { text: li.innerText, code: li.dataset.code, first: li === li.parentElement.firstElementChild, images };
      }, [tool, code, min_count]),
      { what: `a ${tool} ${code || ""} entry in the feed`, timeout, interval: 20 },
    );
    return { ...found, seen_ms: Date.now() };
  },

  /** Takes over with the keyboard shortcut (or the button), for the machine or the picked window. */
  async take_over({ scope = "machine", shortcut = true }) {
    await page.selectOption("#take-scope", scope);
    if (shortcut) {
      await page.focus("#view");
      await page.keyboard.press("Alt+Shift+T");
    } else {
      await page.click("#take-over");
    }
    try {
      await waitFor(async () => (await page.getAttribute("#take-over", "aria-pressed")) === "true",
        { what: "the take-over control on", timeout: 5000 });
    } catch (e) {
      throw new Error(`${e.message}; the page says: ${await page.textContent("#status")}`);
    }
    return page.textContent("#control-state");
  },

  async release() {
    await page.click("#take-over");
    await waitFor(async () => (await page.getAttribute("#take-over", "aria-pressed")) === "false",
      { what: "the take-over control off", timeout: 5000 });
    return page.textContent("#control-state");
  },

  async held() {
    return page.getAttribute("#take-over", "aria-pressed");
  },

  /** A person's click at a window-relative logical point on the page's image. */
  async click_at({ x, y }) {
    await page.evaluate(() => { document.getElementById("status").textContent = ""; });
    const q = await pagePoint(page, x, y);
    await page.mouse.click(q.x, q.y);
    await waitFor(async () => /done|refused/.test(await page.textContent("#status")),
      { what: "the click's answer", timeout: 8000 });
    return page.textContent("#status");
  },

  async wait_approval({ timeout = 8000 }) {
    await page.waitForSelector("#approval-list > li", { timeout });
    return page.evaluate(() => {
      const li = document.querySelector("#approval-list > li");
      const img = li.querySelector(".approval-image img");
      return {
        text: li.innerText,
        image: !!(img && img.complete && img.naturalWidth > 0),
        marks: [...li.querySelectorAll(".mark")].map((m) => m.title),
      };
    });
  },

  async decide({ approve, reason = "" }) {
    const li = await page.waitForSelector("#approval-list > li", { timeout: 5000 });
    if (approve) {
      await (await li.$("button.approve")).click();
    } else {
      await (await li.$("input")).fill(reason);
      await (await li.$("button.deny")).click();
    }
    await page.waitForSelector("#approval-list > li", { state: "detached", timeout: 5000 });
    return true;
  },

  async approve_everything({ on }) {
    if ((await page.isChecked("#approve-everything")) !== on) await page.click("#approve-everything");
    return page.isChecked("#approve-everything");
  },

  /** Resizes the page; answers how the window image is shown (CSS px) and its size (image px). */
  async viewport({ width, height = 950 }) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(200);
    return page.evaluate(() => {
      const img = document.getElementById("frame");
      const r = img.getBoundingClientRect();
      return { shown: r.width, natural: img.naturalWidth, page: document.documentElement.clientWidth };
    });
  },

  /** Shows the window `window_id` (reloading the window list when the page does not know it yet,
   *  e.g. the app was restarted under a new id), once its image is on the page. */
  async show_window({ machine, window_id }) {
    const known = () => page.evaluate((id) => [...document.querySelectorAll("#window option")].some((o) => o.value === id),
      window_id);
    if ((await page.inputValue("#machine")) !== machine) await page.selectOption("#machine", machine);
    if (!(await known())) await page.click("#reload");
    await waitFor(known, { what: `window ${window_id} in the picker`, timeout: 15_000 });
    if ((await page.inputValue("#window")) !== window_id) await page.selectOption("#window", window_id);
    await waitFor(() => page.evaluate(() => {
      const img = document.getElementById("frame");
      return img.complete && img.naturalWidth > 0 && !!window.lsmDesk.geometry;
    }), { what: `the image of window ${window_id}`, timeout: 15_000 });
    return window_id;
  },

  async screenshot({ path }) {
    await page.screenshot({ path });
    return path;
  },

  async stop() {
    if (browser) await browser.close();
    browser = null;
    return true;
  },
};

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let cmd;
  try {
    cmd = JSON.parse(line);
    const out = await handlers[cmd.op](cmd);
    console.log(JSON.stringify({ ok: true, out: out ?? null }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, error: String((e && e.stack) || e) }));
  }
  if (cmd && cmd.op === "stop") break;
}
if (browser) await browser.close();
