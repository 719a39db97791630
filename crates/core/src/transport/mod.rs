//! Transports: how bytes reach a peer's copy of the heap.
//!
//! Same node: [`shm`], plain loads and stores into the peer's mapping. An inter-node engine will
//! sit beside it and be chosen per peer by reachability; until then a peer on another node is
//! reported as unreachable.

pub mod shm;
