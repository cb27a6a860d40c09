//! Acting through AT-SPI: an element's own actions, its text and value set directly, the
//! keyboard focus, and the cheap re-check of role and states before any of them.

use crate::atspi::*;
use lsm_core::{GuiError, GuiResult};
use zbus::zvariant as zv;

impl Atspi {
    /// Role and states only, both in flight at once: the cheap "is it still that control" check
    /// before acting. `None`: the object is gone.
    pub async fn role_and_states(&self, obj: &ObjRef) -> GuiResult<Option<(String, Vec<String>)>> {
        match tokio::join!(self.role_of(obj), self.states_of(obj)) {
            (Ok(role), Ok(states)) => Ok(Some((role, states))),
            (Err(CallError::Gone(_)), _) | (_, Err(CallError::Gone(_))) => Ok(None),
            (Err(e), _) | (_, Err(e)) => Err(e.into_gui(obj)),
        }
    }

    /// `DoAction(index)`. `false`: the application refused it or has no Action interface.
    pub async fn do_action_at(&self, obj: &ObjRef, index: usize) -> GuiResult<bool> {
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        match self
            .call::<_, bool>(obj, IFACE_ACTION, "DoAction", &(index,))
            .await
        {
            Ok(done) => Ok(done),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Runs the first action among `preferred` (case-insensitive) the object has, else action 0
    /// when `allow_any`. `Ok(Some(name))`: it ran; `Ok(None)`: no such action, or the application
    /// refused it (fall back to input events).
    pub async fn do_action(
        &self,
        obj: &ObjRef,
        preferred: &[&str],
        allow_any: bool,
    ) -> GuiResult<Option<String>> {
        // Canonical names first (locale-independent), the localized ones as a second chance:
        // GTK 3 table cells report descriptions as localized names, GTK 4 icons disagree.
        let (raw, localized) = tokio::join!(
            self.raw_action_names(obj),
            self.call::<_, Vec<(String, String, String)>>(obj, IFACE_ACTION, "GetActions", &()),
        );
        let localized: Vec<String> = localized
            .map(|l| l.into_iter().map(|(n, _, _)| n).collect())
            .unwrap_or_default();
        let raw = match raw {
            Ok(r) => r,
            Err(CallError::Gone(w)) => return Err(CallError::Gone(w).into_gui(obj)),
            Err(CallError::Timeout(w)) => return Err(CallError::Timeout(w).into_gui(obj)),
            Err(_) if !localized.is_empty() => Vec::new(),
            Err(_) => return Ok(None),
        };
        let count = raw.len().max(localized.len());
        let matches =
            |list: &[String], p: &str| list.iter().position(|n| n.trim().eq_ignore_ascii_case(p.trim()));
        let chosen = preferred
            .iter()
            .find_map(|p| matches(&raw, p).or_else(|| matches(&localized, p)))
            .or(if allow_any && count > 0 { Some(0) } else { None });
        let Some(index) = chosen else { return Ok(None) };
        let label = raw
            .get(index)
            .filter(|n| !n.is_empty())
            .or(localized.get(index))
            .cloned()
            .unwrap_or_else(|| format!("action {index}"));
        match self
            .call::<_, bool>(obj, IFACE_ACTION, "DoAction", &(index as i32,))
            .await
        {
            Ok(true) => Ok(Some(label)),
            Ok(false) => {
                tracing::debug!("{obj}: application refused action {label}");
                Ok(None)
            }
            Err(CallError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Replaces the whole text (`EditableText.SetTextContents`). `false`: not editable or refused.
    pub async fn set_text(&self, obj: &ObjRef, text: &str) -> GuiResult<bool> {
        match self
            .call::<_, bool>(obj, IFACE_EDITABLE_TEXT, "SetTextContents", &(text,))
            .await
        {
            Ok(ok) => Ok(ok),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Inserts at the caret (`Text.CaretOffset`, the end when there is none) with
    /// `EditableText.InsertText`. `false`: not editable or refused.
    pub async fn insert_text(&self, obj: &ObjRef, text: &str) -> GuiResult<bool> {
        let (caret, count, toolkit) = tokio::join!(
            self.prop_int(obj, IFACE_TEXT, "CaretOffset"),
            self.prop_int(obj, IFACE_TEXT, "CharacterCount"),
            self.toolkit_of(&obj.bus),
        );
        let toolkit = toolkit.0;
        if let Err(CallError::Gone(w)) = &caret {
            return Err(CallError::Gone(w.clone()).into_gui(obj));
        }
        let count = count.unwrap_or(0);
        let pos = match caret {
            Ok(c) if c >= 0 && c <= count => c,
            _ => count,
        }
        .clamp(0, i32::MAX as i64) as i32;
        // The length argument is read differently: GTK passes it on as a byte count, Qt truncates
        // the QString (UTF-16 units) to it; the specification says characters.
        let len = if toolkit.eq_ignore_ascii_case("gtk") {
            text.len()
        } else if toolkit.eq_ignore_ascii_case("qt") {
            text.encode_utf16().count()
        } else {
            text.chars().count()
        };
        let len = i32::try_from(len).map_err(|_| GuiError::invalid("text too long"))?;
        match self
            .call::<_, bool>(obj, IFACE_EDITABLE_TEXT, "InsertText", &(pos, text, len))
            .await
        {
            Ok(ok) => Ok(ok),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Sets `Value.CurrentValue`, clamped to the object's minimum and maximum. `false`: no Value
    /// interface, or the application refused.
    pub async fn set_numeric_value(&self, obj: &ObjRef, v: f64) -> GuiResult<bool> {
        if !v.is_finite() {
            return Err(GuiError::invalid(format!("{v} is not a finite number")));
        }
        let (min, max) = tokio::join!(
            self.prop_f64(obj, IFACE_VALUE, "MinimumValue"),
            self.prop_f64(obj, IFACE_VALUE, "MaximumValue"),
        );
        match (&min, &max) {
            (Err(CallError::Unsupported(_)), _) => return Ok(false),
            (Err(CallError::Gone(w)), _) => return Err(CallError::Gone(w.clone()).into_gui(obj)),
            _ => {}
        }
        let mut v = v;
        if let Ok(lo) = min {
            v = v.max(lo);
        }
        if let Ok(hi) = max {
            // Some toolkits report max < min when there is no bound.
            if hi >= min.as_ref().copied().unwrap_or(f64::MIN) {
                v = v.min(hi);
            }
        }
        let body = (IFACE_VALUE, "CurrentValue", zv::Value::from(v));
        match self.call::<_, ()>(obj, IFACE_PROPERTIES, "Set", &body).await {
            Ok(()) => Ok(true),
            Err(CallError::Unsupported(_)) | Err(CallError::Other(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// `Component.GrabFocus`. `false`: no Component interface or refused.
    pub async fn grab_focus(&self, obj: &ObjRef) -> GuiResult<bool> {
        match self.call::<_, bool>(obj, IFACE_COMPONENT, "GrabFocus", &()).await {
            Ok(ok) => Ok(ok),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }
}
