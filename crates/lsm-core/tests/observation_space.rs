//! `LocalGui` end to end over a fake backend: a HiDPI capture of a window larger than the image
//! cap is observed in one scaled space (bounds, screenshot, action points), password fields are
//! painted over, and `query` filters without renumbering.

use async_trait::async_trait;
use lsm_core::observe::REDACTED;
use lsm_core::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

/// An 800x250 logical window on a 2x display (a 1600x500 physical capture), observed with a
/// 400 px image cap.
const LW: i32 = 800;
const LH: i32 = 250;
const CAP: u32 = 400;
const DISPLAY_SCALE: u32 = 2;

#[derive(Default)]
struct Fake {
    performed: Mutex<Vec<BackendAction>>,
}

fn window() -> WindowInfo {
    WindowInfo {
        pid: Some(1),
        focused: true,
        ..WindowInfo::new("0x1", "big", "fake", Rect::new(50, 60, LW, LH))
    }
}

fn el(role: &str, name: &str, parent: Option<usize>, bounds: Rect) -> RawElement {
    RawElement {
        native: format!("n:{name}"),
        key: format!("n:{name}"),
        parent,
        depth: parent.map_or(0, |_| 1),
        role: role.into(),
        name: name.into(),
        description: String::new(),
        value: (role == "password_text").then(|| "typed secret".into()),
        states: vec!["sensitive".into()],
        actions: vec!["click".into()],
        bounds: Some(bounds),
        summary: None,
    }
}

/// Physical pixels: a bright noisy pattern, so a flat area can only come from redaction.
fn capture() -> RgbaImage {
    let (w, h) = (LW as u32 * DISPLAY_SCALE, LH as u32 * DISPLAY_SCALE);
    let data = (0..w * h)
        .flat_map(|i| [(i * 7 % 251) as u8, 200, (i % 197) as u8, 255])
        .collect();
    RgbaImage {
        width: w,
        height: h,
        data,
    }
}

#[async_trait]
impl DesktopBackend for Fake {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "fake".into(),
            platform: "test".into(),
            session: "none".into(),
            capabilities: vec!["screenshot".into()],
            notes: vec![],
        }
    }
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        Ok(vec![window()])
    }
    async fn window(&self, _id: &str) -> GuiResult<WindowInfo> {
        Ok(window())
    }
    async fn observe(&self, _id: &str, r: &ObserveRequest) -> GuiResult<Snapshot> {
        assert!(
            r.include_elements,
            "a screenshot needs the tree (password fields)"
        );
        Ok(Snapshot {
            window: window(),
            scale: DISPLAY_SCALE as f64,
            elements: vec![
                el("frame", "big", None, Rect::new(0, 0, LW, LH)),
                el("push_button", "Save file", Some(0), Rect::new(100, 100, 200, 50)),
                el("password_text", "Password", Some(0), Rect::new(501, 151, 150, 41)),
                el("push_button", "Cancel", Some(0), Rect::new(400, 100, 200, 50)),
            ],
            truncated: false,
            truncated_reason: None,
            screenshot: r.screenshot.then(|| Screenshot {
                image: capture(),
                occluded: false,
            }),
            notes: vec![],
        })
    }
    async fn capture(&self, _id: &str) -> GuiResult<Snapshot> {
        Ok(Snapshot {
            window: window(),
            scale: DISPLAY_SCALE as f64,
            elements: vec![],
            truncated: false,
            truncated_reason: None,
            screenshot: Some(Screenshot {
                image: capture(),
                occluded: false,
            }),
            notes: vec![],
        })
    }
    async fn perform(&self, _w: &WindowInfo, a: &BackendAction) -> GuiResult<ActionOutcome> {
        self.performed
            .lock()
            .map_err(|_| GuiError::backend("poisoned"))?
            .push(a.clone());
        Ok(ActionOutcome::new("fake"))
    }
}

struct Conn(Arc<Fake>);

#[async_trait]
impl BackendConnector for Conn {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        Ok(self.0.clone())
    }
}

fn setup() -> (Arc<Fake>, LocalGui) {
    let fake = Arc::new(Fake::default());
    let limits = Limits {
        max_image_edge: CAP,
        ..Limits::default()
    };
    (fake.clone(), LocalGui::new("local", limits, Arc::new(Conn(fake))))
}

fn request(format: ImageFormat) -> StateRequest {
    StateRequest {
        window_id: "0x1".into(),
        screenshot: true,
        include_elements: true,
        image_format: format,
        ..Default::default()
    }
}

fn decode_png(bytes: &[u8]) -> RgbaImage {
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::ALPHA);
    let mut reader = dec.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    RgbaImage::new(info.width, info.height, buf).expect("rgba")
}

