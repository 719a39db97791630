//! Fuzzes the config-store wire format: any bytes given to the frame decoder, to the incremental
//! frame reader (in arbitrary chunks), and decoded messages re-encoded must never panic, and a
//! decoded message must survive an encode/decode round trip unchanged.
#![no_main]

// the wire format's source file alone (it uses std only): the fuzz build then compiles none of the
// library's dependencies (with them, about 60 s of instrumented build in CI)
#[path = "../../crates/core/src/bootstrap/config_store/protocol.rs"]
#[allow(dead_code)]
mod protocol;

use protocol::{FrameReader, MAX_REQUEST_FRAME, decode, encode, frame_len};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(msg) = decode(data) {
        let frame = encode(&msg);
        let n = frame_len(frame[..4].try_into().unwrap(), usize::MAX).unwrap();
        assert_eq!(n, frame.len() - 4);
        assert_eq!(decode(&frame[4..]).unwrap(), msg);
    }
    // the same bytes as a stream, cut at a place the input chooses
    let cut = data.first().map_or(0, |&b| b as usize % (data.len() + 1));
    let mut reader = FrameReader::new(MAX_REQUEST_FRAME);
    for mut chunk in [&data[..cut], &data[cut..]] {
        while let Ok(Some(_)) = reader.poll(&mut chunk) {}
    }
});
