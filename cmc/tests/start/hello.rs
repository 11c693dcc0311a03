//! A small Rust program for the start stub's tests (cmc/tests/process_start.rs):
//! its output must be the same run directly and through the stub.

use std::collections::HashMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    println!("args={args:?}");
    println!("AAA={:?}", std::env::var("AAA"));
    println!("CMC_EXEC={:?}", std::env::var("CMC_EXEC").ok());
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() > 1_600_000_000);
    println!("time={since_epoch:?}");
    let start = Instant::now();
    // A HashMap's RandomState reads getrandom.
    let mut map = HashMap::new();
    for i in 0..100 {
        map.insert(i, i * i);
    }
    println!("map={}", map.values().sum::<i32>());
    println!("elapsed={}", start.elapsed().as_secs() < 60);
    std::process::exit(3);
}
