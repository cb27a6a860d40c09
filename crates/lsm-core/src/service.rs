//! `GuiService`: what every face (MCP, web UI, worker link) calls, and its local implementation
//! over a [`DesktopBackend`] plus the [`StateStore`].

use crate::action::{parse_actions, ActionResult, ActionSpec, Where};
use crate::audit::{self, AuditLog, Face};
use crate::backend::{BackendAction, BackendConnector, Check, DesktopBackend, Target};
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::ids::ElementIds;
use crate::image::ImageFormat;
use crate::limits::Limits;
use crate::model::ObserveRequest;
use crate::observe::{render_screenshot, RenderedShot};
use crate::output::{
    ActionOutput, ActionRequest, CoordinateSpace, FrameOutput, FrameRequest, HumanActionRequest, ListOutput,
    StateOutput, StateRequest,
};
use crate::person::{Person, PersonCommand, PersonState};
use crate::policy::{self, Intent, LivePolicy, Policy};
use crate::space::Space;
use crate::state::{ElementRef, Observation, StateStore};
use crate::step::Judging;
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// The operations every face calls. Local and remote machines implement it alike.
#[async_trait]
pub trait GuiService: Send + Sync {
    async fn list(&self) -> GuiResult<ListOutput>;
    async fn state(&self, request: StateRequest) -> GuiResult<StateOutput>;
    async fn action(&self, request: ActionRequest) -> GuiResult<ActionOutput>;
    /// The web UI's window image (never an MCP tool).
    async fn frame(&self, request: FrameRequest) -> GuiResult<FrameOutput>;
    /// The web UI's geometry-checked human input (never an MCP tool).
    async fn human_action(&self, request: HumanActionRequest) -> GuiResult<ActionOutput>;
    /// Where this machine reports its activity and take-over state (a worker forwards it to
    /// its controller); None when it reports nowhere.
    fn feed(&self) -> Option<Arc<crate::person::Feed>> {
        None
    }
    /// The Desktop page's take-over and approval commands (never an MCP tool).
    async fn person_command(&self, command: PersonCommand) -> GuiResult<PersonState> {
        let _ = command;
        Err(GuiError::new(
            ErrorCode::UnsupportedAction,
            "this machine does not take take-over or approval commands",
        ))
    }
}

/// The service for the desktop this process runs on.
pub struct LocalGui {
    pub(crate) machine: String,
    pub(crate) limits: Limits,
    connector: Arc<dyn BackendConnector>,
    backend: Mutex<Option<Arc<dyn DesktopBackend>>>,
    /// The last failed connection, answered again for [`RETRY_CONNECT`] (a machine without a
    /// desktop does not look for one on every call).
    last_failure: std::sync::Mutex<Option<(std::time::Instant, GuiError)>>,
    pub(crate) store: StateStore,
    /// Element ids that stay with their controls across observations.
    pub(crate) ids: ElementIds,
    /// Where every input that reached the desktop is recorded (None: not recorded).
    audit: Option<Arc<AuditLog>>,
    /// Which windows the model may observe and act on (None: all of them).
    policy: Option<Arc<LivePolicy>>,
    /// The person in charge: take-over, approvals, the activity feed.
    pub(crate) person: Arc<Person>,
    /// The pixels of the window last answered about, while it is not drawn on.
    pub(crate) kept_pixels: crate::kept::KeptSlot,
}

/// How long a failed connection to the desktop is answered from memory before it is tried again.
const RETRY_CONNECT: Duration = Duration::from_millis(500);

