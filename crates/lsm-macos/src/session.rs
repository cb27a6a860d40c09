//! The facts [`crate::permissions::check_session`] judges, gathered without touching any
//! application: who owns the console (the user logged in at the Mac's screen owns
//! `/dev/console`; root while the login window shows), whether lsm came in over SSH, whether it
//! runs as root. The window server's side (a GUI session, on the console or switched away) is
//! read by `cg::session` on macOS. The user lookup is plain Unix, so the Linux tests run it.

use std::os::unix::fs::MetadataExt;

/// The user that owns `/dev/console`, by name (`None` when it cannot be read).
pub fn console_user() -> Option<String> {
    let uid = std::fs::metadata("/dev/console").ok()?.uid();
    user_name(uid)
}

/// A user's login name.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: all-zero is a valid passwd record to be filled in.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and `buf` is as long as said.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points to a NUL-terminated string inside `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    name.to_str().ok().map(str::to_string)
}

/// lsm was started over SSH.
pub fn over_ssh() -> bool {
    ["SSH_CONNECTION", "SSH_TTY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// lsm runs as root.
pub fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_found_by_id() {
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(user_name(u32::MAX - 7), None);
        // Whoever owns the console here has a name (root on a headless Linux machine).
        if std::path::Path::new("/dev/console").exists() {
            assert!(console_user().is_some());
        }
    }
}