#[tokio::test]
async fn a_capped_hidpi_observation_is_one_scaled_space() {
    let (fake, gui) = setup();
    let s = gui.state(request(ImageFormat::Png)).await.expect("observe");
    // 800 logical px > 400: everything is at scale 0.5.
    let cs = &s.coordinate_space;
    assert_eq!((cs.width, cs.height, cs.scale), (400, 125, 0.5));
    assert_eq!(cs.units, "scaled_px");
    assert_eq!(cs.display_scale, Some(2.0));
    assert!(cs.note.as_deref().is_some_and(|n| n.contains("400 px image cap")));
    assert_eq!(s.window.bounds, window().bounds, "the window stays in logical px");
    let save = &s.elements[1];
    assert_eq!(save.bounds, Some(Rect::new(50, 50, 100, 25)));
    // Odd logical bounds round outward.
    assert_eq!(s.elements[2].bounds, Some(Rect::new(250, 75, 76, 21)));
    // Image: the space's size, password field flat, the rest untouched.
    let shot = s.screenshot.as_ref().expect("screenshot");
    assert_eq!((shot.width, shot.height, shot.redacted), (400, 125, 1));
    let img = decode_png(&s.image.as_ref().expect("image").bytes);
    assert_eq!((img.width, img.height), (400, 125));
    for y in 75..96 {
        for x in 250..326 {
            assert_eq!(img.pixel(x, y), Some(REDACTED), "({x},{y})");
        }
    }
    assert_ne!(img.pixel(249, 80), Some(REDACTED));
    assert_ne!(img.pixel(326, 80), Some(REDACTED));
    assert_eq!(s.elements[2].value, None, "secret values never leave");
    assert!(!outline::state_text(&s).contains("typed secret"));

    // Points are checked in the space and reach the backend in logical px.
    let e = gui
        .action(ActionRequest {
            window_id: "0x1".into(),
            state_id: s.state_id.clone(),
            actions: json!([{"type": "click", "x": 400, "y": 10}]),
            observe: lsm_core::ObserveAfter::None,
            ..Default::default()
        })
        .await
        .expect_err("x = 400 is outside the 400-unit space (though inside the 800 px window)");
    assert_eq!(e.code, ErrorCode::OutOfBounds);
    let s = gui.state(request(ImageFormat::Png)).await.expect("observe");
    gui.action(ActionRequest {
        window_id: "0x1".into(),
        state_id: s.state_id,
        actions: json!([
            {"type": "click", "x": 100, "y": 50},
            {"type": "drag", "x": 0, "y": 0, "to_x": 399, "to_y": 124},
            {"type": "click", "element_id": "e1"}
        ]),
        observe: lsm_core::ObserveAfter::None,
        ..Default::default()
    })
    .await
    .expect("actions");
    let done = fake.performed.lock().expect("lock").clone();
    assert!(
        matches!(&done[0], BackendAction::Click { target: Target::Point(p), .. } if *p == Point::new(201, 101)),
        "{done:?}"
    );
    assert!(
        matches!(&done[1], BackendAction::Drag { from: Target::Point(f), to, .. }
            if *f == Point::new(1, 1) && *to == Point::new(799, 249)),
        "{done:?}"
    );
    // Elements act on their logical bounds.
    assert!(
        matches!(&done[2], BackendAction::Click { target: Target::Element(e), .. }
            if e.bounds == Some(Rect::new(100, 100, 200, 50))),
        "{done:?}"
    );
}

#[tokio::test]
async fn every_format_is_the_size_of_the_space() {
    let (_, gui) = setup();
    for f in ImageFormat::ALL {
        let s = gui.state(request(f)).await.expect("observe");
        let img = s.image.expect("image");
        assert_eq!((img.format, img.width, img.height), (f, 400, 125));
        assert_eq!(s.screenshot.as_ref().map(|i| i.format.as_str()), Some(f.name()));
    }
    let bad = StateRequest {
        image_quality: Some(50),
        ..request(ImageFormat::Webp)
    };
    assert_eq!(
        gui.state(bad).await.expect_err("lossless").code,
        ErrorCode::InvalidArgument
    );
}

#[tokio::test]
async fn query_filters_without_renumbering_and_limits_what_is_actionable() {
    let (_, gui) = setup();
    let s = gui
        .state(StateRequest {
            query: Some("save BUTTON".into()),
            ..request(ImageFormat::Png)
        })
        .await
        .expect("observe");
    let ids: Vec<&str> = s.elements.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["e0", "e1"]);
    assert_eq!((s.matched, s.element_count), (Some(1), 2));
    // The password field is not returned, but still painted over.
    assert_eq!(s.screenshot.as_ref().map(|i| i.redacted), Some(1));
    let e = gui
        .action(ActionRequest {
            window_id: "0x1".into(),
            state_id: s.state_id,
            actions: json!([{"type": "click", "element_id": "e3"}]),
            observe: lsm_core::ObserveAfter::None,
            ..Default::default()
        })
        .await
        .expect_err("e3 was filtered out");
    assert_eq!(e.code, ErrorCode::ElementNotFound);
    // Screenshot-only observations still walk (for redaction) but return no elements.
    let s = gui
        .state(StateRequest {
            include_elements: false,
            ..request(ImageFormat::Png)
        })
        .await
        .expect("observe");
    assert!(s.elements.is_empty());
    assert_eq!(s.screenshot.map(|i| i.redacted), Some(1));
}
