// What the Desktop page says about one machine: logs in, picks LSM_WEBUI_MACHINE, prints
// {"info": the machine line, "option": its picker entry, "status": the status line} as JSON;
// with LSM_WEBUI_WINDOW (a title) also picks that window and adds its first frame's geometry.
import { launch, login, pickWindow, waitFor } from "./lib.mjs";

const machine = process.env.LSM_WEBUI_MACHINE || "local";
const browser = await launch();
try {
  const page = await browser.newPage();
  await login(page, process.env.LSM_WEB_URL, process.env.LSM_WEB_SECRET);
  await page.waitForSelector(`#machine option[value="${machine}"]`, { state: "attached", timeout: 15_000 });
  await page.selectOption("#machine", machine);
  const info = await waitFor(async () => {
    const t = await page.textContent("#machine-info");
    return t.startsWith(machine) ? t : null;
  }, { what: "the machine line" });
  const option = await page.textContent(`#machine option[value="${machine}"]`);
  let geometry = null;
  if (process.env.LSM_WEBUI_WINDOW) {
    await pickWindow(page, machine, process.env.LSM_WEBUI_WINDOW);
    geometry = await page.getAttribute("#view", "data-geometry");
  }
  console.log(JSON.stringify({ info, option, geometry, url: page.url(), status: await page.textContent("#status") }));
} finally {
  await browser.close();
}