/// Slack over a backend's own budgets before we call it hung.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl LocalGui {
    pub fn new(machine: impl Into<String>, limits: Limits, connector: Arc<dyn BackendConnector>) -> Self {
        let store = StateStore::new(limits.state_ttl, limits.states_per_machine);
        let machine = machine.into();
        let person = Arc::new(Person::new(
            machine.clone(),
            Default::default(),
            Arc::new(crate::person::Feed::new()),
        ));
        Self {
            machine,
            limits,
            connector,
            backend: Mutex::new(None),
            last_failure: std::sync::Mutex::new(None),
            store,
            ids: ElementIds::new(),
            audit: None,
            policy: None,
            person,
            kept_pixels: Default::default(),
        }
    }

    /// Take-over and approvals as `config` says, reported on `feed` (the process's feed, which
    /// the web UI pushes to the Desktop page).
    pub fn with_person(
        mut self,
        config: crate::person::PersonConfig,
        feed: Arc<crate::person::Feed>,
    ) -> Self {
        self.person = Arc::new(Person::new(self.machine.clone(), config, feed));
        self
    }

    /// The person in charge of this machine.
    pub fn person(&self) -> &Arc<Person> {
        &self.person
    }

    /// Holds the model's calls to `policy` (a person's input on the web UI is never restricted).
    pub fn with_policy(mut self, policy: Arc<LivePolicy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The policy in force for the model's calls, unless it restricts nothing (then no window
    /// needs to be read for it).
    fn model_policy(&self) -> Option<Arc<Policy>> {
        let (policy, _) = self.policy.as_ref()?.current();
        (!policy.allows_everything()).then_some(policy)
    }

    /// Refuses `intent` on the window `window_id` as it is now, when the policy says so.
    /// An `ask` window passes here: `gui_action` asks the person before any input.
    async fn enforce_now(&self, policy: &Policy, window_id: &str, intent: Intent) -> GuiResult<()> {
        let backend = self.backend().await?;
        let window = bounded("reading the window", backend.window(window_id)).await?;
        policy::enforce_approved(policy, &window, intent, true)
    }

    /// Records every input that reaches the desktop in `log`.
    pub fn with_audit(mut self, log: Arc<AuditLog>) -> Self {
        self.audit = Some(log);
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(crate) fn connector(&self) -> &dyn BackendConnector {
        self.connector.as_ref()
    }

    /// The backend, connected on first use. A failed connection is not cached: the session
    /// may appear later.
    pub(crate) async fn backend(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        let mut slot = self.backend.lock().await;
        if let Some(b) = slot.as_ref() {
            match b.stale() {
                None => return Ok(b.clone()),
                // A desktop whose server or bus was restarted is reached again without
                // restarting lsm; until it is back, the connect below fails with the reason.
                Some(why) => {
                    tracing::info!("reconnecting to the desktop: {why}");
                    *slot = None;
                }
            }
        }
        {
            let failure = self.last_failure.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, e)) = failure.as_ref().filter(|(at, _)| at.elapsed() < RETRY_CONNECT) {
                return Err(e.clone());
            }
        }
        let b = match bounded("connecting to the desktop", self.connector.connect()).await {
            Ok(b) => b,
            Err(e) => {
                *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((std::time::Instant::now(), e.clone()));
                return Err(e);
            }
        };
        *slot = Some(b.clone());
        Ok(b)
    }

    pub(crate) fn observe_request(&self, r: &StateRequest) -> GuiResult<ObserveRequest> {
        let max_elements = pick(
            "max_elements",
            r.max_elements,
            self.limits.max_elements_default as u64,
            1,
            self.limits.max_elements_cap as u64,
        )?;
        let max_depth = pick(
            "max_depth",
            r.max_depth,
            self.limits.max_depth_default as u64,
            0,
            self.limits.max_depth_cap as u64,
        )?;
        Ok(ObserveRequest {
            screenshot: r.screenshot,
            // A screenshot needs the tree too: password fields are painted over.
            include_elements: r.include_elements || r.screenshot,
            max_elements: max_elements as usize,
            max_depth: max_depth as u32,
            include_hidden: r.include_hidden,
            walk_budget: self.limits.walk_budget,
            query: None,
        })
    }

    fn resolve(&self, obs: &Observation, id: &str) -> GuiResult<ElementRef> {
        obs.elements.get(id).cloned().ok_or_else(|| {
            GuiError::new(
                ErrorCode::ElementNotFound,
                format!("element_id {id:?} is not part of this observation; use an id from the same gui_state result"),
            )
        })
    }

    /// A point target: caller points are in the observation's space, the backend's are logical.
    fn target(&self, obs: &Observation, w: &Where) -> GuiResult<Target> {
        Ok(match w {
            Where::Element(id) => Target::Element(self.resolve(obs, id)?),
            Where::Point(p) => Target::Point(obs.space.point_to_logical(*p)),
        })
    }

    /// Turns validated specs into backend actions; checks ids and points (in the observation's
    /// space) before anything runs, and converts points to window logical pixels.
    fn resolve_all(&self, obs: &Observation, specs: &[ActionSpec]) -> GuiResult<Vec<Option<BackendAction>>> {
        let area = obs.space.area();
        let units = if obs.space.is_identity() {
            "logical px"
        } else {
            "units of the observation's scaled space"
        };
        specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                for p in spec.points() {
                    if !area.contains(p) {
                        return Err(GuiError::new(
                            ErrorCode::OutOfBounds,
                            format!(
                                "action {i} ({}): point ({}, {}) is outside the window: window-relative x runs \
                                 0..{} and y 0..{} ({units}); use coordinates from the observation",
                                spec.type_name(),
                                p.x,
                                p.y,
                                area.width - 1,
                                area.height - 1
                            ),
                        ));
                    }
                }
                let el = |id: &String| self.resolve(obs, id).map_err(|e| at_index(e, i, spec));
                let tgt = |w: &Where| self.target(obs, w).map_err(|e| at_index(e, i, spec));
                Ok(match spec {
                    ActionSpec::Click { at, button, count } => {
                        Some(BackendAction::Click { target: tgt(at)?, button: *button, count: *count })
                    }
                    ActionSpec::Move { at } => Some(BackendAction::Move { target: tgt(at)? }),
                    ActionSpec::Scroll { at, delta_x, delta_y } => Some(BackendAction::Scroll {
                        target: at.as_ref().map(tgt).transpose()?,
                        delta_x: *delta_x,
                        delta_y: *delta_y,
                    }),
                    ActionSpec::Drag { from, to, button } => Some(BackendAction::Drag {
                        from: tgt(from)?,
                        to: obs.space.point_to_logical(*to),
                        button: *button,
                    }),
                    ActionSpec::Type { element, text } => Some(BackendAction::Type {
                        element: element.as_ref().map(el).transpose()?,
                        text: text.clone(),
                    }),
                    ActionSpec::Key { combo } => Some(BackendAction::Key { combo: combo.clone() }),
                    ActionSpec::SetValue { element, value } => {
                        Some(BackendAction::SetValue { element: el(element)?, value: value.clone() })
                    }
                    ActionSpec::Focus { element } => {
                        Some(BackendAction::Focus { element: element.as_ref().map(el).transpose()? })
                    }
                    ActionSpec::Wait { .. } => None,
                })
            })
            .collect()
    }
}

