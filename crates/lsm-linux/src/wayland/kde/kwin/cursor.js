// Where the pointer is (logical px).
var p = workspace.cursorPos;
reply(JSON.stringify({ x: p.x, y: p.y }));
