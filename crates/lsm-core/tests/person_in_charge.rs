//! A person in charge (docs/web-ui.md) as `LocalGui` enforces it, against a fake backend that
//! records what reached it: a take-over refuses the model's input and stops a running call
//! between two actions while the person's own input goes through; approvals make the model's
//! call wait for a yes or a no; every call lands in the feed.

mod common;

use async_trait::async_trait;
use lsm_core::person::{Feed, FeedEvent, PersonCommand, PersonConfig};
use lsm_core::*;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BOUNDS: Rect = Rect {
    x: 100,
    y: 100,
    width: 200,
    height: 100,
};

#[derive(Default)]
struct Fake {
    performed: Mutex<Vec<BackendAction>>,
}

#[async_trait]
impl DesktopBackend for Fake {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "fake".into(),
            platform: "test".into(),
            session: "none".into(),
            capabilities: vec![],
            notes: vec![],
        }
    }
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        Ok(vec![WindowInfo::new("0x1", "Editor", "editor", BOUNDS)])
    }
    async fn window(&self, id: &str) -> GuiResult<WindowInfo> {
        match id {
            "0x1" => Ok(WindowInfo::new("0x1", "Editor", "editor", BOUNDS)),
            _ => Err(GuiError::window_not_found(id)),
        }
    }
    async fn observe(&self, id: &str, _r: &ObserveRequest) -> GuiResult<Snapshot> {
        Ok(common::one_element(
            self.window(id).await?,
            "b",
            "push button",
            "Save",
            "enabled",
            Rect::new(10, 10, 50, 20),
        ))
    }
    async fn perform(&self, _w: &WindowInfo, a: &BackendAction) -> GuiResult<ActionOutcome> {
        self.performed.lock().unwrap().push(a.clone());
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

fn setup() -> (Arc<Fake>, Arc<LocalGui>, Arc<Feed>) {
    let fake = Arc::new(Fake::default());
    let feed = Arc::new(Feed::new());
    let config = PersonConfig {
        approval_timeout: Duration::from_millis(400),
        idle_release: Duration::from_secs(60),
    };
    let gui = LocalGui::new("local", Limits::default(), Arc::new(Conn(fake.clone())))
        .with_person(config, feed.clone());
    (fake, Arc::new(gui), feed)
}

async fn act(gui: &LocalGui, actions: serde_json::Value) -> GuiResult<ActionOutput> {
    let state = gui
        .state(StateRequest {
            window_id: "0x1".into(),
            include_elements: true,
            ..Default::default()
        })
        .await
        .expect("gui_state works whatever the person does");
    gui.action(ActionRequest {
        window_id: "0x1".into(),
        state_id: state.state_id,
        actions,
        observe: ObserveAfter::None,
        ..Default::default()
    })
    .await
}

fn click() -> serde_json::Value {
    json!([{"type": "click", "element_id": "e0"}])
}

#[tokio::test]
async fn a_take_over_refuses_the_model_but_not_the_person_until_released() {
    let (fake, gui, _) = setup();
    let p = gui.person();
    p.command(PersonCommand::TakeOver {
        window_id: None,
        idle_release_s: None,
    })
    .unwrap();
    let e = act(&gui, click()).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::HumanControl);
    assert!(
        fake.performed.lock().unwrap().is_empty(),
        "nothing reached the desktop"
    );
    let out = gui
        .human_action(HumanActionRequest {
            window_id: "0x1".into(),
            geometry: BOUNDS,
            actions: json!([{"type": "click", "x": 5, "y": 5}]),
            caller: None,
        })
        .await
        .expect("the person's input goes through");
    assert!(out.ok);
    assert_eq!(fake.performed.lock().unwrap().len(), 1);
    p.command(PersonCommand::Release { window_id: None }).unwrap();
    let out = act(&gui, click())
        .await
        .expect("the model acts again after release");
    assert_eq!(fake.performed.lock().unwrap().len(), 2);
    // The next model call (its gui_state here) heard that control came back, once.
    assert!(out.notes.is_empty(), "{:?}", out.notes);
}

