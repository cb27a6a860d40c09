//! Carries out a semantic action on one element, on the Accessibility worker: what the element
//! supports read first (its actions, settable attributes, value and bounds), the method chosen
//! by the platform-free rules ([`crate::actions`]), then the call, and the value read back where
//! the method sets one. Pointer input is not done here (the caller posts Quartz events).

use super::element::{AxElement, AxValue};
use crate::actions::{next_step, Method, Step, Supported, ValueKind, ValuePlan};
use crate::ax_errors::AxFailure;

/// The attributes read to know what an element supports, in one message.
const SUPPORT_ATTRIBUTES: &[&str] = &["AXValue", "AXMinValue", "AXMaxValue"];
/// Attributes whose settability matters for the methods.
const SETTABLE: &[&str] = &["AXValue", "AXSelected", "AXFocused"];

/// What an element supports, read from it now.
pub fn supported(element: &AxElement) -> Result<Supported, AxFailure> {
    let actions = element.actions()?;
    let mut settable = Vec::new();
    for name in SETTABLE {
        if element.settable(name)? {
            settable.push(*name);
        }
    }
    let names: Vec<&str> = actions.iter().map(String::as_str).collect();
    let mut s = Supported::from_names(&names, &settable);
    let values = element.attributes(SUPPORT_ATTRIBUTES)?;
    s.value_kind = match values.first() {
        Some(AxValue::Number(_)) | Some(AxValue::Bool(_)) => ValueKind::Number,
        Some(AxValue::Text(_)) => ValueKind::Text,
        Some(AxValue::Missing) | None => ValueKind::None,
        Some(_) => ValueKind::Other,
    };
    s.min = values.get(1).and_then(AxValue::number);
    s.max = values.get(2).and_then(AxValue::number);
    Ok(s)
}

/// Runs a semantic method (not [`Method::Pointer`], not [`Method::RaiseWindow`]).
pub fn run(element: &AxElement, method: Method) -> Result<(), AxFailure> {
    match method {
        Method::Press => element.perform("AXPress"),
        Method::Pick => element.perform("AXPick"),
        Method::Confirm => element.perform("AXConfirm"),
        Method::ShowMenu => element.perform("AXShowMenu"),
        Method::Select => element.set_flag("AXSelected", true),
        Method::Focus => element.set_flag("AXFocused", true),
        Method::SetText | Method::SetNumber | Method::Step | Method::RaiseWindow | Method::Pointer => {
            Err(AxFailure::Unsupported)
        }
    }
}

/// What a value read back after setting it may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readable {
    /// The value itself.
    Value,
    /// Only how many characters it has (a password field: its value is never read).
    Length,
}

/// Sets a value by its plan and reads back what the element holds now (`None`: not readable).
pub fn set_value(
    element: &AxElement,
    plan: &ValuePlan,
    readable: Readable,
) -> Result<Option<AxValue>, AxFailure> {
    match plan {
        ValuePlan::Text(text) => element.set_text("AXValue", text)?,
        ValuePlan::Number { value, .. } => element.set_number("AXValue", *value)?,
        ValuePlan::Step { target, .. } => {
            let mut previous = None;
            let mut taken = 0;
            loop {
                let Some(current) = element.attribute("AXValue")?.number() else {
                    return Err(AxFailure::Unsupported);
                };
                match next_step(current, *target, previous, taken) {
                    Step::Increment => element.perform("AXIncrement")?,
                    Step::Decrement => element.perform("AXDecrement")?,
                    Step::Done | Step::Stuck | Step::TooMany => break,
                }
                previous = Some(current);
                taken += 1;
            }
        }
    }
    let attribute = match readable {
        Readable::Value => "AXValue",
        Readable::Length => "AXNumberOfCharacters",
    };
    Ok(match element.attribute(attribute)? {
        AxValue::Missing => None,
        v => Some(v),
    })
}
