//! The policy in force, re-read when its file changes (its modification time and size are
//! looked at on each call: one `stat`, no watcher thread). A file that does not parse, or that
//! went away, leaves the last good policy in force; the reason is logged once per change and
//! kept for `gui_list`'s notes.

use super::file::{self, parse};
use super::rules::{Policy, Rule};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// What a file looked like when it was last read: None when it did not exist.
type Stamp = Option<(Option<SystemTime>, u64)>;

fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path).ok().map(|m| (m.modified().ok(), m.len()))
}

struct Loaded {
    policy: Arc<Policy>,
    stamp: Stamp,
    /// Why the file on disk is not the policy in force.
    problem: Option<String>,
}

/// The policy of this machine: the command line's shortcuts, then the file's rules.
pub struct LivePolicy {
    path: Option<PathBuf>,
    flags: Vec<Rule>,
    loaded: Mutex<Loaded>,
}

impl LivePolicy {
    /// Reads the policy file at `path` (None: no file, only `flags`). A missing file means no
    /// file rules (until it is written); a malformed one is an error: nothing starts with a
    /// policy the person cannot have meant.
    pub fn open(path: Option<PathBuf>, flags: Vec<Rule>) -> Result<Self, String> {
        let (policy, stamp) = match &path {
            Some(p) => {
                let stamp = stamp(p);
                let policy = match stamp {
                    Some(_) => Some(read(p)?),
                    None => None,
                };
                (compose(&flags, policy), stamp)
            }
            None => (compose(&flags, None), None),
        };
        if let Some(p) = &path {
            let rules = policy.rules.len();
            match stamp {
                Some(_) => tracing::info!(
                    "policy: {} ({rules} rules with the command line's, default {})",
                    p.display(),
                    policy.default
                ),
                None => tracing::info!("policy: {} does not exist (yet): {rules} rules", p.display()),
            }
        }
        Ok(Self {
            path,
            flags,
            loaded: Mutex::new(Loaded {
                policy: Arc::new(policy),
                stamp,
                problem: None,
            }),
        })
    }

    /// A policy given whole (tests, and a machine with no file).
    pub fn fixed(policy: Policy) -> Self {
        Self {
            path: None,
            flags: Vec::new(),
            loaded: Mutex::new(Loaded {
                policy: Arc::new(policy),
                stamp: None,
                problem: None,
            }),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The policy in force now (the file re-read if it changed) and, when the file on disk is
    /// not that policy, why.
    pub fn current(&self) -> (Arc<Policy>, Option<String>) {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(path) = &self.path {
            let now = stamp(path);
            if now != loaded.stamp {
                loaded.stamp = now;
                self.reload(path, now.is_some(), &mut loaded);
            }
        }
        (loaded.policy.clone(), loaded.problem.clone())
    }

    fn reload(&self, path: &Path, exists: bool, loaded: &mut Loaded) {
        let outcome = if exists {
            read(path)
        } else {
            Err(format!(
                "{} is gone (write an empty file to drop every rule)",
                path.display()
            ))
        };
        match outcome {
            Ok(policy) => {
                let policy = compose(&self.flags, Some(policy));
                tracing::info!(
                    "policy: {} re-read: {} rules with the command line's, default {}",
                    path.display(),
                    policy.rules.len(),
                    policy.default
                );
                loaded.policy = Arc::new(policy);
                loaded.problem = None;
            }
            Err(why) => {
                let problem = format!("policy file not used: {why}; the last good policy stays in force");
                tracing::warn!("{problem}");
                loaded.problem = Some(problem);
            }
        }
    }
}

fn read(path: &Path) -> Result<Policy, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// The command line's rules first (first match wins: they cannot be overridden by the file),
/// then the file's.
fn compose(flags: &[Rule], file: Option<Policy>) -> Policy {
    let file = file.unwrap_or_default();
    Policy {
        rules: flags.iter().cloned().chain(file.rules).collect(),
        ..file
    }
}

/// The policy file of a state directory.
pub fn default_path(state_dir: &Path) -> PathBuf {
    state_dir.join(file::FILE_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;
    use crate::model::WindowInfo;
    use crate::policy::file::flag_rules;
    use crate::policy::rules::Access;

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lsm-policy-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("policy.toml")
    }

    fn access(live: &LivePolicy, app: &str) -> Access {
        let w = WindowInfo::new("0x1", "t", app, Rect::new(0, 0, 1, 1));
        live.current().0.decide(&w).access
    }

    #[test]
    fn edits_take_effect_and_bad_edits_keep_the_last_good_policy() {
        let path = tmp("edits");
        std::fs::write(&path, "[[rule]]\napp = \"a\"\naccess = \"deny\"\n").unwrap();
        let live = LivePolicy::open(Some(path.clone()), vec![]).unwrap();
        assert_eq!(access(&live, "a"), Access::Deny);
        std::fs::write(&path, "[[rule]]\napp = \"a\"\naccess = \"observe-only\"\n").unwrap();
        assert_eq!(access(&live, "a"), Access::ObserveOnly);
        // Malformed: the last good one stays, and says why.
        std::fs::write(&path, "[[rule]]\napp = \"a\"\naccess = \"nope\"\n").unwrap();
        assert_eq!(access(&live, "a"), Access::ObserveOnly);
        let problem = live.current().1.expect("a problem");
        assert!(problem.contains("line 3: access = \"nope\""), "{problem}");
        assert!(problem.contains("last good policy stays in force"), "{problem}");
        // Gone: still the last good one.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(access(&live, "a"), Access::ObserveOnly);
        assert!(live.current().1.unwrap().contains("is gone"));
        // Fixed: used, no problem.
        std::fs::write(&path, "default = \"deny\"\n").unwrap();
        assert_eq!(access(&live, "a"), Access::Deny);
        assert_eq!(access(&live, "b"), Access::Deny);
        assert!(live.current().1.is_none());
    }

    #[test]
    fn a_malformed_file_at_start_is_an_error_and_a_missing_one_is_no_rules() {
        let path = tmp("start");
        let _ = std::fs::remove_file(&path);
        let live = LivePolicy::open(Some(path.clone()), vec![]).unwrap();
        assert!(live.current().0.allows_everything());
        // Written later: picked up.
        std::fs::write(&path, "[[rule]]\napp = \"a\"\naccess = \"deny\"\n").unwrap();
        assert_eq!(access(&live, "a"), Access::Deny);
        std::fs::write(&path, "default = 3\n").unwrap();
        let Err(e) = LivePolicy::open(Some(path), vec![]) else {
            panic!("opened a malformed file")
        };
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn command_line_rules_come_first() {
        let path = tmp("flags");
        std::fs::write(&path, "[[rule]]\napp = \"a\"\naccess = \"allow\"\n").unwrap();
        let live = LivePolicy::open(Some(path), flag_rules(&["a".into()], &[]).unwrap()).unwrap();
        assert_eq!(access(&live, "a"), Access::Deny);
    }
}