#[tokio::test]
async fn the_model_hears_that_control_came_back() {
    let (_, gui, _) = setup();
    let p = gui.person();
    p.command(PersonCommand::TakeOver {
        window_id: Some("0x1".into()),
        idle_release_s: None,
    })
    .unwrap();
    p.command(PersonCommand::Release {
        window_id: Some("0x1".into()),
    })
    .unwrap();
    let s = gui
        .state(StateRequest {
            window_id: "0x1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        s.notes.iter().any(|n| n.contains("control came back")),
        "{:?}",
        s.notes
    );
}

#[tokio::test]
async fn a_take_over_stops_a_running_call_between_two_actions() {
    let (fake, gui, _) = setup();
    let running = {
        let gui = gui.clone();
        tokio::spawn(async move {
            act(
                &gui,
                json!([{"type": "click", "element_id": "e0"}, {"type": "wait", "seconds": 0.4},
                       {"type": "click", "element_id": "e0"}]),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    gui.person()
        .command(PersonCommand::TakeOver {
            window_id: None,
            idle_release_s: None,
        })
        .unwrap();
    let e = running.await.unwrap().unwrap_err();
    assert_eq!(e.code, ErrorCode::HumanControl);
    let details = e.details.expect("what ran");
    // Stopped before the wait or before the second click (the first click's effect is judged
    // before the wait begins); what ran is reported.
    let stopped_at = details["failed_index"].as_u64().expect("failed_index");
    assert!(stopped_at == 1 || stopped_at == 2, "{details}");
    assert_eq!(
        details["completed"].as_array().map(Vec::len),
        Some(stopped_at as usize)
    );
    assert_eq!(
        fake.performed.lock().unwrap().len(),
        1,
        "only the first click ran"
    );
}

#[tokio::test]
async fn approvals_let_through_refuse_and_time_out() {
    let (fake, gui, feed) = setup();
    let p = gui.person().clone();
    p.command(PersonCommand::ApproveEverything { on: true }).unwrap();
    let (_, mut rx) = feed.subscribe();
    for (answer, code) in [
        (Some(true), None),
        (Some(false), Some(ErrorCode::ApprovalDenied)),
        (None, Some(ErrorCode::ApprovalRequired)),
    ] {
        let call = {
            let gui = gui.clone();
            tokio::spawn(async move { act(&gui, click()).await })
        };
        // The pending approval reaches the feed with its target.
        let pending = loop {
            let ev = tokio::time::timeout(Duration::from_secs(2), rx.recv())
                .await
                .unwrap()
                .unwrap();
            if let FeedEvent::Person(s) = &*ev {
                if let Some(a) = s.pending.first() {
                    break a.clone();
                }
            }
        };
        assert_eq!(pending.targets[0].name, "Save");
        assert_eq!(pending.targets[0].role, "push button");
        if let Some(approve) = answer {
            p.command(PersonCommand::Decide {
                id: pending.id,
                approve,
                reason: Some("not now".into()),
            })
            .unwrap();
        }
        let before = fake.performed.lock().unwrap().len();
        let r = call.await.unwrap();
        match code {
            None => assert!(r.is_ok(), "{r:?}"),
            Some(c) => {
                let e = r.unwrap_err();
                assert_eq!(e.code, c);
                if c == ErrorCode::ApprovalDenied {
                    assert!(e.message.contains("not now"), "{}", e.message);
                }
            }
        }
        let _ = before;
    }
    assert_eq!(
        fake.performed.lock().unwrap().len(),
        1,
        "only the approved click ran"
    );
    // A window approved for a while needs no more answers.
    p.command(PersonCommand::ApproveWindow {
        window_id: "0x1".into(),
        minutes: 5,
    })
    .unwrap();
    act(&gui, click()).await.expect("approved for 5 minutes");
}

#[tokio::test]
async fn every_call_lands_in_the_feed() {
    let (_, gui, feed) = setup();
    let (_, mut rx) = feed.subscribe();
    act(&gui, click()).await.unwrap();
    let mut tools = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let FeedEvent::Call(c) = &*ev {
            tools.push((c.tool.clone(), c.code.clone(), c.effects.len()));
        }
    }
    assert_eq!(
        tools,
        vec![
            ("gui_state".into(), "OK".into(), 1),
            ("gui_action".into(), "OK".into(), 1)
        ]
    );
}
