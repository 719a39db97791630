//! A PE's connection to the store, plain TCP or TLS, with timeouts on the TCP socket underneath.
//! (The store's side of the connections is nonblocking: see `server.rs`.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

/// A socket whose writes never raise SIGPIPE. std's `write` on a TCP socket sends with
/// `MSG_NOSIGNAL`, but its `write_vectored` is a plain `writev`, and rustls writes its records with
/// `write_vectored`: to a peer that has gone, that raises SIGPIPE, whose default action (a C
/// program does not ignore it, as Rust programs do) ended a PE at the end of a TLS job. Here
/// `write_vectored` is the default one, which writes through `write`.
pub struct NoSigPipe<S>(pub S);

impl<S: Read> Read for NoSigPipe<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl<S: Write> Write for NoSigPipe<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A connection to the store.
pub enum Conn {
    Plain(TcpStream),
    Client(Box<StreamOwned<ClientConnection, NoSigPipe<TcpStream>>>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Client(s) => &s.sock.0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::IoSlice;
    use std::net::TcpListener;

    /// With SIGPIPE's default action (a C program's), vectored writes to a peer that has gone fail
    /// with EPIPE instead of ending the process (checked in a forked child: the test harness
    /// ignores SIGPIPE, as every Rust program does). Plain `&TcpStream` ends the child.
    #[test]
    fn vectored_writes_to_a_peer_that_has_gone_raise_no_sigpipe() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        drop(b);
        drop(l);
        // SAFETY: the child makes system calls only (no allocation, no lock) and ends with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: as above.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
            let mut s = NoSigPipe(&a);
            let mut code = 3;
            for _ in 0..200 {
                match s.write_vectored(&[IoSlice::new(b"x"), IoSlice::new(b"y")]) {
                    Ok(_) => std::thread::sleep(Duration::from_millis(5)),
                    Err(e) if e.raw_os_error() == Some(libc::EPIPE) => {
                        code = 0;
                        break;
                    }
                    Err(_) => {
                        code = 2;
                        break;
                    }
                }
            }
            // SAFETY: ends the child without running the parent's handlers.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status:#x} (signal {})",
            libc::WTERMSIG(status)
        );
    }
}
