//! Unique-id bootstrap (spec 8.1 `aclshmemx_get_uniqueid`, 9.1): PE 0's process picks and binds the
//! rendezvous address before init and writes it, with a random job secret, into the 124 internal
//! bytes of `aclshmemx_uniqueid_t`; the program copies the id to every PE; init then runs the
//! config store on the socket bound here.
//!
//! Internal layout (ours; callers treat the id as opaque bytes):
//! `[0..4)` magic "ASU1", `[4..8)` listening fd in PE 0's process, `[8]` family (4 or 6),
//! `[10..12)` port (big endian), `[12..28)` address, `[28..60)` job secret.
//!
//! `unsafe`: the interface list comes from libc's getifaddrs.

use crate::util::Locked;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Mutex;

use crate::config;
use crate::error::{Error, Result};
use aclshmem_abi::{ACLSHMEM_UNIQUE_ID_INNER_LEN, ACLSHMEM_UNIQUEID_VERSION, UniqueId};

const MAGIC: &[u8; 4] = b"ASU1";
const SECRET_LEN: usize = 32;

/// What a unique id carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendezvous {
    pub addr: SocketAddr,
    pub fd: i32,
    pub secret: [u8; SECRET_LEN],
}

/// Listening sockets bound by `aclshmemx_get_uniqueid` in this process, kept for init.
static BOUND: Mutex<Vec<TcpListener>> = Mutex::new(Vec::new());
/// Most sockets kept for ids no init has used: making another closes the oldest (its id still
/// works: PE 0's init binds the address again, the port is only no longer held for it).
pub const MAX_BOUND: usize = 64;

impl Rendezvous {
    pub fn encode(&self, uid: &mut UniqueId) {
        *uid = UniqueId {
            version: ACLSHMEM_UNIQUEID_VERSION,
            my_pe: 0,
            n_pes: 0,
            internal: [0; ACLSHMEM_UNIQUE_ID_INNER_LEN],
        };
        let mut b = [0u8; ACLSHMEM_UNIQUE_ID_INNER_LEN];
        b[0..4].copy_from_slice(MAGIC);
        b[4..8].copy_from_slice(&self.fd.to_le_bytes());
        b[10..12].copy_from_slice(&self.addr.port().to_be_bytes());
        match self.addr.ip() {
            IpAddr::V4(a) => {
                b[8] = 4;
                b[12..16].copy_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                b[8] = 6;
                b[12..28].copy_from_slice(&a.octets());
            }
        }
        b[28..60].copy_from_slice(&self.secret);
        for (d, s) in uid.internal.iter_mut().zip(b) {
            *d = s as std::ffi::c_char;
        }
    }

    /// Reads an id made by [`get_uniqueid`]; `None` when it is not one (wrong magic or family).
    pub fn decode(uid: &UniqueId) -> Option<Rendezvous> {
        let b: Vec<u8> = uid.internal.iter().map(|&c| c as u8).collect();
        if &b[0..4] != MAGIC {
            return None;
        }
        let port = u16::from_be_bytes([b[10], b[11]]);
        let ip = match b[8] {
            4 => IpAddr::V4(Ipv4Addr::new(b[12], b[13], b[14], b[15])),
            6 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(&b[12..28]).ok()?)),
            _ => return None,
        };
        Some(Rendezvous {
            addr: SocketAddr::new(ip, port),
            fd: i32::from_le_bytes(b[4..8].try_into().ok()?),
            secret: b[28..60].try_into().ok()?,
        })
    }

    /// PE 0: the socket `aclshmemx_get_uniqueid` bound in this process for this id, if any.
    pub fn take_listener(&self) -> Option<TcpListener> {
        use std::os::fd::AsRawFd;
        let mut bound = BOUND.locked();
        let i = bound
            .iter()
            .position(|l| l.as_raw_fd() == self.fd && l.local_addr().ok() == Some(self.addr))?;
        Some(bound.remove(i))
    }

    /// Closes the socket kept for this id (an init that was given it failed): it is bound again
    /// if the id is used once more.
    pub fn release(&self) {
        drop(self.take_listener());
    }
}

/// One network interface address, as `getifaddrs` reports it.
#[derive(Debug, Clone)]
pub struct IfAddr {
    pub name: String,
    pub ip: IpAddr,
    pub up: bool,
    pub loopback: bool,
}

/// Interfaces that never carry the job: loopback and virtual ones.
const SKIPPED: &[&str] = &["lo", "docker", "veth", "br-", "virbr", "tun", "tap"];

fn usable(a: &IfAddr) -> bool {
    let link_local = match a.ip {
        IpAddr::V4(v) => v.is_link_local() || v.is_loopback(),
        IpAddr::V6(v) => v.is_unicast_link_local() || v.is_loopback(),
    };
    a.up && !a.loopback && !link_local && !SKIPPED.iter().any(|p| a.name.starts_with(p))
}

