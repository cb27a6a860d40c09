//! Fuzz targets (property tests) for the files lsm reads from its state directory: the workers'
//! credentials (`workers.json`) and the worker link's certificate and key (PEM): random bytes,
//! JSON of the wrong shape, garbled, cut and huge PEM. Never a panic; a clear error naming the
//! file; a damaged credentials file is never overwritten by `enrol` or `revoke`. Longer run:
//! `LSM_FUZZ_SECS=600 cargo test --release -p lsm-remote --test prop_files -- --nocapture`.

#[path = "../../lsm-core/tests/fuzz/mod.rs"]
mod fuzz;

use lsm_remote::creds::authenticate;
use lsm_remote::StateDir;
use proptest::prelude::*;
use serde_json::json;

const KEYS: &[&str] = &["workers", "name", "token_sha256", "enrolled_unix"];

fn state(what: &str) -> StateDir {
    let d = std::env::temp_dir().join(format!("lsm-fuzz-files-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    StateDir::new(d)
}

fn workers_file() -> impl Strategy<Value = Vec<u8>> {
    let cred = (
        fuzz::json(KEYS),
        fuzz::nasty_string(),
        "[0-9a-f]{64}",
        fuzz::nasty_number(),
    )
        .prop_map(|(_, n, h, t)| json!({"name": n, "token_sha256": h, "enrolled_unix": t}));
    prop_oneof![
        2 => fuzz::raw_bytes(KEYS),
        2 => prop::collection::vec(cred, 0..4).prop_map(|w| serde_json::to_vec(&json!({ "workers": w })).unwrap_or_default()),
        1 => fuzz::json(KEYS).prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        1 => (1usize..4_000_000).prop_map(|n| {
            let mut b = b"{\"workers\": [".to_vec();
            b.resize(n, b' ');
            b
        }),
    ]
}

#[test]
fn credentials_file() {
    let sd = state("creds");
    std::fs::create_dir_all(&sd.dir).expect("dir");
    fuzz::run(
        "credentials_file",
        (workers_file(), fuzz::nasty_string(), fuzz::nasty_string()),
        60,
        |(bytes, name, token)| {
            std::fs::write(sd.workers_file(), bytes).map_err(|e| e.to_string())?;
            match sd.credentials() {
                Ok(creds) => {
                    let _ = authenticate(&creds, name, token);
                    Ok(())
                }
                Err(e) => {
                    if !e.to_string().contains("workers.json") {
                        return Err(format!("the error does not name the file: {e}"));
                    }
                    // A damaged file stays as it is: enrol and revoke refuse rather than replace it.
                    let refused = sd.enrol("w1").is_err() && sd.revoke("w1").is_err();
                    let kept = std::fs::read(sd.workers_file()).map_err(|e| e.to_string())? == *bytes;
                    if refused && kept {
                        Ok(())
                    } else {
                        Err("a damaged credentials file was replaced".into())
                    }
                }
            }
        },
    );
    let _ = std::fs::remove_dir_all(&sd.dir);
}

/// PEM blocks: real ones (a generated certificate and key), garbled, cut, relabelled, swapped.
fn pem(valid_cert: String, valid_key: String) -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let both = vec![valid_cert.into_bytes(), valid_key.into_bytes()];
    let one = prop_oneof![
        3 => (prop::sample::select(both), any::<prop::sample::Index>(), any::<u8>(), 0u8..5).prop_map(
            |(mut b, at, x, how)| {
                let i = at.index(b.len());
                match how {
                    0 => b.truncate(i),
                    1 => b[i] = x,
                    2 => b.insert(i, x),
                    3 => b = String::from_utf8_lossy(&b).replace("CERTIFICATE", "PRIVATE KEY").into_bytes(),
                    _ => {}
                }
                b
            }
        ),
        1 => prop::collection::vec(any::<u8>(), 0..256),
        1 => ("[A-Z ]{0,20}", "[A-Za-z0-9+/=\n]{0,400}")
            .prop_map(|(label, body)| format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n").into_bytes()),
        1 => (1usize..3_000_000).prop_map(|n| {
            let mut b = b"-----BEGIN CERTIFICATE-----\n".to_vec();
            b.resize(n, b'A');
            b
        }),
    ];
    (one.clone(), one)
}

#[test]
fn tls_files() {
    let sd = state("tls");
    // First start: lsm generates a certificate and key; they are the valid samples.
    sd.tls_material().expect("generated");
    let cert = std::fs::read_to_string(sd.cert_file()).expect("cert");
    let key = std::fs::read_to_string(sd.key_file()).expect("key");
    fuzz::run("tls_files", pem(cert, key), 60, |(c, k)| {
        std::fs::write(sd.cert_file(), c).map_err(|e| e.to_string())?;
        std::fs::write(sd.key_file(), k).map_err(|e| e.to_string())?;
        if let Err(e) = sd.tls_material() {
            let m = e.to_string();
            if !m.contains("cert.pem") && !m.contains("key.pem") {
                return Err(format!("the error names no file: {m}"));
            }
        }
        let _ = sd.pin();
        let _ = lsm_remote::tls::server_config(&sd);
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&sd.dir);
}
