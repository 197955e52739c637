//! The common MAD header (24 bytes): base version, management class, class version, method,
//! status, class-specific word, transaction ID, attribute ID and attribute modifier.
//!
//! Layout (big-endian, offsets from the first byte of the MAD), from Linux
//! `include/rdma/ib_mad.h` and docs/wire.md:
//!
//! | off | size | field |
//! |---|---|---|
//! | 0 | 1 | BaseVersion (1) |
//! | 1 | 1 | MgmtClass |
//! | 2 | 1 | ClassVersion (CM: 2) |
//! | 3 | 1 | Method (bit 7 = response) |
//! | 4 | 2 | Status |
//! | 6 | 2 | ClassSpecific |
//! | 8 | 8 | TransactionID |
//! | 16 | 2 | AttributeID |
//! | 18 | 2 | reserved |
//! | 20 | 4 | AttributeModifier |

use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the MAD header fields.
pub mod field {
    use core::ops::Range;
    /// BaseVersion: 1 byte.
    pub const BASE_VERSION: usize = 0;
    /// MgmtClass: 1 byte.
    pub const MGMT_CLASS: usize = 1;
    /// ClassVersion: 1 byte.
    pub const CLASS_VERSION: usize = 2;
    /// Method: 1 byte, bit 7 set on responses.
    pub const METHOD: usize = 3;
    /// Status: 2 bytes.
    pub const STATUS: Range<usize> = 4..6;
    /// ClassSpecific: 2 bytes.
    pub const CLASS_SPECIFIC: Range<usize> = 6..8;
    /// TransactionID: 8 bytes.
    pub const TRANSACTION_ID: Range<usize> = 8..16;
    /// AttributeID: 2 bytes.
    pub const ATTRIBUTE_ID: Range<usize> = 16..18;
    /// Reserved: 2 bytes.
    pub const RESERVED: Range<usize> = 18..20;
    /// AttributeModifier: 4 bytes.
    pub const ATTRIBUTE_MODIFIER: Range<usize> = 20..24;
    /// The class-specific data (for CM: the message) after the header, to the end of the MAD.
    pub const DATA: Range<usize> = 24..256;
}

/// Length of the MAD header.
pub const MAD_HEADER_LEN: usize = field::DATA.start;
/// Base version of every MAD this crate knows.
pub const MAD_BASE_VERSION: u8 = 1;
/// Class version of the CM class (IBTA 1.2 onwards).
pub const CM_CLASS_VERSION: u8 = 2;

header_view!(
    /// A zero-copy view of a MAD header (the first 24 bytes of a MAD; IBTA Vol. 1 §13.4).
    MadHeader,
    Layer::Mad,
    MAD_HEADER_LEN
);

impl<T: AsRef<[u8]>> MadHeader<T> {
    /// BaseVersion (byte 0): 1 for every MAD this crate knows ([`MAD_BASE_VERSION`]).
    pub fn base_version(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::BASE_VERSION)
    }
    /// MgmtClass (byte 1): the management class, 0x07 for CM ([`MgmtClass`]).
    pub fn mgmt_class(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::MGMT_CLASS)
    }
    /// ClassVersion (byte 2): 2 for CM ([`CM_CLASS_VERSION`]).
    pub fn class_version(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::CLASS_VERSION)
    }
    /// Method (byte 3): 0x03 Send for every CM message; bit 7 marks a response ([`Method`]).
    pub fn method(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::METHOD)
    }
    /// Status (bytes 4-5): meaningful in responses only; 0 in CM messages, all of them Sends.
    pub fn status(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::STATUS)
    }
    /// ClassSpecific (bytes 6-7).
    pub fn class_specific(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::CLASS_SPECIFIC)
    }
    /// TransactionID (bytes 8-15): chosen by the sender; a response carries the request's.
    pub fn transaction_id(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::TRANSACTION_ID)
    }
    /// AttributeID (bytes 16-17): for CM, which message the MAD holds ([`CmAttribute`]).
    pub fn attribute_id(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::ATTRIBUTE_ID)
    }
    /// Reserved (bytes 18-19).
    pub fn reserved(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::RESERVED)
    }
    /// AttributeModifier (bytes 20-23): 0 for CM messages.
    pub fn attribute_modifier(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::ATTRIBUTE_MODIFIER)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MadHeader<T> {
    /// Writes BaseVersion (byte 0).
    pub fn set_base_version(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::BASE_VERSION, v);
    }
    /// Writes MgmtClass (byte 1).
    pub fn set_mgmt_class(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::MGMT_CLASS, v);
    }
    /// Writes ClassVersion (byte 2).
    pub fn set_class_version(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::CLASS_VERSION, v);
    }
    /// Writes Method (byte 3).
    pub fn set_method(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::METHOD, v);
    }
    /// Writes Status (bytes 4-5).
    pub fn set_status(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::STATUS, v);
    }
    /// Writes ClassSpecific (bytes 6-7).
    pub fn set_class_specific(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::CLASS_SPECIFIC, v);
    }
    /// Writes TransactionID (bytes 8-15).
    pub fn set_transaction_id(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::TRANSACTION_ID, v);
    }
    /// Writes AttributeID (bytes 16-17).
    pub fn set_attribute_id(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::ATTRIBUTE_ID, v);
    }
    /// Writes the reserved bytes 18-19.
    pub fn set_reserved(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::RESERVED, v);
    }
    /// Writes AttributeModifier (bytes 20-23).
    pub fn set_attribute_modifier(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::ATTRIBUTE_MODIFIER, v);
    }
}

