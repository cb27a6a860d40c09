#!/usr/bin/python3
"""lsm Qt tree app: a small Qt5 (PyQt5) window with a tree, a menu bar and a modal dialog.

Run with the system python3 (python3-pyqt5):  /usr/bin/python3 tests/apps/lsm_qttree.py

It has what the Qt part of issue 9 is about, in a form whose every effect is checkable outside
lsm: the status label's accessible name (and text) says what happened last, and every event is
appended as one JSON line to $LSM_QTTREE_LOG when that is set.

Window title "lsm qt tree". Controls (accessible name -> effect):
  "Items"            QTreeWidget, two columns ("Name", "Size"); top-level items "Fruit"
                     (children "Apple", "Banana", "Cherry") and "Vegetables" (children "Carrot",
                     "Leek"); every item is checkable. Selecting an item -> "Selected: <name>";
                     checking -> "Checked: <name> on|off"; expanding -> "Expanded: <name>".
  menu "File"        "Open dialog..." opens a modal QDialog "lsm modal dialog" (exec_(), a nested
                     event loop) with a line edit "Dialog entry" and buttons "OK"/"Cancel";
                     -> "Dialog opened: N" when shown, "Dialog accepted: <text>" / "Dialog
                     rejected" when closed. "Quit" closes the window.
  menu "Edit"        "Clear status" -> "Status: cleared".
  "Status"           QLabel with the last event.
The log also gets {"event": "current", "item": ...} when the tree's current item changes (what
the application's own logic follows; a pointer click moves it, a bare accessibility selection
does not).
"""

import json
import os
import sys
import time

from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import (
    QAction,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMainWindow,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

TITLE = "lsm qt tree"
DIALOG_TITLE = "lsm modal dialog"
TREE = {"Fruit": ["Apple", "Banana", "Cherry"], "Vegetables": ["Carrot", "Leek"]}
_log_path = os.environ.get("LSM_QTTREE_LOG") or None


def emit(event, **fields):
    rec = {"t": round(time.time(), 6), "event": event}
    rec.update(fields)
    line = json.dumps(rec, ensure_ascii=False)
    print(line, flush=True)
    if _log_path:
        try:
            with open(_log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError:
            pass


class Main(QMainWindow):
    def __init__(self):
        super().__init__()
        self.setWindowTitle(TITLE)
        self.dialogs_opened = 0
        body = QWidget()
        layout = QVBoxLayout(body)
        self.tree = QTreeWidget()
        self.tree.setAccessibleName("Items")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Name", "Size"])
        for top, kids in TREE.items():
            parent = QTreeWidgetItem(self.tree, [top, str(len(kids))])
            parent.setFlags(parent.flags() | Qt.ItemIsUserCheckable)
            parent.setCheckState(0, Qt.Unchecked)
            for k in kids:
                child = QTreeWidgetItem(parent, [k, str(len(k))])
                child.setFlags(child.flags() | Qt.ItemIsUserCheckable)
                child.setCheckState(0, Qt.Unchecked)
        self.tree.expandAll()
        self.tree.itemSelectionChanged.connect(self.on_selection)
        # What the application itself works on (its "current" item), as many Qt programs do:
        # a selection made through the accessibility API alone does not move it.
        self.tree.currentItemChanged.connect(
            lambda item, _old: emit("current", item=item.text(0) if item else None)
        )
        self.tree.itemChanged.connect(self.on_item_changed)
        self.tree.itemExpanded.connect(lambda it: self.status(f"Expanded: {it.text(0)}", "expanded"))
        self.tree.itemCollapsed.connect(lambda it: self.status(f"Collapsed: {it.text(0)}", "collapsed"))
        layout.addWidget(self.tree)
        self.label = QLabel("Status: ready")
        self.label.setAccessibleName("Status: ready")
        layout.addWidget(self.label)
        self.setCentralWidget(body)

        file_menu = self.menuBar().addMenu("&File")
        open_dialog = QAction("&Open dialog...", self)
        open_dialog.triggered.connect(self.open_dialog)
        file_menu.addAction(open_dialog)
        quit_action = QAction("&Quit", self)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        clear = QAction("&Clear status", self)
        clear.triggered.connect(lambda: self.status("Status: cleared", "cleared"))
        edit_menu.addAction(clear)
        self.resize(420, 360)

    def status(self, text, event, **fields):
        self.label.setText(text)
        self.label.setAccessibleName(text)
        emit(event, status=text, **fields)

    def on_selection(self):
        items = self.tree.selectedItems()
        names = ", ".join(i.text(0) for i in items)
        self.status(f"Selected: {names}", "selected", items=[i.text(0) for i in items])

    def on_item_changed(self, item, column):
        if column == 0:
            on = item.checkState(0) == Qt.Checked
            self.status(f"Checked: {item.text(0)} {'on' if on else 'off'}", "checked", item=item.text(0), on=on)

    def open_dialog(self):
        dlg = QDialog(self)
        dlg.setWindowTitle(DIALOG_TITLE)
        dlg.setModal(True)
        lay = QVBoxLayout(dlg)
        entry = QLineEdit()
        entry.setAccessibleName("Dialog entry")
        lay.addWidget(entry)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(dlg.accept)
        buttons.rejected.connect(dlg.reject)
        lay.addWidget(buttons)
        self.dialogs_opened += 1
        self.status(f"Dialog opened: {self.dialogs_opened}", "dialog_opened", count=self.dialogs_opened)
        # exec_() runs a nested event loop: an AT-SPI DoAction that triggered this blocks in it.
        if dlg.exec_() == QDialog.Accepted:
            self.status(f"Dialog accepted: {entry.text()}", "dialog_accepted", text=entry.text())
        else:
            self.status("Dialog rejected", "dialog_rejected")


def main():
    app = QApplication(sys.argv)
    app.setApplicationName("lsm_qttree")
    app.setDesktopFileName("lsm_qttree")
    w = Main()
    w.show()
    emit("ready", pid=os.getpid())
    sys.exit(app.exec_())


if __name__ == "__main__":
    main()
