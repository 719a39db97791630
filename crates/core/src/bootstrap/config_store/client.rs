//! The config store client: every PE (PE 0 included) talks to the store through a request
//! connection ([`Client`]) and a watch connection ([`Watcher`]).

use crate::util::Locked;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;

use super::conn::Conn;
use super::fork::ForkGuard;
use super::protocol::{
    FrameReader, HEARTBEAT_INTERVAL, MAX_CONTROL_FRAME, MAX_PART, Message, NOT_ADMITTED, Proc, VERSION,
    WATCH_GAP, max_result_frame, read_frame, write_frame,
};
use crate::error::{Error, Result};

/// Where and how to reach the store.
#[derive(Clone)]
pub struct Target {
    pub addrs: Vec<SocketAddr>,
    pub token: Vec<u8>,
    pub pe: usize,
    pub n_pes: usize,
    pub connect_timeout: Duration,
    /// TLS client configuration and the name PE 0's certificate must carry.
    pub tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// Where PE 0 publishes the job secret, when the job has no other (`token` is then unused):
    /// read before each attempt, since a file left by an earlier job is replaced when PE 0 starts.
    pub secret_file: Option<std::path::PathBuf>,
}

/// Tells a message that ends the job (or this PE's part in it) on stderr as well as in the log,
/// whatever the log settings: a log file is not where a user looks first.
pub fn announce(msg: &str) {
    log::error!("{msg}");
    log::logger().flush();
    if !crate::logging::errors_on_stderr() {
        crate::logging::write_stderr(&format!("aclshmem: {msg}\n"));
    }
}

enum Attempt {
    Retry(String),
    Rejected(String),
    /// This process is out of descriptors: retrying will not help.
    NoFiles(std::io::Error),
}

/// TLS handshakes the store ended before completing; after this many the cause is reported.
const HANDSHAKE_EOF_LIMIT: u32 = 3;

impl Target {
    /// Connects and presents the job secret, retrying (connection refused, store not yet listening,
    /// store restarting) with back-off until `connect_timeout`. A refusal is final.
    fn open(&self, watch: bool) -> Result<(Conn, u64, Proc)> {
        let deadline = Instant::now() + self.connect_timeout;
        let mut pause = Duration::from_millis(10);
        let mut last_err = String::from("no address");
        let mut handshake_eofs = 0;
        loop {
            let token = match &self.secret_file {
                None => Some(self.token.clone()),
                Some(path) => match super::secret::read(path) {
                    Ok(t) => Some(t),
                    Err(why) => {
                        last_err = format!("waiting for PE 0's job secret: {why}");
                        None
                    }
                },
            };
            for addr in self.addrs.iter().filter(|_| token.is_some()) {
                let token = token.as_deref().unwrap_or_default();
                match self.try_once(addr, token, watch, &mut handshake_eofs) {
                    Ok(admitted) => return Ok(admitted),
                    // the secret file was left by an earlier job: PE 0 replaces it
                    Err(Attempt::Rejected(reason))
                        if self.secret_file.is_some() && reason == NOT_ADMITTED =>
                    {
                        last_err = format!("{addr}: {reason} (secret of an earlier job?)");
                    }
                    Err(Attempt::Rejected(reason)) => {
                        let msg = format!("config store at {addr} refused PE {}: {reason}", self.pe);
                        if reason.contains(super::server::OUT_OF_FILES) {
                            announce(&msg);
                        }
                        return Err(Error::Inner(msg));
                    }
                    Err(Attempt::NoFiles(e)) => {
                        let msg = format!(
                            "PE {} cannot connect to the config store at {addr}: {e}; raise the \
                             open-file limit (`ulimit -n`)",
                            self.pe
                        );
                        announce(&msg);
                        return Err(Error::Inner(msg));
                    }
                    Err(Attempt::Retry(e)) => last_err = format!("{addr}: {e}"),
                }
            }
            if Instant::now() + pause > deadline {
                let msg = format!(
                    "PE {} could not reach the config store within {} s ({last_err})",
                    self.pe,
                    self.connect_timeout.as_secs()
                );
                announce(&msg);
                return Err(Error::Inner(msg));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(250));
        }
    }

