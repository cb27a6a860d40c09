//! Who may use the web UI: a secret exchanged for a session cookie, a per-session CSRF token
//! on every state-changing request, and Host/Origin checks against DNS rebinding and
//! cross-site requests.

use super::throttle::Throttle;
use lsm_remote::constant_time_eq;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const COOKIE: &str = "lsm_session";
pub const CSRF_HEADER: &str = "x-csrf-token";

/// More sessions than this: the least recently used goes.
const MAX_SESSIONS: usize = 64;

/// How long a session lives: `idle` since its last use, `lifetime` since its login at most
/// (a stolen cookie kept busy still ends).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionLimits {
    pub idle: Duration,
    pub lifetime: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(12 * 3600),
            lifetime: Duration::from_secs(24 * 3600),
        }
    }
}

/// 32 random bytes as 64 hex digits.
pub fn random_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct Session {
    csrf: String,
    created: Instant,
    last_used: Instant,
}

impl Session {
    fn alive(&self, now: Instant, limits: &SessionLimits) -> bool {
        now.duration_since(self.last_used) < limits.idle && now.duration_since(self.created) < limits.lifetime
    }
}

/// Where the web UI's secret comes from: a person whose login failed is told where to look.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SecretSource {
    /// Made at start and printed in the web UI's address on `lsm serve`'s standard error.
    #[default]
    Generated,
    /// `--web-secret-file PATH`.
    File(std::path::PathBuf),
    /// `$LSM_WEB_SECRET`.
    Environment,
}

impl SecretSource {
    /// Where the secret is, in words. The file's path only when the page is served on loopback
    /// (a person at this machine); beyond it, the flag alone.
    pub fn hint(&self, loopback: bool) -> String {
        match self {
            SecretSource::Generated => "the secret is in the web UI's login address: run `lsm web-url` on \
                 this machine (it is also on `lsm serve`'s standard error at start: `lsm: web UI \
                 http://...#secret=...`); open that whole address, or paste the part after #secret= here"
                .to_string(),
            SecretSource::File(path) if loopback => format!(
                "the secret is the content of {} (`lsm serve --web-secret-file`)",
                path.display()
            ),
            SecretSource::File(_) => {
                "the secret is the content of the file given to `lsm serve --web-secret-file`".to_string()
            }
            SecretSource::Environment => {
                "the secret is $LSM_WEB_SECRET of the `lsm serve` process".to_string()
            }
        }
    }
}

pub enum LoginRefusal {
    /// Wrong secret (never says what was wrong).
    Refused,
    /// Too many failures lately from this client.
    RateLimited,
}

pub struct Auth {
    secret: String,
    limits: SessionLimits,
    sessions: Mutex<HashMap<String, Session>>,
    throttle: Throttle,
}

impl Auth {
    pub fn new(secret: String) -> Self {
        Self::with_limits(secret, SessionLimits::default())
    }

    pub fn with_limits(secret: String, limits: SessionLimits) -> Self {
        Self {
            secret,
            limits,
            sessions: Mutex::new(HashMap::new()),
            throttle: Throttle::default(),
        }
    }