/// The management class of a MAD (`include/rdma/ib_mad.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum MgmtClass {
    /// 0x01: subnet management, LID-routed (SMP).
    SubnLidRouted,
    /// 0x81: subnet management, directed route (SMP).
    SubnDirectedRoute,
    /// 0x03: subnet administration (SA).
    SubnAdm,
    /// 0x04: performance management.
    Perf,
    /// 0x05: baseboard management.
    Bm,
    /// 0x06: device management.
    DevMgt,
    /// 0x07: communication management.
    Cm,
    /// 0x08: SNMP tunnelling.
    Snmp,
    /// 0x10: device administration.
    DevAdm,
    /// 0x11: boot management.
    BootMgmt,
    /// 0x12: BIS.
    Bis,
    /// 0x21: congestion management.
    CongMgmt,
    /// 0x09-0x0F: vendor-specific, range 1 (the class byte).
    VendorRange1(u8),
    /// 0x30-0x4F: vendor-specific, range 2 (with OUI; the class byte).
    VendorRange2(u8),
    /// Any other (reserved) class byte.
    Other(u8),
}

impl MgmtClass {
    /// The class of a MgmtClass byte (every byte value maps to a variant).
    pub const fn from_u8(v: u8) -> Self {
        match v {
            0x01 => MgmtClass::SubnLidRouted,
            0x81 => MgmtClass::SubnDirectedRoute,
            0x03 => MgmtClass::SubnAdm,
            0x04 => MgmtClass::Perf,
            0x05 => MgmtClass::Bm,
            0x06 => MgmtClass::DevMgt,
            0x07 => MgmtClass::Cm,
            0x08 => MgmtClass::Snmp,
            0x10 => MgmtClass::DevAdm,
            0x11 => MgmtClass::BootMgmt,
            0x12 => MgmtClass::Bis,
            0x21 => MgmtClass::CongMgmt,
            0x09..=0x0F => MgmtClass::VendorRange1(v),
            0x30..=0x4F => MgmtClass::VendorRange2(v),
            _ => MgmtClass::Other(v),
        }
    }

    /// The MgmtClass byte (the inverse of [`from_u8`](Self::from_u8)).
    pub const fn to_u8(self) -> u8 {
        match self {
            MgmtClass::SubnLidRouted => 0x01,
            MgmtClass::SubnDirectedRoute => 0x81,
            MgmtClass::SubnAdm => 0x03,
            MgmtClass::Perf => 0x04,
            MgmtClass::Bm => 0x05,
            MgmtClass::DevMgt => 0x06,
            MgmtClass::Cm => 0x07,
            MgmtClass::Snmp => 0x08,
            MgmtClass::DevAdm => 0x10,
            MgmtClass::BootMgmt => 0x11,
            MgmtClass::Bis => 0x12,
            MgmtClass::CongMgmt => 0x21,
            MgmtClass::VendorRange1(v) | MgmtClass::VendorRange2(v) | MgmtClass::Other(v) => v,
        }
    }

