//! Turning a backend [`Snapshot`](crate::model::Snapshot) into what the caller sees: numbered
//! elements in the observation's [`Space`], the `query` filter, the JSON byte budget, and the
//! screenshot (resampled to the space, secrets painted over, encoded). Platform-free and
//! synchronous: the service runs the image part on a blocking thread.

use crate::error::GuiResult;
use crate::geometry::Rect;
use crate::image::{EncodedImage, ImageFormat, RgbaImage};
use crate::model::{is_secret, Query};
use crate::model::{Element, RawElement};
use crate::space::Space;
use crate::state::ElementRef;
use crate::states::{element_states, is_bare_container};
use crate::text::clean_elements;
use std::collections::HashMap;

/// The colour that covers a password field in a screenshot.
pub const REDACTED: [u8; 4] = [96, 96, 96, 255];

/// Elements as given to the caller, and what their ids stand for.
#[derive(Debug, Default)]
pub struct Numbered {
    pub elements: Vec<Element>,
    /// Only the returned elements: an id that was filtered out is not actionable.
    pub refs: HashMap<String, ElementRef>,
    /// Set with a query: how many elements matched it (ancestors not counted).
    pub matched: Option<usize>,
    /// The JSON byte budget cut the list short.
    pub over_budget: bool,
    /// Unnamed layout containers left out ([`is_bare_container`]).
    pub folded: usize,
}

/// Cleans the walk's text ([`clean_elements`]), names each element by `ids` (aligned with `raw`:
/// see [`crate::ids::ElementIds`]; a query does not change them), moves bounds into `space`,
/// keeps the query's matches and all their ancestors, leaves out unnamed layout containers
/// (their children's parent is the nearest ancestor kept) and what is at its usual value (see
/// [`Element`]), and stops at `byte_budget` bytes of element JSON. Parents precede their
/// children in `raw`.
pub fn number_elements(
    mut raw: Vec<RawElement>,
    ids: &[String],
    space: &Space,
    query: Option<&Query>,
    byte_budget: usize,
) -> Numbered {
    clean_elements(&mut raw);
    let keep: Option<Vec<bool>> = query.map(|q| {
        let mut keep = vec![false; raw.len()];
        for (i, e) in raw.iter().enumerate() {
            if q.matches(e) {
                keep[i] = true;
            }
        }
        // Ancestors: walk up from each match until an already-kept node.
        for i in (0..raw.len()).rev() {
            if !keep[i] {
                continue;
            }
            let mut p = raw[i].parent;
            while let Some(pi) = p.filter(|&pi| pi < raw.len() && pi != i) {
                if keep[pi] {
                    break;
                }
                keep[pi] = true;
                p = raw[pi].parent;
            }
        }
        keep
    });
    let matches: Vec<bool> = match query {
        Some(q) => raw.iter().map(|e| q.matches(e)).collect(),
        None => vec![false; raw.len()],
    };
    let mut out = Numbered {
        matched: query.map(|_| matches.iter().filter(|&&m| m).count()),
        ..Numbered::default()
    };
    // Per raw element: the id its children name as their parent (its own, or, when it was
    // left out, its parent's).
    let mut parent_id: Vec<Option<String>> = Vec::with_capacity(raw.len());
    let mut bytes = 0usize;
    for (i, r) in raw.into_iter().enumerate() {
        let parent = r.parent.and_then(|p| parent_id.get(p).cloned().flatten());
        if keep.as_ref().is_some_and(|k| !k[i]) {
            parent_id.push(parent);
            continue;
        }
        let Some(id) = ids.get(i).cloned() else {
            break;
        };
        let secret = is_secret(&r.role);
        let el = Element {
            id: id.clone(),
            role: r.role.clone(),
            name: r.name.clone(),
            description: r.description,
            // Secrets never leave the machine, not even their length.
            value: r.value.filter(|v| !secret && *v != r.name),
            states: element_states(&r.role, &r.states),
            actions: r.actions.clone(),
            bounds: r.bounds.map(|b| space.rect_to_space(b)),
            summary: r.summary.clone(),
            parent: parent.clone(),
        };
        if is_bare_container(&el) && !matches[i] {
            out.folded += 1;
            parent_id.push(parent);
            continue;
        }
        parent_id.push(Some(id.clone()));
        bytes += serde_json::to_vec(&el).map(|v| v.len() + 1).unwrap_or(0);
        if bytes > byte_budget {
            out.over_budget = true;
            break;
        }
        out.refs.insert(
            id.clone(),
            ElementRef {
                id,
                native: r.native,
                key: r.key,
                role: r.role,
                name: r.name,
                bounds: r.bounds,
                states: r.states,
                actions: r.actions,
            },
        );
        out.elements.push(el);
    }
    out
}

