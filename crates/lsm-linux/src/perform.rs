//! Carrying out one action: an element's own AT-SPI action where the control has one, XTest input
//! otherwise, each after re-checking that the element is still the control observed.

use crate::atspi::{ObjRef, RawNode};
use crate::backend::{decode_native, CoordRule, LinuxBackend, View};
use crate::on_screen;
use lsm_core::{
    ActionOutcome, BackendAction, ElementRef, ErrorCode, GuiError, GuiResult, MouseButton, Point, Rect,
    Target, WindowInfo,
};

/// Actions that mean "press this control", tried in order for a plain element click.
const PRESS_ACTIONS: &[&str] = &["click", "press", "toggle", "jump", "open"];
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
    async fn verify(&self, e: &ElementRef) -> GuiResult<(CoordRule, ObjRef, RawNode)> {
        let (rule, obj) = decode_native(&e.native)?;
        let node = self
            .atspi()?
            .node(&obj, rule.kind())
            .await?
            .ok_or_else(|| stale(e, "it no longer exists"))?;
        still_same(e, &node.role, &node.states)?;
        Ok((rule, obj, node))
    }

    /// A plain left click on an element by the action seen at observation time, after the
    /// cheapest check that it is still the same control (role and states, one round trip).
    /// `Ok(None)`: no such action, or the application refused it; the caller clicks instead.
    async fn quick_press(&self, e: &ElementRef) -> GuiResult<Option<ActionOutcome>> {
        let (_, obj) = decode_native(&e.native)?;
        let atspi = self.atspi()?;
        let (role, states) = atspi
            .role_and_states(&obj)
            .await?
            .ok_or_else(|| stale(e, "it no longer exists"))?;
        still_same(e, &role, &states)?;
        let Some(index) = press_action_index(&e.actions, &states) else {
            return Ok(None);
        };
        Ok(atspi
            .do_action_at(&obj, index)
            .await?
            .then(|| ActionOutcome::new(format!("atspi_action:{}", e.actions[index]))))
    }

    /// Current on-screen centre of an element, checked to be inside the window.
    async fn element_point(&self, view: &View, e: &ElementRef) -> GuiResult<Point> {
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
        let s = self.x(|x| x.screen_rect()).await?;
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
    async fn activate(&self, view: &View) -> GuiResult<Option<String>> {
        let id = view.win.id;
        let ok = self.x(move |x| x.activate(id)).await?;
        Ok((!ok).then(|| "the window did not confirm focus; input may have gone elsewhere".to_string()))
    }

    pub(crate) async fn run_action(
        &self,
        window: &WindowInfo,
        action: &BackendAction,
    ) -> GuiResult<ActionOutcome> {
        // A plain element click is the control's own action: no window geometry needed.
        if let BackendAction::Click {
            target: Target::Element(e),
            button: MouseButton::Left,
            count: 1,
        } = action
        {
            if let Some(done) = self.quick_press(e).await? {
                return Ok(done);
            }
            let (_, obj, node) = self.verify(e).await?;
            let preferred = press_actions(&node.states);
            if !node.actions.is_empty() && !preferred.is_empty() {
                if let Some(name) = self.atspi()?.do_action(&obj, &preferred, false).await? {
                    return Ok(ActionOutcome::new(format!("atspi_action:{name}")));
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
                let p = self.screen_point(&win, target).await?;
                let note = self.activate(&win).await?;
                let (b, n) = (*button, *count);
                self.x(move |x| x.click(p, b, n)).await?;
                Ok(with_note(ActionOutcome::new("xtest"), note))
            }
            BackendAction::Move { target } => {
                let p = self.screen_point(&win, target).await?;
                self.x(move |x| x.pointer_move(p)).await?;
                Ok(ActionOutcome::new("xtest"))
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
                self.x(move |x| x.scroll(p, dx, dy)).await?;
                Ok(with_note(ActionOutcome::new("xtest"), note))
            }
            BackendAction::Drag { from, to, button } => {
                let a = self.screen_point(&win, from).await?;
                let b = win.to_screen(*to);
                let note = self.activate(&win).await?;
                let button = *button;
                self.x(move |x| x.drag(a, b, button)).await?;
                Ok(with_note(ActionOutcome::new("xtest"), note))
            }
            BackendAction::Type { element, text } => {
                let note = self.activate(&win).await?;
                if let Some(e) = element {
                    let (_, obj, _) = self.verify(e).await?;
                    if !self.atspi()?.grab_focus(&obj).await? {
                        let p = self.element_point(&win, e).await?;
                        self.x(move |x| x.click(p, MouseButton::Left, 1)).await?;
                    }
                }
                let text = text.clone();
                self.x(move |x| x.type_text(&text)).await?;
                Ok(with_note(ActionOutcome::new("xtest_type"), note))
            }
            BackendAction::Key { combo } => {
                let note = self.activate(&win).await?;
                let combo = combo.clone();
                self.x(move |x| x.key_combo(&combo)).await?;
                Ok(with_note(ActionOutcome::new("xtest"), note))
            }
            BackendAction::SetValue { element, value } => {
                let (_, obj, node) = self.verify(element).await?;
                let atspi = self.atspi()?;
                if node.interfaces.iter().any(|i| i == "EditableText") {
                    if atspi.set_text(&obj, value).await? {
                        return Ok(ActionOutcome::new("editable_text"));
                    }
                    return Err(GuiError::backend(format!(
                        "element {} refused the new text",
                        element.id
                    )));
                }
                if node.interfaces.iter().any(|i| i == "Value") {
                    let v: f64 = value.trim().parse().map_err(|_| {
                        GuiError::invalid(format!(
                            "element {} takes a number; {value:?} is not one",
                            element.id
                        ))
                    })?;
                    if atspi.set_numeric_value(&obj, v).await? {
                        return Ok(ActionOutcome::new("value"));
                    }
                    return Err(GuiError::backend(format!(
                        "element {} refused the value",
                        element.id
                    )));
                }
                Err(GuiError::new(
                    ErrorCode::UnsupportedAction,
                    format!(
                        "element {} ({}) has neither editable text nor a numeric value; click it or type instead",
                        element.id, element.role
                    ),
                ))
            }
            BackendAction::Focus { element } => {
                let note = self.activate(&win).await?;
                match element {
                    None => Ok(with_note(ActionOutcome::new("x11_activate"), note)),
                    Some(e) => {
                        let (_, obj, _) = self.verify(e).await?;
                        if self.atspi()?.grab_focus(&obj).await? {
                            Ok(with_note(ActionOutcome::new("atspi_grab_focus"), note))
                        } else {
                            let p = self.element_point(&win, e).await?;
                            self.x(move |x| x.click(p, MouseButton::Left, 1)).await?;
                            Ok(with_note(ActionOutcome::new("xtest"), note))
                        }
                    }
                }
            }
        }
    }
}

fn stale(e: &ElementRef, why: &str) -> GuiError {
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
