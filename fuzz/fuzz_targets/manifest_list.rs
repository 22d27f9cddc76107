#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| icefloe::fuzz::manifest_list(data));
