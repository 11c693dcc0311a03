//! `struct cmc_view` in `cmc.h` and `cmc::process::CmcView` have one layout:
//! a C compiler reports the sizes and offsets, Rust must agree.
#![cfg(target_os = "linux")]

mod process_support;

use std::mem::{offset_of, size_of};
use std::process::Command;

use cmc::process::view::{CmcNodeView, CmcRecord, CmcReply};
use cmc::process::{Budgets, CmcView, ProcessWorld};

const PRINTER: &str = r#"
#include "cmc.h"
#include <stddef.h>
#include <stdio.h>
int main(void)
{
    printf("%zu %zu %zu %zu\n", sizeof(struct cmc_view), sizeof(struct cmc_node_view),
           sizeof(struct cmc_record), sizeof(struct cmc_reply));
    printf("%zu %zu %zu %zu %zu %zu\n", offsetof(struct cmc_view, version), offsetof(struct cmc_view, nodes),
           offsetof(struct cmc_view, clock), offsetof(struct cmc_view, replies), offsetof(struct cmc_view, node),
           offsetof(struct cmc_view, reply));
    printf("%zu %zu %zu %zu %zu\n", offsetof(struct cmc_node_view, life), offsetof(struct cmc_node_view, has_durable),
           offsetof(struct cmc_node_view, status), offsetof(struct cmc_node_view, state),
           offsetof(struct cmc_node_view, durable));
    printf("%zu %zu %zu\n", offsetof(struct cmc_reply, node), offsetof(struct cmc_reply, len),
           offsetof(struct cmc_reply, bytes));
    return 0;
}
"#;

#[test]
fn cmc_h_and_rust_agree_on_the_view_layout() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("view");
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("layout.c"), PRINTER).expect("write");
    let out = Command::new("cc")
        .arg("-I")
        .arg(process_support::repo())
        .arg(dir.join("layout.c"))
        .arg("-o")
        .arg(dir.join("layout"))
        .output()
        .expect("cc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(dir.join("layout")).output().expect("runs");
    let c = String::from_utf8(out.stdout).expect("text");
    let rust = format!(
        "{} {} {} {}\n{} {} {} {} {} {}\n{} {} {} {} {}\n{} {} {}\n",
        size_of::<CmcView>(),
        size_of::<CmcNodeView>(),
        size_of::<CmcRecord>(),
        size_of::<CmcReply>(),
        offset_of!(CmcView, version),
        offset_of!(CmcView, nodes),
        offset_of!(CmcView, clock),
        offset_of!(CmcView, replies),
        offset_of!(CmcView, node),
        offset_of!(CmcView, reply),
        offset_of!(CmcNodeView, life),
        offset_of!(CmcNodeView, has_durable),
        offset_of!(CmcNodeView, status),
        offset_of!(CmcNodeView, state),
        offset_of!(CmcNodeView, durable),
        offset_of!(CmcReply, node),
        offset_of!(CmcReply, len),
        offset_of!(CmcReply, bytes),
    );
    assert_eq!(c, rust);
}

#[test]
fn a_view_shows_states_durables_clock_and_replies() {
    let mut w = ProcessWorld::new(2, &Budgets::default());
    w.clock = 3_400;
    w.nodes[1].state = vec![1, 2, 3];
    w.nodes[1].durable = Some(vec![9]);
    w.replies.push((1, b"ok".to_vec()));
    let v = CmcView::of(&w);
    assert_eq!((v.version, v.nodes, v.clock, v.replies), (1, 2, 3, 1));
    assert_eq!(v.node[1].state.len, 3);
    assert_eq!(v.node[1].state.bytes[..3], [1, 2, 3]);
    assert_eq!((v.node[1].has_durable, v.node[1].durable.len, v.node[1].durable.bytes[0]), (1, 1, 9));
    assert_eq!(v.node[0].has_durable, 0);
    assert_eq!((v.reply[0].node, v.reply[0].len, &v.reply[0].bytes[..2]), (1, 2, &b"ok"[..]));
}
