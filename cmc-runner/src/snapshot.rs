//! Snapshots: one file per model under the target's snapshot folder, in
//! insta's format (a YAML header between `---` lines, then the text), so
//! that `cargo insta review` reviews them and a person reads them as any
//! insta snapshot.
//!
//! The runner compares and writes the files itself rather than through
//! insta's assertion macro: that macro fails by panicking (a backtrace per
//! model), cannot tell a new snapshot from a changed one in its message, and
//! names the runner's source file, not the user's. Here a new snapshot is
//! written beside the folder's others as `NAME.snap.new` and reported in one
//! line; a changed one gets a diff; the header names the user's test file.
//!
//! What is written follows insta's `INSTA_UPDATE` (`auto`, the default:
//! `.snap.new` files, none when `CI` is set; `new`; `always`: the `.snap`
//! itself; `no`: nothing), and `INSTA_FORCE_PASS=1` passes a model whose
//! snapshot differs, as under `cargo insta test`.

use std::path::{Path, PathBuf};

use cmc::Report;

/// The snapshot's text: stable across runs, machines and thread counts (no
/// times, no paths). `header` is the model's own description
/// ([`cmc::catalog::DynModel::header`]).
pub fn text(name: &str, header: &[(&'static str, String)], r: &Report) -> String {
    let mut s = format!("model: {name}\n");
    for (key, value) in header {
        s.push_str(&format!("{key}: {value}\n"));
    }
    s.push_str(&format!("search: {}\n", r.search));
    s.push_str(&format!("verdict: {}\n", r.verdict.name()));
    if let (Some(p), Some(k)) = (&r.property, r.kind) {
        s.push_str(&format!("property: {p} ({k})\n"));
    }
    if let Some(reason) = &r.reason {
        s.push_str(&format!("reason: {reason}\n"));
    }
    if let Some(note) = r.never_checked_note() {
        s.push_str(&format!("{note}\n"));
    }
    s.push_str(&format!(
        "distinct states: {}\ngenerated states: {}\ndepth: {}\n",
        r.distinct_states, r.generated_states, r.depth
    ));
    if !r.trace.is_empty() {
        s.push_str(&format!("counterexample ({}):\n", cmc::report::states(r.trace.len() as u64, "state")));
        cmc::report::render_trace(&mut s, &r.trace);
    }
    s
}

/// The file name's stem of a model's snapshot: `raft::three_nodes` is
/// `raft__three_nodes.snap`.
pub fn stem(model: &str) -> String {
    model.replace("::", "__")
}

/// What to write when a snapshot is new or differs (insta's `INSTA_UPDATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// `NAME.snap.new`, for review.
    New,
    /// `NAME.snap` itself.
    Always,
    /// Nothing (`CI` set, or `INSTA_UPDATE=no`).
    No,
}

/// How snapshots are compared and written, from the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `INSTA_UPDATE`: what is written when a snapshot is new or differs.
    pub update: Update,
    /// `INSTA_FORCE_PASS`: a differing snapshot does not fail the model.
    pub force_pass: bool,
    /// `CI` is set: said in messages, so they do not point at files that
    /// were not written.
    pub ci: bool,
}

impl Policy {
    /// Reads `INSTA_UPDATE`, `INSTA_FORCE_PASS` and `CI`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Policy, String> {
        let ci = var("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
        let update = match var("INSTA_UPDATE").as_deref() {
            None | Some("") | Some("auto") if ci => Update::No,
            None | Some("") | Some("auto") | Some("new") => Update::New,
            // insta's `force` rewrites every snapshot, as `always` here;
            // its `unseen` (new ones as `.snap`) is taken as `new`: here
            // every snapshot written is one to review.
            Some("always") | Some("1") | Some("force") => Update::Always,
            Some("unseen") => Update::New,
            Some("no") | Some("0") => Update::No,
            Some(other) => {
                return Err(format!("INSTA_UPDATE={other}: expected auto, new, unseen, always, force or no"));
            }
        };
        let force_pass = var("INSTA_FORCE_PASS").is_some_and(|v| v == "1" || v == "true");
        Ok(Policy { update, force_pass, ci })
    }
}