/// Logical bounds of every password field of the walk.
pub fn secret_areas(raw: &[RawElement]) -> Vec<Rect> {
    raw.iter()
        .filter(|e| is_secret(&e.role))
        .filter_map(|e| e.bounds)
        .filter(|b| !b.is_empty())
        .collect()
}

/// A screenshot as sent: in the observation's space, secrets painted over, encoded.
#[derive(Debug, Clone)]
pub struct RenderedShot {
    pub image: EncodedImage,
    /// How many password fields were painted over (those inside the image).
    pub redacted: usize,
}

impl RenderedShot {
    /// What an observation says of this image (`occluded`: other windows may show in it).
    pub fn info(&self, format: ImageFormat, quality: u8, occluded: bool) -> crate::output::ScreenshotInfo {
        crate::output::ScreenshotInfo {
            format: format.name().into(),
            width: self.image.width,
            height: self.image.height,
            bytes: self.image.bytes.len(),
            quality: (format == ImageFormat::Jpeg).then_some(quality),
            occluded,
            redacted: self.redacted,
        }
    }
}

/// Resamples `image` (the window in whatever pixels the backend captured: physical on a HiDPI
/// display) to `space`, paints every secret area (logical bounds) with [`REDACTED`], and
/// encodes it. Secrets are painted before resampling too, so no filter tap reads them.
pub fn render_screenshot(
    image: &RgbaImage,
    space: &Space,
    secrets: &[Rect],
    format: ImageFormat,
    quality: u8,
) -> GuiResult<RenderedShot> {
    let (w, h) = (space.width.max(0) as u32, space.height.max(0) as u32);
    // Copied only when it must change: resampled, or painted over.
    let mut changed: Option<RgbaImage> = None;
    if (image.width, image.height) != (w, h) {
        let resized = if secrets.is_empty() {
            image.resized(w, h)?
        } else {
            let mut painted = image.clone();
            for s in secrets {
                let r = space.rect_to_image(*s, image.width, image.height);
                painted.fill_rect(r, REDACTED);
            }
            painted.resized(w, h)?
        };
        changed = Some(resized);
    }
    let mut redacted = 0;
    if !secrets.is_empty() {
        let target = changed.get_or_insert_with(|| image.clone());
        for s in secrets {
            if target.fill_rect(space.rect_to_space(*s), REDACTED) {
                redacted += 1;
            }
        }
    }
    Ok(RenderedShot {
        image: changed.as_ref().unwrap_or(image).encode(format, quality)?,
        redacted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    /// Ids as a window's first observation has them: walk positions.
    fn positions() -> Vec<String> {
        (0..64).map(|i| format!("e{i}")).collect()
    }

    /// The test tree numbered in a 600x500 window.
    fn numbered(query: Option<&Query>, budget: usize) -> Numbered {
        number_elements(tree(), &positions(), &Space::identity(600, 500), query, budget)
    }

    fn raw(role: &str, name: &str, parent: Option<usize>, bounds: Rect) -> RawElement {
        RawElement {
            native: format!("n-{name}"),
            key: format!("n-{name}"),
            parent,
            depth: 0,
            role: role.into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: vec![],
            actions: vec![],
            bounds: Some(bounds),
            summary: None,
        }
    }

    fn tree() -> Vec<RawElement> {
        let mut v = vec![
            raw("frame", "App", None, Rect::new(0, 0, 600, 500)),
            raw("panel", "", Some(0), Rect::new(0, 0, 600, 500)),
            raw("push_button", "Press me", Some(1), Rect::new(10, 10, 100, 30)),
            raw("panel", "Settings", Some(1), Rect::new(0, 100, 600, 400)),
            raw(
                "check_box",
                "Enable feature",
                Some(3),
                Rect::new(10, 110, 200, 20),
            ),
            raw("password_text", "Password", Some(3), Rect::new(10, 140, 200, 30)),
            raw("text", "Name entry", Some(3), Rect::new(10, 180, 200, 30)),
        ];
        v[5].value = Some("hunter2".into());
        v[6].value = Some("Alice Press".into());
        v
    }

    #[test]
    fn query_keeps_matches_and_ancestors_with_full_walk_ids() {
        let q = Query::parse("  PRESS ", 256).expect("query");
        let n = numbered(Some(&q), 1 << 20);
        let ids: Vec<&str> = n.elements.iter().map(|e| e.id.as_str()).collect();
        // "Press me" by name, "Name entry" by value; their ancestors e0 and e3 (e1 is an
        // unnamed panel, left out).
        assert_eq!(ids, ["e0", "e2", "e3", "e6"]);
        assert_eq!(n.matched, Some(2));
        let mut keys: Vec<&str> = n.refs.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(
            keys,
            ["e0", "e2", "e3", "e6"],
            "only returned elements are actionable"
        );
        assert_eq!(n.elements[3].parent.as_deref(), Some("e3"));
        assert_eq!(n.elements[1].parent.as_deref(), Some("e0"));
    }

    #[test]
    fn query_words_must_all_match_in_any_field() {
        let q = Query::parse("checkbox enable", 256).expect("query");
        let n = numbered(Some(&q), 1 << 20);
        assert_eq!(n.matched, Some(1));
        assert_eq!(n.elements.last().map(|e| e.id.as_str()), Some("e4"));
        // The role as the elements spell it, and without its underscore, both match.
        let q = Query::parse("check_box", 256).expect("query");
        assert_eq!(numbered(Some(&q), 1 << 20).matched, Some(1));
        // A secret's value is never searched.
        let q = Query::parse("hunter2", 256).expect("query");
        let n = numbered(Some(&q), 1 << 20);
        assert_eq!((n.matched, n.elements.len()), (Some(0), 0));
        assert!(Query::parse(" ", 256).is_err());
        assert_eq!(
            Query::parse("abc", 2).expect_err("long").code,
            ErrorCode::LimitExceeded
        );
    }

    #[test]
    fn without_query_all_elements_and_no_secret_values() {
        let n = numbered(None, 1 << 20);
        assert_eq!((n.elements.len(), n.folded), (6, 1));
        assert_eq!(n.matched, None);
        assert_eq!(n.elements[4].value, None);
        assert_eq!(n.elements[5].value.as_deref(), Some("Alice Press"));
        // The byte budget cuts in document order, so parents stay before children.
        let small = numbered(None, 200);
        assert!(small.over_budget && !small.elements.is_empty() && small.elements.len() < 6);
        assert_eq!(small.refs.len(), small.elements.len());
    }

    #[test]
    fn bounds_are_in_the_space_and_refs_stay_logical() {
        let space = Space::for_window(600, 500, 300);
        let n = number_elements(tree(), &positions(), &space, None, 1 << 20);
        assert_eq!(n.elements[0].bounds, Some(Rect::new(0, 0, 300, 250)));
        assert_eq!(n.elements[1].bounds, Some(Rect::new(5, 5, 50, 15)));
        assert_eq!(n.refs["e2"].bounds, Some(Rect::new(10, 10, 100, 30)));
    }

    #[test]
    fn what_carries_nothing_is_left_out() {
        let mut raw = tree();
        for e in &mut raw {
            e.states = ["enabled", "sensitive", "showing", "visible", "focusable"]
                .map(String::from)
                .to_vec();
        }
        raw[2].value = Some("Press me".into());
        raw[4].states.push("checked".into());
        let n = number_elements(raw, &positions(), &Space::identity(600, 500), None, 1 << 20);
        let by_id = |id: &str| n.elements.iter().find(|e| e.id == id).expect(id);
        assert!(
            !n.refs.contains_key("e1"),
            "the unnamed panel is left out and not actionable"
        );
        assert_eq!(by_id("e2").parent.as_deref(), Some("e0"));
        assert_eq!(by_id("e2").value, None, "a value equal to the name");
        assert!(by_id("e2").states.is_empty());
        assert_eq!(by_id("e4").states, ["checked"]);
        assert_eq!(by_id("e6").states, ["read_only"]);
        assert_eq!(
            n.refs["e4"].states.len(),
            6,
            "the backend's states stay for re-checks"
        );
        let json = serde_json::to_string(by_id("e2")).expect("json");
        assert_eq!(
            json,
            r#"{"id":"e2","role":"push_button","name":"Press me","bounds":[10,10,100,30],"parent":"e0"}"#
        );
        let back: Element = serde_json::from_str(&json).expect("round trip");
        assert_eq!(&back, by_id("e2"));
    }

    fn uniform(img: &RgbaImage, r: Rect) -> bool {
        (r.y..r.y + r.height)
            .all(|y| (r.x..r.x + r.width).all(|x| img.pixel(x as u32, y as u32) == Some(REDACTED)))
    }

    fn decode_png(bytes: &[u8]) -> RgbaImage {
        let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
        dec.set_transformations(png::Transformations::ALPHA);
        let mut reader = dec.read_info().expect("png header");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("frame");
        buf.truncate(info.buffer_size());
        RgbaImage::new(info.width, info.height, buf).expect("rgba")
    }

    fn noisy(w: u32, h: u32) -> RgbaImage {
        let data = (0..w * h)
            .flat_map(|i| [(i * 7 % 251) as u8, (i * 13 % 241) as u8, (i % 199) as u8, 255])
            .collect();
        RgbaImage::new(w, h, data).expect("image")
    }

    #[test]
    fn password_fields_are_one_colour_at_1x() {
        let secrets = secret_areas(&tree());
        assert_eq!(secrets, [Rect::new(10, 140, 200, 30)]);
        let shot = render_screenshot(
            &noisy(600, 500),
            &Space::identity(600, 500),
            &secrets,
            ImageFormat::Png,
            80,
        )
        .expect("render");
        assert_eq!(shot.redacted, 1);
        let img = decode_png(&shot.image.bytes);
        assert_eq!((img.width, img.height), (600, 500));
        assert!(uniform(&img, Rect::new(10, 140, 200, 30)));
        // Outside the field the pixels are untouched.
        assert_eq!(img.pixel(9, 140), noisy(600, 500).pixel(9, 140));
        assert_eq!(img.pixel(210, 150), noisy(600, 500).pixel(210, 150));
    }

    #[test]
    fn hidpi_and_capped_shots_are_resampled_and_still_redacted() {
        let secrets = [Rect::new(10, 140, 200, 30), Rect::new(590, 490, 50, 50)];
        // A 2x display: physical 1200x1000 for a 600x500 logical window.
        let space = Space::identity(600, 500);
        let shot =
            render_screenshot(&noisy(1200, 1000), &space, &secrets, ImageFormat::Png, 80).expect("render");
        let img = decode_png(&shot.image.bytes);
        assert_eq!((img.width, img.height), (600, 500));
        assert!(uniform(&img, Rect::new(10, 140, 200, 30)));
        assert!(uniform(&img, Rect::new(590, 490, 10, 10)), "clipped to the image");
        assert_eq!(shot.redacted, 2);
        // Capped at 400 on top of the 2x display.
        let space = Space::for_window(600, 500, 400);
        let shot =
            render_screenshot(&noisy(1200, 1000), &space, &secrets, ImageFormat::Png, 80).expect("render");
        let img = decode_png(&shot.image.bytes);
        assert_eq!((img.width, img.height), (400, 333));
        assert!(uniform(&img, space.rect_to_space(secrets[0])));
        // Every format decodes to the space's size.
        for f in ImageFormat::ALL {
            let s = render_screenshot(&noisy(1200, 1000), &space, &secrets, f, 80).expect("render");
            assert_eq!((s.image.width, s.image.height, s.image.format), (400, 333, f));
        }
    }
}
