//! A capture to write slowly into a pipe or a growing file (cli/tests/live.rs,
//! cli/tests/follow.rs).

use std::net::{IpAddr, Ipv4Addr};

use roce_inspect::internal::gen::{Endpoint, RcConn, Trace};

/// A pcap of 10 SENDs with their ACKs (20 frames), the ICRC of frame 5 (the third SEND)
/// broken; split into the file header and one slice per frame record.
pub fn capture() -> (Vec<u8>, Vec<Vec<u8>>) {
    let ip = |d| IpAddr::V4(Ipv4Addr::new(10, 9, 0, d));
    let mut t = Trace::new();
    let mut c =
        RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000);
    for _ in 0..10 {
        c.send_or_write(&mut t, true, false, 16, None);
    }
    let f = &mut t.frames[4].data;
    let last = f.len() - 1;
    f[last] ^= 0xff;
    let mut bytes = Vec::new();
    t.write_pcap(&mut bytes).unwrap();
    let (header, mut rest) = bytes.split_at(24);
    let mut records = Vec::new();
    while !rest.is_empty() {
        let caplen = u32::from_be_bytes(rest[8..12].try_into().unwrap()) as usize; // big-endian pcap
        let (rec, tail) = rest.split_at(16 + caplen);
        records.push(rec.to_vec());
        rest = tail;
    }
    assert_eq!(records.len(), 20);
    (header.to_vec(), records)
}
