//! One observation of a window, as `gui_state` makes it: the backend's walk, the image and the
//! window list side by side, then shaped into what the caller sees ([`Looked`]); and the
//! `state_id` issued for it. The raw walk is kept, so that an observation can be brought up to
//! date by reading again only what the application's events say changed (`catch_up.rs`).

use crate::error::{GuiError, GuiResult};
use crate::image::ImageFormat;
use crate::looked::{Image, Looked, Shot};
use crate::model::{ObserveRequest, Query, Snapshot, WindowInfo};
use crate::observe::{number_elements, render_screenshot, secret_areas, Numbered};
use crate::output::{CoordinateSpace, StateOutput, StateRequest};
use crate::service::{bounded, encode_off_thread, pick, LocalGui};
use crate::space::Space;
use crate::state::{Shown, Walked};
use std::sync::Arc;
use std::time::Instant;

impl LocalGui {
    /// Observes a window as `gui_state` does, without issuing a `state_id` (the caller issues
    /// one for the observation it keeps).
    pub(crate) async fn look(&self, request: StateRequest) -> GuiResult<Looked> {
        let asked = request.clone();
        if request.window_id.is_empty() {
            return Err(GuiError::invalid("window_id is required (from gui_list)"));
        }
        let observe = self.observe_request(&request)?;
        let query = request
            .query
            .as_deref()
            .map(|q| Query::parse(q, self.limits.query_bytes))
            .transpose()?;
        if query.is_some() && !request.include_elements {
            return Err(GuiError::invalid(
                "query filters the elements: leave include_elements true (or drop query)",
            ));
        }
        let quality = match (request.image_format, request.image_quality) {
            (ImageFormat::Jpeg, q) => pick("image_quality", q, 80, 1, 100)? as u8,
            (_, None) => 80,
            (f, Some(_)) => {
                return Err(GuiError::invalid(format!(
                    "image_quality applies to jpeg only; {} is lossless (drop image_quality or use image_format \"jpeg\")",
                    f.name()
                )))
            }
        };
        let backend = self.backend().await?;
        let format = request.image_format;
        // The image is captured and encoded (as if nothing were secret) while the tree is walked;
        // it is encoded again only when the walk finds a password field or a different size.
        let walk_only = ObserveRequest {
            screenshot: false,
            query: query.clone(),
            ..observe
        };
        // A backend that cannot capture (its `gui_list` notes say why) observes without the
        // image; the observation says so instead of failing.
        let can_shoot = backend.info().capabilities.iter().any(|c| c == "screenshot");
        let shooting = observe.screenshot && can_shoot;
        let max_edge = self.limits.max_image_edge;
        let started = Instant::now();
        // The window list as of this observation, for the change list of the gui_action that
        // uses it (read beside the walk: it costs the walk nothing).
        let (walked, shot, windows) = tokio::join!(
            async {
                let r = bounded(
                    "observing the window",
                    backend.observe(&request.window_id, &walk_only),
                )
                .await;
                tracing::debug!("gui_state: walk {:?}", started.elapsed());
                r
            },
            async {
                if !shooting {
                    return Ok(None);
                }
                let captured = bounded("capturing the window", backend.capture(&request.window_id)).await?;
                tracing::debug!("gui_state: captured {:?}", started.elapsed());
                let Some(shot) = captured.screenshot else {
                    return Err(GuiError::backend("the backend returned no screenshot"));
                };
                let b = captured.window.bounds;
                let space = Space::for_window(b.width, b.height, max_edge);
                let image = Arc::new(shot.image);
                let pixels = image.clone();
                let rendered =
                    encode_off_thread(move || render_screenshot(&pixels, &space, &[], format, quality))
                        .await?;
                tracing::debug!("gui_state: encoded {:?}", started.elapsed());
                Ok(Some((image, shot.occluded, space, rendered, captured.notes)))
            },
            async { bounded("listing windows", backend.list_windows()).await.ok() }
        );
        let mut snap = walked?;
        let shot = shot?;
        if observe.screenshot && !can_shoot {
            let why = backend
                .info()
                .notes
                .into_iter()
                .find(|n| n.starts_with("no screenshots:"))
                .unwrap_or_else(|| "no screenshots: this machine's backend cannot capture windows".into());
            snap.notes.push(format!("{why} (the observation has no image)"));
        }
        let image = Image { format, quality };
        self.shape(asked, query, snap, shot.map(|s| (s, image)), windows, started)
            .await
    }