    /// The class's name as the IBTA and Linux call it.
    pub const fn name(self) -> &'static str {
        match self {
            MgmtClass::SubnLidRouted => "SubnMgmt (LID routed)",
            MgmtClass::SubnDirectedRoute => "SubnMgmt (directed route)",
            MgmtClass::SubnAdm => "SubnAdm",
            MgmtClass::Perf => "PerfMgmt",
            MgmtClass::Bm => "BaseboardMgmt",
            MgmtClass::DevMgt => "DevMgmt",
            MgmtClass::Cm => "CM",
            MgmtClass::Snmp => "SNMP",
            MgmtClass::DevAdm => "DevAdm",
            MgmtClass::BootMgmt => "BootMgmt",
            MgmtClass::Bis => "BIS",
            MgmtClass::CongMgmt => "CongestionMgmt",
            MgmtClass::VendorRange1(_) => "vendor specific (range 1)",
            MgmtClass::VendorRange2(_) => "vendor specific (range 2)",
            MgmtClass::Other(_) => "reserved class",
        }
    }
}

impl core::fmt::Display for MgmtClass {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (0x{:02x})", self.name(), self.to_u8())
    }
}

/// The MAD method (bit 7 set on responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Method {
    /// 0x01
    Get,
    /// 0x02
    Set,
    /// 0x03: every CM message.
    Send,
    /// 0x05
    Trap,
    /// 0x06
    Report,
    /// 0x07
    TrapRepress,
    /// 0x12 (SA)
    GetTable,
    /// 0x13 (SA)
    GetTraceTable,
    /// 0x14 (SA)
    GetMulti,
    /// 0x15 (SA)
    Delete,
    /// 0x81
    GetResp,
    /// 0x86
    ReportResp,
    /// 0x92 (SA)
    GetTableResp,
    /// 0x94 (SA)
    GetMultiResp,
    /// 0x95 (SA)
    DeleteResp,
    /// Any other method byte.
    Other(u8),
}

impl Method {
    /// The method of a Method byte (every byte value maps to a variant).
    pub const fn from_u8(v: u8) -> Self {
        match v {
            0x01 => Method::Get,
            0x02 => Method::Set,
            0x03 => Method::Send,
            0x05 => Method::Trap,
            0x06 => Method::Report,
            0x07 => Method::TrapRepress,
            0x12 => Method::GetTable,
            0x13 => Method::GetTraceTable,
            0x14 => Method::GetMulti,
            0x15 => Method::Delete,
            0x81 => Method::GetResp,
            0x86 => Method::ReportResp,
            0x92 => Method::GetTableResp,
            0x94 => Method::GetMultiResp,
            0x95 => Method::DeleteResp,
            _ => Method::Other(v),
        }
    }

    /// The Method byte (the inverse of [`from_u8`](Self::from_u8)).
    pub const fn to_u8(self) -> u8 {
        match self {
            Method::Get => 0x01,
            Method::Set => 0x02,
            Method::Send => 0x03,
            Method::Trap => 0x05,
            Method::Report => 0x06,
            Method::TrapRepress => 0x07,
            Method::GetTable => 0x12,
            Method::GetTraceTable => 0x13,
            Method::GetMulti => 0x14,
            Method::Delete => 0x15,
            Method::GetResp => 0x81,
            Method::ReportResp => 0x86,
            Method::GetTableResp => 0x92,
            Method::GetMultiResp => 0x94,
            Method::DeleteResp => 0x95,
            Method::Other(v) => v,
        }
    }

    /// Bit 7: the MAD is a response.
    pub const fn is_response(self) -> bool {
        self.to_u8() & 0x80 != 0
    }

