//! The machine's policy as `LocalGui` enforces it, against a fake backend that records what
//! reached it: refused calls read and send nothing; a person's input is never held.

mod common;

use async_trait::async_trait;
use lsm_core::policy::{parse, Access, LivePolicy};
use lsm_core::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Two windows: 0x1 "Vault" and 0x2 "Editor"; the titles can be changed under them.
#[derive(Default)]
struct Fake {
    titles: Mutex<Vec<String>>,
    performed: Mutex<Vec<(String, BackendAction)>>,
    observed: Mutex<Vec<String>>,
}

const BOUNDS: Rect = Rect {
    x: 100,
    y: 100,
    width: 200,
    height: 100,
};

impl Fake {
    fn windows(&self) -> Vec<WindowInfo> {
        let titles = self.titles.lock().unwrap();
        ["Vault", "Editor"]
            .iter()
            .enumerate()
            .map(|(i, app)| WindowInfo {
                app_id: app.to_lowercase(),
                ..WindowInfo::new(format!("0x{}", i + 1), titles[i].clone(), *app, BOUNDS)
            })
            .collect()
    }
}

#[async_trait]
impl DesktopBackend for Fake {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "fake".into(),
            platform: "test".into(),
            session: "none".into(),
            capabilities: vec![],
            notes: vec!["a backend note".into()],
        }
    }
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        Ok(self.windows())
    }
    async fn window(&self, id: &str) -> GuiResult<WindowInfo> {
        self.windows()
            .into_iter()
            .find(|w| w.window_id == id)
            .ok_or_else(|| GuiError::window_not_found(id))
    }
    async fn observe(&self, id: &str, _r: &ObserveRequest) -> GuiResult<Snapshot> {
        self.observed.lock().unwrap().push(id.into());
        Ok(common::one_element(
            self.window(id).await?,
            "f",
            "text",
            "field",
            "editable",
            Rect::new(1, 1, 50, 20),
        ))
    }
    async fn perform(&self, w: &WindowInfo, a: &BackendAction) -> GuiResult<ActionOutcome> {
        self.performed
            .lock()
            .unwrap()
            .push((w.window_id.clone(), a.clone()));
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

fn setup(policy: &str) -> (Arc<Fake>, LocalGui) {
    let fake = Arc::new(Fake::default());
    *fake.titles.lock().unwrap() = vec!["secrets".into(), "notes.txt".into()];
    let policy = parse(policy, "policy.toml").expect("policy");
    let gui = LocalGui::new("local", Limits::default(), Arc::new(Conn(fake.clone())))
        .with_policy(Arc::new(LivePolicy::fixed(policy)));
    (fake, gui)
}

fn state_request(id: &str) -> StateRequest {
    StateRequest {
        window_id: id.into(),
        include_elements: true,
        ..Default::default()
    }
}

async fn act(gui: &LocalGui, state: &StateOutput, actions: serde_json::Value) -> GuiResult<ActionOutput> {
    gui.action(ActionRequest {
        window_id: state.window.window_id.clone(),
        state_id: state.state_id.clone(),
        actions,
        observe: ObserveAfter::None,
        ..Default::default()
    })
    .await
}

/// One action of every kind that sends input.
fn every_action() -> Vec<serde_json::Value> {
    vec![
        json!([{"type": "click", "element_id": "e0"}]),
        json!([{"type": "click", "x": 5, "y": 5}]),
        json!([{"type": "double_click", "x": 5, "y": 5}]),
        json!([{"type": "right_click", "x": 5, "y": 5}]),
        json!([{"type": "move", "x": 5, "y": 5}]),
        json!([{"type": "scroll", "x": 5, "y": 5, "delta_y": 3}]),
        json!([{"type": "drag", "x": 5, "y": 5, "to_x": 50, "to_y": 50}]),
        json!([{"type": "type", "element_id": "e0", "text": "hello"}]),
        json!([{"type": "type", "text": "hello"}]),
        json!([{"type": "key", "keys": "ctrl+a"}]),
        json!([{"type": "set_value", "element_id": "e0", "value": "x"}]),
        json!([{"type": "focus", "element_id": "e0"}]),
    ]
}

#[tokio::test]
async fn gui_list_marks_each_window_and_omits_allow() {
    let (_, gui) = setup("[[rule]]\napp = \"vault\"\naccess = \"deny\"\n");
    let list = gui.list().await.unwrap();
    assert_eq!(list.windows[0].policy, Some(Access::Deny));
    assert_eq!(list.windows[1].policy, None);
    let json = serde_json::to_value(&list).unwrap();
    assert_eq!(json["windows"][0]["policy"], "deny");
    assert!(json["windows"][1].get("policy").is_none(), "allow is left out");
}

#[tokio::test]
async fn observe_only_observes_but_refuses_every_action() {
    let (fake, gui) = setup("[[rule]]\napp_id = \"vault\"\naccess = \"observe-only\"\n");
    for actions in every_action() {
        let s = gui.state(state_request("0x1")).await.expect("gui_state works");
        assert_eq!(s.window.policy, Some(Access::ObserveOnly));
        let e = act(&gui, &s, actions.clone()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::PolicyDenied, "{actions}");
        assert!(
            e.message.contains("observe-only") && e.message.contains("rule 1 of policy.toml (line 1"),
            "{e}"
        );
    }
    assert!(
        fake.performed.lock().unwrap().is_empty(),
        "nothing reached the backend"
    );
    // The other window is untouched by the rule.
    let s = gui.state(state_request("0x2")).await.unwrap();
    act(&gui, &s, json!([{"type": "click", "x": 5, "y": 5}]))
        .await
        .unwrap();
    assert_eq!(fake.performed.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn deny_refuses_observing_before_anything_is_read() {
    let (fake, gui) = setup("[[rule]]\napp = \"Vault\"\naccess = \"deny\"\n");
    let e = gui.state(state_request("0x1")).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    assert!(e.message.contains("observing it is refused"), "{e}");
    assert!(
        fake.observed.lock().unwrap().is_empty(),
        "the tree was not walked"
    );
}

#[tokio::test]
async fn ask_waits_for_a_person_and_is_refused_with_its_own_code_when_none_answers() {
    let (fake, gui) = setup("[[rule]]\ntitle = \"secret*\"\naccess = \"ask\"\n");
    // Nobody answers the approval (docs/web-ui.md): a short wait, then its code.
    let config = lsm_core::person::PersonConfig {
        approval_timeout: std::time::Duration::from_millis(200),
        ..Default::default()
    };
    let gui = gui.with_person(config, Arc::new(lsm_core::person::Feed::new()));
    let s = gui.state(state_request("0x1")).await.unwrap();
    let e = act(&gui, &s, json!([{"type": "key", "keys": "Return"}]))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ApprovalRequired);
    assert!(fake.performed.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_title_that_changes_after_the_observation_is_judged_as_it_is_now() {
    let (fake, gui) = setup("[[rule]]\ntitle = \"*bank*\"\naccess = \"deny\"\n");
    let s = gui.state(state_request("0x2")).await.unwrap();
    fake.titles.lock().unwrap()[1] = "My Bank".into();
    let e = act(
        &gui,
        &s,
        json!([{"type": "set_value", "element_id": "e0", "value": "x"}]),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    assert!(fake.performed.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_persons_input_on_a_denied_window_goes_through() {
    let (fake, gui) = setup("default = \"deny\"\n");
    let out = gui
        .human_action(HumanActionRequest {
            window_id: "0x1".into(),
            geometry: BOUNDS,
            actions: json!([{"type": "click", "x": 5, "y": 5}]),
            caller: None,
        })
        .await
        .expect("a person's click is not held to the policy");
    assert!(out.ok);
    assert_eq!(fake.performed.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_malformed_edit_is_reported_in_gui_list_notes() {
    let dir = std::env::temp_dir().join(format!("lsm-policy-enforce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.toml");
    std::fs::write(&path, "[[rule]]\napp = \"vault\"\naccess = \"deny\"\n").unwrap();
    let fake = Arc::new(Fake::default());
    *fake.titles.lock().unwrap() = vec!["a".into(), "b".into()];
    let live = LivePolicy::open(Some(path.clone()), vec![]).unwrap();
    let gui = LocalGui::new("local", Limits::default(), Arc::new(Conn(fake))).with_policy(Arc::new(live));
    assert!(gui.list().await.unwrap().backend.notes.len() == 1);
    std::fs::write(
        &path,
        "[[rule]]\napp = \"vault\"\naccess = \"allow\"\nextra = 1\n",
    )
    .unwrap();
    let list = gui.list().await.unwrap();
    assert_eq!(
        list.windows[0].policy,
        Some(Access::Deny),
        "the last good policy holds"
    );
    let note = list.backend.notes.last().unwrap();
    assert!(
        note.contains("policy.toml line 4") && note.contains("unknown field `extra`"),
        "{note}"
    );
}
