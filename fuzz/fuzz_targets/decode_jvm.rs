#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bloomkit_fuzz::decode_jvm(data));
