//! Element actions through UI Automation's patterns, each on a control first found again and
//! re-verified (the same runtime id, the same kind of control; `ELEMENT_STALE` otherwise), and
//! each effect read back where the control has one to read: toggle, selection and expansion
//! states, the value, the keyboard focus.

use super::client::{gui_error, Client, TRANSACTION_TIMEOUT};
use crate::element::{format_number, same_control, UiaProps};
use crate::patterns::{clamp_range, click_method, focus_method, set_value_method, Method};
use crate::win32::input;
use lsm_core::backend::ActionOutcome;
use lsm_core::state::ElementRef;
use lsm_core::verify::{
    effect_state_changes, number_taken, quote, text_value_taken, toggle_effect, typed_arrived, typed_missing,
    TOGGLE_STATES,
};
use lsm_core::{ErrorCode, GuiError, GuiResult};
use std::time::{Duration, Instant};
use windows::core::{Interface, BSTR};
use windows::Win32::Foundation::HWND;
use windows::Win32::UI::Accessibility::*;

/// How long an effect is waited for before the result says it was not seen.
const EFFECT_WAIT: Duration = Duration::from_millis(600);
const POLL: Duration = Duration::from_millis(30);
/// Invoke is bounded short: providers that carry it out synchronously (a button that opens a
/// modal dialog) hold the call until the dialog closes, though the press took effect.
const INVOKE_LIMIT: Duration = Duration::from_millis(1_000);

/// What a click on an element came to.
pub enum Press {
    Done(ActionOutcome),
    /// No pattern carries it out: click at this point (physical screen pixels).
    AtPoint(i32, i32),
}

fn stale(r: &ElementRef, why: &str) -> GuiError {
    GuiError::new(
        ErrorCode::ElementStale,
        format!(
            "element {} ({} {:?}): {why}; call gui_state for a fresh observation",
            r.id, r.role, r.name
        ),
    )
}

fn pattern<T: Interface>(element: &IUIAutomationElement, id: UIA_PATTERN_ID, what: &str) -> GuiResult<T> {
    // SAFETY: a call on a live element of this thread.
    unsafe { element.GetCurrentPatternAs::<T>(id) }.map_err(|e| gui_error(what, &e))
}

impl Client {
    /// The observed element, found again and verified to be the same control.
    pub fn resolve(&self, hwnd: HWND, r: &ElementRef) -> GuiResult<(IUIAutomationElement, UiaProps)> {
        let element = match self.known(hwnd, &r.native) {
            Some(e) => e,
            None => self
                .search(hwnd, &r.native)?
                .ok_or_else(|| stale(r, "no control with its identity is in the window any more"))?,
        };
        let (fresh, props) = self.refresh(&element).map_err(|e| {
            let g = gui_error("re-reading the element", &e);
            if g.code == ErrorCode::ElementStale {
                stale(r, "the control is gone")
            } else {
                g
            }
        })?;
        same_control(&r.native, &r.role, &props).map_err(|why| stale(r, &why))?;
        Ok((fresh, props))
    }

    /// Re-reads the element until `done` holds for its properties or the wait is over; the
    /// last properties read (`None`: it is gone) and the time waited.
    fn await_props(
        &self,
        element: &IUIAutomationElement,
        done: impl Fn(&UiaProps) -> bool,
    ) -> (Option<UiaProps>, u128) {
        let started = Instant::now();
        loop {
            let now = self.refresh(element).ok().map(|(_, p)| p);
            let over = started.elapsed() >= EFFECT_WAIT;
            match now {
                Some(p) if done(&p) || over => return (Some(p), started.elapsed().as_millis()),
                None => return (None, started.elapsed().as_millis()),
                Some(_) => std::thread::sleep(POLL),
            }
        }
    }

