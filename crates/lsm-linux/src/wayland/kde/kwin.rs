//! Running a small KWin script and reading its answer: KWin's scripting D-Bus API
//! (`org.kde.kwin.Scripting`: `loadScript`, `start`, `unloadScript`) needs no permission, and a
//! script can call back over D-Bus (`callDBus`) to an object lsm serves on its own connection.
//! This is how lsm reads the window list (frame and buffer rects) and raises windows on KDE
//! Plasma, where no Wayland protocol gives an application either.

use lsm_core::{GuiError, GuiResult};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

pub const KWIN: &str = "org.kde.KWin";
const SCRIPTING_PATH: &str = "/Scripting";
const SCRIPTING: &str = "org.kde.kwin.Scripting";
const REPLY_PATH: &str = "/dev/lsm/KWin";
const REPLY_IFACE: &str = "dev.lsm.KWinReply";
/// Bound on one script: loading, running and its answer (measured: about 4 ms).
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(3);

pub const LIST_JS: &str = include_str!("kwin/list.js");
pub const ACTIVATE_JS: &str = include_str!("kwin/activate.js");
pub const CURSOR_JS: &str = include_str!("kwin/cursor.js");

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<String>>>>;

/// The object the scripts call back.
struct Replies {
    pending: Pending,
}

#[zbus::interface(name = "dev.lsm.KWinReply")]
impl Replies {
    fn reply(&self, token: String, json: String) {
        let tx = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&token);
        if let Some(tx) = tx {
            let _ = tx.send(json);
        }
    }
}

pub struct KWinScripts {
    conn: zbus::Connection,
    pending: Pending,
    /// Where the script files are written (KWin loads a script from a file).
    dir: PathBuf,
    /// One script at a time: `start` runs every loaded script.
    serial: tokio::sync::Mutex<()>,
}

static SCRIPTS: AtomicU32 = AtomicU32::new(0);

/// A JavaScript string literal of `s`.
pub fn js_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The script text: `reply` bound to our object and the run's token, `vars` defined, `body`.
pub fn script_text(unique_name: &str, token: &str, vars: &[(&str, &str)], body: &str) -> String {
    let mut s = String::from("(function () {\n");
    s.push_str(&format!(
        "var reply = function (json) {{ callDBus({}, {}, {}, \"Reply\", {}, json); }};\n",
        js_string(unique_name),
        js_string(REPLY_PATH),
        js_string(REPLY_IFACE),
        js_string(token)
    ));
    for (name, value) in vars {
        s.push_str(&format!("var {name} = {};\n", js_string(value)));
    }
    s.push_str(body);
    s.push_str("\n})();\n");
    s
}

impl KWinScripts {
    /// Serves the reply object on `conn`; scripts are written under `dir`.
    pub async fn new(conn: &zbus::Connection, dir: PathBuf) -> GuiResult<Self> {
        let pending: Pending = Arc::default();
        let served = conn.object_server().at(
            REPLY_PATH,
            Replies {
                pending: pending.clone(),
            },
        );
        tokio::time::timeout(SCRIPT_TIMEOUT, served)
            .await
            .map_err(|_| GuiError::timeout("serving lsm's KWin reply object"))?
            .map_err(|e| GuiError::backend(format!("serving lsm's KWin reply object: {e}")))?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| GuiError::backend(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Self {
            conn: conn.clone(),
            pending,
            dir,
            serial: tokio::sync::Mutex::new(()),
        })
    }

    async fn scripting<B, R>(&self, method: &str, body: &B) -> GuiResult<R>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
    {
        crate::wayland::dbus::call(&self.conn, KWIN, SCRIPTING_PATH, SCRIPTING, method, body).await
    }

    /// Runs `body` (with `vars` defined) and returns what it passed to `reply`.
    pub async fn run(&self, what: &str, vars: &[(&str, &str)], body: &str) -> GuiResult<String> {
        let _one = self.serial.lock().await;
        let unique = self
            .conn
            .unique_name()
            .ok_or_else(|| GuiError::backend("no unique name on the session bus"))?
            .to_string();
        let n = SCRIPTS.fetch_add(1, Ordering::Relaxed);
        let token = format!("{}-{n}", std::process::id());
        let plugin = format!("lsm-{what}-{token}");
        let path = self.dir.join(format!("{plugin}.js"));
        std::fs::write(&path, script_text(&unique, &token, vars, body))
            .map_err(|e| GuiError::backend(format!("cannot write {}: {e}", path.display())))?;
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), tx);
        let path_text = path.to_string_lossy().to_string();
        let answer = async {
            let id: i32 = self
                .scripting("loadScript", &(path_text.as_str(), plugin.as_str()))
                .await?;
            if id < 0 {
                return Err(GuiError::backend(format!(
                    "KWin refused to load the script {plugin}"
                )));
            }
            let () = self.scripting("start", &()).await?;
            tokio::time::timeout(SCRIPT_TIMEOUT, rx)
                .await
                .map_err(|_| GuiError::timeout(format!("KWin script {what}: no answer")))?
                .map_err(|_| GuiError::backend(format!("KWin script {what}: answer lost")))
        }
        .await;
        let _: GuiResult<bool> = self.scripting("unloadScript", &(plugin.as_str(),)).await;
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&token);
        let _ = std::fs::remove_file(&path);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_calls_back_with_its_token_and_quotes_its_values() {
        let s = script_text(":1.7", "9-1", &[("want", "{ab\"c}")], "reply(want);");
        assert!(s.contains(r#"callDBus(":1.7", "/dev/lsm/KWin", "dev.lsm.KWinReply", "Reply", "9-1", json)"#));
        assert!(s.contains(r#"var want = "{ab\"c}";"#));
        assert!(s.trim_end().ends_with("})();"));
    }
}
