// Helpers shared by the web UI tests and the benchmark: start Debian chromium through
// playwright-core, log in, pick a window, map window pixels to page pixels.
import { chromium } from "playwright-core";
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "lib", "atspi_probe.py");

export function chromiumPath() {
  for (const p of [process.env.LSM_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (p && existsSync(p)) return p;
  }
  throw new Error("chromium not found: install Debian's chromium (tests/bed/desktop.sh install)");
}

export async function launch() {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in CI containers: chromium's sandbox needs user namespaces it may not have.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    timeout: 60_000,
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(fn, { timeout = 10_000, interval = 100, what = "condition" } = {}) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

export async function login(page, url, secret) {
  await page.goto(url);
  await page.waitForSelector("#login:not([hidden])", { timeout: 15_000 });
  await page.fill("#secret", secret);
  await page.click("#login button[type=submit]");
  await page.waitForSelector("#desk:not([hidden])", { timeout: 15_000 });
}

/** Picks machine and the first window whose option text contains `title`; waits for a frame. */
export async function pickWindow(page, machine, title) {
  await page.waitForSelector(`#machine option[value="${machine}"]`, { timeout: 15_000, state: "attached" });
  if ((await page.inputValue("#machine")) !== machine) {
    await page.selectOption("#machine", machine);
  }
  const value = await waitFor(
    () =>
      page.evaluate((t) => {
        const o = [...document.querySelectorAll("#window option")].find((x) => x.textContent.includes(t));
        return o ? o.value : null;
      }, title),
    { what: `window "${title}" in the picker`, timeout: 15_000 },
  );
  await page.selectOption("#window", value);
  await waitFor(() => page.evaluate(() => window.lsmDesk.frames > 0), { what: "a first frame", timeout: 15_000 });
  return value;
}

/** Window-relative logical point -> page coordinates on the displayed image. */
export async function pagePoint(page, x, y) {
  return page.evaluate(
    ([x, y]) => {
      const img = document.getElementById("frame");
      const r = img.getBoundingClientRect();
      const s = img.naturalWidth / window.lsmDesk.geometry.width; // image px per logical px
      // Centre of the logical pixel, in CSS px of the displayed image.
      return {
        x: r.left + (x + 0.5) * s * (r.width / img.naturalWidth),
        y: r.top + (y + 0.5) * s * (r.height / img.naturalHeight),
      };
    },
    [x, y],
  );
}

/** Scenario results, one JSON line each on stdout: {"scenario", "ok", "detail"}. */
export const results = [];
export function report(scenario, ok, detail) {
  const line = { scenario, ok, detail };
  results.push(line);
  console.log(JSON.stringify(line));
}

/** Runs one scenario; its return value is the detail, a throw makes it fail. */
export async function scenario(name, fn) {
  try {
    report(name, true, (await fn()) ?? null);
  } catch (e) {
    report(name, false, String(e && e.stack || e));
  }
}

/** One AT-SPI node of an application by name (waits up to `wait` s), or null; ground truth
 * from tests/lib/atspi_probe.py with the system python. */
export function probe(find, { match = "exact", wait = 5, app = "lsm_testapp.py" } = {}) {
  const r = spawnSync("/usr/bin/python3", [PROBE, "--app-name", app, "--find", find, "--match", match,
    "--wait", String(wait), "--timeout", String(20 + wait)], { encoding: "utf8", timeout: (30 + wait) * 1000 });
  if (r.status === 0) return JSON.parse(r.stdout);
  if (r.status === 1) return null;
  throw new Error(`atspi_probe --find ${find}: exit ${r.status}: ${r.stderr}`);
}
