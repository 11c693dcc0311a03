#[tokio::main]
async fn main() {
    let h = tokio::spawn(async { 7u32 });
    let v = h.await.unwrap();
    eprintln!("spawned task returned {v}");
}
