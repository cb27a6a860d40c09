//! What is on the accessibility bus: the registered applications (name, toolkit, process) and
//! their top-level frames.

use crate::atspi::*;
use lsm_core::{ErrorCode, GuiError, GuiResult};
use std::collections::HashMap;
use zbus::zvariant::OwnedValue;

impl Atspi {
    /// Applications registered on the accessibility bus (children of the registry root). Apps whose
    /// connection is gone are skipped; one that does not answer in time is listed with what is known.
    pub async fn applications(&self) -> GuiResult<Vec<AppInfo>> {
        let registry = ObjRef::new(REGISTRY_BUS, ROOT_PATH);
        let roots = self.children_of(&registry).await.map_err(|e| match e {
            CallError::Gone(why) => {
                GuiError::unavailable(format!("the AT-SPI registry is not running ({why})"))
            }
            other => other.into_gui(&registry),
        })?;
        let cached: HashMap<String, AppInfo> = self.apps.lock().map(|m| m.clone()).unwrap_or_default();
        let infos = roots.into_iter().map(|root| {
            let known = cached.get(&root.bus).filter(|a| a.obj == root).cloned();
            async move {
                match known {
                    Some(a) => Some((a, true)),
                    None => self.app_info(root).await.map(|a| (a, false)),
                }
            }
        });
        let apps = futures_util::future::join_all(infos).await;
        let mut out = Vec::new();
        let mut fresh: HashMap<String, AppInfo> = HashMap::new();
        for (app, _) in apps.into_iter().flatten() {
            // Only complete answers are remembered, so a slow app is asked again next time.
            if !app.name.is_empty() || !app.toolkit.is_empty() {
                fresh.insert(app.obj.bus.clone(), app.clone());
            }
            if !app.toolkit.is_empty() {
                if let Ok(mut m) = self.toolkits.lock() {
                    m.insert(
                        app.obj.bus.clone(),
                        (app.toolkit.clone(), app.toolkit_version.clone()),
                    );
                }
            }
            out.push(app);
        }
        if let Ok(mut m) = self.apps.lock() {
            // Rebuilt from the registry each time: connections that left drop out.
            *m = fresh;
        }
        Ok(out)
    }

    /// The applications as the last `applications` read them (only those that answered in
    /// full), without asking the registry.
    pub fn known_applications(&self) -> Vec<AppInfo> {
        self.apps
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) async fn app_info(&self, root: ObjRef) -> Option<AppInfo> {
        let t = APP_INFO_TIMEOUT.min(self.call_timeout);
        let bus_arg = (root.bus.as_str(),);
        let pid = self.call_t::<_, u32>(
            t,
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            &bus_arg,
        );
        let name = self.prop_t(t, &root, IFACE_ACCESSIBLE, "Name");
        let toolkit = self.prop_t(t, &root, IFACE_APPLICATION, "ToolkitName");
        let version = self.prop_t(t, &root, IFACE_APPLICATION, "Version");
        let (pid, name, toolkit, version) = tokio::join!(pid, name, toolkit, version);
        // The bus daemon answers for the connection (NameHasNoOwner): the app is gone; so it is
        // when the app's own connection vanished under the Name call.
        if matches!(pid, Err(CallError::Gone(_))) || matches!(name, Err(CallError::Gone(_))) {
            return None;
        }
        let s = |v: Result<OwnedValue, CallError>| {
            v.ok().and_then(|v| String::try_from(v).ok()).unwrap_or_default()
        };
        Some(AppInfo {
            obj: root,
            pid: pid.ok().filter(|p| *p > 0),
            name: s(name),
            toolkit: s(toolkit),
            toolkit_version: s(version),
        })
    }

    /// Toolkit name and version of the application owning `bus` ("" when unknown).
    pub(crate) async fn toolkit_of(&self, bus: &str) -> (String, String) {
        if let Some(t) = self.toolkits.lock().ok().and_then(|m| m.get(bus).cloned()) {
            return t;
        }
        let root = ObjRef::new(bus, ROOT_PATH);
        let (name, version) = tokio::join!(
            self.prop_string(&root, IFACE_APPLICATION, "ToolkitName"),
            self.prop_string(&root, IFACE_APPLICATION, "Version"),
        );
        let t = (name.unwrap_or_default(), version.unwrap_or_default());
        if !t.0.is_empty() {
            if let Ok(mut m) = self.toolkits.lock() {
                m.insert(bus.to_string(), t.clone());
            }
        }
        t
    }

    /// The application's top-level children (frame, dialog, window, alert, ...), with screen
    /// extents. Children that vanish meanwhile are left out.
    pub async fn frames(&self, app: &ObjRef) -> GuiResult<Vec<FrameInfo>> {
        let kids = self.children_of(app).await.map_err(|e| match e {
            CallError::Gone(why) => GuiError::new(
                ErrorCode::WindowNotFound,
                format!("the application {} is gone ({why}); call gui_list again", app.bus),
            ),
            other => other.into_gui(app),
        })?;
        let infos = kids.into_iter().map(|obj| async move {
            let (role, name, states, extents) = tokio::join!(
                self.role_of(&obj),
                self.prop_string(&obj, IFACE_ACCESSIBLE, "Name"),
                self.states_of(&obj),
                self.extents_of(&obj, CoordKind::Screen),
            );
            let states = states.ok()?;
            if states.iter().any(|s| s == "defunct") {
                return None;
            }
            Some(FrameInfo {
                obj,
                role: role.ok()?,
                name: name.unwrap_or_default(),
                screen_extents: extents.ok().flatten(),
                states,
            })
        });
        Ok(futures_util::future::join_all(infos)
            .await
            .into_iter()
            .flatten()
            .collect())
    }
}
