//! `cmc explore`: serves a model to the browser, one action at a time
//! (`cmc_runner::explore`): an example core by name, with the settings and
//! environment `cmc check` takes, or a program by its model file.

use std::path::PathBuf;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;

use cmc::catalog::DynModel;

use crate::cli::ModelArgs;

/// The arguments of `cmc explore`.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// The example core to explore (see `cmc check --list`).
    #[arg(required_unless_present = "model_file", conflicts_with = "model_file")]
    name: Option<String>,
    /// Explore the program or C core a model file (TOML) names instead.
    #[arg(long, value_name = "FILE")]
    model_file: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// The port to serve on, on 127.0.0.1 only (0: any free port).
    #[arg(long, default_value_t = 3000)]
    port: u16,
}

/// Serves the model until the process is stopped; returns an exit code
/// only when it cannot start.
pub fn run(args: &ExploreArgs) -> Result<u8> {
    let (model, title): (Box<dyn DynModel>, String) = match (&args.name, &args.model_file) {
        (Some(name), None) => {
            let catalog = cmc_examples::catalog();
            let entry = catalog
                .iter()
                .find(|e| e.name == name)
                .ok_or_else(|| anyhow!("unknown core `{name}` (cmc check --list shows them)"))?;
            let overrides = args.model.overrides()?;
            (entry.build(&overrides)?, name.clone())
        }
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            if cmc::ccore::model_file::names_core(&text) {
                let m = cmc::ccore::model_file::read(file)?;
                (m.model, m.name)
            } else {
                let m = cmc::process::model_file::read(file)?;
                let title = m.model.name.clone();
                (Box::new(m.model), title)
            }
        }
        _ => bail!("give a core's name or --model-file FILE"),
    };
    cmc_runner::explore::serve(&*model, &title, args.port, |address| {
        // The one line a script waits for: where to point the browser.
        println!("cmc explore: serving {title} at http://{address}/ (Ctrl-C to stop)");
    })
    .map_err(|e| anyhow!(e))
    .context("cmc explore")?;
    Ok(0)
}
