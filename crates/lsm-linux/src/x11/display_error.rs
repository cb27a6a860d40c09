//! Why an X display could not be opened, said with what to check: the error x11rb gives
//! ("No such file or directory") names neither the display's socket nor the session's cookie.

use x11rb::errors::ConnectError;

/// The message for a failed connection to X display `name`.
pub fn cannot_open(name: &str, e: &ConnectError) -> String {
    let check = match e {
        ConnectError::SetupAuthenticate(_) | ConnectError::SetupFailed(_) => {
            "the X server refused lsm: check XAUTHORITY (the session's cookie file, e.g. ~/.Xauthority) \
             and that lsm runs as the user of the graphical session"
                .to_string()
        }
        ConnectError::DisplayParsingError(_) => {
            "DISPLAY is not a display name (it looks like :0 or :1)".to_string()
        }
        ConnectError::InvalidScreen => {
            "the X server has no such screen (drop the .N after the display number)".to_string()
        }
        _ => match socket_of(name) {
            Some(socket) => format!(
                "no X server answers there: check that it runs ({socket} exists while it does) and that \
                 DISPLAY is the desktop's own (`echo $DISPLAY` in a terminal of the desktop), or start \
                 lsm from inside the graphical session"
            ),
            None => "no X server answers there: check that it runs and that DISPLAY is the desktop's own \
                     (`echo $DISPLAY` in a terminal of the desktop)"
                .to_string(),
        },
    };
    format!("cannot open X display {name} ({e}): {check}")
}

/// The local socket of display `:N` (or `unix:N`), where an X server listens while it runs.
fn socket_of(name: &str) -> Option<String> {
    let number = name.strip_prefix(':').or_else(|| name.strip_prefix("unix:"))?;
    let number = number.split('.').next()?;
    number
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| format!("/tmp/.X11-unix/X{number}"))
        .filter(|_| !number.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_server_names_its_socket() {
        let e = ConnectError::IoError(std::io::Error::from(std::io::ErrorKind::NotFound));
        let m = cannot_open(":55", &e);
        assert!(m.starts_with("cannot open X display :55 ("), "{m}");
        assert!(
            m.contains("/tmp/.X11-unix/X55") && m.contains("echo $DISPLAY"),
            "{m}"
        );
        assert_eq!(socket_of(":0.1").as_deref(), Some("/tmp/.X11-unix/X0"));
        assert_eq!(socket_of("host:0"), None);
        assert_eq!(socket_of(":"), None);
    }

    #[test]
    fn a_refused_connection_points_at_the_cookie() {
        let m = cannot_open(":0", &ConnectError::InvalidScreen);
        assert!(m.contains("no such screen"), "{m}");
    }
}
