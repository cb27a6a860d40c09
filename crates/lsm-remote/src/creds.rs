//! The controller's state directory: worker credentials (random tokens, stored as SHA-256
//! hashes) and the TLS certificate the controller generates on first start.

use rand::Rng;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

pub use lsm_core::state_dir::default_state_dir;

const TOKEN_PREFIX: &str = "lsmw_";

/// Machine names: what `machine` arguments and logs carry.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(format!(
            "machine name {name:?} must be 1-64 characters of letters, digits, '-', '_' or '.'"
        ));
    }
    if name == "local" {
        return Err("\"local\" is this machine's own name; pick another".into());
    }
    Ok(())
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Credential {
    pub name: String,
    /// Hex SHA-256 of the token; the token itself is shown once, at enrolment.
    pub token_sha256: String,
    pub enrolled_unix: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CredFile {
    workers: Vec<Credential>,
}

/// Where the controller keeps its state.
#[derive(Debug, Clone)]
pub struct StateDir {
    pub dir: PathBuf,
}

impl StateDir {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub fn workers_file(&self) -> PathBuf {
        self.dir.join("workers.json")
    }
    pub fn cert_file(&self) -> PathBuf {
        self.dir.join("worker-tls").join("cert.pem")
    }
    pub fn key_file(&self) -> PathBuf {
        self.dir.join("worker-tls").join("key.pem")
    }

    /// The enrolled workers; none when the file does not exist yet.
    pub fn credentials(&self) -> io::Result<Vec<Credential>> {
        let path = self.workers_file();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<CredFile>(&bytes)
                .map(|f| f.workers)
                .map_err(|e| io::Error::other(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }

    fn save(&self, workers: Vec<Credential>) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(&CredFile { workers }).map_err(io::Error::other)?;
        write_private(&self.workers_file(), &bytes)
    }

    /// Issues a new token for `name` (replacing any earlier one) and returns it.
    pub fn enrol(&self, name: &str) -> io::Result<String> {
        check_name(name).map_err(io::Error::other)?;
        let mut raw = [0u8; 32];
        rand::rng().fill(&mut raw);
        let token = format!("{TOKEN_PREFIX}{}", hex::encode(raw));
        let mut workers = self.credentials()?;
        workers.retain(|c| c.name != name);
        let enrolled_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        workers.push(Credential {
            name: name.into(),
            token_sha256: token_hash(&token),
            enrolled_unix,
        });
        self.save(workers)?;
        Ok(token)
    }

    /// Removes `name`'s credential; false when it had none.
    pub fn revoke(&self, name: &str) -> io::Result<bool> {
        let mut workers = self.credentials()?;
        let before = workers.len();
        workers.retain(|c| c.name != name);
        if workers.len() == before {
            return Ok(false);
        }
        self.save(workers)?;
        Ok(true)
    }

    /// The certificate chain and key workers see, generated (self-signed) when missing. A user
    /// with a proper certificate puts it (PEM chain + key) in these two files instead.
    pub fn tls_material(&self) -> io::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
        let (cert, key) = (self.cert_file(), self.key_file());
        if !cert.exists() || !key.exists() {
            let names = vec!["lsm-controller".to_string(), "localhost".to_string()];
            let ck = rcgen::generate_simple_self_signed(names)
                .map_err(|e| io::Error::other(format!("generating the controller certificate: {e}")))?;
            write_private(&key, ck.signing_key.serialize_pem().as_bytes())?;
            write_private(&cert, ck.cert.pem().as_bytes())?;
            tracing::info!("generated the worker-link certificate {}", cert.display());
        }
        let chain = CertificateDer::pem_file_iter(&cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| io::Error::other(format!("{}: {e}", cert.display())))?;
        if chain.is_empty() {
            return Err(io::Error::other(format!(
                "{}: no certificate in it",
                cert.display()
            )));
        }
        let key = PrivateKeyDer::from_pem_file(&key)
            .map_err(|e| io::Error::other(format!("{}: {e}", key.display())))?;
        Ok((chain, key))
    }

    /// The pin workers use: hex SHA-256 of the controller's certificate (DER).
    pub fn pin(&self) -> io::Result<String> {
        let (chain, _) = self.tls_material()?;
        Ok(cert_pin(&chain[0]))
    }
}

pub fn cert_pin(cert: &[u8]) -> String {
    hex::encode(Sha256::digest(cert))
}

/// What `enrol` issues: `lsmw_` and 64 hex digits.
pub fn is_worker_token(token: &str) -> bool {
    token
        .strip_prefix(TOKEN_PREFIX)
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Equality of two secrets in time independent of where they differ (only their lengths may
/// show). The one comparison of secrets in lsm: tokens, pins, the web UI's secret and CSRF token.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}

/// Why a worker was refused, for the controller's log (never sent to the worker).
pub fn authenticate(creds: &[Credential], name: &str, token: &str) -> Result<String, &'static str> {
    let hash = token_hash(token);
    match creds.iter().find(|c| c.name == name) {
        None => Err("no credential for this name (not enrolled, or revoked)"),
        Some(c) if constant_time_eq(c.token_sha256.as_bytes(), hash.as_bytes()) => Ok(hash),
        Some(_) => Err("wrong token"),
    }
}

/// Writes atomically, readable by the owner only (tokens and keys).
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("path without a directory"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut f = opts.open(&tmp)?;
        std::io::Write::write_all(&mut f, bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enrol_authenticate_revoke() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("lsm-remote-creds-{}", std::process::id()));
        let sd = StateDir::new(dir.clone());
        let t1 = sd.enrol("w1")?;
        let t2 = sd.enrol("w2")?;
        let creds = sd.credentials()?;
        assert!(authenticate(&creds, "w1", &t1).is_ok());
        assert_eq!(authenticate(&creds, "w1", &t2), Err("wrong token"));
        assert!(authenticate(&creds, "w3", &t1).is_err());
        assert!(sd.revoke("w1")?);
        assert!(!sd.revoke("w1")?);
        assert!(authenticate(&sd.credentials()?, "w1", &t1).is_err());
        assert!(!std::fs::read_to_string(sd.workers_file())?.contains(&t2));
        assert_eq!(sd.pin()?, sd.pin()?);
        assert!(check_name("local").is_err() && check_name("a b").is_err() && check_name("pc-1").is_ok());
        std::fs::remove_dir_all(dir)
    }
}
