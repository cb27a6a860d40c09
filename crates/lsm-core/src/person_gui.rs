//! `LocalGui`'s side of the person in charge (crate::person): the approval a model's
//! `gui_action` waits for, and what each call puts in the activity feed.

use crate::action::ActionSpec;
use crate::audit::Face;
use crate::error::GuiResult;
use crate::geometry::Rect;
use crate::image::ImageFormat;
use crate::image::RgbaImage;
use crate::model::WindowInfo;
use crate::observe::render_screenshot;
use crate::output::ActionOutput;
use crate::person::{ApprovalTarget, CallEntry, FeedEvent, PendingApproval};
use crate::service::{bounded, LocalGui};
use crate::space::Space;
use crate::state::Observation;
use base64::Engine;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The long edge of the image a person approves on.
const APPROVAL_IMAGE_EDGE: u32 = 560;
/// The long edge of a feed entry's before/after image: a few KB each, so a call stays a small
/// event on the page's stream.
const FEED_IMAGE_EDGE: u32 = 160;
const FEED_IMAGE_QUALITY: u8 = 60;

fn data_url(image: &crate::image::EncodedImage) -> String {
    format!(
        "data:{};base64,{}",
        image.mime_type(),
        base64::engine::general_purpose::STANDARD.encode(&image.bytes)
    )
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl LocalGui {
    /// Waits for a person's approval where it is needed (`ask`: the policy's reason for an
    /// `ask` window). Ok(true) when the call may act on an `ask` window.
    pub(crate) async fn approval(
        &self,
        obs: &Observation,
        specs: &[ActionSpec],
        actions: &serde_json::Value,
        ask: Option<String>,
    ) -> GuiResult<bool> {
        let approvals = &self.person.approvals;
        let window = &obs.window;
        if !approvals.needed(&window.window_id, ask.is_some()) {
            // Not asked for, or the window is approved for a while.
            return Ok(ask.is_some());
        }
        let reason = ask.unwrap_or_else(|| "the machine's \"approve everything\" switch is on".to_string());
        let (image, width, height, space) = match self.approval_image(&window.window_id).await {
            Some((url, w, h, space)) => (Some(url), Some(w), Some(h), Some(space)),
            None => (None, None, None, None),
        };
        let targets = specs
            .iter()
            .enumerate()
            .filter_map(|(index, spec)| target_of(obs, index, spec, space.as_ref()))
            .collect();
        let info = PendingApproval {
            id: approvals.next_id(),
            machine: self.person.machine().to_string(),
            window_id: window.window_id.clone(),
            title: window.title.clone(),
            app: window.app.clone(),
            actions: actions.clone(),
            targets,
            reason,
            image,
            image_width: width,
            image_height: height,
            asked_ms: 0,
            timeout_s: 0,
        };
        let person = self.person.clone();
        approvals.wait(info, move || person.publish_state()).await?;
        Ok(true)
    }

    /// The window as it is now, small, as a data: URL (None when it cannot be captured).
    async fn approval_image(&self, window_id: &str) -> Option<(String, u32, u32, Space)> {
        let backend = self.backend().await.ok()?;
        let captured = bounded("capturing the window", backend.capture(window_id))
            .await
            .ok()?;
        let shot = captured.screenshot?;
        let b = captured.window.bounds;
        let space = Space::for_window(b.width, b.height, APPROVAL_IMAGE_EDGE);
        let drawn = space;
        let rendered = tokio::task::spawn_blocking(move || {
            render_screenshot(&shot.image, &drawn, &[], ImageFormat::Jpeg, 70)
        })
        .await
        .ok()?
        .ok()?;
        let url = data_url(&rendered.image);
        Some((url, rendered.image.width, rendered.image.height, space))
    }

    /// An observation's screenshot small, with its password fields painted over, for the feed;
    /// None while no page watches the feed (nothing is made for nobody).
    pub(crate) async fn feed_image(
        &self,
        pixels: &Arc<RgbaImage>,
        window: &WindowInfo,
        secrets: &[Rect],
    ) -> Option<Arc<str>> {
        if !self.person.feed().watched() {
            return None;
        }
        let space = Space::for_window(window.bounds.width, window.bounds.height, FEED_IMAGE_EDGE);
        let (pixels, secrets) = (pixels.clone(), secrets.to_vec());
        let rendered = tokio::task::spawn_blocking(move || {
            render_screenshot(&pixels, &space, &secrets, ImageFormat::Jpeg, FEED_IMAGE_QUALITY)
        })
        .await
        .ok()?
        .ok()?;
        Some(Arc::from(data_url(&rendered.image)))
    }

    /// Puts a finished call in the activity feed.
    pub(crate) fn publish_call(
        &self,
        face: Face,
        obs: &Observation,
        actions: &serde_json::Value,
        result: &GuiResult<ActionOutput>,
    ) {
        let window = &obs.window;
        let feed = self.person.feed();
        // Before: the image of the observation the call acted on; after: the settled window's
        // (kept too, as the next call's before).
        let before_image = (!obs.state_id.is_empty())
            .then(|| feed.image_of(&obs.state_id))
            .flatten()
            .map(|i| i.to_string());
        let after_image = result.as_ref().ok().and_then(|out| {
            let image = out.feed_image.clone()?;
            if let Some(id) = &out.state_id {
                feed.remember_image(id, image.clone());
            }
            Some(image.to_string())
        });
        let (code, message, effects, changes, stopped) = match result {
            Ok(out) => (
                "OK".to_string(),
                None,
                out.results.iter().map(describe_result).collect(),
                out.changes
                    .as_ref()
                    .filter(|c| !c.is_empty())
                    .map(|c| c.evidence()),
                out.stopped.clone(),
            ),
            Err(e) => {
                let done: Vec<crate::action::ActionResult> = e
                    .details
                    .as_ref()
                    .and_then(|d| d.get("completed"))
                    .and_then(|c| serde_json::from_value(c.clone()).ok())
                    .unwrap_or_default();
                (
                    e.code.as_str().to_string(),
                    Some(e.message.clone()),
                    done.iter().map(describe_result).collect(),
                    None,
                    None,
                )
            }
        };
        feed.publish(FeedEvent::Call(Box::new(CallEntry {
            at_ms: now_ms(),
            machine: self.person.machine().to_string(),
            by: match face {
                Face::Mcp => "model",
                Face::Web => "person",
            }
            .into(),
            tool: match face {
                Face::Mcp => "gui_action",
                Face::Web => "web input",
            }
            .into(),
            window_id: window.window_id.clone(),
            title: window.title.clone(),
            app: window.app.clone(),
            actions: actions.clone(),
            code,
            message,
            effects,
            changes,
            stopped,
            before_image,
            after_image,
        })));
    }

    /// Puts a finished `gui_state` in the activity feed.
    pub(crate) fn publish_observation(
        &self,
        window_id: &str,
        result: &GuiResult<crate::output::StateOutput>,
    ) {
        let after_image = result.as_ref().ok().and_then(|out| {
            let image = out.feed_image.clone()?;
            self.person.feed().remember_image(&out.state_id, image.clone());
            Some(image.to_string())
        });
        let (window, code, message, effects) = match result {
            Ok(out) => (
                out.window.clone(),
                "OK".to_string(),
                None,
                vec![format!(
                    "observed {} elements{}",
                    out.element_count,
                    if out.screenshot.is_some() {
                        " and a screenshot"
                    } else {
                        ""
                    }
                )],
            ),
            Err(e) => (
                WindowInfo::new(window_id, "", "", Rect::default()),
                e.code.as_str().to_string(),
                Some(e.message.clone()),
                Vec::new(),
            ),
        };
        self.person.feed().publish(FeedEvent::Call(Box::new(CallEntry {
            at_ms: now_ms(),
            machine: self.person.machine().to_string(),
            by: "model".into(),
            tool: "gui_state".into(),
            window_id: window.window_id.clone(),
            title: window.title,
            app: window.app,
            actions: serde_json::Value::Null,
            code,
            message,
            effects,
            changes: None,
            stopped: None,
            before_image: None,
            after_image,
        })));
    }
}

/// One action's outcome in a line: what ran, and what was seen of its effect.
fn describe_result(r: &crate::action::ActionResult) -> String {
    let effect = match &r.effect {
        Some(e) => serde_json::to_value(e)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        None if r.verified => "verified".into(),
        None => "not judged".into(),
    };
    let how = r
        .evidence
        .as_deref()
        .or(r.unverified.as_deref())
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    format!("{} {} — {effect}{how}", r.index, r.action_type)
}

/// What action `index` touches, for the person: the element's name and role, and where it is on
/// the approval image (in `space`, that image's pixels).
fn target_of(
    obs: &Observation,
    index: usize,
    spec: &ActionSpec,
    space: Option<&Space>,
) -> Option<ApprovalTarget> {
    let on_image = |r: Rect| space.map(|s| s.rect_to_space(r));
    if let Some(id) = spec.element_ids().first() {
        let el = obs.elements.get(*id)?;
        return Some(ApprovalTarget {
            index,
            action_type: spec.type_name().into(),
            element_id: Some(id.to_string()),
            role: el.role.clone(),
            name: el.name.clone(),
            mark: el.bounds.and_then(on_image),
        });
    }
    let p = *spec.points().first()?;
    let logical = obs.space.point_to_logical(p);
    // The element drawn there in the observation, when one is.
    let under = obs
        .elements
        .values()
        .filter(|e| e.bounds.is_some_and(|b| b.contains(logical)))
        .min_by_key(|e| e.bounds.map(|b| b.width as i64 * b.height as i64));
    Some(ApprovalTarget {
        index,
        action_type: spec.type_name().into(),
        element_id: under.map(|e| e.id.clone()),
        role: under.map(|e| e.role.clone()).unwrap_or_default(),
        name: under.map(|e| e.name.clone()).unwrap_or_default(),
        mark: on_image(Rect::new(logical.x, logical.y, 1, 1)),
    })
}
