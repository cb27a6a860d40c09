"""The source layout: no import cycles between the files of any workspace crate, and nothing in
lsm-linux's AT-SPI half that names a window system (tests/layout/check_cycles.py). The checker
itself is tried on small made-up crates, so that it is seen to fail where it must.

    .venv/bin/python -m pytest tests/layout -q      # about a second
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "tests" / "layout" / "check_cycles.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), *args], capture_output=True, text=True, timeout=60)


def make_crate(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    crate = tmp_path / name
    for rel, text in files.items():
        f = crate / "src" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return crate


def check(tmp_path: Path, files: dict[str, str], name: str = "demo") -> subprocess.CompletedProcess:
    """The checker's verdict on a made-up crate of these files."""
    return run(str(make_crate(tmp_path, name, files)))


def test_workspace_has_no_new_cycles_and_a_clean_atspi_half():
    r = run("--workspace")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "7 crate(s) checked" in r.stdout or "crate(s) checked" in r.stdout


def test_lsm_linux_has_the_four_parts():
    src = ROOT / "crates" / "lsm-linux" / "src"
    for folder in ("atspi", "x11", "wayland/gnome", "wayland/kde", "wayland/portal", "backend", "window"):
        mod = src / folder / "mod.rs"
        assert mod.exists(), folder
        assert mod.read_text().startswith("//! "), f"{folder}/mod.rs has no module doc"
    assert (src / "connect.rs").exists()


def test_a_two_file_cycle_fails(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::Bee;\npub struct Ay(Bee);\n",
            "b.rs": "pub struct Bee;\npub fn f() -> usize { std::mem::size_of::<crate::a::Ay>() }\n",
        },
    )
    assert r.returncode == 1
    assert "cycle among 2 files [a.rs, b.rs]" in r.stdout, r.stdout


def test_a_three_file_cycle_fails(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": "pub fn a() { crate::b::b() }\n",
            "b.rs": "pub fn b() { crate::c::c() }\n",
            "c.rs": "use crate::a::a;\npub fn c() { a() }\n",
        },
    )
    assert r.returncode == 1
    assert "cycle among 3 files [a.rs, b.rs, c.rs]" in r.stdout, r.stdout


def test_a_cycle_through_a_facade_names_the_defining_files(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "pub mod x;\nmod z;\n",
            "x/mod.rs": "mod y;\npub use y::Why;\n",
            "x/y.rs": "pub struct Why;\nfn g() { crate::z::zed(); }\n",
            "z.rs": "pub fn zed() { let _ = super::x::Why; }\n",
        },
    )
    assert r.returncode == 1
    # z uses Why through the facade x/mod.rs, which is followed to x/y.rs
    assert "x/y.rs" in r.stdout and "z.rs" in r.stdout and "x/mod.rs" not in r.stdout.split("]")[0], r.stdout


def test_a_parent_facade_and_mod_declarations_are_not_cycles(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "pub mod p;\n",
            "p/mod.rs": "//! facade\nmod inner;\nmod user;\npub use inner::*;\n#[cfg(test)]\nmod tests { use super::*; }\n",
            "p/inner.rs": "pub struct Thing;\n",
            "p/user.rs": "use crate::p::Thing;\nfn u(_: Thing) {}\n",
        },
    )
    assert r.returncode == 0, r.stdout


def test_a_child_using_its_defining_parent_that_re_exports_it_is_a_cycle(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "mod p;\n",
            "p.rs": "mod c;\npub use c::Cee;\npub struct Pee;\n",
            "p/c.rs": "use super::*;\npub struct Cee(Pee);\n",
        },
    )
    assert r.returncode == 1, r.stdout
    assert "cycle among 2 files" in r.stdout


def test_the_atspi_half_may_not_name_a_window_system(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "pub mod atspi;\npub mod x11;\n",
            "atspi/mod.rs": "//! a\npub fn walk() -> u32 { crate::x11::ROOT }\n",
            "x11/mod.rs": "//! x\npub const ROOT: u32 = 1;\n",
        }, name="lsm-linux",
    )
    assert r.returncode == 1
    assert "atspi/mod.rs mentions crate::x11" in r.stdout, r.stdout
    assert "atspi/mod.rs uses x11/mod.rs" in r.stdout, r.stdout


def test_comments_and_strings_are_not_uses(tmp_path):
    r = check(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::Bee;\npub fn f(_: Bee) {}\n",
            "b.rs": 'pub struct Bee;\n// crate::a::f\nconst S: &str = "crate::a::f";\n/* crate::a::f */\n',
        },
    )
    assert r.returncode == 0, r.stdout
