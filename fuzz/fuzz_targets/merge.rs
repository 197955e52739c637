#![no_main]
//! See roce_fuzz_common::targets::merge.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    roce_fuzz_common::targets::merge(data, &mut roce_fuzz_common::Reach::default());
});