/// Where a model's snapshot lives and what its header says.
pub struct Snapshot<'a> {
    /// The snapshot folder.
    pub dir: &'a Path,
    /// The model's name.
    pub model: &'a str,
    /// The user's file that declares the model (`file!()`).
    pub source: &'a str,
}

/// The outcome of comparing a model's snapshot.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The stored snapshot has this text.
    Same,
    /// The snapshot was written (`INSTA_UPDATE=always`).
    Accepted(PathBuf),
    /// There is no stored snapshot; `written` is the `.snap.new` (or `None`
    /// when nothing was written).
    New {
        /// The `.snap.new` written, if any.
        written: Option<PathBuf>,
    },
    /// The stored snapshot differs: `diff` is a unified diff, old to new.
    Differs {
        /// A unified diff, old to new.
        diff: String,
        /// The `.snap.new` written, if any.
        written: Option<PathBuf>,
    },
}

impl Snapshot<'_> {
    /// `NAME.snap` in the folder.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.snap", stem(self.model)))
    }

    fn new_path(&self) -> PathBuf {
        self.dir.join(format!("{}.snap.new", stem(self.model)))
    }

    /// The file's bytes: insta's header, then `text`.
    pub fn file(&self, text: &str) -> String {
        format!(
            "---\nsource: {}\ndescription: {}\n---\n{}\n",
            yaml_string(self.source),
            yaml_string(&format!("cmc model {}", self.model)),
            text.trim_end()
        )
    }

    /// Compares `text` with the stored snapshot and writes as `policy`
    /// says. A `.snap.new` left by an earlier run is removed when the text
    /// is the stored one again.
    pub fn check(&self, text: &str, policy: Policy) -> Result<Outcome, String> {
        let path = self.path();
        let stored = match std::fs::read_to_string(&path) {
            // A checkout with CRLF line ends (Windows' core.autocrlf) reads
            // the same.
            Ok(s) => Some(body(&s.replace("\r\n", "\n")).map_err(|e| format!("{}: {e}", path.display()))?.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("reading {}: {e}", path.display())),
        };
        if stored.as_deref().map(str::trim_end) == Some(text.trim_end()) {
            let stale = self.new_path();
            if stale.exists() {
                std::fs::remove_file(&stale).map_err(|e| format!("removing {}: {e}", stale.display()))?;
            }
            return Ok(Outcome::Same);
        }
        let target = match policy.update {
            Update::Always => Some(path.clone()),
            Update::New => Some(self.new_path()),
            Update::No => None,
        };
        if let Some(t) = &target {
            std::fs::create_dir_all(self.dir)
                .and_then(|()| std::fs::write(t, self.file(text)))
                .map_err(|e| format!("writing {}: {e}", t.display()))?;
        }
        Ok(match (stored, policy.update) {
            (_, Update::Always) => Outcome::Accepted(path),
            (None, _) => Outcome::New { written: target },
            (Some(old), _) => Outcome::Differs { diff: diff(&old, text), written: target },
        })
    }
}

/// The text after the header of an insta snapshot file.
fn body(file: &str) -> Result<&str, String> {
    let Some(rest) = file.strip_prefix("---\n") else {
        // insta accepts a file with no header too.
        return Ok(file);
    };
    match rest.find("\n---\n") {
        Some(end) => Ok(&rest[end + 5..]),
        None => Err("not a snapshot file: its header (after the first `---`) has no closing `---`".to_string()),
    }
}

