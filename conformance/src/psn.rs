//! Packet sequence numbers: [`Psn`], the 24-bit PSN with modular order, lives in roce-parser
//! (every crate compares PSNs the same way); re-exported here for the checker's modules.

pub use roce_parser::{read_psns, Psn, PSN_MASK};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_engineers_read_it() {
        assert_eq!(Psn::new(0xff_ffff).to_string(), "16777215 (0xffffff)");
        assert_eq!(Psn::new(0) - Psn::new(0xff_ffff), 1);
        assert_eq!(read_psns(3000, 1024), 3);
    }
}
