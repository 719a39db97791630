//! DEFAULT-mode bootstrap: PE 0 runs a small TCP store at `ip_port`, every PE connects to it.
//!
//! `unsafe`: adopting the listening socket the program hands over (option_attr.sockFd).

pub mod client;
pub mod conn;
pub mod fork;
pub mod liveness;
pub mod protocol;
pub mod secret;
pub mod server;
pub mod tls;

use crate::util::Locked;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

use super::Bootstrap;
use crate::error::{Error, Result};

/// A parsed `ip_port` (spec 9.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub ipv6: bool,
}

impl Endpoint {
    /// Parses `tcp://host:port` (IPv4 literal or host name) or `tcp6://[addr]:port`; the port must be
    /// in 1025..=65535 and the whole string at most 63 characters.
    pub fn parse(url: &str) -> Result<Endpoint> {
        let bad = |why: &str| Error::InvalidParam(format!("ip_port \"{url}\" is invalid: {why}"));
        if url.len() >= aclshmem_abi::ACLSHMEM_MAX_IP_PORT_LEN {
            return Err(bad("longer than 63 characters"));
        }
        let (host, port, ipv6) = if let Some(rest) = url.strip_prefix("tcp6://") {
            let rest = rest
                .strip_prefix('[')
                .ok_or_else(|| bad("expected tcp6://[addr]:port"))?;
            let (addr, port) = rest
                .split_once("]:")
                .ok_or_else(|| bad("expected tcp6://[addr]:port"))?;
            addr.parse::<std::net::Ipv6Addr>()
                .map_err(|_| bad("not an IPv6 address"))?;
            (addr, port, true)
        } else if let Some(rest) = url.strip_prefix("tcp://") {
            let (host, port) = rest
                .rsplit_once(':')
                .ok_or_else(|| bad("expected tcp://host:port"))?;
            let name_ok = !host.is_empty()
                && host.len() <= 253
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
            if !name_ok {
                return Err(bad("host must be an IPv4 address or a host name"));
            }
            (host, port, false)
        } else {
            return Err(bad("expected tcp://host:port or tcp6://[addr]:port"));
        };
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.len() > 5 {
            return Err(bad("port is not a number"));
        }
        let port: u32 = port.parse().map_err(|_| bad("port is not a number"))?;
        if !(1025..=65535).contains(&port) {
            return Err(bad("port must be in 1025..65535"));
        }
        Ok(Endpoint {
            host: host.to_string(),
            port: port as u16,
            ipv6,
        })
    }

    /// Every socket address the host resolves to.
    pub fn resolve(&self) -> Result<Vec<SocketAddr>> {
        let addrs: Vec<SocketAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| Error::InvalidParam(format!("ip_port host {} cannot be resolved: {e}", self.host)))?
            .filter(|a| a.is_ipv6() == self.ipv6 || !self.ipv6)
            .collect();
        if addrs.is_empty() {
            return Err(Error::InvalidParam(format!(
                "ip_port host {} has no usable address",
                self.host
            )));
        }
        Ok(addrs)
    }
}

/// Settings of one config-store bootstrap.
pub struct StoreConfig {
    /// Where the store listens (PE 0) and every PE connects.
    pub addrs: Vec<SocketAddr>,
    pub my_pe: usize,
    pub n_pes: usize,
    /// The job secret; empty: none was given (no launcher), PE 0 makes one ([`secret`]).
    pub token: Vec<u8>,
    pub connect_timeout: Duration,
    pub op_timeout: Duration,
    /// How PE 0 gets its listening socket.
    pub listen: Listen,
    /// TLS, when enabled: configurations, and the host PE 0's certificate must name.
    pub tls: Option<(tls::Tls, String)>,
}

/// PE 0's listening socket.
pub enum Listen {
    /// Bind `addrs` now.
    Bind,
    /// An already bound socket handed over by the program (option_attr.sockFd > 0).
    Fd(i32),
    /// A socket bound earlier by aclshmemx_get_uniqueid in this process.
    Ready(TcpListener),
}

/// The DEFAULT-mode bootstrap.
pub struct ConfigStore {
    client: client::Client,
    watcher: client::Watcher,
    /// PE 0's store, taken by finalize.
    server: std::sync::Mutex<Option<server::Server>>,
    my_pe: usize,
    n_pes: usize,
    op_timeout: Duration,
}

