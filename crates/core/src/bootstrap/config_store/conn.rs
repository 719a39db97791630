//! A PE's connection to the store, plain TCP or TLS, with timeouts on the TCP socket underneath.
//! (The store's side of the connections is nonblocking: see `server.rs`.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

/// A connection to the store.
pub enum Conn {
    Plain(TcpStream),
    Client(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Client(s) => &s.sock,
        }
    }

    /// The TCP socket's descriptor.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(self.tcp())
    }

    /// A second handle on the TCP socket (to shut it down without the connection's lock).
    pub fn tcp_handle(&self) -> std::io::Result<TcpStream> {
        self.tcp().try_clone()
    }

    pub fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        self.tcp().set_read_timeout(t)
    }

    /// Completes the TLS handshake now, so its failure is reported as such (no-op for plain TCP).
    pub fn handshake(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Plain(_) => Ok(()),
            Conn::Client(s) => {
                while s.conn.is_handshaking() {
                    retry_interrupted(s.conn.complete_io(&mut s.sock))?;
                }
                Ok(())
            }
        }
    }
}

/// An interrupted step (EINTR: a signal reached a read with a timeout) is retried by the caller's
/// loop: it counts as no progress, not as an error.
fn retry_interrupted<T: Default>(r: std::io::Result<T>) -> std::io::Result<T> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(T::default()),
        other => other,
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Client(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Client(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Client(s) => s.flush(),
        }
    }
}
