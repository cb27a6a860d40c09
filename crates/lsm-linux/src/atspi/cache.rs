//! `org.a11y.atspi.Cache.GetItems`: every object of an application with its basic properties in
//! one call, and (GTK 3) the complete children lists, so that a walk skips most per-object calls.

use crate::atspi::{
    classify, role_name, short_interfaces, state_names, Atspi, Basics, CacheItem, CallError, Flavor, ObjRef,
    CACHE_PATH, IFACE_CACHE, IFACE_REGISTRY, REGISTRY_BUS, REGISTRY_PATH,
};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The event listener registered to make GTK 3 serve `Cache.GetItems`: one no application sends in
/// normal use, so registering it costs nothing but the activation of the bridge.
const CACHE_LISTENER_EVENT: &str = "object:property-change:accessible-table-summary";
/// After a failed activation, the cache of that application is not asked for again for this long.
const CACHE_RETRY: Duration = Duration::from_secs(10);

/// What `Cache.GetItems` told about an application's objects.
#[derive(Default)]
pub(crate) struct Prefetch {
    pub(crate) basics: HashMap<ObjRef, Basics>,
    /// Children in order, for the parents whose children the cache lists completely (its parent
    /// links and indices agree with the live child count). Only where the toolkit's links are
    /// trusted (`Flavor::cache_tree`).
    pub(crate) children: HashMap<ObjRef, Vec<ObjRef>>,
}

impl Atspi {
    /// Every object the application has registered, from `Cache.GetItems`: live properties in one
    /// call (GTK 4; GTK 3 once a listener is registered, see [`Atspi::ensure_listener`]; Qt 5
    /// answers with nothing). With `Flavor::cache_tree`, also the complete children lists.
    pub(crate) async fn cache_items(&self, bus: &str, limit: Duration, flavor: Flavor) -> Option<Prefetch> {
        type Item = CacheItem;
        let recent_failure = self
            .no_cache
            .lock()
            .ok()
            .and_then(|m| m.get(bus).copied())
            .is_some_and(|t| t.elapsed() < CACHE_RETRY);
        if recent_failure {
            return None;
        }
        let t0 = Instant::now();
        // at-spi2-atk serves (and keeps current) its cache only while a client listens: register
        // before the first call. Right after registering, ask over the bus, which delivers the
        // registry's signal to the application first; a direct connection could overtake it.
        let fresh = flavor.cache_needs_listener && self.listener.get().is_none();
        if flavor.cache_needs_listener {
            self.ensure_listener().await;
        }
        let first = if fresh {
            let conn = &self.conn;
            self.call_on::<_, Vec<Item>>(conn, limit, Some(bus), CACHE_PATH, IFACE_CACHE, "GetItems", &())
                .await
                .map_err(|e| e.unwrap_or_else(|e| classify("GetItems", e)))
        } else {
            self.call_t::<_, Vec<Item>>(limit, bus, CACHE_PATH, IFACE_CACHE, "GetItems", &())
                .await
        };
        let items = match first {
            Ok(items) => Some(items),
            // Registered, but not yet seen by the application (another thread of this
            // connection registered it a moment ago): once more, over the bus.
            Err(CallError::Unsupported(_) | CallError::Gone(_)) if flavor.cache_needs_listener && !fresh => {
                if self.ensure_listener().await {
                    let conn = &self.conn;
                    self.call_on::<_, Vec<Item>>(
                        conn,
                        limit,
                        Some(bus),
                        CACHE_PATH,
                        IFACE_CACHE,
                        "GetItems",
                        &(),
                    )
                    .await
                    .ok()
                } else {
                    None
                }
            }
            Err(_) => None,
        };
        let Some(items) = items else {
            tracing::debug!("no cache for {bus}");
            if let Ok(mut m) = self.no_cache.lock() {
                m.insert(bus.to_string(), Instant::now());
            }
            return None;
        };
        let mut pre = Prefetch::default();
        // (index, child) by parent, for the children lists.
        let mut by_parent: HashMap<ObjRef, Vec<(i32, ObjRef)>> = HashMap::new();
        for (o, _app, parent, index, count, ifaces, name, role, description, states) in items {
            let obj = ObjRef::new(o.0, o.1.as_str());
            let basics = Basics {
                role: role_name(role),
                states: state_names(&states),
                interfaces: short_interfaces(ifaces),
                name,
                description,
                child_count: count.max(-1),
            };
            if flavor.cache_tree && !basics.states.iter().any(|s| s == "defunct") {
                by_parent
                    .entry(ObjRef::new(parent.0, parent.1.as_str()))
                    .or_default()
                    .push((index, obj.clone()));
            }
            pre.basics.insert(obj, basics);
        }
        // A list is used only when complete: exactly the live child count, indices 0..n. Else
        // (children added while the bridge did not listen, index -1 for scroll bars and menu
        // items) the walk asks GetChildren.
        for (parent, mut kids) in by_parent {
            let Some(count) = pre.basics.get(&parent).map(|b| b.child_count) else {
                continue;
            };
            kids.sort_unstable_by_key(|(i, _)| *i);
            let complete = kids.len() == count.max(0) as usize
                && kids.iter().enumerate().all(|(k, (i, _))| *i == k as i32);
            if complete && count > 0 {
                pre.children
                    .insert(parent, kids.into_iter().map(|(_, o)| o).collect());
            }
        }
        tracing::debug!(
            "cache of {bus}: {} objects, {} complete child lists, in {:?}",
            pre.basics.len(),
            pre.children.len(),
            t0.elapsed()
        );
        Some(pre)
    }

    /// Registers, once per connection, an event listener with the registry: at-spi2-atk (GTK 3)
    /// serves `Cache.GetItems`, and keeps it current, only while some client listens. The event is
    /// one applications do not send in normal use. `true` when registered (now or before).
    pub(crate) async fn ensure_listener(&self) -> bool {
        *self
            .listener
            .get_or_init(|| async {
                let t = self.call_timeout;
                let with_props = (CACHE_LISTENER_EVENT, Vec::<String>::new(), "");
                let res = match self
                    .call_t::<_, ()>(
                        t,
                        REGISTRY_BUS,
                        REGISTRY_PATH,
                        IFACE_REGISTRY,
                        "RegisterEvent",
                        &with_props,
                    )
                    .await
                {
                    // Registries before 2.42 take only the event name.
                    Err(CallError::Unsupported(_) | CallError::Other(_)) => {
                        let name_only = (CACHE_LISTENER_EVENT,);
                        self.call_t::<_, ()>(
                            t,
                            REGISTRY_BUS,
                            REGISTRY_PATH,
                            IFACE_REGISTRY,
                            "RegisterEvent",
                            &name_only,
                        )
                        .await
                    }
                    r => r,
                };
                match res {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::debug!("registering an event listener failed: {e:?}");
                        false
                    }
                }
            })
            .await
    }
}