    fn try_once(
        &self,
        addr: &SocketAddr,
        token: &[u8],
        watch: bool,
        handshake_eofs: &mut u32,
    ) -> std::result::Result<(Conn, u64, Proc), Attempt> {
        // invalid data (a TLS error such as a refused certificate, or a garbled answer) will not go
        // away by retrying
        let retry = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::InvalidData => Attempt::Rejected(format!("TLS or protocol error: {e}")),
            _ if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => Attempt::NoFiles(e),
            _ => Attempt::Retry(e.to_string()),
        };
        let tcp = TcpStream::connect_timeout(addr, Duration::from_secs(2)).map_err(retry)?;
        tcp.set_nodelay(true).map_err(retry)?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(retry)?;
        let mut conn = match &self.tls {
            None => Conn::Plain(tcp),
            Some((cfg, name)) => {
                let c = rustls::ClientConnection::new(cfg.clone(), name.clone())
                    .map_err(|e| Attempt::Rejected(format!("TLS session: {e}")))?;
                Conn::Client(Box::new(rustls::StreamOwned::new(c, super::conn::NoSigPipe(tcp))))
            }
        };
        if let Err(e) = conn.handshake() {
            if matches!(
                e.kind(),
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
            ) {
                *handshake_eofs += 1;
                if *handshake_eofs >= HANDSHAKE_EOF_LIMIT {
                    return Err(Attempt::Rejected(
                        "the store ended every TLS handshake: is TLS enabled on PE 0 too, with the same CA?"
                            .into(),
                    ));
                }
                return Err(Attempt::Retry(format!("TLS handshake: {e}")));
            }
            return Err(match retry(e) {
                Attempt::Retry(r) => Attempt::Rejected(format!("TLS handshake failed: {r}")),
                other => other,
            });
        }
        let hello = Message::Hello {
            version: VERSION,
            token: token.to_vec(),
            pe: self.pe as u32,
            n_pes: self.n_pes as u32,
            watch,
            who: Proc::me(),
        };
        write_frame(&mut conn, &hello).map_err(retry)?;
        // a TLS store answers a plain hello with a TLS record (alert), not a frame
        let mut prefix = [0u8; 4];
        std::io::Read::read_exact(&mut conn, &mut prefix).map_err(retry)?;
        if self.tls.is_none() && matches!(prefix[0], 0x15 | 0x16) && prefix[1] == 0x03 {
            return Err(Attempt::Rejected(
                "the store speaks TLS: enable it on this PE too (aclshmemx_set_conf_store_tls)".into(),
            ));
        }
        let mut rest = std::io::Read::chain(&prefix[..], &mut conn);
        match read_frame(&mut rest, MAX_CONTROL_FRAME).map_err(retry)? {
            Message::Welcome { session, store } => Ok((conn, session, store)),
            Message::Reject { reason } if reason.contains("shutting down") => Err(Attempt::Retry(reason)),
            Message::Reject { reason } => Err(Attempt::Rejected(reason)),
            other => Err(Attempt::Retry(format!("unexpected answer {other:?}"))),
        }
    }
}

/// How long an answer is awaited before [`Client::allgather_checked`] first asks its check.
const FIRST_CHECK: Duration = Duration::from_millis(20);

/// The request connection: collectives are request/response on it.
pub struct Client {
    /// Declared first: unregistered before the socket closes.
    _fork: ForkGuard,
    stream: Mutex<(Conn, u64)>,
    pub session: u64,
    pe: usize,
    /// Largest answer the store can send this job (an allgather result).
    max_answer: usize,
    /// How long an answer may take (the store's operation timeout and a margin).
    read_timeout: Duration,
}

impl Client {
    pub fn connect(target: &Target, op_timeout: Duration) -> Result<Client> {
        let (conn, session, _) = target.open(false)?;
        // the store answers a collective within op_timeout (or says why not)
        let read_timeout = op_timeout + Duration::from_secs(5);
        conn.set_read_timeout(Some(read_timeout))?;
        Ok(Client {
            _fork: ForkGuard::register(conn.raw_fd()),
            stream: Mutex::new((conn, 0)),
            session,
            pe: target.pe,
            max_answer: max_result_frame(target.n_pes),
            read_timeout,
        })
    }

