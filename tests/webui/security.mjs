// What the browser enforces for the Desktop page (issue 13), in real Chromium: another origin
// cannot show it in a frame (click-jacking), and a script injected inline does not run (CSP).
// Each check has a control on a page without lsm's headers, so a check that could not see a
// frame or a script run would fail there. Run by tests/e2e/test_security.py; prints one JSON
// line per scenario: {"scenario", "ok", "detail"}.
//
// Environment: LSM_WEB_URL, LSM_WEB_SECRET (required).
import http from "node:http";
import { launch, login, scenario, sleep } from "./lib.mjs";

const URL_ = process.env.LSM_WEB_URL;
const SECRET = process.env.LSM_WEB_SECRET;
if (!URL_ || !SECRET) {
  console.log(JSON.stringify({ scenario: "setup", ok: false, detail: "LSM_WEB_URL and LSM_WEB_SECRET are required" }));
  process.exit(2);
}

/** A server on a free loopback port (another origin than lsm's) answering `pages[path]`. */
function serve(pages) {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      const body = pages[req.url.split("?")[0]];
      res.writeHead(body ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
      res.end(body || "");
    });
    server.listen(0, "127.0.0.1", () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }));
  });
}

const PLAIN = `<!doctype html><title>plain</title><p id="plain">a page without lsm's headers</p>`;
const plainSite = await serve({ "/plain": PLAIN });
const framer = (src) => `<!doctype html><title>framer</title><iframe id="f" src="${src}" width="800" height="600"></iframe>`;
const attacker = await serve({
  "/frame-lsm": framer(URL_),
  "/frame-control": framer(`${plainSite.origin}/plain`),
});

/** Opens `url` (a page with one iframe); what the frame shows and what the console said. */
async function framed(browser, url, selector) {
  const page = await browser.newPage();
  const console_ = [];
  page.on("console", (m) => console_.push(m.text()));
  await page.goto(url, { waitUntil: "load" });
  // Until the frame shows the page, or Chromium said why it does not (10 s at most: a loaded
  // machine is slow, and an empty frame alone proves nothing).
  let shown = false;
  let frameUrl = null;
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const frame = page.frames().find((f) => f !== page.mainFrame());
    frameUrl = frame ? frame.url() : null;
    shown = frame ? await frame.evaluate((sel) => !!document.querySelector(sel), selector).catch(() => false) : false;
    if (shown || console_.some((t) => /frame-ancestors|X-Frame-Options/i.test(t))) break;
    await sleep(200);
  }
  await sleep(300);
  await page.close();
  return { shown, frameUrl, console: console_.filter((t) => /frame|ancestor/i.test(t)) };
}

/** Injects an inline <script> and an inline event handler into the page; what ran. */
function inject(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const violations = [];
        document.addEventListener("securitypolicyviolation", (e) =>
          violations.push({ directive: e.violatedDirective, disposition: e.disposition }),
        );
        const s = document.createElement("script");
        s.textContent = "window.__lsmInlineRan = true;";
        document.body.appendChild(s);
        const b = document.createElement("button");
        b.setAttribute("onclick", "window.__lsmHandlerRan = true");
        document.body.appendChild(b);
        b.click();
        setTimeout(
          () => resolve({ inlineRan: !!window.__lsmInlineRan, handlerRan: !!window.__lsmHandlerRan, violations }),
          500,
        );
      }),
  );
}

const browser = await launch();
try {
  await scenario("framing_control", async () => {
    const r = await framed(browser, `${attacker.origin}/frame-control`, "#plain");
    if (!r.shown) throw new Error(`the control page was not seen in its frame: ${JSON.stringify(r)}`);
    return r;
  });

  await scenario("framed_desktop_page_not_shown", async () => {
    const r = await framed(browser, `${attacker.origin}/frame-lsm`, "#login, #desk, header");
    if (r.shown) throw new Error(`the Desktop page was shown inside another origin's frame: ${JSON.stringify(r)}`);
    if (!r.console.some((t) => /frame-ancestors|X-Frame-Options/i.test(t))) {
      throw new Error(`Chromium did not say why the frame is empty: ${JSON.stringify(r)}`);
    }
    return r;
  });

  await scenario("inline_script_control", async () => {
    const page = await browser.newPage();
    await page.goto(`${plainSite.origin}/plain`);
    const r = await inject(page);
    await page.close();
    if (!r.inlineRan || !r.handlerRan) throw new Error(`the injection did not run without a policy: ${JSON.stringify(r)}`);
    return r;
  });

  await scenario("inline_script_blocked", async () => {
    const page = await browser.newPage();
    // The page works under its own policy (login, the desk shown) ...
    await login(page, URL_, SECRET);
    // ... and what an attacker injects inline does not run.
    const r = await inject(page);
    await page.close();
    if (r.inlineRan || r.handlerRan) throw new Error(`injected inline script ran: ${JSON.stringify(r)}`);
    const directives = r.violations.map((v) => v.directive);
    if (!directives.some((d) => d.startsWith("script-src")) || r.violations.some((v) => v.disposition !== "enforce")) {
      throw new Error(`no enforced script-src violation reported: ${JSON.stringify(r)}`);
    }
    return r;
  });
} finally {
  await browser.close();
  attacker.server.close();
  plainSite.server.close();
}
