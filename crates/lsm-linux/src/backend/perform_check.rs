//! Waiting until the application has taken an action in, and reading back its effect: typed
//! text, a set value, a toggle's states, a selection, a dialog that a blocked press opened.
//! Every wait is bounded; a slow application gives an unverified result, never a hang.

use super::view::View;
use super::LinuxBackend;
use crate::atspi::ObjRef;
use crate::window::format_window_id;
use lsm_core::verify::{
    effect_state_changes, number_taken, quote, text_value_taken, toggle_effect, typed_arrived_after_change,
    typed_missing, typed_needle, TOGGLE_STATES,
};
use lsm_core::{
    ActionOutcome, Check, ElementRef, ErrorCode, GuiError, GuiResult, KeyCombo, MouseButton, WindowInfo,
};
use std::time::{Duration, Instant};

/// Bound on waiting for typed text or a set value to show up (plus a little per character).
const TEXT_WAIT: Duration = Duration::from_millis(1500);
/// Bound on waiting for a state change after a press, a selection or a focus.
pub(crate) const STATE_WAIT: Duration = Duration::from_millis(600);
/// Between two reads while waiting.
const POLL: Duration = Duration::from_millis(10);
/// After typed text arrived while the application opened or closed windows, how long it must
/// stop doing so before the next action: a GTK file chooser opens and closes completion popups
/// for a moment after a typed path, and a Return sent meanwhile only closes the popup.
const SETTLE_QUIET: Duration = Duration::from_millis(150);
/// Longest wait for that quiet.
const SETTLE_MAX: Duration = Duration::from_millis(1000);
/// Bound on the round trip through an application's main loop after input.
const ROUND_TRIP: Duration = Duration::from_millis(1000);
/// A press that has not returned after this long may be blocked in a modal dialog it opened.
const BLOCK_SUSPECT: Duration = Duration::from_millis(250);
/// How often to look for that dialog while the press has not returned.
const DIALOG_POLL: Duration = Duration::from_millis(100);

/// Roles a click selects (through the parent's selection, else a pointer click), never toggles.
pub(crate) const SELECT_ROLES: &[&str] = &["table_cell", "list_item", "tree_item", "table_row"];
/// Roles whose press is checked through their states before and after.
pub(crate) const TOGGLE_ROLES: &[&str] = &[
    "check_box",
    "toggle_button",
    "radio_button",
    "check_menu_item",
    "radio_menu_item",
    "switch",
];

/// What a semantic press did.
pub(crate) enum Pressed {
    /// It returned; `false`: the application refused it.
    Done(bool),
    /// It did not return because it opened a modal dialog, which runs a nested main loop.
    Blocked { evidence: String, stop: String },
}

impl LinuxBackend {
    /// The AT-SPI bus of the window's application: the element's, else the one found when the
    /// window was observed.
    fn app_bus(&self, window: &WindowInfo, hint: Option<&ObjRef>) -> Option<String> {
        if let Some(o) = hint {
            return Some(o.bus.clone());
        }
        let pid = window.pid?;
        self.app_buses.lock().ok()?.get(&pid).cloned()
    }