    /// Shapes a walk (`snap`, begun at `began`) and maybe its image into what the caller sees,
    /// as `request` asked (`query` parsed from it).
    pub(crate) async fn shape(
        &self,
        request: StateRequest,
        query: Option<Query>,
        mut snap: Snapshot,
        shot: Option<(Shot, Image)>,
        windows: Option<Vec<WindowInfo>>,
        began: Instant,
    ) -> GuiResult<Looked> {
        let raw = request.include_elements.then(|| {
            Arc::new(Snapshot {
                screenshot: None,
                ..snap.clone()
            })
        });
        let window = snap.window;
        let space = Space::for_window(
            window.bounds.width,
            window.bounds.height,
            self.limits.max_image_edge,
        );
        let secrets = secret_areas(&snap.elements);
        let (numbered, walk_truncated, mut truncated_reason) = if request.include_elements {
            let n = self.number(&window.window_id, snap.elements, &space, query.as_ref());
            (n, snap.truncated, snap.truncated_reason)
        } else {
            // Walked only to find password fields: nothing of it is returned.
            (Numbered::default(), false, None)
        };
        if numbered.over_budget {
            truncated_reason = Some(self.over_budget_reason());
        }
        let mut feed_image = None;
        let (screenshot, image) = match shot {
            Some(((pixels, occluded, drawn_in, speculative, capture_notes), Image { format, quality })) => {
                feed_image = self.feed_image(&pixels, &window, &secrets).await;
                let rendered = if secrets.is_empty() && drawn_in == space {
                    speculative
                } else {
                    encode_off_thread(move || render_screenshot(&pixels, &space, &secrets, format, quality))
                        .await?
                };
                for note in capture_notes {
                    if !snap.notes.contains(&note) {
                        snap.notes.push(note);
                    }
                }
                let info = rendered.info(format, quality, occluded);
                (Some(info), Some(rendered.image))
            }
            None => (None, None),
        };
        let mut coordinate_space = CoordinateSpace::of(&space, snap.scale);
        coordinate_space.note = crate::space::space_note(
            &space,
            &window,
            self.limits.max_image_edge,
            coordinate_space.display_scale,
        );
        let complete = query.is_none() && !(walk_truncated || numbered.over_budget);
        let walked = raw.map(|raw| Walked {
            raw,
            began,
            windows: windows.clone(),
            complete,
        });
        let out = StateOutput {
            state_id: String::new(),
            expires_in_ms: self.store.ttl().as_millis() as u64,
            machine: self.machine.clone(),
            window,
            coordinate_space,
            element_count: numbered.elements.len(),
            folded: numbered.folded,
            elements: numbered.elements,
            query: query.is_some().then(|| request.query.clone()).flatten(),
            matched: numbered.matched,
            truncated: walk_truncated || numbered.over_budget,
            truncated_reason,
            screenshot,
            notes: snap.notes,
            image,
            feed_image,
        };
        Ok(Looked {
            out,
            refs: numbered.refs,
            space,
            complete,
            request,
            windows,
            walked,
        })
    }

    /// Numbers a walk's elements for the caller: ids that stay with their controls, the query,
    /// the byte budget.
    pub(crate) fn number(
        &self,
        window_id: &str,
        elements: Vec<crate::model::RawElement>,
        space: &Space,
        query: Option<&Query>,
    ) -> Numbered {
        let ids = self.ids.assign(window_id, &elements);
        number_elements(elements, &ids, space, query, self.limits.elements_json_bytes)
    }

    /// Why an element list was cut short by its byte budget.
    pub(crate) fn over_budget_reason(&self) -> String {
        format!(
            "element list reached {} KiB; ask for fewer elements, a smaller max_depth or use query",
            self.limits.elements_json_bytes / 1024
        )
    }

    /// Forgets what was remembered of a window that closed.
    pub(crate) fn forget_window(&self, window_id: &str) {
        self.ids.forget(window_id);
    }

    /// Issues the `state_id` of an observation; the observation keeps what it showed, for the
    /// change list of the `gui_action` that uses it.
    pub(crate) fn issue(&self, looked: Looked) -> StateOutput {
        let Looked {
            mut out,
            refs,
            space,
            complete,
            request,
            windows,
            walked,
        } = looked;
        let shown = Shown {
            elements: Arc::new(out.elements.clone()),
            complete,
            request,
            windows,
            walked,
        };
        out.state_id = self
            .store
            .issue_shown(out.window.clone(), refs, space, Some(shown));
        out
    }
}