    /// A left click on the element through its pattern, or the point to click at when it has
    /// none.
    pub fn press(&self, hwnd: HWND, r: &ElementRef) -> GuiResult<Press> {
        let (element, props) = self.resolve(hwnd, r)?;
        let Some(method) = click_method(&r.role, &props.patterns) else {
            let (x, y) = props.centre().ok_or_else(|| {
                GuiError::new(
                    ErrorCode::UnsupportedAction,
                    "the element has no on-screen area to click",
                )
            })?;
            return Ok(Press::AtPoint(x, y));
        };
        let before = props.states(false);
        let outcome = ActionOutcome::new(method.name());
        // SAFETY (every block below): calls on live pattern objects of this thread.
        let sent = match method {
            Method::Invoke => {
                let p: IUIAutomationInvokePattern =
                    pattern(&element, UIA_InvokePatternId, "the Invoke pattern")?;
                self.limit_calls(INVOKE_LIMIT);
                let r = unsafe { p.Invoke() };
                self.limit_calls(TRANSACTION_TIMEOUT);
                match r {
                    Err(e) if crate::errors::classify(e.code().0 as u32).0 == ErrorCode::Timeout => {
                        return Ok(Press::Done(outcome.unverified(format!(
                            "invoked; the application did not answer within {} ms (a dialog it opened may be \
                             holding the call): observe the window",
                            INVOKE_LIMIT.as_millis()
                        ))))
                    }
                    other => other,
                }
            }
            Method::Toggle => {
                let p: IUIAutomationTogglePattern =
                    pattern(&element, UIA_TogglePatternId, "the Toggle pattern")?;
                unsafe { p.Toggle() }
            }
            Method::Select => {
                let p: IUIAutomationSelectionItemPattern =
                    pattern(&element, UIA_SelectionItemPatternId, "the SelectionItem pattern")?;
                unsafe { p.Select() }
            }
            Method::ExpandOrCollapse => {
                let p: IUIAutomationExpandCollapsePattern = pattern(
                    &element,
                    UIA_ExpandCollapsePatternId,
                    "the ExpandCollapse pattern",
                )?;
                if before.iter().any(|s| s == "expanded") {
                    unsafe { p.Collapse() }
                } else {
                    unsafe { p.Expand() }
                }
            }
            Method::LegacyDefaultAction => {
                let p: IUIAutomationLegacyIAccessiblePattern = pattern(
                    &element,
                    UIA_LegacyIAccessiblePatternId,
                    "the LegacyIAccessible pattern",
                )?;
                unsafe { p.DoDefaultAction() }
            }
            Method::SetText | Method::SetRange | Method::SetFocus => unreachable_click(),
        };
        sent.map_err(|e| gui_error(&format!("{} on the element", method.name()), &e))?;
        let toggles = matches!(method, Method::Toggle | Method::Select | Method::ExpandOrCollapse);
        let (after, waited) = self.await_props(&element, |p| {
            !toggles || !effect_state_changes(&r.role, &before, &p.states(false), TOGGLE_STATES).is_empty()
        });
        let Some(after) = after else {
            return Ok(Press::Done(outcome.unverified(format!(
                "done; the {} is gone now (its window closed?)",
                r.role
            ))));
        };
        let now = after.states(false);
        Ok(Press::Done(if toggles {
            outcome.with_check(toggle_effect(&r.role, &before, &now, waited))
        } else {
            let changes = effect_state_changes(&r.role, &before, &now, TOGGLE_STATES);
            if changes.is_empty() {
                outcome.unverified(format!(
                    "done and the application answered; a {} shows no state to read back, observe the window for its effect",
                    r.role
                ))
            } else {
                outcome.verified(changes.join(", "))
            }
        }))
    }

    /// The element's current centre (physical screen pixels), for pointer actions on it.
    pub fn centre(&self, hwnd: HWND, r: &ElementRef) -> GuiResult<(i32, i32)> {
        let (_, props) = self.resolve(hwnd, r)?;
        props
            .centre()
            .ok_or_else(|| GuiError::new(ErrorCode::UnsupportedAction, "the element has no on-screen area"))
    }

