// Raises and focuses the window whose KWin UUID is `want` (set by the runner); replies
// "true" when it was found.
var ws = workspace;
var all = typeof ws.windowList === "function" ? ws.windowList() : ws.clientList();
var found = false;
for (var i = 0; i < all.length; i++) {
  var c = all[i];
  if (c && String(c.internalId) === want) {
    if (c.minimized) c.minimized = false;
    if ("activeWindow" in ws) ws.activeWindow = c;
    else ws.activeClient = c;
    found = true;
  }
}
reply(found ? "true" : "false");