fn at_index(mut e: GuiError, i: usize, spec: &ActionSpec) -> GuiError {
    e.message = format!("action {i} ({}): {}", spec.type_name(), e.message);
    e
}

pub(crate) fn pick(name: &str, v: Option<u64>, default: u64, min: u64, max: u64) -> GuiResult<u64> {
    match v {
        None => Ok(default),
        Some(v) if v < min => Err(GuiError::invalid(format!("{name} must be at least {min}"))),
        Some(v) if v > max => Err(GuiError::new(
            ErrorCode::LimitExceeded,
            format!("{name} is {v}; at most {max} is allowed"),
        )),
        Some(v) => Ok(v),
    }
}

/// Image work (resampling, encoding) on a blocking thread, off the async workers.
pub(crate) async fn encode_off_thread(
    f: impl FnOnce() -> GuiResult<RenderedShot> + Send + 'static,
) -> GuiResult<RenderedShot> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| GuiError::backend(format!("encoding the screenshot failed: {e}")))?
}

pub(crate) async fn bounded<T>(
    what: &str,
    fut: impl std::future::Future<Output = GuiResult<T>>,
) -> GuiResult<T> {
    crate::error::within(CALL_TIMEOUT, what, fut).await
}

#[async_trait]
impl GuiService for LocalGui {
    async fn list(&self) -> GuiResult<ListOutput> {
        let backend = self.backend().await?;
        let mut windows = bounded("listing windows", backend.list_windows()).await?;
        let truncated = windows.len() > self.limits.windows_per_list;
        windows.truncate(self.limits.windows_per_list);
        let mut info = backend.info();
        if let Some((policy, problem)) = self.policy.as_ref().map(|p| p.current()) {
            for w in &mut windows {
                w.policy = policy.decide(w).access.mark();
            }
            info.notes.extend(problem);
        }
        Ok(ListOutput {
            machine: self.machine.clone(),
            backend: info,
            windows,
            truncated,
        })
    }

