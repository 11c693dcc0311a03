use std::sync::{Arc, Condvar, Mutex};
fn main() {
    let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    eprintln!("available_parallelism = {n}");
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let mut hs = Vec::new();
    for i in 1..=2u32 {
        let p = pair.clone();
        hs.push(std::thread::Builder::new().name(format!("w{i}")).spawn(move || {
            let (m, c) = &*p;
            let mut g = m.lock().unwrap();
            while *g != i { g = c.wait(g).unwrap(); }
            *g += 1;
            c.notify_all();
            i * 10
        }).unwrap());
    }
    {
        let (m, c) = &*pair;
        *m.lock().unwrap() = 1;
        c.notify_all();
    }
    for h in hs { eprintln!("joined {}", h.join().unwrap()); }
}
