//! The preload library of the process front end. Not implemented yet
//! (issue 4); the crate exists so that the workspace has its final layout.
