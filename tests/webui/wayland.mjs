// The web UI's Desktop page in real Chromium driving a native Wayland window: the GTK3 test app
// in the headless GNOME Shell (run by tests/wayland/test_webui.py). One JSON line per scenario.
//
// Environment: LSM_WEB_URL, LSM_WEB_SECRET; LSM_WL_OFFSET ("dx,dy": where the window starts in
// the app's surface, from the shell, since GTK 3's AT-SPI extents count from the surface there).
import { launch, login, pickWindow, pagePoint, probe, report, scenario, sleep, waitFor } from "./lib.mjs";

const [DX, DY] = (process.env.LSM_WL_OFFSET || "0,0").split(",").map(Number);

async function clickOn(page, name) {
  const e = probe(name).extents;
  const q = await pagePoint(page, Math.round(e.x - DX + e.width / 2), Math.round(e.y - DY + e.height / 2));
  await page.mouse.click(q.x, q.y);
}

async function main() {
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await scenario("login", async () => {
    await login(page, process.env.LSM_WEB_URL, process.env.LSM_WEB_SECRET);
    const info = await waitFor(async () => {
      const t = await page.textContent("#machine-info");
      return /backend/.test(t) ? t : null;
    }, { what: "the machine's backend on the page" });
    if (!/backend linux-wayland-gnome/.test(info)) throw new Error(`not the GNOME Wayland backend: ${info}`);
    return { info };
  });
  await scenario("pick_window", async () => {
    await pickWindow(page, "local", "lsm test app");
    return { geometry: await page.evaluate(() => window.lsmDesk.geometry) };
  });
  await scenario("click_button", async () => {
    const before = probe("Pressed:", { match: "prefix", wait: 0 });
    const n = Number((before && before.name || "Pressed: 0").split(": ")[1]);
    await clickOn(page, "Press me");
    const after = probe(`Pressed: ${n + 1}`, { wait: 6 });
    if (!after) throw new Error(`AT-SPI never showed "Pressed: ${n + 1}"`);
    return { atspi: after.name };
  });
  await scenario("cjk_text", async () => {
    await clickOn(page, "Name entry");
    await sleep(500);
    await page.focus("#text");
    const cdp = await context.newCDPSession(page);
    for (const text of ["日", "日本", "日本語"]) {
      await cdp.send("Input.imeSetComposition", { text, selectionStart: text.length, selectionEnd: text.length });
      await sleep(120);
    }
    await cdp.send("Input.insertText", { text: "日本語" });
    const node = await waitFor(() => {
      const n = probe("Name entry", { wait: 0 });
      return n && String(n.text).endsWith("日本語") ? n : null;
    }, { what: "日本語 in the Name entry", timeout: 10000 });
    return { text: node.text };
  });
  await browser.close();
}

main().catch((e) => {
  report("setup", false, String(e && e.stack || e));
  process.exit(1);
});
