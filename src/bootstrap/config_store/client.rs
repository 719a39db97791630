//! The config store client: every PE (PE 0 included) talks to the store through one of these.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{Message, VERSION, read_frame, write_frame};
use crate::error::{Error, Result};

/// A connection admitted by the store.
pub struct Client {
    stream: Mutex<(TcpStream, u64)>,
    pub session: u64,
    pe: usize,
}

/// Connects to `addrs` and presents the job secret, retrying (connection refused, store not yet
/// listening, store restarting) with back-off until `connect_timeout`. A `Reject` is final.
fn open(
    addrs: &[SocketAddr],
    token: &[u8],
    pe: usize,
    n_pes: usize,
    watch: bool,
    connect_timeout: Duration,
) -> Result<(TcpStream, u64)> {
    let deadline = Instant::now() + connect_timeout;
    let mut pause = Duration::from_millis(10);
    let mut last_err = String::from("no address");
    loop {
        for addr in addrs {
            match try_once(addr, token, pe, n_pes, watch) {
                Ok(admitted) => return Ok(admitted),
                Err(Attempt::Rejected(reason)) => {
                    return Err(Error::Inner(format!(
                        "config store at {addr} refused PE {pe}: {reason}"
                    )));
                }
                Err(Attempt::Retry(e)) => last_err = format!("{addr}: {e}"),
            }
        }
        if Instant::now() + pause > deadline {
            return Err(Error::Inner(format!(
                "PE {pe} could not reach the config store within {} s ({last_err})",
                connect_timeout.as_secs()
            )));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(250));
    }
}

fn try_once(
    addr: &SocketAddr,
    token: &[u8],
    pe: usize,
    n_pes: usize,
    watch: bool,
) -> std::result::Result<(TcpStream, u64), Attempt> {
    let retry = |e: std::io::Error| Attempt::Retry(e.to_string());
    let mut s = TcpStream::connect_timeout(addr, Duration::from_secs(2)).map_err(retry)?;
    s.set_nodelay(true).map_err(retry)?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(retry)?;
    let hello = Message::Hello {
        version: VERSION,
        token: token.to_vec(),
        pe: pe as u32,
        n_pes: n_pes as u32,
        watch,
    };
    write_frame(&mut s, &hello).map_err(retry)?;
    match read_frame(&mut s).map_err(retry)? {
        Message::Welcome { session } => Ok((s, session)),
        Message::Reject { reason } if reason.contains("shutting down") => Err(Attempt::Retry(reason)),
        Message::Reject { reason } => Err(Attempt::Rejected(reason)),
        other => Err(Attempt::Retry(format!("unexpected answer {other:?}"))),
    }
}

impl Client {
    /// Opens the request connection (see [`open`]).
    pub fn connect(
        addrs: &[SocketAddr],
        token: &[u8],
        pe: usize,
        n_pes: usize,
        connect_timeout: Duration,
        op_timeout: Duration,
    ) -> Result<Client> {
        let (stream, session) = open(addrs, token, pe, n_pes, false, connect_timeout)?;
        // the store answers a collective within op_timeout (or says why not)
        stream.set_read_timeout(Some(op_timeout + Duration::from_secs(5)))?;
        Ok(Client {
            stream: Mutex::new((stream, 0)),
            session,
            pe,
        })
    }

    /// Contributes `data` to the next collective and returns every PE's contribution.
    pub fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut guard = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        let (stream, seq) = &mut *guard;
        *seq += 1;
        let my_seq = *seq;
        write_frame(
            stream,
            &Message::Allgather {
                seq: my_seq,
                data: data.to_vec(),
            },
        )
        .map_err(|e| Error::Bootstrap(format!("PE {}: config store connection lost: {e}", self.pe)))?;
        match read_frame(stream) {
            Ok(Message::AllgatherResult { seq, parts }) if seq == my_seq => Ok(parts),
            Ok(Message::Failed { reason, .. }) => Err(Error::Timeout(reason)),
            Ok(other) => Err(Error::Bootstrap(format!(
                "unexpected answer from the config store: {other:?}"
            ))),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(Error::Timeout(format!(
                    "PE {}: the config store did not answer in time",
                    self.pe
                )))
            }
            Err(e) => Err(Error::Bootstrap(format!(
                "PE {}: config store connection lost: {e}",
                self.pe
            ))),
        }
    }

    /// Tells the store this PE is done and waits until the store closes the connection, which it
    /// does once every PE of the job has said so (bounded by the read timeout).
    pub fn bye(&self) {
        let mut guard = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if write_frame(&mut guard.0, &Message::Bye).is_ok() {
            let mut sink = [0u8; 64];
            while matches!(std::io::Read::read(&mut guard.0, &mut sink), Ok(n) if n > 0) {}
        }
    }
}

enum Attempt {
    Retry(String),
    Rejected(String),
}

/// The PE's watch connection: a thread that waits for job events from the store and ends this
/// process when the job ends — another PE called global exit (exit with its status), another PE
/// died, or the store itself is gone (exit 1, after logging which). Closed at finalize first, so a
/// normal end is not mistaken for a failure.
pub struct Watcher {
    stream: TcpStream,
    closing: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    pub fn start(
        addrs: &[SocketAddr],
        token: &[u8],
        pe: usize,
        n_pes: usize,
        connect_timeout: Duration,
    ) -> Result<Watcher> {
        let (stream, _) = open(addrs, token, pe, n_pes, true, connect_timeout)?;
        stream.set_read_timeout(None)?;
        let mut reader = stream.try_clone()?;
        let closing = Arc::new(AtomicBool::new(false));
        let flag = closing.clone();
        let thread = std::thread::Builder::new()
            .name("aclshmem-watch".into())
            .spawn(move || {
                let event = read_frame(&mut reader);
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                match event {
                    Ok(Message::ExitNotice { pe: from, status }) => {
                        log::error!("[PE {pe}] PE {from} called aclshmem_global_exit({status}): exiting with status {status}");
                        log::logger().flush();
                        std::process::exit(status);
                    }
                    Ok(Message::PeerDied { pe: dead }) => {
                        log::error!("[PE {pe}] PE {dead} died (it left the job without finalizing): exiting");
                        log::logger().flush();
                        std::process::exit(1);
                    }
                    other => {
                        log::error!("[PE {pe}] lost the config store run by PE 0 ({other:?}): PE 0 died; exiting");
                        log::logger().flush();
                        std::process::exit(1);
                    }
                }
            })?;
        Ok(Watcher {
            stream,
            closing,
            thread: Some(thread),
        })
    }

    /// Asks the store to end the job with `status` (the store tells every PE, this one included).
    pub fn global_exit(&self, status: i32) {
        let mut s = &self.stream;
        let _ = write_frame(&mut s, &Message::GlobalExit { status });
    }

    /// Stops watching (finalize).
    pub fn close(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.close();
    }
}
