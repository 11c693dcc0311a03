//! The manual pages against the code they describe: `docs/man/cmc.1` lists
//! every subcommand and every long option of the command's definition
//! (`cmc_cli::cli::command`), each under its own subcommand, and no option
//! that does not exist; `docs/man/cmc-model.5` lists every key a program's
//! model file may have under KEYS, and every key a C core's may have under
//! C CORE KEYS, and no other. Rendering them cleanly is
//! `scripts/man_gate.sh`'s (mandoc), which this test does not need.

use std::collections::BTreeSet;
use std::path::Path;

fn page(name: &str) -> String {
    let path = format!("{}/../docs/man/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The page's `.Ss` subsections: (heading, the lines up to the next `.Ss`
/// or `.Sh`).
fn subsections(page: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    let mut open = false;
    for line in page.lines() {
        if let Some(heading) = line.strip_prefix(".Ss ") {
            out.push((heading.trim_matches('"').to_string(), Vec::new()));
            open = true;
        } else if line.starts_with(".Sh ") {
            open = false;
        } else if open && let Some((_, lines)) = out.last_mut() {
            lines.push(line);
        }
    }
    out
}

/// The long options a subsection lists as items: `.It Fl -NAME ...`, and
/// each further `Fl -NAME` on such a line (`.It Fl -help , Fl h`).
fn listed_options(lines: &[&str]) -> BTreeSet<String> {
    let mut options = BTreeSet::new();
    for line in lines.iter().filter(|l| l.starts_with(".It ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0] == "Fl"
                && let Some(name) = pair[1].strip_prefix('-')
                && name.len() > 1
            {
                options.insert(name.to_string());
            }
        }
    }
    options
}

/// The long options of `command` (clap's `--help` and `--version`
/// included).
fn long_options(command: &clap::Command) -> BTreeSet<String> {
    command.get_arguments().filter_map(|a| a.get_long()).map(str::to_string).collect()
}

#[test]
fn cmc_1_lists_every_subcommand_and_long_option_under_its_subcommand() {
    let mut command = cmc_cli::cli::command();
    command.build();
    let page = page("cmc.1");
    let sections = subsections(&page);
    let section = |heading: &str| -> &Vec<&str> {
        &sections
            .iter()
            .find(|(h, _)| h == heading)
            .unwrap_or_else(|| panic!("cmc.1 has no subsection `.Ss {heading}`"))
            .1
    };
    let check = |heading: &str, expected: BTreeSet<String>| {
        let listed = listed_options(section(heading));
        let missing: Vec<_> = expected.difference(&listed).collect();
        assert!(missing.is_empty(), "cmc.1, `.Ss {heading}`: no `.It Fl -...` item for {missing:?}");
        let unknown: Vec<_> = listed.difference(&expected).collect();
        assert!(unknown.is_empty(), "cmc.1, `.Ss {heading}`: items for options the command lacks: {unknown:?}");
    };

    // The top-level options: `--model-file` and those that need it under
    // their own subsection, `--help` and `--version` under `cmc help`.
    let top = long_options(&command);
    let (help, model_file): (BTreeSet<String>, BTreeSet<String>) =
        top.into_iter().partition(|o| o == "help" || o == "version");
    check("cmc --model-file FILE", model_file);
    check("cmc help", help);

    let synopsis: Vec<&str> =
        page.lines().skip_while(|l| *l != ".Sh SYNOPSIS").skip(1).take_while(|l| !l.starts_with(".Sh ")).collect();
    let mut subcommands = 0;
    for sub in command.get_subcommands() {
        let name = sub.get_name();
        subcommands += 1;
        assert!(
            synopsis.iter().any(|l| *l == format!(".Cm {name}")),
            "cmc.1: the SYNOPSIS has no `.Cm {name}` line for the subcommand `{name}`"
        );
        if name == "help" {
            continue; // clap's own: its options are `--help` and `--version`
        }
        // `--help` is every subcommand's, and said once, under `cmc help`.
        let options = long_options(sub).into_iter().filter(|o| o != "help").collect();
        check(&format!("cmc {name}"), options);
    }
    assert!(subcommands >= 5, "the command has check, replay, calibrate, explore and help; found {subcommands}");
}

/// The keys named in serde's error for an unknown key: the reader denies
/// unknown fields, and its error for one lists every field it knows
/// ("expected one of `a`, `b`, ...").
fn keys_from_error(error: &str) -> BTreeSet<String> {
    let (_, expected) = error.split_once("expected").unwrap_or_else(|| panic!("no list of keys in: {error}"));
    expected.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The keys a program's model file may have, as the reader itself lists
/// them.
fn model_file_keys() -> BTreeSet<String> {
    let error = cmc::process::model_file::parse("not_a_key_of_any_model_file = 1\n", Path::new("x.toml"))
        .expect_err("an unknown key is an error")
        .to_string();
    let keys = keys_from_error(&error);
    assert!(keys.contains("program") && keys.contains("invariants"), "keys read from `{error}`: {keys:?}");
    keys
}

/// The keys a C core's model file may have, as its reader lists them.
#[cfg(target_os = "linux")]
fn core_model_file_keys() -> BTreeSet<String> {
    let text = "core = \"lib.so\"\nnot_a_key_of_any_model_file = 1\n";
    let error =
        cmc::ccore::model_file::parse(text, Path::new("x.toml")).expect_err("an unknown key is an error").to_string();
    let keys = keys_from_error(&error);
    assert!(
        keys.contains("core") && keys.contains("core_symbol") && keys.contains("settings"),
        "keys read from `{error}`: {keys:?}"
    );
    keys
}

/// The keys a page's section `.Sh HEADING` lists as items, `.It Cm KEY
/// ...`, up to the next `.Sh`.
fn listed_keys(page: &str, heading: &str) -> BTreeSet<String> {
    let section: Vec<&str> = page
        .lines()
        .skip_while(|l| *l != format!(".Sh {heading}"))
        .skip(1)
        .take_while(|l| !l.starts_with(".Sh "))
        .collect();
    assert!(!section.is_empty(), "cmc-model.5 has no `.Sh {heading}` section");
    section
        .iter()
        .filter_map(|l| l.strip_prefix(".It Cm "))
        .map(|rest| rest.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

/// Whether the section `heading` of cmc-model.5 lists `keys`, all of them
/// and no other.
fn check_keys(heading: &str, keys: &BTreeSet<String>) {
    let listed = listed_keys(&page("cmc-model.5"), heading);
    let missing: Vec<_> = keys.difference(&listed).collect();
    assert!(missing.is_empty(), "cmc-model.5, {heading}: no `.It Cm KEY` item for {missing:?}");
    let unknown: Vec<_> = listed.difference(keys).collect();
    assert!(unknown.is_empty(), "cmc-model.5, {heading}: items for keys a model file cannot have: {unknown:?}");
}

#[test]
fn cmc_model_5_lists_every_model_file_key_and_no_other() {
    check_keys("KEYS", &model_file_keys());
}

#[cfg(target_os = "linux")]
#[test]
fn cmc_model_5_lists_every_c_core_model_file_key_and_no_other() {
    let keys = core_model_file_keys();
    // The two readers differ: the check has teeth only if each section is
    // held to its own list.
    assert_ne!(keys, model_file_keys(), "the C core reader's keys are the program reader's");
    check_keys("C CORE KEYS", &keys);
}
