//! Carrying out one action: an element's own AT-SPI action where the control has one, XTest input
//! otherwise, each after re-checking that the element is still the control observed.

use super::on_screen;
use super::perform_check::{Pressed, SELECT_ROLES, STATE_WAIT, TOGGLE_ROLES};
use super::view::{decode_native, CoordRule, View};
use super::LinuxBackend;
use crate::atspi::{ObjRef, RawNode};
use lsm_core::{
    ActionOutcome, BackendAction, ElementRef, ErrorCode, GuiError, GuiResult, MouseButton, Point, Rect,
    Target, WindowInfo,
};

/// Actions that mean "press this control", tried in order for a plain element click.
const PRESS_ACTIONS: &[&str] = &["click", "press", "toggle", "jump", "open", "showmenu"];
/// `activate` also presses buttons and menu items, but on a text field it means "Enter".
const ACTIVATE: &str = "activate";

/// The semantic actions worth trying for a click on this element, in order. Editable text gets
/// none: a click there means "put the caret here", which only a pointer click does.
fn press_actions(states: &[String]) -> Vec<&'static str> {
    if states.iter().any(|s| s == "editable") {
        return Vec::new();
    }
    let mut names = PRESS_ACTIONS.to_vec();
    names.push(ACTIVATE);
    names
}

/// The index of the action a plain click runs, from the action names seen at observation time.
fn press_action_index(actions: &[String], states: &[String]) -> Option<usize> {
    press_actions(states)
        .iter()
        .find_map(|p| actions.iter().position(|n| n.trim().eq_ignore_ascii_case(p)))
}

impl LinuxBackend {
    /// Re-reads an element and checks it is still the same control.
    pub(crate) async fn verify(&self, e: &ElementRef) -> GuiResult<(CoordRule, ObjRef, RawNode)> {
        let (rule, shift, obj) = decode_native(&e.native)?;
        let node = self
            .atspi()?
            .node(&obj, rule.kind(), shift)
            .await?
            .ok_or_else(|| stale(e, "it no longer exists"))?;
        still_same(e, &node.role, &node.states)?;
        Ok((rule, obj, node))
    }

    /// A plain left click on an element by the action seen at observation time, after the
    /// cheapest check that it is still the same control (role and states, one round trip), with
    /// its effect checked. `Ok(None)`: no such action, or the application refused it; the caller
    /// clicks instead.
    async fn quick_press(&self, window: &WindowInfo, e: &ElementRef) -> GuiResult<Option<ActionOutcome>> {
        let (_, _, obj) = decode_native(&e.native)?;
        let atspi = self.atspi()?;
        let (role, states) = atspi
            .role_and_states(&obj)
            .await?
            .ok_or_else(|| stale(e, "it no longer exists"))?;
        still_same(e, &role, &states)?;
        let Some(index) = press_action_index(&e.actions, &states) else {
            return Ok(None);
        };
        let name = &e.actions[index];
        let method = format!("atspi_action:{name}");
        match self.press_watching(window, &obj, index).await? {
            Pressed::Done(false) => Ok(None),
            Pressed::Blocked { evidence, stop } => {
                Ok(Some(ActionOutcome::new(method).verified(evidence).stopping(stop)))
            }
            Pressed::Done(true) => {
                let toggles = TOGGLE_ROLES.contains(&role.as_str()) || name.eq_ignore_ascii_case("toggle");
                let check = self.after_press(&obj, &role, &states, toggles).await;
                Ok(Some(ActionOutcome::new(method).with_check(check)))
            }
        }
    }

    /// Current on-screen centre of an element, checked to be inside the window.
    pub(crate) async fn element_point(&self, view: &View, e: &ElementRef) -> GuiResult<Point> {
        let (rule, _obj, node) = self.verify(e).await?;
        let ext = node.extents.filter(|r| !r.is_empty()).ok_or_else(|| {
            GuiError::new(
                ErrorCode::OutOfBounds,
                format!(
                    "element {} has no area to point at (the application reports no bounds for it now); \
                     call gui_state again, or scroll it into view",
                    e.id
                ),
            )
        })?;
        let (dx, dy) = rule.offset(view);
        let rel = ext.translate(dx, dy);
        let screen = self.logical_screen(view).await?;
        let visible = on_screen::element_target(&e.id, rel, view.logical_bounds(), screen)?;
        Ok(view.to_screen(visible.center()))
    }

    /// The screen's size in the window's logical pixels.
    async fn logical_screen(&self, view: &View) -> GuiResult<Rect> {
        let s = self.ws_screen_rect().await?;
        let (w, h) = (view.logical(s.width), view.logical(s.height));
        Ok(Rect::new(0, 0, w, h))
    }

