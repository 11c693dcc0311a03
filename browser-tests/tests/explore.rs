//! `cmc explore` in a browser: a planted bug's counterexample reproduced by
//! clicks alone, each click on the button of the counterexample's next
//! action, until the page says the property fails.

use std::time::{Duration, Instant};

use cmc::{Options, Verdict, check};
use cmc_browser_tests::{eval, launch, screenshot};
use cmc_examples::lock_service;

fn model() -> cmc::Model<lock_service::LockService> {
    lock_service::model(lock_service::LockServiceSettings { bug_lost_wakeup: 1, ..Default::default() })
}

/// Polls `js` in `tab` until it gives `want`, for at most 10 s.
fn wait_for(tab: &headless_chrome::Tab, js: &str, want: &serde_json::Value) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = eval(tab, js)?;
        if &got == want {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "`{js}` gave {got}, not {want}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_planted_bug_is_reproduced_in_the_explorer_by_clicks_alone() -> anyhow::Result<()> {
    // The counterexample a search finds: what the clicks must reproduce.
    let found = check(&model(), &Options::default()).expect("a valid model");
    assert_eq!(found.verdict, Verdict::Violation);
    let property = found.property.clone().expect("a property");

    // The explorer, on a free port, on a thread of its own.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let model = model();
        let served = cmc_runner::explore::serve(&model, "lock-service", 0, |address| {
            let _ = tx.send(address);
        });
        panic!("the explorer stopped: {served:?}");
    });
    let address = rx.recv_timeout(Duration::from_secs(10))?;

    let h = launch(1400, 1000)?;
    let tab = h.browser.new_tab()?;
    tab.navigate_to(&format!("http://{address}/"))?.wait_until_navigated()?;
    for (k, step) in found.trace.iter().enumerate() {
        let selector = format!("button.action[data-token=\"{}\"]", step.action);
        tab.wait_for_element(&selector)?.click()?;
        let title = serde_json::json!(format!("lock-service (step {})", k + 1));
        wait_for(&tab, "document.getElementById('title').textContent", &title)?;
    }
    // The page says the property fails, and draws every step.
    let holds = format!("document.querySelector('li[data-property=\"{property}\"]').dataset.holds");
    wait_for(&tab, &holds, &serde_json::json!("false"))?;
    let rows = eval(&tab, "document.querySelectorAll('#chart svg text.step').length")?;
    assert_eq!(rows.as_u64(), Some(found.trace.len() as u64));
    // Back and forward walk the same path.
    tab.find_element("#back")?.click()?;
    let title = serde_json::json!(format!("lock-service (step {})", found.trace.len() - 1));
    wait_for(&tab, "document.getElementById('title').textContent", &title)?;
    tab.find_element("#forward")?.click()?;
    wait_for(&tab, &holds, &serde_json::json!("false"))?;

    // A counterexample file loads to its start, and forward steps through
    // it to the same end.
    tab.find_element("#restart")?.click()?;
    wait_for(&tab, "document.getElementById('title').textContent", &serde_json::json!("lock-service (step 0)"))?;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore");
    std::fs::create_dir_all(&dir)?;
    let cex = dir.join("lock-service-bug_lost_wakeup.cex.json");
    std::fs::write(&cex, found.counterexample().expect("a counterexample").to_json())?;
    // As a person loads it: through the page's file input.
    tab.find_element("#load")?.set_input_files(&[cex.to_str().expect("a UTF-8 path")])?;
    wait_for(&tab, "document.getElementById('forward').disabled", &serde_json::json!(false))?;
    for k in 0..found.trace.len() {
        tab.find_element("#forward")?.click()?;
        let title = serde_json::json!(format!("lock-service (step {})", k + 1));
        wait_for(&tab, "document.getElementById('title').textContent", &title)?;
    }
    wait_for(&tab, &holds, &serde_json::json!("false"))?;
    let forward = eval(&tab, "document.getElementById('forward').disabled")?;
    assert_eq!(forward, serde_json::json!(true), "the end of the file");

    screenshot(&tab, &dir.join("lock-service-bug_lost_wakeup.png"))?;
    Ok(())
}
