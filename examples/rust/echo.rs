//! echo: a node written in Rust with the standard library, to show that a
//! Rust program runs under cmc as a C program does. It reports one state
//! byte (1) and its node number on fd 3, listens on its port with
//! `TcpListener`, and echoes the first read of each connection.
//!
//! Built by the tests (`cmc/tests/process_support`) with
//! `rustc -C relocation-model=static`, which links it `-no-pie`.

use std::io::{Read, Write};
use std::os::fd::FromRawFd;

fn main() {
    let node: u16 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    // SAFETY: fd 3 is the checker's state record, open for the whole run.
    let mut state = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(3) });
    let _ = state.write_all(&[2, 1, node as u8]);
    let listener = std::net::TcpListener::bind(("127.0.0.1", 20000 + node)).expect("bind");
    for conn in listener.incoming() {
        let mut conn = conn.expect("accept");
        let mut buf = [0u8; 8];
        let n = conn.read(&mut buf).unwrap_or(0);
        let _ = conn.write_all(&buf[..n]);
    }
}
