//! The policy file (docs/policy.md): TOML, a `default` and `[[rule]]` tables, checked whole
//! before use; every error names the line and the field.

use super::rules::{Access, Origin, Pattern, Policy, Rule};
use serde::Deserialize;
use toml::Spanned;

/// The file's name in the state directory.
pub const FILE_NAME: &str = "policy.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    default: Option<Spanned<String>>,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    app: Option<Spanned<String>>,
    app_id: Option<Spanned<String>>,
    title: Option<Spanned<String>>,
    access: Spanned<String>,
}

/// The line (from 1) where byte `offset` of `text` is.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset.min(text.len()))
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Parses and checks a policy file's `text`; `path` names it in rules and messages. An error
/// is one line: `PATH line N: what is wrong`.
pub fn parse(text: &str, path: &str) -> Result<Policy, String> {
    let at = |offset: usize, what: String| format!("{path} line {}: {what}", line_of(text, offset));
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let what = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => at(span.start, what),
            None => format!("{path}: {what}"),
        }
    })?;
    let access = |v: &Spanned<String>, field: &str| {
        Access::parse(v.get_ref()).ok_or_else(|| {
            at(
                v.span().start,
                format!("{field} = {:?} is not one of {}", v.get_ref(), Access::NAMES),
            )
        })
    };
    let default = raw.default.as_ref().map(|d| access(d, "default")).transpose()?;
    let mut rules = Vec::with_capacity(raw.rule.len());
    for (i, spanned) in raw.rule.iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let r = spanned.get_ref();
        let pattern = |v: &Option<Spanned<String>>, field: &str| {
            v.as_ref()
                .map(|v| {
                    Pattern::new(v.get_ref()).map_err(|why| at(v.span().start, format!("{field} {why}")))
                })
                .transpose()
        };
        let rule = Rule {
            app: pattern(&r.app, "app")?,
            app_id: pattern(&r.app_id, "app_id")?,
            title: pattern(&r.title, "title")?,
            access: access(&r.access, "access")?,
            origin: Origin::File {
                path: path.to_string(),
                index: i + 1,
                line,
            },
        };
        if rule.app.is_none() && rule.app_id.is_none() && rule.title.is_none() {
            return Err(format!(
                "{path} line {line}: rule {} matches nothing: give at least one of app, app_id, title \
                 (the default covers every other window)",
                i + 1
            ));
        }
        rules.push(rule);
    }
    Ok(Policy {
        default: default.unwrap_or(Access::Allow),
        default_from: default.map(|_| path.to_string()),
        rules,
    })
}

/// The rules of the command-line shortcuts (`--deny APP`, `--observe-only APP`): each matches
/// the application name (a pattern, as `app` in the file).
pub fn flag_rules(deny: &[String], observe_only: &[String]) -> Result<Vec<Rule>, String> {
    let one = |app: &String, access: Access, flag: &'static str| {
        Ok(Rule {
            app: Some(Pattern::new(app).map_err(|why| format!("{flag} {app:?}: the name {why}"))?),
            app_id: None,
            title: None,
            access,
            origin: Origin::Flag(flag),
        })
    };
    deny.iter()
        .map(|a| one(a, Access::Deny, "--deny"))
        .chain(
            observe_only
                .iter()
                .map(|a| one(a, Access::ObserveOnly, "--observe-only")),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"# the person's policy
default = "allow"

[[rule]]
app = "KeePassXC"
access = "deny"

[[rule]]
app = "Firefox"
title = "*Bank*"
access = "observe-only"

[[rule]]
app_id = "xterm"
access = "ask"
"#;

    #[test]
    fn the_example_parses_with_places() {
        let p = parse(EXAMPLE, "policy.toml").unwrap();
        assert_eq!(p.default, Access::Allow);
        assert_eq!(p.default_from.as_deref(), Some("policy.toml"));
        assert_eq!(p.rules.len(), 3);
        let lines: Vec<_> = p
            .rules
            .iter()
            .map(|r| match &r.origin {
                Origin::File { index, line, .. } => (*index, *line),
                Origin::Flag(_) => (0, 0),
            })
            .collect();
        assert_eq!(lines, [(1, 4), (2, 8), (3, 13)]);
        assert_eq!(p.rules[1].access, Access::ObserveOnly);
        assert_eq!(p.rules[1].title.as_ref().unwrap().as_str(), "*Bank*");
        assert_eq!(p.rules[2].app_id.as_ref().unwrap().as_str(), "xterm");
    }

    #[test]
    fn an_empty_file_allows_everything() {
        let p = parse("", "p").unwrap();
        assert!(p.allows_everything() && p.default_from.is_none());
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let bad = |text: &str| parse(text, "p.toml").unwrap_err();
        let e = bad("default = \"allow\"\n[[rule]]\napp = \"x\"\naccess = \"denied\"\n");
        assert_eq!(
            e,
            "p.toml line 4: access = \"denied\" is not one of allow, deny, ask, observe-only"
        );
        let e = bad("[[rule]]\napp = \"x\"\nacess = \"deny\"\n");
        assert!(
            e.starts_with("p.toml line 3: ") && e.contains("unknown field `acess`"),
            "{e}"
        );
        let e = bad("[[rule]]\napp = \"x\"\n");
        assert!(
            e.starts_with("p.toml line 1: ") && e.contains("missing field `access`"),
            "{e}"
        );
        let e = bad("\n\n[[rule]]\naccess = \"deny\"\n");
        assert!(e.starts_with("p.toml line 3: rule 1 matches nothing"), "{e}");
        let e = bad("[[rule]]\napp = \"x\"\ntitle = \"[oops\"\naccess = \"deny\"\n");
        assert!(
            e.starts_with("p.toml line 3: title is not a valid pattern"),
            "{e}"
        );
        let e = bad("[[rule]]\napp = \"\"\naccess = \"deny\"\n");
        assert!(e.starts_with("p.toml line 2: app is empty"), "{e}");
        let e = bad("default = \"block\"\n");
        assert!(e.starts_with("p.toml line 1: default = \"block\""), "{e}");
        let e = bad("[[rule]\napp = 1\n");
        assert!(e.starts_with("p.toml line 1: "), "{e}");
        let e = bad("[[rule]]\napp = 1\naccess = \"deny\"\n");
        assert!(e.starts_with("p.toml line 2: ") && !e.contains('\n'), "{e}");
        let e = bad("rules = []\n");
        assert!(e.contains("unknown field `rules`"), "{e}");
    }

    #[test]
    fn flags_become_app_rules_in_order() {
        let rules = flag_rules(&["KeePass*".into()], &["xterm".into()]).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(
            (rules[0].access, rules[1].access),
            (Access::Deny, Access::ObserveOnly)
        );
        assert_eq!(rules[0].origin, Origin::Flag("--deny"));
        assert!(flag_rules(&["".into()], &[])
            .unwrap_err()
            .starts_with("--deny \"\""));
    }
}
