// First contact with the web UI in real Chromium (tests/e2e/test_first_contact.py): the login
// page shows no machine/window pickers; a wrong secret says where the secret is; a login URL
// pasted into the same tab logs in there. Prints one JSON line per check: {check, ok, detail}.
//
// Environment: LSM_WEB_URL (http://host:port/), LSM_WEB_SECRET.
import { launch, waitFor } from "./lib.mjs";

const url = process.env.LSM_WEB_URL;
const secret = process.env.LSM_WEB_SECRET;

function report(check, ok, detail) {
  console.log(JSON.stringify({ check, ok: !!ok, detail }));
}

/** Whether the element takes space on the page (what a person sees), not just its attribute. */
const shown = (page, selector) =>
  page.evaluate((s) => {
    const el = document.querySelector(s);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return getComputedStyle(el).display !== "none" && r.width > 0 && r.height > 0;
  }, selector);

const browser = await launch();
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await page.waitForSelector("#login:not([hidden])", { timeout: 15_000 });
  const pickers = {
    picker: await shown(page, "#picker"),
    machine: await shown(page, "#machine"),
    window: await shown(page, "#window"),
    login: await shown(page, "#login"),
  };
  report("login page hides the pickers", pickers.login && !pickers.picker && !pickers.machine && !pickers.window, pickers);

  await page.fill("#secret", "not-the-secret");
  await page.click("#login button[type=submit]");
  const said = await waitFor(
    () => page.evaluate(() => document.querySelector("#login-error").textContent.trim()),
    { what: "the refusal" },
  );
  report("a wrong secret says where the secret is", /lsm serve/.test(said) && /#secret=/.test(said), said);

  // The person pastes the login URL into this tab's address bar: only the fragment changes.
  await page.goto(`${url}#secret=${encodeURIComponent(secret)}`);
  let inSameTab;
  try {
    await page.waitForSelector("#desk:not([hidden])", { timeout: 15_000 });
    inSameTab = {
      desk: await shown(page, "#desk"),
      picker: await shown(page, "#picker"),
      login: await shown(page, "#login"),
      address: page.url(),
    };
  } catch (e) {
    inSameTab = { error: String(e.message || e), login_error: await page.textContent("#login-error") };
  }
  report(
    "a pasted login URL logs in in the same tab",
    inSameTab.desk && inSameTab.picker && !inSameTab.login && !String(inSameTab.address).includes("secret"),
    inSameTab,
  );
} catch (e) {
  report("setup", false, String(e.stack || e));
} finally {
  await browser.close();
}
