//! `#[cmc::model(...)]`: declares a model as a test. Not implemented yet
//! (issue 3); the crate exists so that the workspace has its final layout.
