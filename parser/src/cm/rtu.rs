//! RTU (ReadyToUse, attribute 0x0014): the active side confirms the connection.
//!
//! Layout (from the start of the MAD data): 0 Local Comm ID, 4 Remote Comm ID, 8 Private Data
//! (224).

use super::ids_and_data::ids_and_private_data;
use super::{clipped, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

ids_and_private_data!("RTU", "n", Rtu, RtuRepr, RTU_PRIVATE_DATA_LEN);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_emit_literal_rtu() {
        // read2.pcap frame 6.
        let mut data = [0u8; 232];
        data[..8].copy_from_slice(&[0x73, 0xef, 0x75, 0x29, 0xd6, 0x5b, 0x8b, 0x76]);
        data[8] = 0x42;
        let r = RtuRepr::parse(&Rtu::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!((r.local_comm_id, r.remote_comm_id), (0x73ef_7529, 0xd65b_8b76));
        assert_eq!(r.private_data.len(), 224);
        assert_eq!(r.private_data[0], 0x42);
        let mut out = [0xEEu8; 232];
        r.emit(&mut Rtu::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(RtuRepr::parse(&Rtu::new_unchecked(&data[..7])).is_err());
        let new = RtuRepr::new(0x73ef_7529, 0xd65b_8b76);
        let mut out2 = [0u8; 232];
        new.emit(&mut Rtu::new_unchecked(&mut out2[..]));
        assert_eq!(out2[..8], data[..8]);
        assert!(out2[8..].iter().all(|&b| b == 0));
    }
}
