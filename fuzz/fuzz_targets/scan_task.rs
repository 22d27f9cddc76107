#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| icefloe::fuzz::scan_task(data));