impl ConfigStore {
    pub fn connect(cfg: StoreConfig) -> Result<ConfigStore> {
        if cfg.token.len() > protocol::MAX_TOKEN {
            return Err(Error::InvalidValue(format!(
                "the job secret (ACLSHMEM_JOB_TOKEN) is {} bytes long, more than {}",
                cfg.token.len(),
                protocol::MAX_TOKEN
            )));
        }
        let setting = crate::config::ACLSHMEM_HEARTBEAT_TIMEOUT.value()?;
        if !setting.is_zero() && setting < protocol::MIN_HEARTBEAT_TIMEOUT {
            log::warn!(
                "ACLSHMEM_HEARTBEAT_TIMEOUT={setting:?} is below its minimum: {:?} is used",
                protocol::MIN_HEARTBEAT_TIMEOUT
            );
        }
        let heartbeat = protocol::heartbeat_timeout(setting);
        // without a secret, PE 0 makes one and publishes it for the others (a job of one PE
        // keeps it to itself)
        let mut token = cfg.token;
        let mut secret_file = None;
        if token.is_empty() {
            if cfg.my_pe == 0 {
                token = secret::random()?;
            }
            if cfg.n_pes > 1 {
                let first = cfg
                    .addrs
                    .first()
                    .ok_or_else(|| Error::InvalidParam("the store has no address".into()))?;
                secret_file = Some(secret::path_for(&secret::dir()?, first));
            }
        }
        let server = if cfg.my_pe == 0 {
            let listener = match cfg.listen {
                Listen::Fd(fd) => adopt_listener(fd)?,
                Listen::Ready(l) => l,
                Listen::Bind => bind(&cfg.addrs)?,
            };
            // listening first: a PE that reads the secret finds the store
            let published = match secret_file.take() {
                Some(path) => Some(secret::publish(&path, &token)?),
                None => None,
            };
            let tls = cfg.tls.as_ref().map(|(t, _)| t.server.clone());
            Some(
                server::Server::start(
                    listener,
                    cfg.n_pes,
                    token.clone(),
                    cfg.op_timeout,
                    tls,
                    published,
                    heartbeat,
                )
                .map_err(|e| Error::Inner(format!("cannot start the config store: {e}")))?,
            )
        } else {
            None
        };
        let tls = match &cfg.tls {
            Some((t, host)) => Some((t.client.clone(), t.name_for(host)?)),
            None => None,
        };
        let target = client::Target {
            addrs: cfg.addrs,
            token,
            pe: cfg.my_pe,
            n_pes: cfg.n_pes,
            connect_timeout: cfg.connect_timeout,
            tls,
            secret_file,
        };
        let client = client::Client::connect(&target, cfg.op_timeout)?;
        let watcher = client::Watcher::start(&target, heartbeat)?;
        Ok(ConfigStore {
            client,
            watcher,
            server: std::sync::Mutex::new(server),
            my_pe: cfg.my_pe,
            n_pes: cfg.n_pes,
            op_timeout: cfg.op_timeout,
        })
    }
}

fn bind(addrs: &[SocketAddr]) -> Result<TcpListener> {
    let mut last = None;
    for a in addrs {
        match TcpListener::bind(a) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(format!("{a}: {e}")),
        }
    }
    Err(Error::Inner(format!(
        "PE 0 cannot listen for the config store: {}",
        last.unwrap_or_default()
    )))
}

fn adopt_listener(fd: i32) -> Result<TcpListener> {
    use std::os::fd::FromRawFd;
    // SAFETY: the caller documented fd as an already bound socket it hands over to the library;
    // fcntl has no memory-safety preconditions. Close-on-exec: a program the PE execs keeps no
    // store socket.
    let cloexec = unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    // SAFETY: as above; listen has no memory-safety preconditions.
    if cloexec != 0 || unsafe { libc::listen(fd, 1024) } != 0 {
        return Err(Error::Inner(format!(
            "option_attr.sockFd {fd} cannot listen: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: fd is a listening TCP socket now owned by the listener.
    Ok(unsafe { TcpListener::from_raw_fd(fd) })
}

impl ConfigStore {
    /// An allgather's answer, which must have a part for every PE.
    fn checked_parts(&self, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        if parts.len() != self.n_pes {
            return Err(Error::Bootstrap(format!(
                "allgather returned {} parts for {} PEs",
                parts.len(),
                self.n_pes
            )));
        }
        Ok(parts)
    }
}

impl Bootstrap for ConfigStore {
    fn my_pe(&self) -> usize {
        self.my_pe
    }
    fn n_pes(&self) -> usize {
        self.n_pes
    }
    fn session(&self) -> u64 {
        self.client.session
    }
    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.checked_parts(self.client.allgather(data)?)
    }
    fn allgather_checked(&self, data: &[u8], check: &dyn Fn() -> Option<String>) -> Result<Vec<Vec<u8>>> {
        self.checked_parts(self.client.allgather_checked(data, Some(check))?)
    }
    fn global_exit(&self, status: i32) {
        self.watcher.global_exit(status);
        // the store's notice reaches this PE's watcher too, which exits; give it a moment
        std::thread::sleep(Duration::from_secs(5));
    }
    fn watches_departures(&self) -> bool {
        true
    }
    fn finalize(&self) {
        self.watcher.close();
        self.client.bye();
        if let Some(s) = self.server.locked().take() {
            s.shutdown(self.op_timeout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_port_forms() {
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:8998").unwrap(),
            Endpoint {
                host: "127.0.0.1".into(),
                port: 8998,
                ipv6: false
            }
        );
        assert!(Endpoint::parse("tcp://localhost:1025").is_ok());
        assert!(Endpoint::parse("tcp6://[::1]:65535").unwrap().ipv6);
        for bad in [
            "",
            "127.0.0.1:8998",
            "tcp://127.0.0.1",
            "tcp://127.0.0.1:1024",
            "tcp://127.0.0.1:65536",
            "tcp://127.0.0.1:0",
            "tcp://:8998",
            "tcp://a_b:8998",
            "tcp6://::1:8998",
            "tcp6://[zz]:8998",
            "udp://127.0.0.1:8998",
            "tcp://127.0.0.1:89a8",
            "tcp://127.0.0.1:-1",
            "tcp://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:8998",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad} should be rejected");
        }
    }
}