    /// The method's name as the IBTA calls it ("Send", "GetResp", ...).
    pub const fn name(self) -> &'static str {
        match self {
            Method::Get => "Get",
            Method::Set => "Set",
            Method::Send => "Send",
            Method::Trap => "Trap",
            Method::Report => "Report",
            Method::TrapRepress => "TrapRepress",
            Method::GetTable => "GetTable",
            Method::GetTraceTable => "GetTraceTable",
            Method::GetMulti => "GetMulti",
            Method::Delete => "Delete",
            Method::GetResp => "GetResp",
            Method::ReportResp => "ReportResp",
            Method::GetTableResp => "GetTableResp",
            Method::GetMultiResp => "GetMultiResp",
            Method::DeleteResp => "DeleteResp",
            Method::Other(_) => "unknown method",
        }
    }
}

impl core::fmt::Display for Method {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (0x{:02x})", self.name(), self.to_u8())
    }
}

/// The attribute IDs of the CM class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum CmAttribute {
    /// 0x0001
    ClassPortInfo,
    /// 0x0010 ConnectRequest
    Req,
    /// 0x0011 MsgRcptAck
    Mra,
    /// 0x0012 ConnectReject
    Rej,
    /// 0x0013 ConnectReply
    Rep,
    /// 0x0014 ReadyToUse
    Rtu,
    /// 0x0015 DisconnectRequest
    Dreq,
    /// 0x0016 DisconnectReply
    Drep,
    /// 0x0017 ServiceIDResReq
    SidrReq,
    /// 0x0018 ServiceIDResReqResp
    SidrRep,
    /// 0x0019 LoadAlternatePath
    Lap,
    /// 0x001A AlternatePathResponse
    Apr,
    /// Not a CM attribute.
    Unknown(u16),
}

impl CmAttribute {
    /// The attribute of an AttributeID (every value maps to a variant).
    pub const fn from_u16(v: u16) -> Self {
        match v {
            0x0001 => CmAttribute::ClassPortInfo,
            0x0010 => CmAttribute::Req,
            0x0011 => CmAttribute::Mra,
            0x0012 => CmAttribute::Rej,
            0x0013 => CmAttribute::Rep,
            0x0014 => CmAttribute::Rtu,
            0x0015 => CmAttribute::Dreq,
            0x0016 => CmAttribute::Drep,
            0x0017 => CmAttribute::SidrReq,
            0x0018 => CmAttribute::SidrRep,
            0x0019 => CmAttribute::Lap,
            0x001A => CmAttribute::Apr,
            _ => CmAttribute::Unknown(v),
        }
    }

    /// The AttributeID (the inverse of [`from_u16`](Self::from_u16)).
    pub const fn to_u16(self) -> u16 {
        match self {
            CmAttribute::ClassPortInfo => 0x0001,
            CmAttribute::Req => 0x0010,
            CmAttribute::Mra => 0x0011,
            CmAttribute::Rej => 0x0012,
            CmAttribute::Rep => 0x0013,
            CmAttribute::Rtu => 0x0014,
            CmAttribute::Dreq => 0x0015,
            CmAttribute::Drep => 0x0016,
            CmAttribute::SidrReq => 0x0017,
            CmAttribute::SidrRep => 0x0018,
            CmAttribute::Lap => 0x0019,
            CmAttribute::Apr => 0x001A,
            CmAttribute::Unknown(v) => v,
        }
    }

    /// The short name RoCE engineers use ("REQ", "REP", ...).
    pub const fn name(self) -> &'static str {
        match self {
            CmAttribute::ClassPortInfo => "ClassPortInfo",
            CmAttribute::Req => "REQ",
            CmAttribute::Mra => "MRA",
            CmAttribute::Rej => "REJ",
            CmAttribute::Rep => "REP",
            CmAttribute::Rtu => "RTU",
            CmAttribute::Dreq => "DREQ",
            CmAttribute::Drep => "DREP",
            CmAttribute::SidrReq => "SIDR_REQ",
            CmAttribute::SidrRep => "SIDR_REP",
            CmAttribute::Lap => "LAP",
            CmAttribute::Apr => "APR",
            CmAttribute::Unknown(_) => "unknown CM attribute",
        }
    }

    /// The IBTA attribute name, as Wireshark shows it ("ConnectRequest", ...).
    pub const fn long_name(self) -> &'static str {
        match self {
            CmAttribute::ClassPortInfo => "ClassPortInfo",
            CmAttribute::Req => "ConnectRequest",
            CmAttribute::Mra => "MsgRcptAck",
            CmAttribute::Rej => "ConnectReject",
            CmAttribute::Rep => "ConnectReply",
            CmAttribute::Rtu => "ReadyToUse",
            CmAttribute::Dreq => "DisconnectRequest",
            CmAttribute::Drep => "DisconnectReply",
            CmAttribute::SidrReq => "ServiceIDResReq",
            CmAttribute::SidrRep => "ServiceIDResReqResp",
            CmAttribute::Lap => "LoadAlternatePath",
            CmAttribute::Apr => "AlternatePathResponse",
            CmAttribute::Unknown(_) => "unknown CM attribute",
        }
    }
}

