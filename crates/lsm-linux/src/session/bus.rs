//! The session bus, connected from `DBUS_SESSION_BUS_ADDRESS` without its `guid=` check: a
//! session bus restarted at the same address has a new GUID, and the old one in lsm's
//! environment would refuse the new bus forever ("Server GUID mismatch").

/// The address with every `guid=` key left out (D-Bus addresses: `;`-separated transports,
/// each `transport:key=value,key=value`).
pub(crate) fn without_guid(address: &str) -> String {
    address
        .split(';')
        .map(|transport| match transport.split_once(':') {
            Some((kind, keys)) => {
                let kept: Vec<&str> = keys.split(',').filter(|kv| !kv.starts_with("guid=")).collect();
                format!("{kind}:{}", kept.join(","))
            }
            None => transport.to_string(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// A new connection to the session bus (unbounded: callers bound it).
pub(crate) async fn connect() -> zbus::Result<zbus::Connection> {
    match std::env::var("DBUS_SESSION_BUS_ADDRESS") {
        Ok(address) if !address.trim().is_empty() => {
            zbus::connection::Builder::address(without_guid(&address).as_str())?
                .build()
                .await
        }
        _ => zbus::Connection::session().await,
    }
}

#[cfg(test)]
mod tests {
    use super::without_guid;

    #[test]
    fn the_guid_is_left_out_and_nothing_else() {
        assert_eq!(
            without_guid("unix:path=/tmp/bed/bus,guid=904b037db19e3ff93a26590b6b123c6d"),
            "unix:path=/tmp/bed/bus"
        );
        assert_eq!(
            without_guid("unix:guid=ab,abstract=/tmp/dbus-x;tcp:host=localhost,port=1,guid=cd"),
            "unix:abstract=/tmp/dbus-x;tcp:host=localhost,port=1"
        );
        assert_eq!(
            without_guid("unix:path=/run/user/0/bus"),
            "unix:path=/run/user/0/bus"
        );
    }
}