    /// `DoAction(index)`, watching for a modal dialog when it does not return at once.
    pub(crate) async fn press_watching(
        &self,
        window: &WindowInfo,
        obj: &ObjRef,
        index: usize,
    ) -> GuiResult<Pressed> {
        let atspi = self.atspi()?;
        let call = atspi.do_action_at(obj, index);
        tokio::pin!(call);
        let first = tokio::time::timeout(BLOCK_SUSPECT, &mut call).await;
        let result = match first {
            Ok(r) => r,
            Err(_) => loop {
                tokio::select! {
                    r = &mut call => break r,
                    _ = tokio::time::sleep(DIALOG_POLL) => {
                        if let Some(p) = self.blocked_by_dialog(window, &obj.bus).await {
                            // The pending call is dropped; its late reply is discarded.
                            return Ok(p);
                        }
                    }
                }
            },
        };
        match result {
            Ok(done) => Ok(Pressed::Done(done)),
            Err(e) if e.code == ErrorCode::Timeout => match self.blocked_by_dialog(window, &obj.bus).await {
                Some(p) => Ok(p),
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// `Some(Blocked)` when the application `bus` shows a modal dialog now.
    pub(crate) async fn blocked_by_dialog(&self, window: &WindowInfo, bus: &str) -> Option<Pressed> {
        let dialog = self.atspi().ok()?.open_dialog(bus).await.ok().flatten()?;
        let (title, pid) = (dialog.name.clone(), window.pid);
        let xid = self
            .x(move |x| x.list_windows())
            .await
            .ok()
            .and_then(|ws| {
                ws.into_iter()
                    .find(|w| w.title == title && (pid.is_none() || w.pid == pid))
            })
            .map(|w| format_window_id(w.id));
        let win = xid.as_deref().map_or_else(
            || "its X11 window was not found yet: call gui_list".to_string(),
            |id| format!("window {id}"),
        );
        Some(Pressed::Blocked {
            evidence: format!("opened dialog {} ({win})", quote(&dialog.name)),
            stop: format!(
                "it opened the modal dialog {} ({win}), which blocks its application until it is closed",
                quote(&dialog.name)
            ),
        })
    }

    /// After a semantic press: toggles are checked by their states (waiting a little for them);
    /// other controls by any watched state change after a round trip, else unverified.
    pub(crate) async fn after_press(
        &self,
        obj: &ObjRef,
        role: &str,
        before: &[String],
        toggles: bool,
    ) -> Check {
        let Ok(atspi) = self.atspi() else {
            return Check::Unverified("no accessibility bus".into());
        };
        let started = Instant::now();
        if toggles {
            loop {
                match atspi.read_states(obj).await {
                    Ok(Some(now)) if !effect_state_changes(role, before, &now, TOGGLE_STATES).is_empty() => {
                        return toggle_effect(role, before, &now, started.elapsed().as_millis())
                    }
                    Ok(Some(now)) if started.elapsed() >= STATE_WAIT => {
                        return toggle_effect(role, before, &now, started.elapsed().as_millis())
                    }
                    Ok(None) => return Check::Unverified("the control is gone after the press".into()),
                    Err(e) => {
                        return Check::Unverified(format!("its states could not be read back: {}", e.message))
                    }
                    Ok(Some(_)) => tokio::time::sleep(POLL).await,
                }
            }
        }
        if !atspi.round_trip(&obj.bus, ROUND_TRIP).await {
            return Check::Unverified(
                "pressed, but the application did not answer within 1 s afterwards".into(),
            );
        }
        match atspi.read_states(obj).await {
            Ok(Some(now)) => {
                let changes = effect_state_changes(role, before, &now, TOGGLE_STATES);
                if changes.is_empty() {
                    Check::Unverified(format!(
                        "pressed and the application took it in; a {role} shows no lasting state to read back"
                    ))
                } else {
                    Check::Verified(changes.join(", "))
                }
            }
            Ok(None) => Check::Unverified(format!("pressed; the {role} is gone now (its window closed?)")),
            Err(e) => Check::Unverified(format!(
                "pressed; its states could not be read back: {}",
                e.message
            )),
        }
    }

    /// After a pointer click on an element: a round trip, then its focus or toggle states.
    pub(crate) async fn after_pointer_click(&self, window: &WindowInfo, e: &ElementRef) -> Check {
        let Ok((_, _, obj)) = super::view::decode_native(&e.native) else {
            return self.after_input(window, None, "the click").await;
        };
        let Ok(atspi) = self.atspi() else {
            return Check::Unverified("no accessibility bus".into());
        };
        let editable = e.states.iter().any(|s| s == "editable");
        if editable && !e.states.iter().any(|s| s == "focused") {
            // A click into a text field must give it the focus; wait for that.
            return match self.await_state(&obj, "focused", STATE_WAIT).await {
                Check::Verified(_) => Check::Verified("clicked at its centre; it has the focus".into()),
                other => other,
            };
        }
        if !atspi.round_trip(&obj.bus, ROUND_TRIP).await {
            return Check::Unverified(
                "clicked, but the application did not answer within 1 s afterwards".into(),
            );
        }
        match atspi.read_states(&obj).await {
            Ok(Some(now)) => {
                let changes = effect_state_changes(&e.role, &e.states, &now, TOGGLE_STATES);
                if changes.is_empty() {
                    Check::Unverified(
                        "clicked at its centre and the application took it in; no state of it changed".into(),
                    )
                } else {
                    Check::Verified(format!("clicked at its centre; {}", changes.join(", ")))
                }
            }
            _ => Check::Unverified("clicked at its centre; its states could not be read back".into()),
        }
    }

    /// After raw input without a readable effect: a round trip through the application, so the
    /// next action of the call finds the input taken in.
    pub(crate) async fn after_input(&self, window: &WindowInfo, hint: Option<&ObjRef>, what: &str) -> Check {
        let (Ok(atspi), Some(bus)) = (self.atspi(), self.app_bus(window, hint)) else {
            return Check::Unverified(format!(
                "{what} was sent; no accessibility connection to the application confirms it took it in"
            ));
        };
        if atspi.round_trip(&bus, ROUND_TRIP).await {
            Check::Unverified(format!(
                "{what} was sent and the application took its input in; the effect is not read back"
            ))
        } else {
            Check::Unverified(format!(
                "{what} was sent; the application did not answer within 1 s, it may still be busy with it"
            ))
        }
    }

    /// When windows were created or destroyed since `since`, waits (bounded by `SETTLE_MAX`)
    /// until that has stopped for `SETTLE_QUIET`; otherwise returns at once.
    pub(crate) async fn settle_popups(&self, since: Instant) {
        let started = Instant::now();
        while started.elapsed() < SETTLE_MAX {
            match self.events.last_window_event() {
                Some(at) if at >= since && at.elapsed() < SETTLE_QUIET => tokio::time::sleep(POLL).await,
                _ => break,
            }
        }
        tracing::debug!("typing settled: popups quiet after {:?}", started.elapsed());
    }

    /// Waits (bounded) until `obj` has `state`.
    pub(crate) async fn await_state(&self, obj: &ObjRef, state: &str, limit: Duration) -> Check {
        let Ok(atspi) = self.atspi() else {
            return Check::Unverified("no accessibility bus".into());
        };
        let started = Instant::now();
        loop {
            match atspi.read_states(obj).await {
                Ok(Some(s)) if s.iter().any(|x| x == state) => return Check::Verified(state.to_string()),
                Ok(Some(_)) if started.elapsed() < limit => tokio::time::sleep(POLL).await,
                Ok(Some(_)) => {
                    return Check::Unverified(format!(
                        "not {state} after {} ms",
                        started.elapsed().as_millis()
                    ))
                }
                Ok(None) => return Check::Unverified("the element is gone".into()),
                Err(e) => {
                    return Check::Unverified(format!("its states could not be read back: {}", e.message))
                }
            }
        }
    }

    /// Types `text` (XTest) and waits until it shows up in the element typed into: the one named,
    /// else the one whose text changed since, else the focused one.
    pub(crate) async fn type_and_check(
        &self,
        window: &WindowInfo,
        named: Option<(ObjRef, String)>,
        text: &str,
    ) -> GuiResult<Check> {
        let atspi = self.atspi().ok();
        let named_obj = named.as_ref().map(|(o, _)| o.clone());
        let candidate = named_obj.clone().or_else(|| self.events.focused());
        let secret = named.as_ref().is_some_and(|(_, r)| r == "password_text");
        let before = match (atspi, &candidate) {
            (Some(a), Some(o)) if secret => a
                .char_count(o)
                .await
                .ok()
                .flatten()
                .map(|c| (o.clone(), c.to_string())),
            (Some(a), Some(o)) => a.read_text(o).await.ok().flatten().map(|t| (o.clone(), t)),
            _ => None,
        };
        let started = Instant::now();
        let handle = crate::window::parse_window_id(&window.window_id)?;
        self.ws_type_text(handle, text).await?;
        let Some(atspi) = atspi else {
            return Ok(Check::Unverified(
                "no accessibility bus: typed text is not read back".into(),
            ));
        };
        if typed_needle(text).is_none() {
            return Ok(self.after_input(window, candidate.as_ref(), "whitespace").await);
        }
        let extra = Duration::from_millis(2 * text.chars().count() as u64).min(Duration::from_secs(2));
        let limit = TEXT_WAIT + extra;
        let mut last: Option<String> = None;
        loop {
            // The element named, the focused one, the one whose text changed last: the first
            // that shows the typed text (a status bar's word count changes too).
            let mut candidates: Vec<ObjRef> = Vec::new();
            for o in [
                named_obj.clone(),
                self.events.focused(),
                self.events.text_changed_since(started),
            ]
            .into_iter()
            .flatten()
            {
                if !candidates.contains(&o) {
                    candidates.push(o);
                }
            }
            for obj in candidates {
                let prior = before
                    .as_ref()
                    .filter(|(o, _)| *o == obj)
                    .map(|(_, t)| t.as_str());
                if secret {
                    if let (Ok(Some(n)), Some(p)) = (atspi.char_count(&obj).await, prior) {
                        let want = p.parse::<i64>().unwrap_or(0) + text.chars().count() as i64;
                        if n >= want {
                            return Ok(Check::Verified(format!(
                                "the password field has {n} characters now (its text is never read)"
                            )));
                        }
                    }
                } else if let Ok(Some(now)) = atspi.read_text(&obj).await {
                    let changed = self.events.text_changed_since(started).as_ref() == Some(&obj);
                    if let Some(evidence) = typed_arrived_after_change(prior, &now, text, changed) {
                        self.settle_popups(started).await;
                        return Ok(Check::Verified(evidence));
                    }
                    if last.is_none()
                        || named_obj.as_ref() == Some(&obj)
                        || self.events.focused().as_ref() == Some(&obj)
                    {
                        last = Some(now);
                    }
                }
            }
            if started.elapsed() >= limit {
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(Check::Unverified(if secret {
            format!(
                "the password field's length did not grow by the typed characters within {} ms",
                started.elapsed().as_millis()
            )
        } else {
            typed_missing(last.as_deref(), text, started.elapsed().as_millis())
        }))
    }

    /// Reads `obj`'s text until it equals `value` (bounded). `Ok(text)` when taken, else the
    /// last text read.
    async fn await_text(&self, obj: &ObjRef, value: &str, limit: Duration) -> Result<String, String> {
        let Ok(atspi) = self.atspi() else {
            return Err(String::new());
        };
        let started = Instant::now();
        let mut last = String::new();
        loop {
            if let Ok(Some(now)) = atspi.read_text(obj).await {
                if text_value_taken(value, &now) {
                    return Ok(now);
                }
                last = now;
            }
            if started.elapsed() >= limit {
                return Err(last);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// `set_value`: editable text or a numeric value, read back; an application that answers
    /// yes and ignores the new text gets it typed instead (focus, select all, type), read back
    /// again; a value that is still not there is an error.
    pub(crate) async fn set_value(
        &self,
        window: &WindowInfo,
        view: &View,
        element: &ElementRef,
        value: &str,
    ) -> GuiResult<ActionOutcome> {
        let (_, obj, node) = self.verify(element).await?;
        let atspi = self.atspi()?;
        let has = |name: &str| node.interfaces.iter().any(|i| i == name);
        // A control with a value (spin button, slider) takes a number through it, even where
        // it also has editable text: the text alone does not change what the application keeps.
        if has("Value") && (value.trim().parse::<f64>().is_ok() || !has("EditableText")) {
            return self.set_number(&obj, element, value).await;
        }
        if has("EditableText") {
            if element.role != "password_text" {
                if let Ok(Some(now)) = atspi.read_text(&obj).await {
                    if text_value_taken(value, &now) {
                        return Ok(ActionOutcome::new("editable_text")
                            .unverified(format!("the text already was {}: nothing changed", quote(&now))));
                    }
                }
            }
            let said_yes = atspi.set_text(&obj, value).await?;
            if said_yes {
                match self.await_text(&obj, value, STATE_WAIT).await {
                    Ok(now) => {
                        return Ok(ActionOutcome::new("editable_text")
                            .verified(format!("text is now {}", quote(&now))))
                    }
                    // The text itself is never logged: it may be a password.
                    Err(now) => tracing::debug!(
                        "{obj}: SetTextContents said yes, the text differs ({} chars); typing it instead",
                        now.chars().count()
                    ),
                }
            }
            // Type it: focus, select all, then the text (or delete for an empty value).
            if !atspi.grab_focus(&obj).await? {
                let p = self.element_point(view, element).await?;
                self.ws_click(view.win.id, p, MouseButton::Left, 1).await?;
            }
            let _ = self.await_state(&obj, "focused", STATE_WAIT).await;
            let select_all = KeyCombo::parse("ctrl+a", 4)?;
            let erase = KeyCombo::parse("BackSpace", 4)?;
            self.ws_key_combo(view.win.id, &select_all).await?;
            if value.is_empty() {
                self.ws_key_combo(view.win.id, &erase).await?;
            } else {
                self.ws_type_text(view.win.id, value).await?;
            }
            let limit = TEXT_WAIT
                + Duration::from_millis(2 * value.chars().count() as u64).min(Duration::from_secs(2));
            let how = if said_yes {
                "the application accepted SetTextContents but left the text unchanged"
            } else {
                "the application refused SetTextContents"
            };
            return match self.await_text(&obj, value, limit).await {
                Ok(now) => Ok(ActionOutcome::new("editable_text+typed")
                    .verified(format!("text is now {}", quote(&now)))
                    .with_detail(format!("{how}; the value was typed instead (select all, type)"))),
                Err(now) => Err(GuiError::backend(format!(
                    "element {} did not take the value: {how}, and after typing it the text is {}; \
                     the application ignores this way of setting it, try click + key + type",
                    element.id,
                    quote(&now)
                ))),
            };
        }
        let _ = window;
        Err(GuiError::new(
            ErrorCode::UnsupportedAction,
            format!(
                "element {} ({}) has neither editable text nor a numeric value; click it or type instead",
                element.id, element.role
            ),
        ))
    }

    /// `set_value` through the numeric value interface, read back through it (a spin button's
    /// text can change while its value, what the application saves, stays).
    async fn set_number(&self, obj: &ObjRef, element: &ElementRef, value: &str) -> GuiResult<ActionOutcome> {
        let atspi = self.atspi()?;
        let v: f64 = value.trim().parse().map_err(|_| {
            GuiError::invalid(format!(
                "element {} takes a number; {value:?} is not one",
                element.id
            ))
        })?;
        let before = atspi.read_number(obj).await.ok().flatten();
        if let Some(b) = before.filter(|b| number_taken(v, *b)) {
            // Nothing to change: never `confirmed` for an effect that did not happen.
            return Ok(
                ActionOutcome::new("value").unverified(format!("the value already was {b}: nothing changed"))
            );
        }
        if !atspi.set_numeric_value(obj, v).await? {
            return Err(GuiError::backend(format!(
                "element {} refused the value",
                element.id
            )));
        }
        let started = Instant::now();
        loop {
            let now = atspi.read_number(obj).await.ok().flatten();
            match now {
                Some(n) if number_taken(v, n) => {
                    return Ok(ActionOutcome::new("value").verified(format!("value is now {n}")))
                }
                Some(n) if started.elapsed() >= STATE_WAIT => {
                    if before.is_some_and(|b| number_taken(b, n)) && !number_taken(v, n) {
                        return Err(GuiError::backend(format!(
                            "element {} did not take the value {v}: it is still {n}",
                            element.id
                        )));
                    }
                    return Ok(ActionOutcome::new("value").verified(format!(
                        "value is now {n} (asked for {v}: the control keeps to its range or step)"
                    )));
                }
                None if started.elapsed() >= STATE_WAIT => {
                    return Ok(ActionOutcome::new("value").unverified("the value could not be read back"))
                }
                _ => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// A click on a row, cell or list item: a pointer click at its centre, as a person's, so the
    /// application's own logic sees it (selecting through the accessibility API alone sets a
    /// selection some applications never hear of); the parent's selection only where the item
    /// cannot be reached by the pointer. Reads back that it is selected.
    pub(crate) async fn select(&self, window: &WindowInfo, e: &ElementRef) -> GuiResult<ActionOutcome> {
        let (_, obj, node) = self.verify(e).await?;
        let was = node.states.iter().any(|s| s == "selected");
        let view = self.x11_window(&window.window_id).await?;
        let point = match self.element_point(&view, e).await {
            Ok(p) => Some(p),
            Err(err) if err.code == ErrorCode::OutOfBounds => None,
            Err(err) => return Err(err),
        };
        let Some(p) = point else {
            let atspi = self.atspi()?;
            if atspi.select_in_parent(&obj).await? {
                if let Check::Verified(_) = self.await_state(&obj, "selected", STATE_WAIT).await {
                    let how = if was {
                        "selected through its list's selection (it already was; it is out of the pointer's reach)"
                    } else {
                        "selected false -> true, through its list's selection (it is out of the pointer's reach)"
                    };
                    return Ok(ActionOutcome::new("atspi_selection").verified(how));
                }
            }
            return Err(GuiError::new(
                ErrorCode::OutOfBounds,
                format!(
                    "element {} is out of the pointer's reach and its list did not select it; scroll it into view",
                    e.id
                ),
            ));
        };
        let note = self.activate(&view).await?;
        self.ws_click(view.win.id, p, MouseButton::Left, 1).await?;
        let out = ActionOutcome::new(self.ws.input_method());
        let out = match note {
            Some(n) => out.with_detail(n),
            None => out,
        };
        Ok(match self.await_state(&obj, "selected", STATE_WAIT).await {
            Check::Verified(_) if was => out.unverified(
                "clicked at its centre; it was selected already, so the selection shows nothing new",
            ),
            Check::Verified(_) => out.verified("clicked at its centre; selected false -> true"),
            Check::Unverified(why) => {
                out.unverified(format!("clicked at its centre; it is not selected: {why}"))
            }
        })
    }
}