    /// Checks the secret sent by `client` (see `throttle::client_key`); on success a new
    /// session: (cookie token, CSRF token). Failures are counted per client.
    pub fn login(&self, client: &str, secret: &str) -> Result<(String, String), LoginRefusal> {
        let now = Instant::now();
        if self.throttle.limited(client, now) {
            return Err(LoginRefusal::RateLimited);
        }
        if !constant_time_eq(secret.as_bytes(), self.secret.as_bytes()) {
            self.throttle.failed(client, now);
            return Err(LoginRefusal::Refused);
        }
        let token = random_token();
        let csrf = random_token();
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|_, s| s.alive(now, &self.limits));
        if sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone())
            {
                sessions.remove(&oldest);
            }
        }
        sessions.insert(
            token.clone(),
            Session {
                csrf: csrf.clone(),
                created: now,
                last_used: now,
            },
        );
        Ok((token, csrf))
    }

    /// The session's CSRF token when `token` names a live session (and marks it used).
    pub fn session(&self, token: &str) -> Option<String> {
        let now = Instant::now();
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        // Looked up by a hash map (not constant time), but the token is 256 random bits and
        // the map's hashing is keyed randomly, so timing tells nothing useful.
        let s = sessions.get_mut(token)?;
        if !s.alive(now, &self.limits) {
            sessions.remove(token);
            return None;
        }
        s.last_used = now;
        Some(s.csrf.clone())
    }

    pub fn logout(&self, token: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(token);
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|part| {
        let (k, v) = part.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

/// Hosts and origins the UI answers to.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// Host names (no port) accepted in `Host`.
    pub hosts: Vec<String>,
    /// Full origins (`scheme://host[:port]`) accepted in `Origin`.
    pub origins: Vec<String>,
    /// The public origin is https: cookies get `Secure`.
    pub https: bool,
}

impl Allowed {
    pub fn new(bound: &std::net::SocketAddr, public_origin: Option<&PublicOrigin>) -> Self {
        let (mut hosts, mut origins) = crate::http::allowed_names(bound);
        let mut https = false;
        if let Some(p) = public_origin {
            hosts.push(p.host.clone());
            origins.push(p.origin.clone());
            https = p.https;
        }
        Self {
            hosts,
            origins,
            https,
        }
    }

    /// `Host` is one of ours (the port is not checked: a proxy may rewrite it).
    pub fn host_ok(&self, host: &str) -> bool {
        let name = host_name(host);
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    pub fn origin_ok(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/');
        self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// `host[:port]` or `[v6]:port` -> the host part.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(i) => &host[..=i],
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    }
}

/// `--web-origin`: where people reach the UI through a reverse proxy.
#[derive(Debug, Clone, PartialEq)]
pub struct PublicOrigin {
    /// `scheme://host[:port]`, as browsers send it in `Origin`.
    pub origin: String,
    pub host: String,
    pub https: bool,
}

impl PublicOrigin {
    /// Parses `https://example.org[:port][/path]` (the path, if any, is ignored: browsers send
    /// no path in `Origin`).
    pub fn parse(url: &str) -> Result<Self, String> {
        let url = url.trim();
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("--web-origin {url:?} must start with http:// or https://"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!(
                "--web-origin {url:?} must start with http:// or https://"
            ));
        }
        let authority = rest.split('/').next().unwrap_or("");
        if authority.is_empty()
            || authority.contains('@')
            || !authority
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c))
        {
            return Err(format!("--web-origin {url:?} has no valid host"));
        }
        let authority = authority.to_ascii_lowercase();
        Ok(Self {
            origin: format!("{scheme}://{authority}"),
            host: host_name(&authority).to_string(),
            https: scheme == "https",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_and_cookies() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
        assert_eq!(cookie_value("a=1; lsm_session=xyz; b=2", COOKIE), Some("xyz"));
        assert_eq!(cookie_value("a=1", COOKIE), None);
    }

    #[test]
    fn hosts_and_origins() {
        let bound: std::net::SocketAddr = "127.0.0.1:7710".parse().unwrap();
        let p = PublicOrigin::parse("https://Desk.Example.org/lsm/").unwrap();
        assert_eq!(p.origin, "https://desk.example.org");
        let a = Allowed::new(&bound, Some(&p));
        assert!(a.https);
        assert!(a.host_ok("127.0.0.1:7710"));
        assert!(a.host_ok("localhost"));
        assert!(a.host_ok("[::1]:7710"));
        assert!(a.host_ok("desk.example.org"));
        assert!(!a.host_ok("evil.example:7710"));
        assert!(a.origin_ok("http://127.0.0.1:7710"));
        assert!(a.origin_ok("https://desk.example.org"));
        assert!(!a.origin_ok("http://127.0.0.1:9999"));
        assert!(!a.origin_ok("null"));
        assert!(PublicOrigin::parse("ftp://x").is_err());
        assert!(PublicOrigin::parse("https://user@x").is_err());
    }

    #[test]
    fn login_sessions_and_rate_limit() {
        let auth = Auth::new("s3cret".into());
        let (token, csrf) = auth.login("a", "s3cret").ok().unwrap();
        assert_eq!(auth.session(&token), Some(csrf));
        assert_eq!(auth.session("nope"), None);
        auth.logout(&token);
        assert_eq!(auth.session(&token), None);
        for _ in 0..super::super::throttle::MAX_FAILURES {
            assert!(matches!(auth.login("a", "wrong"), Err(LoginRefusal::Refused)));
        }
        assert!(matches!(
            auth.login("a", "s3cret"),
            Err(LoginRefusal::RateLimited)
        ));
        // Another client is not locked out by the first one's failures.
        assert!(auth.login("b", "s3cret").is_ok());
    }

    #[test]
    fn sessions_end_at_their_lifetime_even_when_busy() {
        let lifetime = Duration::from_millis(300);
        let limits = SessionLimits {
            idle: Duration::from_secs(60),
            lifetime,
        };
        let auth = Auth::with_limits("s3cret".into(), limits);
        let started = Instant::now();
        let (token, _) = auth.login("a", "s3cret").ok().unwrap();
        while started.elapsed() < lifetime / 2 {
            let alive = auth.session(&token).is_some();
            // Read after the call: a loaded machine may have slept past the lifetime.
            if started.elapsed() < lifetime {
                assert!(alive);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(lifetime);
        assert_eq!(auth.session(&token), None);
        let idle = Auth::with_limits(
            "s3cret".into(),
            SessionLimits {
                idle: Duration::from_millis(50),
                lifetime: Duration::from_secs(60),
            },
        );
        let (token, _) = idle.login("a", "s3cret").ok().unwrap();
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(idle.session(&token), None);
    }
}