/// Automatic choice (spec 10, SHMEM_UID_SOCK_IFNAME unset): the first usable interface address,
/// IPv4 preferred; `None` when there is none (the caller falls back to loopback).
pub fn auto_address(ifs: &[IfAddr]) -> Option<IpAddr> {
    let usable: Vec<&IfAddr> = ifs.iter().filter(|a| usable(a)).collect();
    usable
        .iter()
        .find(|a| a.ip.is_ipv4())
        .or(usable.first())
        .map(|a| a.ip)
}

/// `SHMEM_UID_SOCK_IFNAME` = `<ifname>[:inet4|inet6]`: the first address of an interface whose name
/// starts with `ifname`, of the requested family (IPv4 preferred when none is given).
pub fn named_address(ifs: &[IfAddr], spec: &str) -> Result<IpAddr> {
    let (name, family) = match spec.rsplit_once(':') {
        Some((n, "inet4")) => (n, Some(4)),
        Some((n, "inet6")) => (n, Some(6)),
        Some((n, _)) => (n, None),
        None => (spec, None),
    };
    if name.is_empty() || name.len() > 21 {
        return Err(Error::InvalidParam(format!(
            "SHMEM_UID_SOCK_IFNAME=\"{spec}\": interface name must be 1..21 characters"
        )));
    }
    let matching: Vec<&IfAddr> = ifs.iter().filter(|a| a.up && a.name.starts_with(name)).collect();
    let pick = match family {
        Some(4) => matching.iter().find(|a| a.ip.is_ipv4()),
        Some(_) => matching.iter().find(|a| a.ip.is_ipv6()),
        None => matching.iter().find(|a| a.ip.is_ipv4()).or(matching.first()),
    };
    pick.map(|a| a.ip).ok_or_else(|| {
        Error::InvalidParam(format!(
            "SHMEM_UID_SOCK_IFNAME=\"{spec}\": no such interface with a usable address"
        ))
    })
}

/// `SHMEM_UID_SESSION_ID` = `ipv4:port`, `[ipv6]:port` or `hostname:port`.
pub fn session_address(spec: &str) -> Result<SocketAddr> {
    let bad = |why: &str| Error::InvalidParam(format!("SHMEM_UID_SESSION_ID=\"{spec}\": {why}"));
    let (host, port) = if let Some(rest) = spec.strip_prefix('[') {
        rest.split_once("]:").ok_or_else(|| bad("expected [ipv6]:port"))?
    } else {
        spec.rsplit_once(':').ok_or_else(|| bad("expected host:port"))?
    };
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("port is not a number"));
    }
    let port: u16 = port.parse().map_err(|_| bad("port is not in 0..65535"))?;
    if host.is_empty() {
        return Err(bad("empty host"));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| Error::Resolve(format!("cannot resolve {host}: {e}")))?
        .next()
        .ok_or_else(|| bad("host has no address"))
}

/// The interface addresses of this machine.
fn interfaces() -> Vec<IfAddr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut p = head;
    while !p.is_null() {
        // SAFETY: p walks the list returned by getifaddrs; fields are valid until freeifaddrs.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is non-NULL; its family tells which sockaddr it is.
        let family = unsafe { (*ifa.ifa_addr).sa_family } as i32;
        let ip = match family {
            // SAFETY: AF_INET addresses are sockaddr_in.
            libc::AF_INET => IpAddr::V4(Ipv4Addr::from(u32::from_be(unsafe {
                (*(ifa.ifa_addr as *const libc::sockaddr_in)).sin_addr.s_addr
            }))),
            // SAFETY: AF_INET6 addresses are sockaddr_in6.
            libc::AF_INET6 => IpAddr::V6(Ipv6Addr::from(unsafe {
                (*(ifa.ifa_addr as *const libc::sockaddr_in6)).sin6_addr.s6_addr
            })),
            _ => continue,
        };
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        let flags = ifa.ifa_flags;
        out.push(IfAddr {
            name,
            ip,
            up: flags & libc::IFF_UP as u32 != 0 && flags & libc::IFF_RUNNING as u32 != 0,
            loopback: flags & libc::IFF_LOOPBACK as u32 != 0,
        });
    }
    // SAFETY: head came from getifaddrs.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// `aclshmemx_get_uniqueid`: picks PE 0's address, binds it now (kept for init) and writes the id.
