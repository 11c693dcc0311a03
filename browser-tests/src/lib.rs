//! Headless Chromium for cmc's browser tests: one browser per test, with a
//! fresh profile, no sandbox (CI runs as root), no GPU, no background
//! networking (the machine has no network to offer it), and a viewport of
//! a known size, so that what a test reads and what a screenshot shows do
//! not depend on the machine.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use headless_chrome::{Browser, LaunchOptions, Tab};

/// Where Chromium is: `$CMC_CHROMIUM`, or Debian's binary (called directly:
/// its wrapper script adds flags of its own).
pub fn chromium() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CMC_CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    for p in ["/usr/lib/chromium/chromium", "/usr/bin/chromium"] {
        if Path::new(p).is_file() {
            return Ok(PathBuf::from(p));
        }
    }
    bail!(
        "no Chromium: install it (apt-get install -y chromium fonts-liberation, which scripts/browser_tests.sh does) \
         or set CMC_CHROMIUM"
    )
}

/// A browser and its profile folder, removed with it.
pub struct Headless {
    pub browser: Browser,
    profile: PathBuf,
}

impl Drop for Headless {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Starts Chromium with a `width` by `height` window.
pub fn launch(width: u32, height: u32) -> Result<Headless> {
    let profile =
        std::env::temp_dir().join(format!("cmc-browser-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).with_context(|| format!("creating {}", profile.display()))?;
    let browser = Browser::new(LaunchOptions {
        path: Some(chromium()?),
        headless: true,
        sandbox: false,
        window_size: Some((width, height)),
        user_data_dir: Some(profile.clone()),
        idle_browser_timeout: Duration::from_secs(120),
        args: [
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ]
        .iter()
        .map(OsStr::new)
        .collect(),
        ..Default::default()
    })
    .context("starting Chromium")?;
    Ok(Headless { browser, profile })
}

/// Opens `file` in a new tab and waits for it to load.
pub fn open(h: &Headless, file: &Path) -> Result<std::sync::Arc<Tab>> {
    let tab = h.browser.new_tab()?;
    let url = format!("file://{}", file.display());
    tab.navigate_to(&url)?.wait_until_navigated()?;
    Ok(tab)
}

/// Evaluates `js` in `tab` and returns its value (JSON).
pub fn eval(tab: &Tab, js: &str) -> Result<serde_json::Value> {
    let r = tab.evaluate(js, false).with_context(|| format!("evaluating {js}"))?;
    Ok(r.value.unwrap_or(serde_json::Value::Null))
}

/// Writes a PNG screenshot of what `tab` shows to `file`, for people (the
/// tests assert on the page, never on pixels).
pub fn screenshot(tab: &Tab, file: &Path) -> Result<()> {
    use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
    let png = tab.capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)?;
    std::fs::write(file, png).with_context(|| format!("writing {}", file.display()))
}
