use cmc::{Options, Settings as _, check};
use cmc_examples::two_phase_tla;

#[test]
fn two_phase_tla_n3_matches_tlc() {
    let mut s = two_phase_tla::TwoPhaseTlaSettings::default();
    s.set("rms", 3).unwrap();
    let r = check(&two_phase_tla::model(s), &Options::default()).unwrap();
    println!("{}", r.to_text());
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (288, 1146, 11));
}

#[test]
#[ignore = "timing probe"]
fn two_phase_tla_n8() {
    for n in [7, 8] {
        let mut s = two_phase_tla::TwoPhaseTlaSettings::default();
        s.set("rms", n).unwrap();
        let t = std::time::Instant::now();
        let r = check(&two_phase_tla::model(s), &Options::default()).unwrap();
        println!("{} {:?}", r.summary(), t.elapsed());
    }
}
