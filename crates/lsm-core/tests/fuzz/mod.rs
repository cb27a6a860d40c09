//! A time-bounded property runner for the fuzz targets (`crates/*/tests/prop_*.rs`), shared by
//! path (`#[path = ...] mod fuzz;`) so every crate's targets behave alike.
//!
//! Stable Rust has no libFuzzer, so each target is a proptest strategy run until a deadline:
//! - `LSM_FUZZ_SECS`: seconds per property (default 2: a smoke run inside `cargo test`);
//! - `LSM_FUZZ_CASE_SECS`: longest a single case may take before it counts as a hang (10);
//! - `LSM_FUZZ_SEED`: replays a run (printed at the start and in every failure);
//! - `LSM_FUZZ_STATS`: a file to which each property appends its line of figures.
//!
//! A failing case (an `Err` or a panic) is shrunk with proptest's value trees and reported with
//! its minimal input; a case that hangs is reported by a watchdog, which ends the process.

#![allow(dead_code)] // each target uses its own subset

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value};
use std::fmt::Debug;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .unwrap_or(default)
}

/// Seconds each property runs for.
pub fn budget() -> Duration {
    Duration::from_secs_f64(env_f64("LSM_FUZZ_SECS", 2.0))
}

/// The longest one case may run.
pub fn case_limit() -> Duration {
    Duration::from_secs_f64(env_f64("LSM_FUZZ_CASE_SECS", 10.0).max(0.5))
}

fn seed() -> u64 {
    if let Some(s) = std::env::var("LSM_FUZZ_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        return s;
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ (u64::from(std::process::id()) << 32)
}

/// A per-property seed: the run's seed mixed with the property's name (FNV-1a).
fn rng_for(name: &str, seed: u64) -> TestRng {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        for b in name.bytes().chain([i as u8]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        chunk.copy_from_slice(&h.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

fn shown<T: Debug>(v: &T) -> String {
    let mut s = format!("{v:?}");
    if s.len() > 4000 {
        let mut cut = 4000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("... (cut)");
    }
    s
}

/// One case: Err (or a panic) is a failure, with what went wrong.
fn attempt<T>(check: &mut impl FnMut(&T) -> Result<(), String>, value: &T) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(|| check(value))) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(no message)".into());
            Err(format!("PANIC: {msg}"))
        }
    }
}

struct Watch {
    started_ms: AtomicU64,
    busy: AtomicBool,
    input: Mutex<String>,
    done: AtomicBool,
}

/// Runs `check` on values of `strategy` until the budget is spent (at least `min_cases`), and
/// returns how many cases ran. Fails the test with the shrunk input on the first failure.
pub fn run<S>(
    name: &str,
    strategy: S,
    min_cases: u64,
    mut check: impl FnMut(&S::Value) -> Result<(), String>,
) -> u64
where
    S: Strategy,
    S::Value: Debug,
{
    let seed = seed();
    let budget = budget();
    let limit = case_limit();
    let mut runner = TestRunner::new_with_rng(Config::default(), rng_for(name, seed));
    let t0 = Instant::now();
    let watch = Arc::new(Watch {
        started_ms: AtomicU64::new(0),
        busy: AtomicBool::new(false),
        input: Mutex::new(String::new()),
        done: AtomicBool::new(false),
    });
    {
        // The watchdog: a case that never returns cannot be caught any other way.
        let watch = watch.clone();
        let name = name.to_string();
        std::thread::spawn(move || {
            while !watch.done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                let now = t0.elapsed().as_millis() as u64;
                let started = watch.started_ms.load(Ordering::SeqCst);
                if watch.busy.load(Ordering::SeqCst) && now.saturating_sub(started) > limit.as_millis() as u64
                {
                    let input = watch.input.lock().map(|s| s.clone()).unwrap_or_default();
                    eprintln!(
                        "fuzz {name}: HANG: a case ran for more than {:.1} s (LSM_FUZZ_SEED={seed}); input: {input}",
                        limit.as_secs_f64()
                    );
                    std::process::exit(101);
                }
            }
        });
    }
    eprintln!("fuzz {name}: seed {seed}, {:.0} s", budget.as_secs_f64());
    let mut cases = 0u64;
    let mut slowest = Duration::ZERO;
    while cases < min_cases || t0.elapsed() < budget {
        let mut tree = match strategy.new_tree(&mut runner) {
            Ok(t) => t,
            Err(_) => continue, // rejected by a filter
        };
        let value = tree.current();
        if let Ok(mut s) = watch.input.lock() {
            *s = shown(&value);
        }
        watch
            .started_ms
            .store(t0.elapsed().as_millis() as u64, Ordering::SeqCst);
        watch.busy.store(true, Ordering::SeqCst);
        let started = Instant::now();
        let result = attempt(&mut check, &value);
        watch.busy.store(false, Ordering::SeqCst);
        let took = started.elapsed();
        slowest = slowest.max(took);
        cases += 1;
        let result = match result {
            Ok(()) if took > limit => Err(format!("slow case: {:.1} s", took.as_secs_f64())),
            r => r,
        };
        let Err(first) = result else { continue };
        eprintln!("fuzz {name}: case {cases} failed: {first}; shrinking");
        let (mut minimal, mut why) = (shown(&value), first);
        // proptest's own shrinking loop: simplify while it fails, complicate after a pass.
        let mut passed = false;
        for _ in 0..2048 {
            let moved = if passed {
                tree.complicate()
            } else {
                tree.simplify()
            };
            if !moved {
                break;
            }
            let v = tree.current();
            watch
                .started_ms
                .store(t0.elapsed().as_millis() as u64, Ordering::SeqCst);
            watch.busy.store(true, Ordering::SeqCst);
            let r = attempt(&mut check, &v);
            watch.busy.store(false, Ordering::SeqCst);
            match r {
                Err(e) => {
                    minimal = shown(&v);
                    why = e;
                    passed = false;
                }
                Ok(()) => passed = true,
            }
        }
        watch.done.store(true, Ordering::SeqCst);
        panic!(
            "fuzz {name}: FAILED after {cases} cases (LSM_FUZZ_SEED={seed}): {why}\nminimal input: {minimal}"
        );
    }
    watch.done.store(true, Ordering::SeqCst);
    let secs = t0.elapsed().as_secs_f64();
    let line = format!(
        "fuzz {name}: {cases} cases in {secs:.1} s ({:.0}/s), slowest {:.0} ms, no failure, seed {seed}",
        cases as f64 / secs.max(1e-9),
        slowest.as_secs_f64() * 1000.0
    );
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("LSM_FUZZ_STATS") {
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{line}");
        }
    }
    cases
}

