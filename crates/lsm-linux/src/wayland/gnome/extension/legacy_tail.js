
function init() {
    return new LsmWindowsExport();
}
