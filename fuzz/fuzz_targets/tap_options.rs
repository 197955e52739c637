#![no_main]
//! See roce_fuzz_common::targets::tap_options.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    roce_fuzz_common::targets::tap_options(data, &mut roce_fuzz_common::Reach::default());
});