    /// Contributes `data` to the next collective and returns every PE's contribution.
    pub fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.allgather_checked(data, None)
    }

    /// [`Client::allgather`]; while the answer is awaited, `check` (when given) is asked now and
    /// then (from [`FIRST_CHECK`] on, at doubling intervals up to 100 ms) whether another PE is busy with
    /// something else and will not contribute: then this PE gives the collective up
    /// ([`Message::Abandon`]), which fails it on every PE with the reason `check` gave.
    pub fn allgather_checked(
        &self,
        data: &[u8],
        check: Option<&dyn Fn() -> Option<String>>,
    ) -> Result<Vec<Vec<u8>>> {
        if data.len() > MAX_PART {
            return Err(Error::Bootstrap(format!(
                "PE {}: a bootstrap allgather of {} bytes exceeds the config store's limit of {MAX_PART}",
                self.pe,
                data.len()
            )));
        }
        let mut guard = self.stream.locked();
        let (stream, seq) = &mut *guard;
        *seq += 1;
        let my_seq = *seq;
        let lost = |e: std::io::Error| {
            let msg = format!("PE {}: config store connection lost: {e}", self.pe);
            announce(&msg);
            Error::Bootstrap(msg)
        };
        let failed = |reason: String| {
            announce(&format!("[PE {}] bootstrap collective failed: {reason}", self.pe));
            reason
        };
        write_frame(
            stream,
            &Message::Allgather {
                seq: my_seq,
                data: data.to_vec(),
            },
        )
        .map_err(lost)?;
        let mut abandoned = false;
        let answer = match check {
            None => read_frame(stream, self.max_answer),
            Some(check) => self.await_answer(stream, my_seq, check, &mut abandoned),
        };
        match answer {
            Ok(Message::AllgatherResult { seq, parts }) if seq == my_seq => Ok(parts),
            Ok(Message::Failed { reason, .. }) if abandoned => Err(Error::InvalidParam(failed(reason))),
            // the store could not take the job's connections: not a timeout
            Ok(Message::Failed { reason, .. }) if reason.starts_with(super::server::OUT_OF_FILES) => {
                Err(Error::Inner(failed(reason)))
            }
            Ok(Message::Failed { reason, .. }) => Err(Error::Timeout(failed(reason))),
            Ok(other) => Err(Error::Bootstrap(format!(
                "unexpected answer from the config store: {other:?}"
            ))),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(Error::Timeout(failed(format!(
                    "PE {}: the config store did not answer in time",
                    self.pe
                ))))
            }
            Err(e) => Err(lost(e)),
        }
    }

    /// The answer to collective `seq`, read in short slices so that `check` can be asked between
    /// them (see [`Client::allgather_checked`]); the connection's read timeout is restored after.
    fn await_answer(
        &self,
        stream: &mut Conn,
        seq: u64,
        check: &dyn Fn() -> Option<String>,
        abandoned: &mut bool,
    ) -> std::io::Result<Message> {
        let started = Instant::now();
        let deadline = started + self.read_timeout;
        let mut slice = Duration::from_millis(2);
        let mut frames = FrameReader::new(self.max_answer);
        let answer = loop {
            stream.set_read_timeout(Some(slice))?;
            match frames.poll(stream) {
                Ok(Some(m)) => break Ok(m),
                Ok(None) => {}
                Err(e) => break Err(e),
            }
            if Instant::now() >= deadline {
                break Err(std::io::ErrorKind::TimedOut.into());
            }
            // (a round of a large job takes a while: the others' states, read through the
            // network for each PE, are looked at only once the wait lasts)
            if !*abandoned
                && started.elapsed() >= FIRST_CHECK
                && let Some(reason) = check()
            {
                // the store fails the collective on every PE in it, this one included, and
                // answers as for any failure
                if let Err(e) = write_frame(stream, &Message::Abandon { seq, reason }) {
                    break Err(e);
                }
                *abandoned = true;
            }
            slice = (slice * 2).min(Duration::from_millis(100));
        };
        stream.set_read_timeout(Some(self.read_timeout))?;
        answer
    }

    /// Tells the store this PE is done and waits until the store closes the connection, which it
    /// does once every PE of the job has said so (bounded by the read timeout).
    pub fn bye(&self) {
        let mut guard = self.stream.locked();
        if write_frame(&mut guard.0, &Message::Bye).is_ok() {
            let mut sink = [0u8; 64];
            loop {
                match std::io::Read::read(&mut guard.0, &mut sink) {
                    Ok(n) if n > 0 => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    _ => break,
                }
            }
        }
    }
}

