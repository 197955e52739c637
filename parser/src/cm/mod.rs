//! Connection management: the MAD header, CM messages on QP1 and RDMA-CM IP private data.
