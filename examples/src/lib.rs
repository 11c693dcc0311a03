//! Example protocol cores.