/// How long the watch thread holds its connection before letting a writer (global exit) in.
const WATCH_POLL: Duration = Duration::from_millis(100);

/// The PE's watch connection: a thread that waits for job events from the store and ends this
/// process when the job ends — another PE called global exit (exit with its status), another PE
/// died, or the store itself is gone (exit 1, after logging which). Closed at finalize first, so a
/// normal end is not mistaken for a failure.
pub struct Watcher {
    /// Declared first: unregistered before the sockets close.
    _fork: [ForkGuard; 2],
    conn: Arc<Mutex<Conn>>,
    socket: TcpStream,
    closing: Arc<AtomicBool>,
    /// A writer (global exit) waits for `conn`: the watch thread stays out of it meanwhile (the
    /// lock is not fair: the thread took it back at once after each poll, and a global exit
    /// waited for ever; seen when a UCX timeout ended the job).
    writing: Arc<AtomicBool>,
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// How long a PE that learned of another's death waits before it exits ([`end_process`]): ten
/// polls of `aclshmrun`, so the PE that died is reaped in an earlier one.
const LOSS_EXIT_DELAY: Duration = Duration::from_millis(50);

fn end_process(pe: usize, msg: std::io::Result<Option<Message>>) -> ! {
    let status = match msg {
        Ok(Some(Message::ExitNotice { pe: from, status })) => {
            let code = crate::util::job_status(status);
            if from as usize == pe && crate::util::library_ends_job() {
                // (the library's reason is on the line before; the program called nothing)
                announce(&format!(
                    "[PE {pe}] the library ended the job for the reason above: exiting with status {code}"
                ));
            } else {
                announce(&format!(
                    "[PE {pe}] PE {from} called aclshmem_global_exit({status}): exiting with status {code}"
                ));
            }
            code
        }
        Ok(Some(Message::PeerDied { pe: dead })) => {
            announce(&format!(
                "[PE {pe}] PE {dead} died or became unreachable (its connection to the config store \
                 closed, or went silent for ACLSHMEM_HEARTBEAT_TIMEOUT, without a finalize): exiting"
            ));
            // the PE that died has ended (its connections closed); those it takes along end a
            // little later, so a launcher that polls its PEs sees it end first and names it: a PE
            // that failed with status 1 (an uncaught Python exception), reaped in one poll with
            // the others, was named after the lowest-numbered of them
            std::thread::sleep(LOSS_EXIT_DELAY);
            1
        }
        Ok(None) if pe == 0 => {
            announce(
                "[PE 0] the config store this PE runs sent no heartbeat within \
                 ACLSHMEM_HEARTBEAT_TIMEOUT: its thread is stuck; exiting",
            );
            1
        }
        Ok(None) => {
            announce(&format!(
                "[PE {pe}] lost the config store run by PE 0 (no heartbeat within \
                 ACLSHMEM_HEARTBEAT_TIMEOUT): PE 0 died, or this node or PE 0's is unreachable; exiting"
            ));
            1
        }
        other => {
            announce(&format!(
                "[PE {pe}] lost the config store run by PE 0 ({other:?}): PE 0 died, or its node is \
                 unreachable; exiting"
            ));
            // (as for `PeerDied`: PE 0, whose connection ended, is seen to end first)
            std::thread::sleep(LOSS_EXIT_DELAY);
            1
        }
    };
    crate::util::exit_process(status)
}

/// Whether a side silent for `quiet` is taken for dead, with heartbeat timeout `hb`: after `hb`,
/// unless it is a process of this node that is still alive, which gets
/// [`super::protocol::silence_factor`] timeouts (on a crowded machine its heartbeat thread may get
/// no CPU for that long); one found dead ends at once.
pub(super) fn silent_too_long(quiet: Duration, hb: Duration, who: &Proc) -> bool {
    if quiet <= hb {
        return false;
    }
    match who.alive() {
        Some(true) => quiet > hb * super::liveness::silence_factor(),
        _ => true,
    }
}

impl Watcher {
    /// Starts watching. With a `heartbeat` timeout the thread sends a `Ping` every
    /// [`HEARTBEAT_INTERVAL`] and takes the store for dead when it heard nothing for that long.
    pub fn start(target: &Target, heartbeat: Option<Duration>) -> Result<Watcher> {
        let (conn, _, store) = target.open(true)?;
        conn.set_read_timeout(Some(WATCH_POLL))?;
        let socket = conn.tcp_handle()?;
        let fork = [
            ForkGuard::register(conn.raw_fd()),
            ForkGuard::register(std::os::fd::AsRawFd::as_raw_fd(&socket)),
        ];
        let conn = Arc::new(Mutex::new(conn));
        let closing = Arc::new(AtomicBool::new(false));
        let writing = Arc::new(AtomicBool::new(false));
        let (reader, flag, pe, writer) = (conn.clone(), closing.clone(), target.pe, writing.clone());
        let thread = std::thread::Builder::new()
            .name("aclshmem-watch".into())
            .spawn(move || {
                crate::logging::internal_thread();
                let mut frames = FrameReader::new(MAX_CONTROL_FRAME);
                let mut heard = Instant::now();
                let mut next_ping = Instant::now();
                let mut last_look = Instant::now();
                loop {
                    if writer.load(Ordering::Acquire) {
                        // let the writer in (see `Watcher::writing`)
                        std::thread::sleep(Duration::from_millis(1));
                        if flag.load(Ordering::SeqCst) {
                            return;
                        }
                        continue;
                    }
                    let polled = {
                        let mut c = reader.locked();
                        if heartbeat.is_some() && Instant::now() >= next_ping {
                            // a failed write shows as the connection's end on the next read
                            let _ = write_frame(&mut *c, &Message::Ping);
                            next_ping = Instant::now() + HEARTBEAT_INTERVAL;
                        }
                        frames.poll(&mut *c)
                    };
                    if flag.load(Ordering::SeqCst) {
                        return;
                    }
                    let now = Instant::now();
                    if now.duration_since(last_look) > WATCH_GAP {
                        // this thread did not run for a while: the silence does not count
                        heard = now;
                    }
                    last_look = now;
                    match polled {
                        // silence is judged only once everything received was read (a PE that
                        // was stopped finds the store's pings waiting when it continues)
                        Ok(None) => {
                            if heartbeat.is_some_and(|hb| silent_too_long(heard.elapsed(), hb, &store)) {
                                end_process(pe, Ok(None));
                            }
                        }
                        Ok(Some(Message::Welcome { .. } | Message::Ping)) => heard = Instant::now(),
                        other => end_process(pe, other),
                    }
                }
            })
            .map_err(|e| crate::error::thread_error("config store watcher", e))?;
        Ok(Watcher {
            _fork: fork,
            conn,
            socket,
            closing,
            writing,
            thread: std::sync::Mutex::new(Some(thread)),
        })
    }

    /// Asks the store to end the job with `status` (the store tells every PE, this one included).
    pub fn global_exit(&self, status: i32) {
        self.writing.store(true, Ordering::Release);
        let mut c = self.conn.locked();
        let _ = write_frame(&mut *c, &Message::GlobalExit { status });
        drop(c);
        self.writing.store(false, Ordering::Release);
    }

    /// Stops watching (finalize).
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        // wakes the thread at once (its read ends); it then sees the flag
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        if let Some(t) = self.thread.locked().take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.close();
    }
}