    async fn state(&self, request: StateRequest) -> GuiResult<StateOutput> {
        let window_id = request.window_id.clone();
        let result = self.observe_for_model(request).await;
        self.publish_observation(&window_id, &result);
        result
    }

    async fn action(&self, request: ActionRequest) -> GuiResult<ActionOutput> {
        self.act_for_model(request).await
    }

    async fn frame(&self, request: FrameRequest) -> GuiResult<FrameOutput> {
        if request.window_id.is_empty() {
            return Err(GuiError::invalid("window_id is required (from gui_list)"));
        }
        let format = request.image_format;
        let quality = match (format, request.image_quality) {
            (ImageFormat::Jpeg, q) => pick("image_quality", q, 80, 1, 100)? as u8,
            _ => 80,
        };
        let max_edge = match request.max_edge {
            None => self.limits.max_image_edge,
            Some(e) => pick("max_edge", Some(e as u64), 0, 16, 16384)? as u32,
        };
        let backend = self.backend().await?;
        let captured = bounded("capturing the window", backend.capture(&request.window_id)).await?;
        let shot = captured
            .screenshot
            .ok_or_else(|| GuiError::backend("the backend returned no screenshot"))?;
        let window = captured.window;
        let b = window.bounds;
        let space = Space::for_window(b.width, b.height, max_edge);
        let pixels = Arc::new(shot.image);
        let etag = {
            let pixels = pixels.clone();
            let salt = format!("{b:?}|{}|{quality}|{max_edge}", format.name());
            tokio::task::spawn_blocking(move || crate::image::frame_etag(&pixels, &salt))
                .await
                .map_err(|e| GuiError::backend(format!("hashing the frame failed: {e}")))?
        };
        let coordinate_space = CoordinateSpace::of(&space, captured.scale);
        if request.if_none_match.as_deref() == Some(etag.as_str()) {
            return Ok(FrameOutput {
                machine: self.machine.clone(),
                window,
                coordinate_space,
                etag,
                unchanged: true,
                screenshot: None,
                image: None,
            });
        }
        let rendered =
            encode_off_thread(move || render_screenshot(&pixels, &space, &[], format, quality)).await?;
        // Nothing is painted over in the web page's frame (no secrets given).
        let screenshot = rendered.info(format, quality, shot.occluded);
        Ok(FrameOutput {
            machine: self.machine.clone(),
            window,
            coordinate_space,
            etag,
            unchanged: false,
            screenshot: Some(screenshot),
            image: Some(rendered.image),
        })
    }