impl core::fmt::Display for CmAttribute {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (0x{:04x})", self.name(), self.to_u16())
    }
}

/// The MAD header as plain values. The reserved word (bytes 18-19) is kept so that parse then
/// emit gives back the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MadHeaderRepr {
    /// BaseVersion: 1.
    pub base_version: u8,
    /// MgmtClass: 0x07 for CM.
    pub mgmt_class: MgmtClass,
    /// ClassVersion: 2 for CM.
    pub class_version: u8,
    /// Method: Send for every CM message.
    pub method: Method,
    /// Status.
    pub status: u16,
    /// ClassSpecific.
    pub class_specific: u16,
    /// TransactionID.
    pub transaction_id: u64,
    /// AttributeID: which CM message, for the CM class ([`cm_attribute`](Self::cm_attribute)).
    pub attribute_id: u16,
    /// Reserved (bytes 18-19), kept as read.
    pub reserved: u16,
    /// AttributeModifier.
    pub attribute_modifier: u32,
}

impl MadHeaderRepr {
    /// Bytes on the wire: 24.
    pub const LEN: usize = MAD_HEADER_LEN;

    /// The header of a CM message as Linux sends it: base version 1, class CM, class
    /// version 2, method Send, status 0, attribute modifier 0.
    pub const fn cm(attribute: CmAttribute, transaction_id: u64) -> Self {
        MadHeaderRepr {
            base_version: MAD_BASE_VERSION,
            mgmt_class: MgmtClass::Cm,
            class_version: CM_CLASS_VERSION,
            method: Method::Send,
            status: 0,
            class_specific: 0,
            transaction_id,
            attribute_id: attribute.to_u16(),
            reserved: 0,
            attribute_modifier: 0,
        }
    }

    /// Reads every field of a view.
    pub fn parse<T: AsRef<[u8]>>(v: &MadHeader<T>) -> Self {
        MadHeaderRepr {
            base_version: v.base_version(),
            mgmt_class: MgmtClass::from_u8(v.mgmt_class()),
            class_version: v.class_version(),
            method: Method::from_u8(v.method()),
            status: v.status(),
            class_specific: v.class_specific(),
            transaction_id: v.transaction_id(),
            attribute_id: v.attribute_id(),
            reserved: v.reserved(),
            attribute_modifier: v.attribute_modifier(),
        }
    }

