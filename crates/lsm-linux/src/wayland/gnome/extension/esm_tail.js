
export default class LsmWindowsExtension extends Extension {
    enable() {
        this._export = new LsmWindowsExport();
        this._export.enable();
    }

    disable() {
        this._export?.disable();
        this._export = null;
    }
}