    async fn human_action(&self, request: HumanActionRequest) -> GuiResult<ActionOutput> {
        if request.window_id.is_empty() {
            return Err(GuiError::invalid("window_id is required"));
        }
        let specs = parse_actions(&request.actions, &self.limits)?;
        if let Some((i, spec)) = specs
            .iter()
            .enumerate()
            .find(|(_, s)| !s.element_ids().is_empty())
        {
            return Err(at_index(
                GuiError::invalid("human input acts at x/y on the frame; element_id is for gui_action"),
                i,
                spec,
            ));
        }
        let backend = self.backend().await?;
        let current = bounded("reading the window", backend.window(&request.window_id)).await?;
        if current.bounds != request.geometry {
            return Err(GuiError::new(
                ErrorCode::WindowChanged,
                format!(
                    "the window moved, was resized or changed since the frame (then {:?}, now {:?}); \
                     nothing was sent: take a new frame",
                    request.geometry, current.bounds
                ),
            ));
        }
        let b = current.bounds;
        let obs = Observation {
            state_id: String::new(),
            window: current,
            elements: Default::default(),
            space: Space::identity(b.width, b.height),
            issued: std::time::Instant::now(),
            shown: None,
        };
        let result = self.run_actions(&obs, &specs, Caller::Human, None).await;
        // The person's input keeps their take-over alive.
        self.person.control.touch(&obs.window.window_id);
        let shown_actions = audit::mask_texts(
            &request.actions,
            &audit::typing_actions(&specs),
            audit::MASK_HUMAN,
        );
        self.publish_call(Face::Web, &obs, &shown_actions, &result);
        if let Some(log) = &self.audit {
            log.write(audit::Record {
                machine: &self.machine,
                face: Face::Web,
                who: request.caller.as_deref().unwrap_or("unknown"),
                window: &obs.window,
                actions: shown_actions,
                result: &result,
            });
        }
        result
    }

    fn feed(&self) -> Option<Arc<crate::person::Feed>> {
        Some(self.person.feed().clone())
    }

    async fn person_command(&self, command: PersonCommand) -> GuiResult<PersonState> {
        self.person.command(command)
    }
}

impl LocalGui {
    /// `gui_state` for the model: held to the policy; says once that a take-over ended.
    async fn observe_for_model(&self, request: StateRequest) -> GuiResult<StateOutput> {
        let policy = self.model_policy();
        // Before anything of a denied window is read.
        if let (Some(p), false) = (&policy, request.window_id.is_empty()) {
            self.enforce_now(p, &request.window_id, Intent::Observe).await?;
        }
        let mut looked = self.look(request).await?;
        if let Some(p) = &policy {
            policy::enforce(p, &looked.out.window, Intent::Observe)?;
            looked.out.window.policy = p.decide(&looked.out.window).access.mark();
        }
        if let Some(note) = self.person.control.came_back() {
            looked.out.notes.insert(0, note);
        }
        let out = self.issue(looked);
        self.keep_pixels_once(&out.window.window_id).await;
        Ok(out)
    }

