//! Login throttling per client: each client's failed logins are counted on their own, so one
//! client guessing does not lock out another, in a table of bounded size.

use axum::http::HeaderMap;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed logins a client may make per window before its logins are refused for a while.
pub const MAX_FAILURES: usize = 5;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(30);
/// Clients remembered at most; past that, expired entries go, then the stalest one.
pub const MAX_CLIENTS: usize = 4096;
/// Longest forwarded address kept in a key (anything longer is cut).
const MAX_FORWARDED: usize = 64;

/// Who is logging in: the peer's address; behind the configured reverse proxy (every client
/// then shares the proxy's address) also the client address the proxy forwarded, the last
/// entry of `X-Forwarded-For` (the one the proxy itself appended).
pub fn client_key(peer: Option<IpAddr>, headers: &HeaderMap, behind_proxy: bool) -> String {
    let ip = peer.map(|p| p.to_string()).unwrap_or_default();
    if !behind_proxy {
        return ip;
    }
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .rfind(|v| !v.is_empty())
        .unwrap_or("");
    let cut = forwarded
        .char_indices()
        .nth(MAX_FORWARDED)
        .map_or(forwarded, |(i, _)| &forwarded[..i]);
    format!("{ip}|{cut}")
}

#[derive(Default)]
pub struct Throttle {
    clients: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl Throttle {
    /// Whether `client` has used up its failures in the current window.
    pub fn limited(&self, client: &str, now: Instant) -> bool {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let Some(failures) = clients.get_mut(client) else {
            return false;
        };
        forget_old(failures, now);
        if failures.is_empty() {
            clients.remove(client);
            return false;
        }
        failures.len() >= MAX_FAILURES
    }

    pub fn failed(&self, client: &str, now: Instant) {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if clients.len() >= MAX_CLIENTS && !clients.contains_key(client) {
            clients.retain(|_, f| {
                forget_old(f, now);
                !f.is_empty()
            });
            if clients.len() >= MAX_CLIENTS {
                let stalest = clients
                    .iter()
                    .min_by_key(|(_, f)| f.back().copied())
                    .map(|(k, _)| k.clone());
                if let Some(k) = stalest {
                    clients.remove(&k);
                }
            }
        }
        let failures = clients.entry(client.to_string()).or_default();
        forget_old(failures, now);
        failures.push_back(now);
        // Only the last MAX_FAILURES matter.
        while failures.len() > MAX_FAILURES {
            failures.pop_front();
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.clients.lock().map(|c| c.len()).unwrap_or(0)
    }
}

fn forget_old(failures: &mut VecDeque<Instant>, now: Instant) {
    while failures
        .front()
        .is_some_and(|t| now.duration_since(*t) > FAILURE_WINDOW)
    {
        failures.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn each_client_on_its_own() {
        let t = Throttle::default();
        let now = Instant::now();
        for _ in 0..MAX_FAILURES {
            assert!(!t.limited("a", now));
            t.failed("a", now);
        }
        assert!(t.limited("a", now));
        assert!(!t.limited("b", now));
        // The window passes.
        assert!(!t.limited("a", now + FAILURE_WINDOW + Duration::from_secs(1)));
    }

    #[test]
    fn the_table_stays_bounded() {
        let t = Throttle::default();
        let now = Instant::now();
        for i in 0..MAX_CLIENTS + 100 {
            t.failed(&format!("c{i}"), now + Duration::from_micros(i as u64));
        }
        assert_eq!(t.len(), MAX_CLIENTS);
        // The newest client is kept.
        for _ in 1..MAX_FAILURES {
            t.failed(&format!("c{}", MAX_CLIENTS + 99), now + Duration::from_secs(1));
        }
        assert!(t.limited(&format!("c{}", MAX_CLIENTS + 99), now + Duration::from_secs(1)));
    }

    #[test]
    fn keys() {
        let peer: Option<IpAddr> = "10.0.0.1".parse().ok();
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_static("1.1.1.1, 2.2.2.2"));
        assert_eq!(client_key(peer, &h, false), "10.0.0.1");
        assert_eq!(client_key(peer, &h, true), "10.0.0.1|2.2.2.2");
        assert_eq!(client_key(peer, &HeaderMap::new(), true), "10.0.0.1|");
        let long = "9".repeat(500);
        h.insert("x-forwarded-for", HeaderValue::from_str(&long).unwrap());
        assert_eq!(
            client_key(peer, &h, true).len(),
            "10.0.0.1|".len() + MAX_FORWARDED
        );
    }
}
