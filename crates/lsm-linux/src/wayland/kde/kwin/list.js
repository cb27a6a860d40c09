// lsm's window list on KWin (5.27 and 6), in the format of lsm's GNOME Shell extension:
// bottom to top, frame and buffer rects in logical px. `reply(json)` is defined by the runner.
var ws = workspace;
var all = typeof ws.windowList === "function" ? ws.windowList() : ws.clientList();
// A stable numeric id from KWin's window UUID (two 32-bit FNV-1a hashes, 48 bits in all:
// exact in a JavaScript number).
function fnv(s, h) {
  for (var i = 0; i < s.length; i++) {
    h = (h ^ s.charCodeAt(i)) >>> 0;
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h >>> 0;
}
function idOf(c) {
  var u = String(c.internalId);
  return String(fnv(u, 2166136261) * 65536 + (fnv(u, 84696351) & 0xffff));
}
function rect(g) {
  return { x: Math.round(g.x), y: Math.round(g.y), width: Math.round(g.width), height: Math.round(g.height) };
}
// Meta.WindowType numbers, as the extension reports them.
function typeOf(c) {
  if (c.normalWindow) return 0;
  if (c.dialog) return c.modal ? 4 : 3;
  if (c.utility) return 7;
  if (c.splash) return 8;
  if (c.toolbar) return 5;
  if (c.desktopWindow) return 1;
  if (c.dock) return 2;
  return 6;
}
var sorted = [];
for (var i = 0; i < all.length; i++) if (all[i] && !all[i].deleted) sorted.push(all[i]);
sorted.sort(function (a, b) { return a.stackingOrder - b.stackingOrder; });
var windows = sorted.map(function (c) {
  var out = c.output;
  return {
    id: idOf(c),
    uuid: String(c.internalId),
    title: String(c.caption || ""),
    app_id: String(c.desktopFileName || ""),
    wm_class: String(c.resourceClass || ""),
    wm_class_instance: String(c.resourceName || ""),
    pid: c.pid || 0,
    client: c.windowId ? "x11" : "wayland",
    type: typeOf(c),
    frame: rect(c.frameGeometry),
    buffer: rect(c.bufferGeometry),
    scale: (out && out.scale) || 1,
    focus: !!c.active,
    minimized: !!c.minimized,
    transient_for: c.transientFor ? idOf(c.transientFor) : null,
    modal: !!c.modal
  };
});
var screen = ws.virtualScreenGeometry;
reply(JSON.stringify({ version: 1, windows: windows, monitors: screen ? [{ rect: rect(screen), scale: 1 }] : [] }));
