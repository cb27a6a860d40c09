//! The handles lsm gives elements (`RawElement::native`) and the live objects behind them: an
//! Accessibility element cannot be written down and found again later, so the worker thread keeps
//! the objects of recent walks under short string handles. Bounded: the oldest handles are
//! forgotten first, and a forgotten handle is answered `ELEMENT_STALE` like a gone element.
//! Generic and platform-free so the Linux tests run it.

use std::collections::{HashMap, VecDeque};

/// Handles kept at most (a few large windows' walks).
pub const MAX_HANDLES: usize = 50_000;

/// Objects under handles, oldest forgotten first.
pub struct Registry<T> {
    next: u64,
    limit: usize,
    by_handle: HashMap<String, T>,
    order: VecDeque<String>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::with_limit(MAX_HANDLES)
    }
}

impl<T> Registry<T> {
    pub fn with_limit(limit: usize) -> Self {
        Self {
            next: 0,
            limit: limit.max(1),
            by_handle: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    /// Keeps `object` and returns its new handle (`ax<n>`: never reused, so an old handle never
    /// names a newer object).
    pub fn keep(&mut self, object: T) -> String {
        let handle = format!("ax{}", self.next);
        self.next += 1;
        while self.order.len() >= self.limit {
            if let Some(old) = self.order.pop_front() {
                self.by_handle.remove(&old);
            }
        }
        self.order.push_back(handle.clone());
        self.by_handle.insert(handle.clone(), object);
        handle
    }

    /// The object under a handle, if it is still kept.
    pub fn get(&self, handle: &str) -> Option<&T> {
        self.by_handle.get(handle)
    }

    pub fn len(&self) -> usize {
        self.by_handle.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_handle.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_find_their_objects_until_forgotten() {
        let mut r = Registry::with_limit(2);
        let a = r.keep("a");
        let b = r.keep("b");
        assert_eq!(r.get(&a), Some(&"a"));
        let c = r.keep("c");
        assert_eq!(r.get(&a), None, "the oldest is forgotten first");
        assert_eq!((r.get(&b), r.get(&c)), (Some(&"b"), Some(&"c")));
        assert_eq!(r.len(), 2);
        assert!(r.get("nonsense").is_none());
    }

    #[test]
    fn handles_are_never_reused() {
        let mut r = Registry::with_limit(1);
        let first = r.keep(1);
        let second = r.keep(2);
        assert_ne!(first, second);
        assert_eq!(r.get(&first), None);
    }
}
