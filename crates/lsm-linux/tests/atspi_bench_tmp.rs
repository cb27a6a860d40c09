use lsm_linux::atspi::*;
use std::time::{Instant, Duration};
async fn batch(conn: &zbus::Connection, objs: &[ObjRef], iface: &str, method: &str, prop: Option<&str>) -> (Duration, usize) {
    let t = Instant::now();
    let futs = objs.iter().map(|f| { let conn = conn.clone(); async move {
        let r = match prop {
            None => if method == "GetExtents" { conn.call_method(Some(f.bus.as_str()), f.path.as_str(), Some(iface), method, &(0u32,)).await }
                    else if method == "GetText" { conn.call_method(Some(f.bus.as_str()), f.path.as_str(), Some(iface), method, &(0i32, 5i32)).await }
                    else { conn.call_method(Some(f.bus.as_str()), f.path.as_str(), Some(iface), method, &()).await },
            Some(p) => conn.call_method(Some(f.bus.as_str()), f.path.as_str(), Some("org.freedesktop.DBus.Properties"), "Get", &(iface, p)).await,
        };
        r.is_ok() as usize
    }});
    let ok: usize = futures_util::future::join_all(futs).await.into_iter().sum();
    (t.elapsed(), ok)
}
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn bench() {
    let a = Atspi::connect(None).await.unwrap();
    let apps = a.applications().await.unwrap();
    for name in ["gtk3-widget-factory", "gtk4-widget-factory", "calculator"] {
        let app = apps.iter().find(|x| x.name == name).unwrap();
        let conn = a.connection().clone();
        let frames = a.frames(&app.obj).await.unwrap();
        let f = frames.iter().filter(|f| f.states.iter().any(|s| s=="visible")).next().unwrap().obj.clone();
        let o = WalkOptions { max_elements: 10000, max_depth: 100, deadline: Instant::now() + Duration::from_secs(20), coords: CoordKind::Screen };
        let t = Instant::now();
        let r = a.walk(&f, &o).await.unwrap();
        println!("{name}: walk {} nodes {:?}", r.nodes.len(), t.elapsed());
        let objs: Vec<ObjRef> = r.nodes.iter().map(|n| n.obj.clone()).collect();
        for (iface, method, prop) in [("org.a11y.atspi.Accessible","GetRole",None),("org.a11y.atspi.Accessible","GetState",None),("org.a11y.atspi.Accessible","GetInterfaces",None),
           ("org.a11y.atspi.Accessible","Get",Some("Name")),("org.a11y.atspi.Accessible","Get",Some("ChildCount")),("org.a11y.atspi.Accessible","GetChildren",None),
           ("org.a11y.atspi.Component","GetExtents",None),("org.a11y.atspi.Action","GetActions",None),("org.a11y.atspi.Text","Get",Some("CharacterCount")),("org.a11y.atspi.Text","GetText",None)] {
            let (d, ok) = batch(&conn, &objs, iface, method, prop).await;
            println!("   {method} {prop:?}: {} calls in {d:?} ({ok} ok) = {:.1} us/call", objs.len(), d.as_secs_f64()*1e6/objs.len() as f64);
        }
    }
}
