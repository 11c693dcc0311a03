//! The runner: runs models for the `cmc` command (and, later, for test
//! targets), owning what the engine does not: files, clocks, terminals.