/// A YAML scalar: plain when it cannot be misread, double-quoted otherwise.
fn yaml_string(s: &str) -> String {
    let plain = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-./".contains(&b));
    if plain {
        return s.to_string();
    }
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A unified diff of two snapshot texts, `-` old, `+` new.
pub fn diff(old: &str, new: &str) -> String {
    let (old, new) = (format!("{}\n", old.trim_end()), format!("{}\n", new.trim_end()));
    similar::TextDiff::from_lines(&old, &new).unified_diff().context_radius(3).header("stored", "this run").to_string()
}

/// The `.snap` files in `dir` whose model is not in `models` (names), sorted.
pub fn unreferenced(dir: &Path, models: &[String]) -> Vec<PathBuf> {
    let known: std::collections::HashSet<String> = models.iter().map(|m| format!("{}.snap", stem(m))).collect();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "snap"))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !known.contains(n)))
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test's own empty directory, removed with it.
    struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cmc-snapshot-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    const NEW: Policy = Policy { update: Update::New, force_pass: false, ci: false };

    #[test]
    fn a_new_snapshot_is_written_for_review_and_then_matches_once_accepted() {
        let dir = scratch("new");
        let s = Snapshot { dir: &dir, model: "m::a", source: "tests/models.rs" };
        let out = s.check("verdict: pass\n", NEW).unwrap();
        let written = dir.join("m__a.snap.new");
        assert_eq!(out, Outcome::New { written: Some(written.clone()) });
        let file = std::fs::read_to_string(&written).unwrap();
        assert_eq!(file, "---\nsource: tests/models.rs\ndescription: \"cmc model m::a\"\n---\nverdict: pass\n");
        std::fs::rename(&written, s.path()).unwrap();
        assert_eq!(s.check("verdict: pass\n", NEW).unwrap(), Outcome::Same);
    }

    #[test]
    fn a_changed_snapshot_gives_a_diff_and_a_stale_new_file_goes_when_it_matches_again() {
        let dir = scratch("diff");
        let s = Snapshot { dir: &dir, model: "b", source: "t.rs" };
        std::fs::write(s.path(), s.file("depth: 3\nstates: 9\n")).unwrap();
        let Outcome::Differs { diff, written } = s.check("depth: 3\nstates: 10\n", NEW).unwrap() else { panic!() };
        assert!(diff.contains("-states: 9\n+states: 10\n"), "{diff}");
        assert_eq!(written, Some(dir.join("b.snap.new")));
        assert_eq!(s.check("depth: 3\nstates: 9", NEW).unwrap(), Outcome::Same);
        std::fs::write(s.path(), s.file("depth: 3\nstates: 9\n").replace('\n', "\r\n")).unwrap();
        assert_eq!(s.check("depth: 3\nstates: 9\n", NEW).unwrap(), Outcome::Same, "CRLF line ends");
        assert!(!dir.join("b.snap.new").exists());
    }

    #[test]
    fn under_ci_nothing_is_written_and_always_writes_the_snapshot_itself() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            Policy::from_env(|k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())).unwrap()
        };
        assert_eq!(env(&[("CI", "true")]).update, Update::No);
        assert_eq!(env(&[]).update, Update::New);
        assert_eq!(env(&[("CI", "1"), ("INSTA_UPDATE", "always")]).update, Update::Always);
        assert!(Policy::from_env(|k| (k == "INSTA_UPDATE").then(|| "maybe".to_string())).is_err());
        assert_eq!(env(&[("INSTA_UPDATE", "force")]).update, Update::Always);
        assert_eq!(env(&[("INSTA_UPDATE", "unseen")]).update, Update::New);
        let dir = scratch("ci");
        let s = Snapshot { dir: &dir, model: "c", source: "t.rs" };
        let out = s.check("x\n", env(&[("CI", "true")])).unwrap();
        assert_eq!(out, Outcome::New { written: None });
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        assert_eq!(s.check("x\n", env(&[("INSTA_UPDATE", "always")])).unwrap(), Outcome::Accepted(s.path()));
        assert_eq!(s.check("x\n", NEW).unwrap(), Outcome::Same);
    }

    #[test]
    fn snapshots_of_no_declared_model_are_found() {
        let dir = scratch("unref");
        for f in ["a.snap", "m__b.snap", "gone.snap", "gone.snap.new", "notes.txt"] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let found = unreferenced(&dir, &["a".to_string(), "m::b".to_string()]);
        assert_eq!(found, vec![dir.join("gone.snap")]);
    }

    #[test]
    fn the_header_is_read_past_and_a_quoted_description_is_yaml() {
        assert_eq!(body("---\nsource: x\n---\nbody\n").unwrap(), "body\n");
        assert_eq!(body("plain\n").unwrap(), "plain\n");
        assert!(body("---\nsource: x\nbody\n").is_err());
        assert_eq!(yaml_string("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"");
    }
}
