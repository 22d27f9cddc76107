#![no_main]
libfuzzer_sys::fuzz_target!(init: icefloe::fuzz::install_panic_hook(), |data: &[u8]| icefloe::fuzz::parquet_read(data));