    /// An absolute physical screen point for a target: one that input can reach.
    async fn screen_point(&self, view: &View, t: &Target) -> GuiResult<Point> {
        match t {
            Target::Point(p) => {
                let screen = self.logical_screen(view).await?;
                if let Some(e) = on_screen::point_off_screen(*p, view.logical_bounds(), screen) {
                    return Err(e);
                }
                Ok(view.to_screen(*p))
            }
            Target::Element(e) => self.element_point(view, e).await,
        }
    }

    /// Raises and focuses the window so input reaches it; says so when focus is unconfirmed.
    pub(crate) async fn activate(&self, view: &View) -> GuiResult<Option<String>> {
        let id = view.win.id;
        let ok = self.ws_activate(id).await?;
        Ok((!ok).then(|| "the window did not confirm focus; input may have gone elsewhere".to_string()))
    }

    /// Input meant for a control (a click on it, a value or text for it) is refused when the
    /// control is disabled now. Asked only of a control that was disabled when observed: an
    /// observation may be older than what enabled it (the text typed just before).
    async fn refuse_disabled(&self, action: &BackendAction) -> GuiResult<()> {
        let element = match action {
            BackendAction::Click {
                target: Target::Element(e),
                ..
            }
            | BackendAction::SetValue { element: e, .. }
            | BackendAction::Type { element: Some(e), .. } => e,
            _ => return Ok(()),
        };
        if !lsm_core::states::is_disabled(&element.states) {
            return Ok(());
        }
        let (_, _, obj) = decode_native(&element.native)?;
        let now = self.atspi()?.role_and_states(&obj).await?;
        match now {
            Some((_, states)) if lsm_core::states::is_disabled(&states) => Err(GuiError::element_disabled(
                &element.id,
                &element.role,
                &element.name,
            )),
            _ => Ok(()),
        }
    }

    pub(crate) async fn run_action(
        &self,
        window: &WindowInfo,
        action: &BackendAction,
    ) -> GuiResult<ActionOutcome> {
        self.refuse_disabled(action).await?;
        // A plain element click is the control's own action: no window geometry needed. Rows
        // and cells are selected, not toggled or expanded.
        if let BackendAction::Click {
            target: Target::Element(e),
            button: MouseButton::Left,
            count: 1,
        } = action
        {
            if SELECT_ROLES.contains(&e.role.as_str()) {
                return self.select(window, e).await;
            }
            if let Some(done) = self.quick_press(window, e).await? {
                return Ok(done);
            }
            let (_, obj, node) = self.verify(e).await?;
            let preferred = press_actions(&node.states);
            if !node.actions.is_empty() && !preferred.is_empty() {
                let ran = match self.atspi()?.do_action(&obj, &preferred, false).await {
                    Err(err) if err.code == ErrorCode::Timeout => {
                        if let Some(Pressed::Blocked { evidence, stop }) =
                            self.blocked_by_dialog(window, &obj.bus).await
                        {
                            return Ok(ActionOutcome::new("atspi_action")
                                .verified(evidence)
                                .stopping(stop));
                        }
                        return Err(err);
                    }
                    other => other?,
                };
                if let Some(name) = ran {
                    let toggles =
                        TOGGLE_ROLES.contains(&node.role.as_str()) || name.eq_ignore_ascii_case("toggle");
                    let check = self.after_press(&obj, &node.role, &node.states, toggles).await;
                    return Ok(ActionOutcome::new(format!("atspi_action:{name}")).with_check(check));
                }
            }
        }
        let win = self.x11_window(&window.window_id).await?;
        match action {
            BackendAction::Click {
                target,
                button,
                count,
            } => {
                let began = std::time::Instant::now();
                let p = self.screen_point(&win, target).await?;
                let note = self.activate(&win).await?;
                let activated = began.elapsed();
                let (b, n) = (*button, *count);
                self.ws_click(win.win.id, p, b, n).await?;
                let clicked = began.elapsed();
                let check = match target {
                    Target::Element(e) => self.after_pointer_click(window, e).await,
                    Target::Point(_) => self.after_input(window, None, "a click by coordinates").await,
                };
                tracing::trace!(
                    "click: activated by {activated:?}, clicked by {clicked:?}, checked by {:?}",
                    began.elapsed()
                );
                Ok(with_note(
                    ActionOutcome::new(self.ws.input_method()).with_check(check),
                    note,
                ))
            }
            BackendAction::Move { target } => {
                let p = self.screen_point(&win, target).await?;
                self.ws_pointer_move(win.win.id, p).await?;
                Ok(ActionOutcome::new(self.ws.input_method())
                    .unverified("the pointer was moved; hover effects are not read back"))
            }
            BackendAction::Scroll {
                target,
                delta_x,
                delta_y,
            } => {
                let p = match target {
                    Some(t) => self.screen_point(&win, t).await?,
                    None => win.win.bounds.center(),
                };
                let note = self.activate(&win).await?;
                let (dx, dy) = (*delta_x, *delta_y);
                self.ws_scroll(win.win.id, p, dx, dy).await?;
                let check = self.after_input(window, None, "scrolling").await;
                Ok(with_note(
                    ActionOutcome::new(self.ws.input_method()).with_check(check),
                    note,
                ))
            }
            BackendAction::Drag { from, to, button } => {
                let a = self.screen_point(&win, from).await?;
                let b = win.to_screen(*to);
                let note = self.activate(&win).await?;
                let button = *button;
                self.ws_drag(win.win.id, a, b, button).await?;
                let check = self.after_input(window, None, "a drag").await;
                Ok(with_note(
                    ActionOutcome::new(self.ws.input_method()).with_check(check),
                    note,
                ))
            }
            BackendAction::Type { element, text } => {
                let note = self.activate(&win).await?;
                let mut named = None;
                if let Some(e) = element {
                    let (_, obj, _) = self.verify(e).await?;
                    if !self.atspi()?.grab_focus(&obj).await? {
                        let p = self.element_point(&win, e).await?;
                        self.ws_click(win.win.id, p, MouseButton::Left, 1).await?;
                    }
                    named = Some((obj, e.role.clone()));
                }
                let check = self.type_and_check(window, named, text).await?;
                Ok(with_note(
                    ActionOutcome::new(self.ws.typing_method()).with_check(check),
                    note,
                ))
            }
            BackendAction::Key { combo } => {
                let note = self.activate(&win).await?;
                self.ws_key_combo(win.win.id, combo).await?;
                let check = self.after_input(window, None, "a key press").await;
                Ok(with_note(
                    ActionOutcome::new(self.ws.input_method()).with_check(check),
                    note,
                ))
            }
            BackendAction::SetValue { element, value } => self.set_value(window, &win, element, value).await,
            BackendAction::Focus { element } => {
                let note = self.activate(&win).await?;
                match element {
                    None => {
                        let out = ActionOutcome::new(self.ws.activate_method());
                        Ok(match &note {
                            None => out.verified("the window has the input focus"),
                            Some(n) => out.unverified(n.clone()),
                        })
                    }
                    Some(e) => {
                        let (_, obj, node) = self.verify(e).await?;
                        if node.states.iter().any(|s| s == "focused") {
                            return Ok(with_note(
                                ActionOutcome::new("atspi_grab_focus")
                                    .unverified("it already had the focus: nothing changed"),
                                note,
                            ));
                        }
                        if self.atspi()?.grab_focus(&obj).await? {
                            let check = self.await_state(&obj, "focused", STATE_WAIT).await;
                            Ok(with_note(
                                ActionOutcome::new("atspi_grab_focus").with_check(check),
                                note,
                            ))
                        } else {
                            let p = self.element_point(&win, e).await?;
                            self.ws_click(win.win.id, p, MouseButton::Left, 1).await?;
                            let check = self.await_state(&obj, "focused", STATE_WAIT).await;
                            Ok(with_note(
                                ActionOutcome::new(self.ws.input_method()).with_check(check),
                                note,
                            ))
                        }
                    }
                }
            }
        }
    }
}

