//! A policy's rules and how a window is matched against them: the first rule whose every given
//! pattern matches decides; no rule matching means the policy's default.

use crate::model::WindowInfo;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What the model may do with a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Observe and act (the default).
    Allow,
    /// Neither observe (`gui_state`) nor act (`gui_action`).
    Deny,
    /// Observe; every action needs a person's approval.
    Ask,
    /// Observe only: every action is refused.
    ObserveOnly,
}

impl Access {
    pub const NAMES: &'static str = "allow, deny, ask, observe-only";

    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            "ask" => Some(Self::Ask),
            "observe-only" => Some(Self::ObserveOnly),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Ask => "ask",
            Self::ObserveOnly => "observe-only",
        }
    }

    /// What `gui_list` shows: nothing for `allow` (saves tokens on every window).
    pub fn mark(self) -> Option<Self> {
        (self != Self::Allow).then_some(self)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A shell-style pattern (`*`, `?`, `[abc]`), matched against the whole text, ignoring case.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    compiled: glob::Pattern,
}

impl Pattern {
    pub fn new(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("is empty; give a name or a pattern such as \"*Bank*\"".into());
        }
        let compiled = glob::Pattern::new(text).map_err(|e| format!("is not a valid pattern: {}", e.msg))?;
        Ok(Self {
            text: text.to_string(),
            compiled,
        })
    }

    pub fn matches(&self, text: &str) -> bool {
        const OPTIONS: glob::MatchOptions = glob::MatchOptions {
            case_sensitive: false,
            require_literal_separator: false,
            require_literal_leading_dot: false,
        };
        self.compiled.matches_with(text, OPTIONS)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Where a rule was written, for the messages that name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Rule number `index` (from 1) of the file, starting on `line`.
    File { path: String, index: usize, line: usize },
    /// A command-line shortcut such as `--deny APP`.
    Flag(&'static str),
}

/// One rule: the windows it matches (every pattern given must match) and their access.
#[derive(Debug, Clone)]
pub struct Rule {
    pub app: Option<Pattern>,
    pub app_id: Option<Pattern>,
    pub title: Option<Pattern>,
    pub access: Access,
    pub origin: Origin,
}

impl Rule {
    pub fn matches(&self, w: &WindowInfo) -> bool {
        let fits = |p: &Option<Pattern>, text: &str| p.as_ref().is_none_or(|p| p.matches(text));
        fits(&self.app, &w.app) && fits(&self.app_id, &w.app_id) && fits(&self.title, &w.title)
    }

    /// The rule's patterns as written, e.g. `app = "KeePassXC", title = "*Bank*"`.
    pub fn patterns(&self) -> String {
        [
            ("app", &self.app),
            ("app_id", &self.app_id),
            ("title", &self.title),
        ]
        .iter()
        .filter_map(|(k, p)| p.as_ref().map(|p| format!("{k} = {:?}", p.as_str())))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

impl fmt::Display for Rule {
    /// Names the rule for a person: where it is and what it matches.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::File { path, index, line } => write!(
                f,
                "rule {index} of {path} (line {line}: {}, access = \"{}\")",
                self.patterns(),
                self.access
            ),
            Origin::Flag(flag) => {
                let app = self.app.as_ref().map(Pattern::as_str).unwrap_or("");
                write!(f, "the command line's {flag} {app:?}")
            }
        }
    }
}

/// The rules in force and the access of every window no rule matches.
#[derive(Debug, Clone)]
pub struct Policy {
    pub default: Access,
    /// Where `default` was set (None: not written anywhere, so `allow`).
    pub default_from: Option<String>,
    pub rules: Vec<Rule>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            default: Access::Allow,
            default_from: None,
            rules: Vec::new(),
        }
    }
}

/// A window's access and the rule that gave it (None: the policy's default).
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    pub access: Access,
    pub rule: Option<&'a Rule>,
}