pub fn get_uniqueid(uid: &mut UniqueId) -> Result<()> {
    let addr = if let Some(spec) = config::SHMEM_UID_SESSION_ID.get()? {
        session_address(&spec)?
    } else {
        let ifs = interfaces();
        let ip = match config::SHMEM_UID_SOCK_IFNAME.get()? {
            Some(spec) => named_address(&ifs, &spec)?,
            None => auto_address(&ifs).unwrap_or_else(|| {
                log::warn!("aclshmemx_get_uniqueid: no usable network interface; using loopback (single-node jobs only)");
                IpAddr::V4(Ipv4Addr::LOCALHOST)
            }),
        };
        SocketAddr::new(ip, 0)
    };
    crate::util::occupy_standard_descriptors();
    let listener = TcpListener::bind(addr)
        .map_err(|e| Error::InvalidParam(format!("cannot bind the rendezvous address {addr}: {e}")))?;
    let bound = listener.local_addr()?;
    let mut secret = [0u8; SECRET_LEN];
    getrandom::fill(&mut secret)
        .map_err(|e| Error::Inner(format!("no randomness for the job secret: {e}")))?;
    use std::os::fd::AsRawFd;
    let r = Rendezvous {
        addr: bound,
        fd: listener.as_raw_fd(),
        secret,
    };
    {
        let mut kept = BOUND.locked();
        if kept.len() >= MAX_BOUND {
            let old = kept.remove(0);
            log::warn!(
                "aclshmemx_get_uniqueid: {MAX_BOUND} ids are waiting for an init; the socket of the \
                 oldest ({}) is closed (its id still works; init binds the address again)",
                old.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string())
            );
        }
        kept.push(listener);
    }
    r.encode(uid);
    log::info!("aclshmemx_get_uniqueid: rendezvous at {bound}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ifa(name: &str, ip: &str, up: bool) -> IfAddr {
        IfAddr {
            name: name.into(),
            ip: ip.parse().unwrap(),
            up,
            loopback: name == "lo",
        }
    }

    #[test]
    fn automatic_choice_skips_loopback_virtual_and_link_local() {
        let ifs = vec![
            ifa("lo", "127.0.0.1", true),
            ifa("docker0", "172.17.0.1", true),
            ifa("veth12", "10.1.1.1", true),
            ifa("eth0", "fe80::1", true),
            ifa("eth1", "169.254.3.4", true),
            ifa("eth2", "2001:db8::5", true),
            ifa("eth3", "192.0.2.7", false),
            ifa("eth4", "192.0.2.8", true),
        ];
        assert_eq!(auto_address(&ifs), Some("192.0.2.8".parse().unwrap()));
        assert_eq!(auto_address(&ifs[..6]), Some("2001:db8::5".parse().unwrap()));
        assert_eq!(auto_address(&ifs[..2]), None);
    }

    #[test]
    fn named_interface_and_family() {
        let ifs = vec![
            ifa("eth0", "fe80::9", true),
            ifa("eth0", "192.0.2.1", true),
            ifa("lo", "::1", true),
        ];
        assert_eq!(
            named_address(&ifs, "eth").unwrap(),
            "192.0.2.1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            named_address(&ifs, "eth0:inet6").unwrap(),
            "fe80::9".parse::<IpAddr>().unwrap()
        );
        assert!(named_address(&ifs, "lo:inet4").is_err());
        assert!(named_address(&ifs, "wlan0").is_err());
        assert!(named_address(&ifs, "").is_err());
    }

    #[test]
    fn session_addresses() {
        assert_eq!(
            session_address("127.0.0.1:5000").unwrap(),
            "127.0.0.1:5000".parse().unwrap()
        );
        assert_eq!(
            session_address("[::1]:6000").unwrap(),
            "[::1]:6000".parse().unwrap()
        );
        assert_eq!(session_address("localhost:7000").unwrap().port(), 7000);
        for bad in ["127.0.0.1", "127.0.0.1:x", ":80", "[::1]6000", "127.0.0.1:70000"] {
            assert!(session_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_roundtrip_and_foreign_bytes_are_refused() {
        let mut uid = UniqueId {
            version: 0,
            my_pe: 0,
            n_pes: 0,
            internal: [0; ACLSHMEM_UNIQUE_ID_INNER_LEN],
        };
        for addr in ["127.0.0.1:4242", "[::1]:4243"] {
            let r = Rendezvous {
                addr: addr.parse().unwrap(),
                fd: 7,
                secret: [9; SECRET_LEN],
            };
            r.encode(&mut uid);
            assert_eq!(uid.version, 65672);
            assert_eq!(Rendezvous::decode(&uid), Some(r));
        }
        uid.internal[8] = 5;
        assert_eq!(Rendezvous::decode(&uid), None);
        uid.internal[0] = 0;
        assert_eq!(Rendezvous::decode(&uid), None);
    }
}
