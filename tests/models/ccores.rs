//! The example C cores (`examples/ccores/`) as models: the correct
//! configurations linked into this binary as static libraries, pinned
//! with their counts (the Rust cores' own, and TLC's for `TwoPhase`), and
//! each `#if BUG_` site a build of its own, loaded as a shared object, with
//! the violation it plants.

use std::path::PathBuf;

use cmc::Kind;
use cmc::ccore::CModel;
use cmc_tests::ccores;

/// `examples/ccores/build/NAME`.
fn built(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/ccores/build").join(name)
}

pub mod two_phase {
    //! `c-two-phase`: `examples/ccores/two_phase.c`, the port of the Rust
    //! `two-phase`; the same counts as `two_phase::correct` and its
    //! neighbours.

    use super::*;

    /// The core with its properties, linked: as the Rust model, a commit
    /// is reachable unless a participant votes no.
    fn model(no_voter: u64) -> CModel {
        // SAFETY: a `struct cmc_core` the build links into this package.
        let core = ccores::core(unsafe { &ccores::two_phase_core });
        let mut m = CModel::new(core).unwrap_or_else(|e| panic!("{e}"));
        m.set("no_voter", no_voter).unwrap_or_else(|e| panic!("{e}"));
        for (name, f) in ccores::TWO_PHASE_ALWAYS {
            m = m.c_property(Kind::Always, name, f);
        }
        let (name, f) = ccores::TWO_PHASE_EVENTUALLY;
        m = m.c_property(Kind::Eventually, name, f);
        if no_voter != 0 {
            return m;
        }
        let (name, f) = ccores::TWO_PHASE_SOMETIMES;
        m.c_property(Kind::Sometimes, name, f)
    }

    /// A planted bug's build, `libtwo_phase-BUG_NAME.so`, with its own
    /// copies of the properties.
    fn bug(name: &str) -> CModel {
        let so = built(&format!("libtwo_phase-{name}.so"));
        let names = ["atomicity".to_string(), "commit_needs_all_yes".to_string()];
        CModel::load(&so, "cmc_core")
            .unwrap_or_else(|e| panic!("{e}"))
            .c_properties_from(Kind::Always, &so, &names)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[cmc::model(nodes = 3, crashes = 1)]
    fn correct() -> CModel {
        model(0)
    }

    #[cmc::model(nodes = 3, crashes = 1)]
    fn correct_with_a_no_voter() -> CModel {
        model(2)
    }

    #[cmc::model(nodes = 3, crashes = 2)]
    fn correct_with_two_crashes() -> CModel {
        model(0)
    }

    /// Symmetry, as the Rust `two_phase::four_nodes_by_symmetry`: the
    /// same 22,391 classes.
    #[cmc::model(nodes = 4, crashes = 1, symmetry)]
    fn four_nodes_by_symmetry() -> CModel {
        model(0)
    }

    #[cmc::model(nodes = 3, crashes = 1, expect = violation("commit_needs_all_yes"))]
    fn bug_commit_on_timeout() -> CModel {
        bug("BUG_COMMIT_ON_TIMEOUT")
    }

    #[cmc::model(nodes = 3, crashes = 1, expect = violation("atomicity"))]
    fn bug_no_persist_decision() -> CModel {
        bug("BUG_NO_PERSIST_DECISION")
    }
}

pub mod two_phase_tla {
    //! `c-two-phase-tla`: `examples/ccores/two_phase_tla.c`, Lamport's
    //! `TwoPhase` as a direct-actions core; TLC's counts (one worker,
    //! `-deadlock`): N=3 288 distinct, 1,146 generated, depth 11; N=7
    //! 296,448, 2,744,706, 23.

    use super::*;

    fn model(rms: u64) -> CModel {
        // SAFETY: a `struct cmc_core` the build links into this package.
        let core = ccores::core(unsafe { &ccores::two_phase_tla_core });
        let mut m = CModel::new(core).unwrap_or_else(|e| panic!("{e}"));
        m.set("rms", rms).unwrap_or_else(|e| panic!("{e}"));
        for (name, f) in ccores::TWO_PHASE_TLA_ALWAYS {
            m = m.c_property(Kind::Always, name, f);
        }
        m
    }

    #[cmc::model]
    fn n3() -> CModel {
        model(3)
    }

    #[cmc::model]
    fn n7() -> CModel {
        model(7)
    }
}
