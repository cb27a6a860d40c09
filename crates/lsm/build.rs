//! Records the commit the binary is built from, for `lsm --version` (`LSM_GIT_COMMIT` wins, for
//! builds from a source archive; "unknown" outside a git checkout).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LSM_GIT_COMMIT");
    let commit = std::env::var("LSM_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| {
            let out = Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()?;
            let hash = String::from_utf8(out.stdout).ok()?.trim().to_string();
            (out.status.success() && !hash.is_empty()).then_some(hash)
        });
    // Rebuild when HEAD moves (a commit, a checkout) so the version never names an old commit.
    if let Ok(out) = Command::new("git").args(["rev-parse", "--git-dir"]).output() {
        if let Ok(dir) = String::from_utf8(out.stdout) {
            let dir = dir.trim();
            if !dir.is_empty() {
                println!("cargo:rerun-if-changed={dir}/HEAD");
                println!("cargo:rerun-if-changed={dir}/refs/heads");
            }
        }
    }
    println!(
        "cargo:rustc-env=LSM_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
}