impl Policy {
    /// First match wins: rules are read in order (command-line shortcuts first, then the file
    /// from top to bottom) and the first rule matching the window decides.
    pub fn decide(&self, w: &WindowInfo) -> Decision<'_> {
        match self.rules.iter().find(|r| r.matches(w)) {
            Some(rule) => Decision {
                access: rule.access,
                rule: Some(rule),
            },
            None => Decision {
                access: self.default,
                rule: None,
            },
        }
    }

    /// Nothing is restricted: every window is allowed whatever it is (no need to read it).
    pub fn allows_everything(&self) -> bool {
        self.default == Access::Allow && self.rules.iter().all(|r| r.access == Access::Allow)
    }

    /// Whether a rule looks at window titles (which change while the window lives).
    pub fn reads_titles(&self) -> bool {
        self.rules.iter().any(|r| r.title.is_some())
    }

    /// Names the default for a person.
    pub fn describe_default(&self) -> String {
        match &self.default_from {
            Some(path) => format!("the policy's default (default = \"{}\" in {path})", self.default),
            None => format!("the policy's default ({})", self.default),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;

    fn window(app: &str, app_id: &str, title: &str) -> WindowInfo {
        WindowInfo {
            app_id: app_id.into(),
            ..WindowInfo::new("0x1", title, app, Rect::new(0, 0, 10, 10))
        }
    }

    fn rule(app: Option<&str>, title: Option<&str>, access: Access, index: usize) -> Rule {
        Rule {
            app: app.map(|p| Pattern::new(p).unwrap()),
            app_id: None,
            title: title.map(|p| Pattern::new(p).unwrap()),
            access,
            origin: Origin::File {
                path: "p.toml".into(),
                index,
                line: index * 3,
            },
        }
    }

    #[test]
    fn patterns_match_the_whole_text_ignoring_case() {
        let p = Pattern::new("*bank*").unwrap();
        assert!(p.matches("My Online BANK - Firefox"));
        assert!(!p.matches("Firefox"));
        let exact = Pattern::new("xterm").unwrap();
        assert!(exact.matches("XTerm"));
        assert!(!exact.matches("xterm2"), "no implicit wildcard");
        assert!(Pattern::new("/path/with/slashes*")
            .unwrap()
            .matches("/path/with/slashes/x"));
        assert!(Pattern::new("").is_err());
        assert!(Pattern::new("[a").is_err());
    }

    #[test]
    fn every_given_pattern_must_match() {
        let r = Rule {
            app_id: Some(Pattern::new("navigator").unwrap()),
            ..rule(Some("Firefox"), Some("*Bank*"), Access::Deny, 1)
        };
        assert!(r.matches(&window("Firefox", "Navigator", "Bank of X")));
        assert!(!r.matches(&window("Firefox", "Navigator", "News")));
        assert!(!r.matches(&window("Firefox", "other", "Bank of X")));
        assert!(!r.matches(&window("Chromium", "Navigator", "Bank of X")));
    }

    #[test]
    fn first_matching_rule_wins_and_the_default_covers_the_rest() {
        let policy = Policy {
            default: Access::ObserveOnly,
            default_from: Some("p.toml".into()),
            rules: vec![
                rule(Some("Firefox"), Some("*Bank*"), Access::Deny, 1),
                rule(Some("Firefox"), None, Access::Allow, 2),
                rule(Some("Firefox"), Some("*Bank*"), Access::Allow, 3),
            ],
        };
        let d = policy.decide(&window("Firefox", "", "The Bank"));
        assert_eq!(d.access, Access::Deny);
        assert!(matches!(d.rule.unwrap().origin, Origin::File { index: 1, .. }));
        let d = policy.decide(&window("Firefox", "", "News"));
        assert_eq!(d.access, Access::Allow);
        let d = policy.decide(&window("xterm", "xterm", "bash"));
        assert_eq!(d.access, Access::ObserveOnly);
        assert!(d.rule.is_none());
        assert!(policy
            .describe_default()
            .contains("default = \"observe-only\" in p.toml"));
    }

    #[test]
    fn a_rule_names_itself_with_its_place_and_patterns() {
        let r = rule(Some("KeePassXC"), None, Access::Deny, 2);
        assert_eq!(
            r.to_string(),
            "rule 2 of p.toml (line 6: app = \"KeePassXC\", access = \"deny\")"
        );
        let flag = Rule {
            origin: Origin::Flag("--deny"),
            ..rule(Some("xterm"), None, Access::Deny, 1)
        };
        assert_eq!(flag.to_string(), "the command line's --deny \"xterm\"");
    }

    #[test]
    fn allow_everything_only_without_restrictions() {
        assert!(Policy::default().allows_everything());
        let p = Policy {
            rules: vec![rule(Some("a"), None, Access::Allow, 1)],
            ..Policy::default()
        };
        assert!(p.allows_everything());
        let p = Policy {
            rules: vec![rule(Some("a"), Some("t"), Access::Ask, 1)],
            ..Policy::default()
        };
        assert!(!p.allows_everything() && p.reads_titles());
    }
}