pub(crate) fn stale(e: &ElementRef, why: &str) -> GuiError {
    GuiError::new(
        ErrorCode::ElementStale,
        format!(
            "element {} ({} {:?}) is stale: {why}; call gui_state again",
            e.id, e.role, e.name
        ),
    )
}

/// Fails with `ELEMENT_STALE` when a re-read element is no longer the control observed.
fn still_same(e: &ElementRef, role: &str, states: &[String]) -> GuiResult<()> {
    let has = |states: &[String], name: &str| states.iter().any(|s| s == name);
    if role != e.role {
        return Err(stale(e, &format!("it is now a {role} (was {})", e.role)));
    }
    if has(states, "defunct") {
        return Err(stale(e, "it is defunct"));
    }
    // Only where the toolkit said "showing" at observation time (GTK4 never does).
    if has(&e.states, "showing") && !has(states, "showing") {
        return Err(stale(
            e,
            "it is no longer shown (closed, hidden or scrolled away)",
        ));
    }
    Ok(())
}

fn with_note(o: ActionOutcome, note: Option<String>) -> ActionOutcome {
    match note {
        Some(n) => o.with_detail(n),
        None => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_runs_the_first_press_action_observed_and_never_on_editable_text() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(press_action_index(&names(&["activate", "Click"]), &[]), Some(1));
        assert_eq!(
            press_action_index(&names(&["toggle"]), &names(&["checked"])),
            Some(0)
        );
        assert_eq!(press_action_index(&names(&["activate"]), &[]), Some(0));
        assert_eq!(
            press_action_index(&names(&["activate"]), &names(&["editable"])),
            None
        );
        assert_eq!(press_action_index(&names(&["expand or contract"]), &[]), None);
        assert_eq!(press_action_index(&[], &[]), None);
    }
}