    /// `set_value`: the Value pattern for text, RangeValue for numbers; read back.
    pub fn set_value(&self, hwnd: HWND, r: &ElementRef, value: &str) -> GuiResult<ActionOutcome> {
        let (element, props) = self.resolve(hwnd, r)?;
        let method = set_value_method(&props.patterns, value)
            .map_err(|why| GuiError::new(ErrorCode::UnsupportedAction, why))?;
        let outcome = ActionOutcome::new(method.name());
        if method == Method::SetRange {
            let wanted: f64 = value
                .trim()
                .parse()
                .map_err(|_| GuiError::invalid(format!("{value:?} is not a number")))?;
            let range = props.range;
            let (target, clamped) = match range {
                Some(r) => clamp_range(wanted, r.minimum, r.maximum),
                None => (wanted, false),
            };
            let p: IUIAutomationRangeValuePattern =
                pattern(&element, UIA_RangeValuePatternId, "the RangeValue pattern")?;
            // SAFETY: a call on a live pattern object.
            unsafe { p.SetValue(target) }.map_err(|e| gui_error("setting the value", &e))?;
            let (after, _) = self.await_props(&element, |p| {
                p.range.is_some_and(|r| number_taken(target, r.value))
            });
            let note = match (clamped, range) {
                (true, Some(r)) => format!(
                    " ({} is outside {}..{}: set to the nearest end)",
                    format_number(wanted),
                    format_number(r.minimum),
                    format_number(r.maximum)
                ),
                _ => String::new(),
            };
            return Ok(match after.and_then(|p| p.range) {
                Some(now) if number_taken(target, now.value) => {
                    outcome.verified(format!("value is now {}{note}", format_number(now.value)))
                }
                Some(now) => outcome.unverified(format!(
                    "the control holds {} after setting {}",
                    format_number(now.value),
                    format_number(target)
                )),
                None => outcome.unverified("the value could not be read back"),
            });
        }
        let p: IUIAutomationValuePattern = pattern(&element, UIA_ValuePatternId, "the Value pattern")?;
        // SAFETY: a call on a live pattern object.
        unsafe { p.SetValue(&BSTR::from(value)) }.map_err(|e| gui_error("setting the value", &e))?;
        if props.is_password {
            return Ok(outcome.unverified("a password field is never read back"));
        }
        let (after, _) = self.await_props(&element, |p| {
            p.value.as_deref().is_some_and(|v| text_value_taken(value, v))
        });
        Ok(match after.and_then(|p| p.value) {
            Some(now) if text_value_taken(value, &now) => {
                outcome.verified(format!("text is now {}", quote(&now)))
            }
            Some(now) => outcome.unverified(format!("the control holds {} after setting it", quote(&now))),
            None => outcome.unverified("the value could not be read back"),
        })
    }

    /// Gives the element the keyboard focus and waits to see it there.
    pub fn focus(&self, hwnd: HWND, r: &ElementRef) -> GuiResult<ActionOutcome> {
        let (element, props) = self.resolve(hwnd, r)?;
        let method = focus_method(&props.patterns).ok_or_else(|| {
            GuiError::new(
                ErrorCode::UnsupportedAction,
                "the element cannot take the keyboard focus",
            )
        })?;
        // SAFETY: a call on a live element.
        unsafe { element.SetFocus() }.map_err(|e| gui_error("giving the element the focus", &e))?;
        let (after, waited) = self.await_props(&element, |p| p.has_keyboard_focus);
        let outcome = ActionOutcome::new(method.name());
        Ok(if after.is_some_and(|p| p.has_keyboard_focus) {
            outcome.verified("it has the keyboard focus")
        } else {
            outcome.unverified(format!(
                "the focus was asked for; {waited} ms later it is not there"
            ))
        })
    }

    /// Focuses the element, types `text` with SendInput, and reads its value back (never a
    /// password field's).
    pub fn type_into(&self, hwnd: HWND, r: &ElementRef, text: &str) -> GuiResult<ActionOutcome> {
        let focused = self.focus(hwnd, r)?;
        let (element, props) = self.resolve(hwnd, r)?;
        let before = props.value.clone();
        input::type_text(text)?;
        let outcome = ActionOutcome::new("sendinput");
        if props.is_password {
            return Ok(outcome.unverified("typed into a password field, which is never read back"));
        }
        if !props.patterns.value {
            return Ok(outcome.unverified(format!(
                "typed; the element has no value to read back ({})",
                match focused.check {
                    lsm_core::backend::Check::Verified(e) | lsm_core::backend::Check::Unverified(e) => e,
                }
            )));
        }
        let (after, waited) = self.await_props(&element, |p| {
            p.value
                .as_deref()
                .is_some_and(|v| typed_arrived(before.as_deref(), v, text).is_some())
        });
        let now = after.and_then(|p| p.value);
        Ok(
            match now
                .as_deref()
                .and_then(|v| typed_arrived(before.as_deref(), v, text))
            {
                Some(evidence) => outcome.verified(evidence),
                None => outcome.unverified(typed_missing(now.as_deref(), text, waited)),
            },
        )
    }
}

fn unreachable_click() -> windows::core::Result<()> {
    Err(windows::core::Error::from_hresult(windows::core::HRESULT(
        crate::errors::UIA_E_NOTSUPPORTED as i32,
    )))
}