    async fn act_for_model(&self, request: ActionRequest) -> GuiResult<ActionOutput> {
        if request.state_id.is_empty() {
            return Err(GuiError::invalid("state_id is required (from gui_state)"));
        }
        let obs = self.store.take(&request.state_id)?;
        if obs.window.window_id != request.window_id {
            return Err(GuiError::new(
                ErrorCode::WindowMismatch,
                format!(
                    "state_id belongs to window {}, not {}; call gui_state for the window you want to act on",
                    obs.window.window_id, request.window_id
                ),
            ));
        }
        let specs = parse_actions(&request.actions, &self.limits)?;
        let came_back = self.person.control.came_back();
        let secret = audit::secret_text_actions(&specs, &obs.elements, |p| obs.space.point_to_logical(p));
        let shown_actions = audit::mask_texts(&request.actions, &secret, audit::MASK);
        let result = async {
            // Before any input: the window as observed, and as it is now when a rule looks at
            // titles (a title can change under the same window). An `ask` window goes on to
            // the person's approval below.
            let policy = self.model_policy();
            if let Some(p) = &policy {
                policy::enforce_approved(p, &obs.window, Intent::Act, true)?;
                if p.reads_titles() {
                    self.enforce_now(p, &obs.window.window_id, Intent::Act).await?;
                }
            }
            self.person.control.check(&obs.window.window_id)?;
            let ask = policy.as_ref().and_then(|p| policy::ask_reason(p, &obs.window));
            let approved = self.approval(&obs, &specs, &shown_actions, ask).await?;
            let started = std::time::Instant::now();
            let mut judging = self.start_judging(&obs, &request, specs.len(), specs.first()).await?;
            let judging_began = started.elapsed();
            let mut out = self
                .run_actions(&obs, &specs, Caller::Model { approved }, judging.as_mut())
                .await?;
            out.notes.extend(came_back.clone());
            let ran = started.elapsed();
            if let Some(j) = judging {
                self.finish_judging(&obs, j, &request, &mut out).await;
            }
            tracing::debug!(
                "gui_action: ready to act after {judging_began:?}, acted and settled by {ran:?}, answered by {:?}",
                started.elapsed()
            );
            if out.state_id.is_some() {
                self.keep_pixels(&obs.window.window_id).await;
            }
            Ok(out)
        }
        .await;
        self.publish_call(Face::Mcp, &obs, &shown_actions, &result);
        if let Some(log) = &self.audit {
            log.write(audit::Record {
                machine: &self.machine,
                face: Face::Mcp,
                who: request.caller.as_deref().unwrap_or("unknown"),
                window: &obs.window,
                actions: shown_actions,
                result: &result,
            });
        }
        // Told once: a refusal that did not reach the model's work still says it next time.
        if result.is_err() {
            if let Some(note) = came_back {
                self.person.control.say_again(note);
            }
        }
        result
    }
}

/// Who asked: the model (with a `state_id`; `approved` by a person for an `ask` window) or a
/// person on the web UI (with a frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    Model { approved: bool },
    Human,
}

impl Caller {
    fn observe_again(self) -> &'static str {
        match self {
            Caller::Model { .. } => "call gui_state again",
            Caller::Human => "take a new frame",
        }
    }
}