/// Strings that tend to break parsers: empty, whitespace, controls, escapes, long runs,
/// non-BMP and combining characters, look-alike numbers.
pub fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => ".{0,24}",
        1 => Just(String::new()),
        1 => prop::sample::select(vec![
            " ", "\t", "\n", "\r\n", "\0", "\u{7f}", "\u{feff}", "\u{202e}", "+", "++", "+++", " + ",
            "%", "%00", "%ff", "\\", "\"", "'", "{", "}", "[", "]", "null", "true", "NaN", "-0",
            "1e309", "0x10", "é", "e\u{301}", "👍🏽", "𝕏", "한", "\u{10ffff}", "\u{fffd}",
        ])
        .prop_map(str::to_string),
        1 => (prop::sample::select(vec!["a", "+", " ", "é", "\0", "%"]), 1usize..5000)
            .prop_map(|(s, n)| s.repeat(n)),
    ]
}

/// Numbers around every boundary the parsers test (integers, fractions, huge, tiny, negative).
pub fn nasty_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from), // non-finite becomes null, as serde_json does
        (-2000i64..2000).prop_map(Value::from),
        (-2000.0f64..2000.0).prop_map(Value::from),
        prop::sample::select(vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -1.0,
            3.0,
            29.999,
            30.0,
            30.0001,
            31.0,
            99.0,
            100.0,
            101.0,
            255.0,
            256.0,
            1e6,
            1_000_000.4,
            1_000_000.6,
            -1e6,
            1e12,
            1e300,
            -1e300,
            4294967295.0,
            4294967296.0,
            9007199254740993.0,
            1.8446744073709552e19,
            5e-324,
            f64::MAX,
            f64::MIN,
        ])
        .prop_map(Value::from),
        prop::sample::select(vec![
            u64::MAX,
            i64::MAX as u64,
            u32::MAX as u64,
            u32::MAX as u64 + 1
        ])
        .prop_map(Value::from),
        prop::sample::select(vec![i64::MIN, i32::MIN as i64, -1]).prop_map(Value::from),
    ]
}

/// Any JSON value, with object keys drawn mostly from `keys` (the fields a parser looks for)
/// and leaves of every type.
pub fn json(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        nasty_number(),
        nasty_string().prop_map(Value::String),
    ];
    let key = prop_oneof![
        4 => prop::sample::select(keys.to_vec()).prop_map(str::to_string),
        1 => nasty_string(),
    ];
    leaf.prop_recursive(4, 96, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// A JSON object with fields from `keys` (values of any type) and now and then another field.
pub fn json_object(keys: &'static [&'static str]) -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![
        6 => prop::sample::select(keys.to_vec()).prop_map(str::to_string),
        1 => nasty_string(),
    ];
    prop::collection::vec((key, json(keys)), 0..8).prop_map(|kv| kv.into_iter().collect())
}

/// Raw bytes: random, or a JSON text cut short or with a byte changed.
pub fn raw_bytes(keys: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        (json(keys), any::<prop::sample::Index>(), any::<u8>(), 0u8..3).prop_map(|(v, at, b, how)| {
            let mut bytes = serde_json::to_vec(&v).unwrap_or_default();
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                match how {
                    0 => bytes.truncate(i),
                    1 => bytes[i] = b,
                    _ => bytes.insert(i, b),
                }
            }
            bytes
        }),
    ]
}