    /// Writes every field to a view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut MadHeader<T>) {
        v.set_base_version(self.base_version);
        v.set_mgmt_class(self.mgmt_class.to_u8());
        v.set_class_version(self.class_version);
        v.set_method(self.method.to_u8());
        v.set_status(self.status);
        v.set_class_specific(self.class_specific);
        v.set_transaction_id(self.transaction_id);
        v.set_attribute_id(self.attribute_id);
        v.set_reserved(self.reserved);
        v.set_attribute_modifier(self.attribute_modifier);
    }

    /// Bytes [`emit`](Self::emit) writes: 24.
    pub const fn buffer_len(&self) -> usize {
        MAD_HEADER_LEN
    }

    /// The attribute ID read as a CM attribute (meaningful when the class is CM).
    pub const fn cm_attribute(&self) -> CmAttribute {
        CmAttribute::from_u16(self.attribute_id)
    }

    /// The attribute's name in subnet management (SMPs, LID-routed or directed route: IBTA
    /// Vol. 1 §14.2.5) and subnet administration (SA records, §15.2.5); `None` for other
    /// classes (CM names its attributes by message: [`CmMessage::name`]) and unknown IDs.
    ///
    /// [`CmMessage::name`]: crate::CmMessage::name
    pub const fn attribute_name(&self) -> Option<&'static str> {
        let common = match self.attribute_id {
            0x0001 => Some("ClassPortInfo"),
            0x0002 => Some("Notice"),
            0x0003 => Some("InformInfo"),
            _ => None,
        };
        match self.mgmt_class {
            MgmtClass::SubnLidRouted | MgmtClass::SubnDirectedRoute => match self.attribute_id {
                0x0010 => Some("NodeDescription"),
                0x0011 => Some("NodeInfo"),
                0x0012 => Some("SwitchInfo"),
                0x0014 => Some("GUIDInfo"),
                0x0015 => Some("PortInfo"),
                0x0016 => Some("P_KeyTable"),
                0x0017 => Some("SLtoVLMappingTable"),
                0x0018 => Some("VLArbitrationTable"),
                0x0019 => Some("LinearForwardingTable"),
                0x001a => Some("RandomForwardingTable"),
                0x001b => Some("MulticastForwardingTable"),
                0x0020 => Some("SMInfo"),
                0x0030 => Some("VendorDiag"),
                0x0031 => Some("LedInfo"),
                _ => common,
            },
            MgmtClass::SubnAdm => match self.attribute_id {
                0x0011 => Some("NodeRecord"),
                0x0012 => Some("PortInfoRecord"),
                0x0013 => Some("SLtoVLMappingTableRecord"),
                0x0014 => Some("SwitchInfoRecord"),
                0x0015 => Some("LinearForwardingTableRecord"),
                0x0016 => Some("RandomForwardingTableRecord"),
                0x0017 => Some("MulticastForwardingTableRecord"),
                0x0018 => Some("SMInfoRecord"),
                0x0020 => Some("LinkRecord"),
                0x0030 => Some("GuidInfoRecord"),
                0x0031 => Some("ServiceRecord"),
                0x0033 => Some("P_KeyTableRecord"),
                0x0035 => Some("PathRecord"),
                0x0036 => Some("VLArbitrationTableRecord"),
                0x0038 => Some("MCMemberRecord"),
                0x0039 => Some("TraceRecord"),
                0x003a => Some("MultiPathRecord"),
                0x003b => Some("ServiceAssociationRecord"),
                0x00f3 => Some("InformInfoRecord"),
                _ => common,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The MAD header of the REQ in read2.pcap (frame 4).
    const REQ_HEADER: [u8; 24] = [
        0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x29, 0x75, 0xef,
        0x73, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn parse_emit_same_bytes() {
        let r = MadHeaderRepr::parse(&MadHeader::new_checked(&REQ_HEADER[..]).unwrap());
        assert_eq!(r, MadHeaderRepr::cm(CmAttribute::Req, 0x0000_000b_2975_ef73));
        assert_eq!(r.mgmt_class.name(), "CM");
        assert_eq!(r.method.name(), "Send");
        assert!(!r.method.is_response());
        assert_eq!(r.cm_attribute().long_name(), "ConnectRequest");
        let mut out = [0u8; 24];
        r.emit(&mut MadHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, REQ_HEADER);
    }

    #[test]
    fn short_header_is_an_error() {
        let e = MadHeader::new_checked(&REQ_HEADER[..23]).unwrap_err();
        assert_eq!(e.layer, Layer::Mad);
        assert_eq!((e.needed, e.available), (24, 23));
    }

    #[test]
    fn class_method_attribute_bytes_round_trip() {
        for v in 0..=255u8 {
            assert_eq!(MgmtClass::from_u8(v).to_u8(), v);
            assert_eq!(Method::from_u8(v).to_u8(), v);
        }
        for v in 0..=0x40u16 {
            assert_eq!(CmAttribute::from_u16(v).to_u16(), v);
        }
        assert_eq!(MgmtClass::from_u8(0x81), MgmtClass::SubnDirectedRoute);
        assert_eq!(MgmtClass::from_u8(0x0a), MgmtClass::VendorRange1(0x0a));
        assert_eq!(MgmtClass::from_u8(0x30), MgmtClass::VendorRange2(0x30));
        assert_eq!(MgmtClass::from_u8(0x03).name(), "SubnAdm");
        assert!(Method::GetResp.is_response());
    }
}
