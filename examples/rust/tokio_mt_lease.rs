//! tokio_mt_lease: `tokio_lease.rs` on tokio's multi-thread runtime,
//! `#[tokio::main]` as most services write it: a worker thread per
//! processor (the checker's node runs on one: one worker) beside the main
//! thread, which runs `main`'s future and parks on a futex between its
//! wakes. The service is `tokio_lease.rs`'s, unchanged;
//! `tests/models/tokio_lease.rs` checks both builds.

#[path = "tokio_lease.rs"]
#[allow(dead_code)]
mod service;

#[tokio::main]
async fn main() {
    service::run().await
}