impl LocalGui {
    /// Runs validated actions against `obs` (its window, its space), one at a time, each
    /// re-checked against the window's current geometry where it uses points.
    /// With `judging`, each action waits for its effect and is judged before the next runs.
    async fn run_actions(
        &self,
        obs: &Observation,
        specs: &[ActionSpec],
        caller: Caller,
        mut judging: Option<&mut Judging>,
    ) -> GuiResult<ActionOutput> {
        let window_id = obs.window.window_id.clone();
        let actions = self.resolve_all(obs, specs)?;
        let backend = self.backend().await?;
        // The model's actions are held to the policy; a person's never are.
        let policy = match caller {
            Caller::Model { .. } => self.model_policy(),
            Caller::Human => None,
        };
        let mut results: Vec<ActionResult> = Vec::with_capacity(specs.len());
        let (mut stopped, mut skipped) = (None, Vec::new());
        for (i, (spec, action)) in specs.iter().zip(actions).enumerate() {
            let fail = |e: GuiError, results: &Vec<ActionResult>| {
                let done = serde_json::to_value(results).unwrap_or_default();
                let mut e = at_index(e, i, spec);
                let mut details = serde_json::json!({"failed_index": i, "completed": done});
                // Keep what the error itself carries (e.g. `blocked_by`).
                if let (Some(serde_json::Value::Object(own)), Some(all)) =
                    (e.details.take(), details.as_object_mut())
                {
                    for (k, v) in own {
                        all.entry(k).or_insert(v);
                    }
                }
                e.details = Some(details);
                e
            };
            let last_action = i + 1 == specs.len();
            // A person who takes over while the model's call runs stops it before its next
            // action; what already ran is in the refusal's `details.completed`.
            if let Caller::Model { .. } = caller {
                if let Err(e) = self.person.control.check(&window_id) {
                    return Err(fail(e, &results));
                }
            }
            let Some(action) = action else {
                if let ActionSpec::Wait { duration } = spec {
                    tokio::time::sleep(*duration).await;
                }
                let mut done = ActionResult::done(
                    i,
                    spec.type_name(),
                    "wait".into(),
                    None,
                    Check::Verified("waited".into()),
                );
                if judging.is_some() {
                    done.effect = Some(crate::changes::Effect::Confirmed);
                }
                results.push(done);
                continue;
            };
            if let Some(j) = judging.as_deref_mut() {
                self.before_action(j, spec, last_action).await;
            }
            let started = std::time::Instant::now();
            // An element's own handle is re-checked by the backend, and its position re-read:
            // no window geometry is needed, so the window is only read when that check fails.
            let by_element = spec.acts_on_element_only();
            let current = if by_element {
                obs.window.clone()
            } else {
                match bounded("reading the window", backend.window(&window_id)).await {
                    Ok(w) => w,
                    Err(e) => return Err(fail(e, &results)),
                }
            };
            // A freshly read window says whether a modal dialog blocks it; refuse before any
            // input is lost (element-only actions are checked by the backend's perform).
            if let (false, Some(p)) = (by_element, &policy) {
                // The window as read now (its title may have changed since the call began).
                let approved = matches!(caller, Caller::Model { approved: true });
                if let Err(e) = policy::enforce_approved(p, &current, Intent::Act, approved) {
                    return Err(fail(e, &results));
                }
            }
            if let (false, Some(dialog)) = (by_element, &current.blocked_by) {
                let title = backend.window(dialog).await.ok().map(|d| d.title);
                let e = GuiError::window_blocked(&window_id, dialog, title.as_deref());
                return Err(fail(e, &results));
            }
            if !spec.points().is_empty() && current.bounds != obs.window.bounds {
                let e = GuiError::new(
                    ErrorCode::WindowChanged,
                    format!(
                        "the window moved or was resized since it was observed (then {:?}, now {:?}); \
                         coordinates are stale, {}",
                        obs.window.bounds,
                        current.bounds,
                        caller.observe_again()
                    ),
                );
                return Err(fail(e, &results));
            }
            let read = started.elapsed();
            let mut outcome = bounded("the action", backend.perform(&current, &action)).await;
            if by_element {
                if let Err(e) = &outcome {
                    if e.code == ErrorCode::ElementStale {
                        // Say so when it is the whole window that has gone.
                        if let Err(w) = bounded("reading the window", backend.window(&window_id)).await {
                            outcome = Err(w);
                        }
                    }
                }
            }
            tracing::debug!(
                "action {i} ({}): window read {:?}, perform {:?}",
                spec.type_name(),
                read,
                started.elapsed() - read
            );
            match outcome {
                Ok(outcome) => {
                    let mut stop = outcome.stop.clone();
                    let mut done = ActionResult::done(
                        i,
                        spec.type_name(),
                        outcome.method,
                        outcome.detail,
                        outcome.check,
                    );
                    if let Some(j) = judging.as_deref_mut() {
                        self.after_action(j, obs, spec, &mut done, last_action).await;
                        if j.gone() && stop.is_none() {
                            stop = Some("the window closed".into());
                        }
                    }
                    results.push(done);
                    if let Some(why) = stop {
                        let not_run: Vec<usize> = (i + 1..specs.len()).collect();
                        if !not_run.is_empty() {
                            stopped = Some(format!(
                                "stopped after action {i} ({}): {why}; actions {}..{} were NOT run, {} and act on what is shown now",
                                spec.type_name(),
                                i + 1,
                                specs.len() - 1,
                                caller.observe_again()
                            ));
                        }
                        skipped = not_run;
                        break;
                    }
                }
                Err(e) => return Err(fail(e, &results)),
            }
        }
        Ok(ActionOutput {
            machine: self.machine.clone(),
            window_id,
            ok: true,
            results,
            stopped,
            not_run: skipped,
            next: match caller {
                Caller::Model { .. } => "call gui_state to observe the result before acting again",
                Caller::Human => "take a new frame to see the result",
            }
            .into(),
            ..ActionOutput::default()
        })
    }
}
