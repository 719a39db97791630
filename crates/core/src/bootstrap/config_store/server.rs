//! The config store server, run by PE 0: admits the job's PEs and serves their allgathers.
//!
//! One thread runs an event loop over nonblocking sockets (epoll): it accepts connections, reads
//! their `Hello`, serves the admitted PEs' collectives and pushes job events to their watch
//! connections. Nothing it does for one connection waits for another, so a notice reaches every
//! PE at once and no client can hold the store up.
//!
//! Connections that have not proved the job secret yet ("strangers") cost little and not for
//! long: a frame longer than the longest `Hello` ends the connection as soon as its length prefix
//! arrives; the whole `Hello` (TLS handshake included) must arrive within [`HELLO_TIMEOUT`] of the
//! connection; at most [`MAX_STRANGERS`] wait at once, and a new one evicts the oldest. A PE of the
//! job sends its `Hello` as soon as it is connected and, if it was evicted all the same, connects
//! again. Strangers that present a wrong secret get a `Reject` that says nothing about the job.
//!
//! A collective completes when every PE contributed; a PE that disconnects without saying `Bye` is
//! marked dead and every pending and later collective fails at once naming it. A collective that
//! does not complete within the operation timeout fails naming the PEs that never arrived: on
//! every PE waiting in it then, and on every PE that arrives at it later (at once), so the PEs
//! agree that it failed (one that came late never completes it with the parts the others left,
//! which would give it an allocation the others lack).
//!
//! `unsafe`: epoll and the listener's shutdown through libc.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::silent_too_long;
use super::protocol::{
    FrameReader, HEARTBEAT_INTERVAL, MAX_CONTROL_FRAME, MAX_HELLO_FRAME, MAX_REQUEST_FRAME, Message,
    NOT_ADMITTED, Proc, VERSION, WATCH_GAP, encode, secrets_equal,
};
use super::secret::Published as PublishedSecret;
use crate::util::Locked;

/// How long a new connection may take to present its whole `Hello` (TLS handshake included).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// Most connections waiting for their `Hello` at once; one more evicts the oldest.
pub const MAX_STRANGERS: usize = 64;
/// Period of the loop's bookkeeping: hello deadlines, collective timeouts, finalize timeouts.
const TICK: Duration = Duration::from_millis(50);
/// Connections accepted per wake-up, so a flood of connections cannot starve the job's PEs.
const ACCEPTS_PER_WAKE: usize = 64;
/// Reads per connection and wake-up (epoll is level-triggered: the rest comes next round).
const READS_PER_WAKE: usize = 8;
/// Dropped strangers logged per [`DROP_LOG_WINDOW`]; the rest are counted in one line.
const DROP_LOG_LINES: u32 = 20;
const DROP_LOG_WINDOW: Duration = Duration::from_secs(10);

/// How long the store may lack descriptors without admitting a PE before the job fails.
const STARVED_FOR: Duration = Duration::from_secs(1);
/// How the reason starts when the store runs out of descriptors (a client that is told so
/// reports it on stderr).
pub const OUT_OF_FILES: &str = "the config store (PE 0) ran out of file descriptors";
const LISTENER: u64 = 0;
const WAKER: u64 = 1;

/// A list of PE numbers for a message, at most 32 of them.
pub fn pe_list(pes: &[usize]) -> String {
    if pes.len() <= 32 {
        return format!("{pes:?}");
    }
    let head: Vec<String> = pes[..32].iter().map(usize::to_string).collect();
    format!("[{}, ... ({} more)]", head.join(", "), pes.len() - 32)
}

/// What the store thread publishes for [`Server::shutdown`].
#[derive(Default)]
struct Published {
    /// PEs admitted and neither finished nor dead.
    busy: usize,
}

struct Shared {
    published: Mutex<Published>,
    changed: Condvar,
}

/// A running store. Dropping it without [`Server::shutdown`] stops it at once.
pub struct Server {
    shared: Arc<Shared>,
    waker: UnixStream,
    thread: Option<JoinHandle<()>>,
    /// Two connections per PE (requests and watch), counted against the open-file limit.
    _files: crate::util::FileReservation,
}

impl Server {
    /// Starts serving on `listener` for a job of `n_pes` PEs presenting `token`.
    pub fn start(
        listener: TcpListener,
        n_pes: usize,
        token: Vec<u8>,
        op_timeout: Duration,
        tls: Option<Arc<rustls::ServerConfig>>,
        published: Option<PublishedSecret>,
        heartbeat: Option<Duration>,
    ) -> std::io::Result<Server> {
        // before the first connection: PE 0 of a job of 500 PEs ran out of descriptors at the
        // usual soft limit of 1024, and the late PEs' connections were dropped until they gave up
        let files = crate::util::reserve_files(
            (n_pes as u64).saturating_mul(2).saturating_add(4),
            &format!("the config store of {n_pes} PEs"),
        );
        let mut session = [0u8; 8];
        getrandom::fill(&mut session).map_err(|e| std::io::Error::other(e.to_string()))?;
        listener.set_nonblocking(true)?;
        let (waker, wake_end) = UnixStream::pair()?;
        wake_end.set_nonblocking(true)?;
        let epoll = Epoll::new()?;
        epoll.add(listener.as_raw_fd(), libc::EPOLLIN as u32, LISTENER)?;
        epoll.add(wake_end.as_raw_fd(), libc::EPOLLIN as u32, WAKER)?;
        let shared = Arc::new(Shared {
            published: Mutex::new(Published::default()),
            changed: Condvar::new(),
        });
        let store = Store {
            n_pes,
            token,
            session: u64::from_le_bytes(session),
            op_timeout,
            tls,
            epoll,
            listener,
            listening: true,
            out_of_files: false,
            job_failed: None,
            spare: std::fs::File::open("/dev/null").ok(),
            starved_since: None,
            accept_paused_until: None,
            _wake_end: wake_end,
            peers: HashMap::new(),
            next_token: WAKER + 1,
            strangers: VecDeque::new(),
            n_strangers: 0,
            pes: (0..n_pes).map(|_| Pe::default()).collect(),
            dead: Vec::new(),
            absent: Vec::new(),
            rounds: HashMap::new(),
            exiting: None,
            stopping: false,
            broken: Vec::new(),
            dirty: true,
            shared: shared.clone(),
            drops: DropLog::default(),
            published,
            heartbeat,
            next_ping: Instant::now(),
            last_look: Instant::now(),
        };
        let thread = std::thread::Builder::new()
            .name("aclshmem-store".into())
            .spawn(move || {
                crate::logging::internal_thread();
                store.run()
            })
            // (kind Other: EAGAIN here is a thread limit, not a timeout)
            .map_err(|e| std::io::Error::other(crate::error::thread_error("config store", e).to_string()))?;
        Ok(Server {
            shared,
            waker,
            thread: Some(thread),
            _files: files,
        })
    }

    /// Waits (at most `timeout`) until every admitted PE said `Bye` or disconnected, then stops.
    pub fn shutdown(mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut p = self.shared.published.locked();
        loop {
            let now = Instant::now();
            if p.busy == 0 || now >= deadline {
                if p.busy != 0 {
                    log::warn!("config store: {} PE(s) did not finish before shutdown", p.busy);
                }
                break;
            }
            p = self
                .shared
                .changed
                .wait_timeout(p, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(p);
        self.stop();
    }

    fn stop(&mut self) {
        // the store thread wakes on this byte (or on the socket's end) and returns
        let _ = (&self.waker).write(&[1]);
        let _ = self.waker.shutdown(std::net::Shutdown::Both);
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

/// An epoll instance (level-triggered).
struct Epoll(OwnedFd);

impl Epoll {
    fn new() -> std::io::Result<Epoll> {
        // SAFETY: epoll_create1 has no memory-safety preconditions.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a new descriptor that nothing else owns.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> std::io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: ev is a valid epoll_event that outlives the call; fd is the caller's open socket.
        if unsafe { libc::epoll_ctl(self.0.as_raw_fd(), op, fd, &mut ev) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn add(&self, fd: RawFd, events: u32, token: u64) -> std::io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, events, token)
    }

    fn modify(&self, fd: RawFd, events: u32, token: u64) -> std::io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, events, token)
    }

    fn delete(&self, fd: RawFd) {
        let _ = self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0);
    }

    /// Waits at most `timeout` for events; returns how many of `events` were filled (0 when a
    /// signal interrupted the wait).
    fn wait(&self, events: &mut [libc::epoll_event], timeout: Duration) -> std::io::Result<usize> {
        // round up, so a deadline a fraction of a millisecond away is not a busy loop
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        let max = events.len().min(i32::MAX as usize) as libc::c_int;
        // SAFETY: events is a valid, writable buffer of at least `max` entries.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), events.as_mut_ptr(), max, ms) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(n as usize)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Has not presented a valid `Hello` yet.
    Stranger,
    /// A PE's request connection.
    Request(usize),
    /// A PE's watch connection.
    Watch(usize),
}

/// What one read gave.
enum Received {
    /// Bytes were added to the frame reader.
    Data,
    /// Nothing to read now.
    Nothing,
    /// The peer closed the connection.
    End,
}

/// One connection of the store.
struct Peer {
    tcp: TcpStream,
    tls: Option<Box<rustls::ServerConnection>>,
    frames: FrameReader,
    /// Frames still to send (plain TCP; a TLS session buffers its own output).
    out: VecDeque<(Arc<Vec<u8>>, usize)>,
    role: Role,
    since: Instant,
    addr: String,
    /// EPOLLOUT is registered: output waits for room in the socket.
    writing: bool,
    /// Closed once the output is sent; input is ignored.
    closing: bool,
}

impl Drop for Peer {
    /// Ends the connection itself, not only this process's descriptor of it: a child PE 0 forked
    /// holds a copy of every store socket, and closing ours alone would send the PE nothing (its
    /// `Bye` waited for the end of the connection until the child exited).
    fn drop(&mut self) {
        let _ = self.tcp.shutdown(std::net::Shutdown::Both);
    }
}

impl Peer {
    fn interest(&self) -> u32 {
        let mut ev = 0;
        if !self.closing {
            ev |= libc::EPOLLIN as u32;
        }
        if self.writing {
            ev |= libc::EPOLLOUT as u32;
        }
        ev
    }

    /// Reads what the socket has (one read) into the frame reader.
    fn receive(&mut self) -> std::io::Result<Received> {
        let mut chunk = [0u8; 16 << 10];
        let Some(tls) = self.tls.as_mut() else {
            return loop {
                match self.tcp.read(&mut chunk) {
                    Ok(0) => break Ok(Received::End),
                    Ok(n) => {
                        self.frames.feed(&chunk[..n]);
                        break Ok(Received::Data);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break Ok(Received::Nothing),
                    Err(e) => break Err(e),
                }
            };
        };
        let got = loop {
            match tls.read_tls(&mut self.tcp) {
                Ok(0) => break Received::End,
                Ok(_) => break Received::Data,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break Received::Nothing,
                Err(e) => return Err(e),
            }
        };
        if let Err(e) = tls.process_new_packets() {
            // send the alert if we can, then give up on the connection
            let _ = tls.write_tls(&mut super::conn::NoSigPipe(&self.tcp));
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e));
        }
        loop {
            match tls.reader().read(&mut chunk) {
                Ok(0) => return Ok(Received::End),
                Ok(n) => self.frames.feed(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(Received::End),
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    fn queue(&mut self, frame: Arc<Vec<u8>>) {
        match self.tls.as_mut() {
            None => self.out.push_back((frame, 0)),
            Some(tls) => {
                let _ = tls.writer().write_all(&frame);
            }
        }
    }

    /// Sends queued output until done (`true`) or the socket is full (`false`).
    fn flush(&mut self) -> std::io::Result<bool> {
        if let Some(tls) = self.tls.as_mut() {
            while tls.wants_write() {
                match tls.write_tls(&mut super::conn::NoSigPipe(&self.tcp)) {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) => return Err(e),
                }
            }
            return Ok(true);
        }
        while let Some((frame, off)) = self.out.front_mut() {
            match self.tcp.write(&frame[*off..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    *off += n;
                    if *off == frame.len() {
                        self.out.pop_front();
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// What the store knows about one PE.
#[derive(Default)]
struct Pe {
    request: Option<u64>,
    watch: Option<u64>,
    /// The request connection is open and the PE has not said `Bye`.
    admitted: bool,
    finished: bool,
    /// The collective this PE waits for, and until when.
    waiting: Option<(u64, Instant)>,
    /// After `Bye`: when the store stops waiting for the others on its behalf.
    leave_by: Option<Instant>,
    /// When its watch connection last said something.
    heard: Option<Instant>,
    /// Its process (from the watch connection's hello).
    who: Proc,
}

struct Round {
    parts: Vec<Option<Vec<u8>>>,
    arrived: usize,
    /// Why the round failed (it timed out): every PE that arrives fails with this.
    failed: Option<String>,
}

/// Rate limit of the "dropped connection" log lines.
#[derive(Default)]
struct DropLog {
    window: Option<Instant>,
    logged: u32,
    suppressed: u32,
}

impl DropLog {
    fn note(&mut self, addr: &str, why: &str) {
        let now = Instant::now();
        if self
            .window
            .is_none_or(|w| now.duration_since(w) >= DROP_LOG_WINDOW)
        {
            if self.suppressed > 0 {
                log::warn!(
                    "config store: {} more dropped connections were not logged",
                    self.suppressed
                );
            }
            *self = DropLog {
                window: Some(now),
                ..DropLog::default()
            };
        }
        if self.logged < DROP_LOG_LINES {
            self.logged += 1;
            log::warn!("config store: dropped connection from {addr}: {why}");
        } else {
            self.suppressed += 1;
        }
    }
}

/// The store's state, owned by its thread.
struct Store {
    n_pes: usize,
    token: Vec<u8>,
    session: u64,
    op_timeout: Duration,
    tls: Option<Arc<rustls::ServerConfig>>,
    epoll: Epoll,
    listener: TcpListener,
    /// The listener is registered with epoll (it is taken out for a moment when accept fails
    /// for lack of descriptors).
    listening: bool,
    /// Accepting failed for want of descriptors (logged once).
    out_of_files: bool,
    /// Why the job's bootstrap failed for good (the store ran out of descriptors, or a PE of the
    /// job was started for a job of another size): every waiting and later collective fails with
    /// it, and connections are turned away with it ([`Store::turn_away`]).
    job_failed: Option<String>,
    /// A descriptor kept in reserve: given up for a moment to accept a connection and tell it why
    /// it is turned away when the store is out of descriptors.
    spare: Option<std::fs::File>,
    /// Since when accepting fails for want of descriptors with no PE admitted meanwhile.
    starved_since: Option<Instant>,
    accept_paused_until: Option<Instant>,
    _wake_end: UnixStream,
    peers: HashMap<u64, Peer>,
    next_token: u64,
    /// Strangers in the order they connected (entries of connections gone since are skipped).
    strangers: VecDeque<u64>,
    n_strangers: usize,
    pes: Vec<Pe>,
    dead: Vec<usize>,
    /// PEs that never connected although a collective of the job failed waiting for them: the
    /// others' `Bye`s do not wait for theirs (a job whose init failed so ends at once instead of
    /// after another operation timeout).
    absent: Vec<usize>,
    rounds: HashMap<u64, Round>,
    /// Set once a PE called global exit: deaths that follow are the job ending, not failures.
    exiting: Option<i32>,
    /// Every PE left: no new admission.
    stopping: bool,
    /// Connections whose write failed, dropped at the end of the round.
    broken: Vec<u64>,
    /// The published state may be stale.
    dirty: bool,
    shared: Arc<Shared>,
    drops: DropLog,
    /// The secret file PE 0 published for the others: removed once every PE is connected (or
    /// when the store stops).
    published: Option<PublishedSecret>,
    /// A PE whose watch connection is silent this long is dead (its process may be gone while a
    /// child it forked keeps its sockets open).
    heartbeat: Option<Duration>,
    next_ping: Instant,
    /// When [`Store::heartbeats`] last looked (see [`WATCH_GAP`]).
    last_look: Instant,
}

impl Drop for Store {
    /// Stops listening on the socket itself (a child PE 0 forked holds a copy of the listener,
    /// which would otherwise keep accepting connections for a store that is gone).
    fn drop(&mut self) {
        // SAFETY: shutdown on our own listening socket; no memory is involved.
        unsafe { libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

impl Store {
    fn run(mut self) {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 256];
        let mut next_tick = Instant::now() + TICK;
        loop {
            let wait = next_tick.saturating_duration_since(Instant::now());
            let n = match self.epoll.wait(&mut events, wait) {
                Ok(n) => n,
                Err(e) => {
                    log::error!("config store: epoll_wait failed: {e}");
                    std::thread::sleep(TICK);
                    0
                }
            };
            let mut accept = false;
            for ev in &events[..n] {
                let (token, flags) = (ev.u64, ev.events);
                match token {
                    WAKER => return,
                    LISTENER => accept = true,
                    t => self.on_event(t, flags),
                }
                self.drop_broken();
            }
            // connections already here first: their hellos are read before new ones can evict them
            if accept {
                self.accept();
            }
            let now = Instant::now();
            if now >= next_tick {
                self.sweep(now);
                next_tick = now + TICK;
            }
            self.drop_broken();
            self.publish();
        }
    }

    fn publish(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let busy = (0..self.n_pes)
            .filter(|&p| self.pes[p].admitted && !self.pes[p].finished && !self.dead.contains(&p))
            .count();
        let mut p = self.shared.published.locked();
        p.busy = busy;
        self.shared.changed.notify_all();
    }

    fn accept(&mut self) {
        for _ in 0..ACCEPTS_PER_WAKE {
            match self.listener.accept() {
                Ok((tcp, addr)) => self.adopt(tcp, addr.to_string()),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::ConnectionAborted
                    ) => {}
                Err(e) => {
                    let no_files = matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
                    if no_files && !self.out_of_files {
                        self.out_of_files = true;
                        log::error!(
                            "config store: out of file descriptors ({e}) with {} PEs connected: PEs \
                             still connecting are turned away; raise the open-file limit (`ulimit -n`)",
                            self.peers.len()
                        );
                    }
                    // fewer connections than the job's PEs need fill the descriptors: the job
                    // cannot start; it fails at once, naming the cause, instead of each PE
                    // retrying until its connect timeout and blaming the network (strangers were
                    // evicted to make room: the PEs' own connections, before their hello)
                    // (or evicting strangers to make room has admitted nobody for a while: the
                    // PEs' own connections were evicted before their hello, over and over)
                    let starved = no_files
                        && self.starved_since.get_or_insert_with(Instant::now).elapsed() > STARVED_FOR;
                    if no_files && (self.job_failed.is_some() || self.peers.len() < 2 * self.n_pes || starved)
                    {
                        self.out_of_descriptors(&e);
                        if self.turn_away() {
                            continue;
                        }
                    } else if self.n_strangers > 0 {
                        // out of descriptors (or memory): make room by dropping the oldest
                        // stranger, or stop listening for a moment rather than spin on a readable
                        // listener
                        self.evict_oldest_stranger();
                        continue;
                    }
                    log::warn!("config store: accept failed: {e}");
                    self.epoll.delete(self.listener.as_raw_fd());
                    self.listening = false;
                    self.accept_paused_until = Some(Instant::now() + Duration::from_millis(100));
                    return;
                }
            }
        }
    }

    fn adopt(&mut self, tcp: TcpStream, addr: String) {
        if tcp.set_nonblocking(true).is_err() {
            return;
        }
        let _ = tcp.set_nodelay(true);
        while self.n_strangers >= MAX_STRANGERS {
            self.evict_oldest_stranger();
        }
        let tls = match &self.tls {
            None => None,
            Some(cfg) => match rustls::ServerConnection::new(cfg.clone()) {
                Ok(c) => Some(Box::new(c)),
                Err(e) => return log::warn!("config store: TLS session for {addr} failed: {e}"),
            },
        };
        let token = self.next_token;
        self.next_token += 1;
        let peer = Peer {
            tcp,
            tls,
            frames: FrameReader::new(MAX_HELLO_FRAME),
            out: VecDeque::new(),
            role: Role::Stranger,
            since: Instant::now(),
            addr,
            writing: false,
            closing: false,
        };
        if self
            .epoll
            .add(peer.tcp.as_raw_fd(), peer.interest(), token)
            .is_err()
        {
            return;
        }
        self.peers.insert(token, peer);
        self.strangers.push_back(token);
        self.n_strangers += 1;
    }

    /// The store has no descriptor for another PE's connection: the job's bootstrap fails (once:
    /// every waiting and later collective fails, and the cause goes to stderr too, as PE 0's log
    /// file may not open for the same reason).
    fn out_of_descriptors(&mut self, e: &std::io::Error) {
        if self.job_failed.is_some() {
            return;
        }
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: a valid out-pointer.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        let reason = format!(
            "{OUT_OF_FILES} ({e}) with {} connections of the {} its {} PEs need: raise PE 0's \
             open-file limit (`ulimit -n`, now {}; hard limit {})",
            self.peers.len(),
            2 * self.n_pes,
            self.n_pes,
            lim.rlim_cur,
            lim.rlim_max
        );
        super::client::announce(&reason);
        self.fail_job(reason);
    }

    /// The job's bootstrap fails for good with `reason`: every waiting and later collective fails
    /// with it at once, and the PEs still to come are turned away with it.
    fn fail_job(&mut self, reason: String) {
        for pe in 0..self.n_pes {
            self.fail(pe, reason.clone());
            // the PEs still to come will not: the others' `Bye`s do not wait for them
            if self.pes[pe].request.is_none() && !self.pes[pe].finished && !self.absent.contains(&pe) {
                self.absent.push(pe);
            }
        }
        self.job_failed = Some(reason);
        self.check_all_left();
    }

    /// Accepts one waiting connection with the spare descriptor and tells it why it is turned
    /// away ([`Store::job_failed`]); false when there is no spare or no connection.
    fn turn_away(&mut self) -> bool {
        let (Some(spare), Some(reason)) = (self.spare.take(), self.job_failed.clone()) else {
            return false;
        };
        drop(spare);
        let taken = match self.listener.accept() {
            Ok((mut tcp, _)) => {
                if self.tls.is_none() {
                    // read the hello first: closing with it unread would reset the connection,
                    // and the client could lose the answer
                    let _ = tcp.set_read_timeout(Some(Duration::from_millis(200)));
                    let mut hello = [0u8; 4096];
                    let _ = tcp.read(&mut hello);
                    let _ = tcp.write_all(&encode(&Message::Reject { reason }));
                    let _ = tcp.shutdown(std::net::Shutdown::Write);
                }
                true
            }
            Err(_) => false,
        };
        self.spare = std::fs::File::open("/dev/null").ok();
        taken
    }

    fn evict_oldest_stranger(&mut self) {
        while let Some(t) = self.strangers.pop_front() {
            if self.peers.get(&t).is_some_and(|p| p.role == Role::Stranger) {
                self.lost(t, "evicted: too many connections without a hello");
                return;
            }
        }
    }

    fn on_event(&mut self, token: u64, flags: u32) {
        let Some(peer) = self.peers.get(&token) else {
            return;
        };
        if flags & libc::EPOLLOUT as u32 != 0 || peer.closing {
            self.flush_out(token);
        }
        let readable = (libc::EPOLLIN | libc::EPOLLHUP | libc::EPOLLERR | libc::EPOLLRDHUP) as u32;
        if flags & readable != 0 {
            self.read_from(token);
        }
    }

    fn read_from(&mut self, token: u64) {
        for _ in 0..READS_PER_WAKE {
            let Some(peer) = self.peers.get_mut(&token) else {
                return;
            };
            if peer.closing {
                return;
            }
            match peer.receive() {
                Ok(Received::Data) => {}
                Ok(Received::Nothing) => break,
                Ok(Received::End) => return self.lost(token, "closed before its hello"),
                Err(e) => return self.lost(token, &format!("no valid hello ({e})")),
            }
            loop {
                let Some(peer) = self.peers.get_mut(&token) else {
                    return;
                };
                if peer.closing {
                    break;
                }
                match peer.frames.next_frame() {
                    Ok(Some(msg)) => self.on_message(token, msg),
                    Ok(None) => break,
                    Err(e) => return self.lost(token, &format!("no valid hello ({e})")),
                }
            }
        }
        // TLS handshake records, or answers queued while reading
        self.flush_out(token);
    }

    /// Sends what `token` has queued; registers for writability when the socket is full.
    fn flush_out(&mut self, token: u64) {
        let Some(peer) = self.peers.get_mut(&token) else {
            return;
        };
        let before = peer.interest();
        match peer.flush() {
            Ok(true) => {
                if peer.closing {
                    self.remove(token);
                    return;
                }
                peer.writing = false;
            }
            Ok(false) => peer.writing = true,
            Err(_) => {
                self.broken.push(token);
                return;
            }
        }
        let after = peer.interest();
        if after != before {
            let _ = self.epoll.modify(peer.tcp.as_raw_fd(), after, token);
        }
    }

    fn push(&mut self, token: u64, frame: Arc<Vec<u8>>) {
        if let Some(peer) = self.peers.get_mut(&token) {
            peer.queue(frame);
            self.flush_out(token);
        }
    }

    fn drop_broken(&mut self) {
        while let Some(t) = self.broken.pop() {
            self.lost(t, "write failed");
        }
    }

    /// Takes a connection out: no event of it is read any more, and its socket is closed.
    fn remove(&mut self, token: u64) -> Option<Peer> {
        let peer = self.peers.remove(&token)?;
        self.epoll.delete(peer.tcp.as_raw_fd());
        match peer.role {
            Role::Stranger => self.n_strangers -= 1,
            Role::Request(pe) => {
                if self.pes[pe].request == Some(token) {
                    self.pes[pe].request = None;
                    self.pes[pe].admitted = false;
                    self.dirty = true;
                }
            }
            Role::Watch(pe) => {
                if self.pes[pe].watch == Some(token) {
                    self.pes[pe].watch = None;
                }
            }
        }
        Some(peer)
    }

    /// A connection ended or broke (or is given up on): drop it, and mark its PE dead when it was
    /// a request connection of a PE that had not finalized.
    fn lost(&mut self, token: u64, why: &str) {
        let Some(peer) = self.remove(token) else {
            return;
        };
        match peer.role {
            Role::Stranger => {
                if !self.stopping && !peer.closing {
                    self.drops.note(&peer.addr, why);
                }
            }
            Role::Request(pe) => self.mark_dead(pe),
            // its end is not a death: the request connection tells that
            Role::Watch(_) => {}
        }
    }

    /// Answers a stranger with `Reject` (`sent`) and closes it; logs `why`.
    fn reject(&mut self, token: u64, why: &str, sent: &str) {
        let Some(peer) = self.peers.get_mut(&token) else {
            return;
        };
        self.drops.note(&peer.addr, why);
        peer.closing = true;
        let frame = Arc::new(encode(&Message::Reject {
            reason: sent.to_string(),
        }));
        let fd = peer.tcp.as_raw_fd();
        let interest = peer.interest();
        let _ = self.epoll.modify(fd, interest, token);
        self.push(token, frame);
    }

    fn on_message(&mut self, token: u64, msg: Message) {
        let Some(role) = self.peers.get(&token).map(|p| p.role) else {
            return;
        };
        match (role, msg) {
            (
                Role::Stranger,
                Message::Hello {
                    version,
                    token: secret,
                    pe,
                    n_pes,
                    watch,
                    who,
                },
            ) => self.admit(token, version, &secret, pe as usize, n_pes as usize, watch, who),
            (Role::Stranger, _) => self.reject(token, "first frame is not a hello", NOT_ADMITTED),
            (Role::Request(pe), Message::Allgather { seq, data }) => self.allgather(pe, seq, data),
            (Role::Request(pe), Message::Abandon { seq, reason }) => self.abandon(pe, seq, reason),
            (Role::Request(pe), Message::Bye) => self.bye(pe),
            (Role::Request(pe), other) => {
                log::warn!("config store: PE {pe} sent an unexpected {other:?}; closing");
                self.lost(token, "unexpected frame");
            }
            (Role::Watch(pe), Message::Ping) => self.pes[pe].heard = Some(Instant::now()),
            (Role::Watch(pe), Message::GlobalExit { status }) => {
                self.pes[pe].heard = Some(Instant::now());
                log::error!("config store: PE {pe} called global exit with status {status}");
                self.exiting.get_or_insert(status);
                self.notify(&Message::ExitNotice {
                    pe: pe as u32,
                    status,
                });
            }
            (Role::Watch(_), _) => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn admit(
        &mut self,
        token: u64,
        version: u32,
        secret: &[u8],
        pe: usize,
        n_pes: usize,
        watch: bool,
        who: Proc,
    ) {
        if !secrets_equal(secret, &self.token) {
            return self.reject(token, "wrong job secret", NOT_ADMITTED);
        }
        // the peer knows the secret: it is one of the job's PEs, and may be told what is wrong
        if version != VERSION {
            let why = format!("protocol version {version}, expected {VERSION}");
            return self.reject(token, &why, &why);
        }
        if n_pes != self.n_pes || pe >= self.n_pes {
            let why = format!("PE {pe} of {n_pes} does not fit a job of {} PEs", self.n_pes);
            self.reject(token, &why, &why);
            // a PE of this job (it knows the secret) started for a job of another size: the job
            // cannot start, so its other PEs fail now rather than wait for it until the operation
            // timeout (they reported it as a PE that did not arrive, after 120 s)
            if self.job_failed.is_none() {
                let reason = format!(
                    "a PE of this job was started for a job of another size ({why}): every PE must be \
                     started for the same number of PEs"
                );
                log::error!("config store: {reason}");
                self.fail_job(reason);
            }
            return;
        }
        // (before "shutting down", which clients retry: the job failed for good)
        if let Some(why) = self.job_failed.clone() {
            return self.reject(token, &why, &why);
        }
        if self.stopping {
            return self.reject(token, "store is shutting down", "store is shutting down");
        }
        let slot = if watch {
            &mut self.pes[pe].watch
        } else {
            &mut self.pes[pe].request
        };
        if slot.is_some() {
            let why = format!(
                "PE {pe} is already connected{}",
                if watch { " (watch)" } else { "" }
            );
            return self.reject(token, &why, &why);
        }
        *slot = Some(token);
        self.starved_since = None;
        let Some(peer) = self.peers.get_mut(&token) else {
            return;
        };
        self.n_strangers -= 1;
        if watch {
            peer.role = Role::Watch(pe);
            peer.frames.set_limit(MAX_CONTROL_FRAME);
            self.pes[pe].heard = Some(Instant::now());
            self.pes[pe].who = who;
        } else {
            peer.role = Role::Request(pe);
            peer.frames.set_limit(MAX_REQUEST_FRAME);
            self.pes[pe].admitted = true;
            self.dirty = true;
        }
        if self.published.is_some() && self.pes.iter().all(|p| p.request.is_some() && p.watch.is_some()) {
            // every PE is in: nobody needs the file any more
            self.published = None;
        }
        let welcome = Arc::new(encode(&Message::Welcome {
            session: self.session,
            store: Proc::me(),
        }));
        self.push(token, welcome);
        // a PE that died before this one started watching is still news
        if watch && self.exiting.is_none() {
            for d in self.dead.clone() {
                self.push(token, Arc::new(encode(&Message::PeerDied { pe: d as u32 })));
            }
        }
    }

    /// Sends `msg` to every PE's watch connection.
    /// PE 0 is told last: it runs the store, and the notice may end its process.
    fn notify(&mut self, msg: &Message) {
        let frame = Arc::new(encode(msg));
        for pe in (1..self.n_pes).chain(std::iter::once(0)) {
            if let Some(t) = self.pes[pe].watch {
                self.push(t, frame.clone());
            }
        }
    }

    fn mark_dead(&mut self, pe: usize) {
        if self.pes[pe].finished || self.dead.contains(&pe) {
            return;
        }
        if !self.stopping && self.exiting.is_none() {
            log::error!("config store: PE {pe} disconnected without finalizing");
            self.notify(&Message::PeerDied { pe: pe as u32 });
        }
        self.dead.push(pe);
        self.dirty = true;
        let reason = format!(
            "PE(s) {} died (disconnected without finalizing)",
            pe_list(&self.dead)
        );
        for p in 0..self.n_pes {
            if self.pes[p].waiting.is_some() {
                self.fail(p, reason.clone());
            }
        }
        self.check_all_left();
    }

    /// Answers `pe`'s pending collective with `Failed`.
    fn fail(&mut self, pe: usize, reason: String) {
        let Some((seq, _)) = self.pes[pe].waiting.take() else {
            return;
        };
        if let Some(t) = self.pes[pe].request {
            self.push(t, Arc::new(encode(&Message::Failed { seq, reason })));
        }
    }

    /// Adds `pe`'s part to round `seq`; answers every waiting PE when the round is complete.
    fn allgather(&mut self, pe: usize, seq: u64, data: Vec<u8>) {
        if self.pes[pe].waiting.is_some() {
            log::warn!("config store: PE {pe} started a collective before the last one ended; closing");
            if let Some(t) = self.pes[pe].request {
                self.lost(t, "protocol violation");
            }
            return;
        }
        let n = self.n_pes;
        let round = self.rounds.entry(seq).or_insert_with(|| Round {
            parts: vec![None; n],
            arrived: 0,
            failed: None,
        });
        if round.parts[pe].is_none() {
            round.arrived += 1;
        }
        round.parts[pe] = Some(data);
        self.pes[pe].waiting = Some((seq, Instant::now() + self.op_timeout));
        if let Some(why) = self.job_failed.clone() {
            self.fail(pe, why);
            return;
        }
        if let Some(why) = &round.failed {
            // a late arrival at a round that timed out: it fails too, at once
            let reason = format!(
                "this bootstrap collective (number {seq}) already failed on the PEs that made it: {why}; \
                 every PE must make the same collective calls in the same order"
            );
            if round.arrived == n {
                self.rounds.remove(&seq);
            }
            self.fail(pe, reason);
            return;
        }
        if round.arrived == n {
            let parts = round
                .parts
                .iter_mut()
                .map(|p| p.take().unwrap_or_default())
                .collect();
            self.rounds.remove(&seq);
            let frame = Arc::new(encode(&Message::AllgatherResult { seq, parts }));
            for p in 0..n {
                if self.pes[p].waiting.is_some_and(|(s, _)| s == seq) {
                    self.pes[p].waiting = None;
                    if let Some(t) = self.pes[p].request {
                        self.push(t, frame.clone());
                    }
                }
            }
            return;
        }
        if !self.dead.is_empty() {
            let reason = format!(
                "PE(s) {} died (disconnected without finalizing)",
                pe_list(&self.dead)
            );
            self.fail(pe, reason);
        } else if let Some(why) = self.left_out(seq) {
            self.fail(pe, why);
        }
    }

    /// `pe` gives up round `seq`, in which it waits (another PE is busy elsewhere and will not
    /// contribute): the round fails for every PE waiting in it and every PE that comes later, as
    /// one that timed out. (A round that completed meanwhile has its answer on the way: nothing.)
    fn abandon(&mut self, pe: usize, seq: u64, reason: String) {
        if self.pes[pe].waiting.is_none_or(|(s, _)| s != seq) {
            return;
        }
        let reason = format!("PE {pe} gave it up: {reason}");
        for p in 0..self.n_pes {
            if self.pes[p].waiting.is_some_and(|(s, _)| s == seq) {
                self.fail(p, reason.clone());
            }
        }
        if let Some(r) = self.rounds.get_mut(&seq) {
            r.failed = Some(reason);
        }
    }

    /// A PE finalizes. Its connection stays open until every PE has left (or died), so no PE can
    /// return from finalize, re-init and reach this store again while it still serves the old
    /// job; once the last PE left, the store refuses new connections ("shutting down", which
    /// clients retry).
    ///
    /// A collective it made no part of can never complete: every PE waiting in one fails at once,
    /// naming it, as does every PE that starts one later ([`Store::left_out`]) — a PE whose init
    /// failed where the others' did not (a setting read on it alone) leaves while they wait in
    /// init's next exchange; they waited for the operation timeout, it in `Bye` for theirs.
    fn bye(&mut self, pe: usize) {
        let p = &mut self.pes[pe];
        p.finished = true;
        p.admitted = false;
        p.waiting = None;
        p.leave_by = Some(Instant::now() + self.op_timeout);
        self.dirty = true;
        for q in 0..self.n_pes {
            if let Some((seq, _)) = self.pes[q].waiting
                && let Some(why) = self.left_out(seq)
            {
                self.fail(q, why);
            }
        }
        self.check_all_left();
    }

    /// Why round `seq` cannot complete because PEs left without their part in it (None: it can).
    fn left_out(&self, seq: u64) -> Option<String> {
        let round = self.rounds.get(&seq)?;
        let gone: Vec<usize> = (0..self.n_pes)
            .filter(|&q| self.pes[q].finished && round.parts[q].is_none())
            .collect();
        (!gone.is_empty()).then(|| {
            format!(
                "PE(s) {} left the job (finalized, or failed in init) without making this bootstrap \
                 collective (number {seq}); every PE must make the same collective calls in the same \
                 order",
                pe_list(&gone)
            )
        })
    }

    fn check_all_left(&mut self) {
        if !(0..self.n_pes)
            .all(|p| self.pes[p].finished || self.dead.contains(&p) || self.absent.contains(&p))
        {
            return;
        }
        self.stopping = true;
        for p in 0..self.n_pes {
            if self.pes[p].finished
                && let Some(t) = self.pes[p].request
            {
                self.close(t);
            }
        }
    }

    /// Closes a connection once its output is sent.
    fn close(&mut self, token: u64) {
        if let Some(peer) = self.peers.get_mut(&token) {
            peer.closing = true;
            let (fd, interest) = (peer.tcp.as_raw_fd(), peer.interest());
            let _ = self.epoll.modify(fd, interest, token);
            self.flush_out(token);
        }
    }

    /// Deadlines: hellos, collectives, finalize; and the listener's pause.
    fn sweep(&mut self, now: Instant) {
        while let Some(&t) = self.strangers.front() {
            match self.peers.get(&t) {
                Some(p) if p.role == Role::Stranger => {
                    if now.duration_since(p.since) < HELLO_TIMEOUT {
                        break;
                    }
                    self.strangers.pop_front();
                    let why = format!("no complete hello within {} s", HELLO_TIMEOUT.as_secs());
                    self.lost(t, &why);
                }
                _ => {
                    self.strangers.pop_front();
                }
            }
        }
        for pe in 0..self.n_pes {
            if let Some((seq, deadline)) = self.pes[pe].waiting
                && now >= deadline
            {
                let missing: Vec<usize> = match self.rounds.get(&seq) {
                    Some(r) => (0..self.n_pes).filter(|&p| r.parts[p].is_none()).collect(),
                    None => Vec::new(),
                };
                let reason = format!(
                    "PE(s) {} did not arrive within {} s (control_operation_timeout)",
                    pe_list(&missing),
                    self.op_timeout.as_secs()
                );
                // the round fails for everyone: the PEs waiting in it now, and those that come
                for p in 0..self.n_pes {
                    if self.pes[p].waiting.is_some_and(|(s, _)| s == seq) {
                        self.fail(p, reason.clone());
                    }
                }
                if let Some(r) = self.rounds.get_mut(&seq) {
                    r.failed = Some(reason);
                }
                for p in missing {
                    if self.pes[p].request.is_none() && !self.pes[p].finished && !self.absent.contains(&p) {
                        self.absent.push(p);
                    }
                }
                self.check_all_left();
            }
            if let Some(by) = self.pes[pe].leave_by
                && now >= by
                && !self.stopping
            {
                self.pes[pe].leave_by = None;
                log::warn!("config store: PE {pe} finalized but others did not within the operation timeout");
                if let Some(t) = self.pes[pe].request {
                    self.close(t);
                }
            }
        }
        if let Some(hb) = self.heartbeat {
            self.heartbeats(now, hb);
        }
        if self.accept_paused_until.is_some_and(|u| now >= u) {
            self.accept_paused_until = None;
            if !self.listening
                && self
                    .epoll
                    .add(self.listener.as_raw_fd(), libc::EPOLLIN as u32, LISTENER)
                    .is_ok()
            {
                self.listening = true;
            }
        }
    }
}

impl Store {
    /// Sends the store's heartbeat to every watcher, and declares dead the PEs whose watch
    /// connection has been silent for `hb`.
    fn heartbeats(&mut self, now: Instant, hb: Duration) {
        if now.duration_since(self.last_look) > WATCH_GAP {
            // this thread did not run for a while: the silence before does not count
            for p in &mut self.pes {
                if p.heard.is_some() {
                    p.heard = Some(now);
                }
            }
        }
        self.last_look = now;
        if now >= self.next_ping {
            self.next_ping = now + HEARTBEAT_INTERVAL;
            self.notify(&Message::Ping);
        }
        for pe in 0..self.n_pes {
            let (Some(t), Some(heard)) = (self.pes[pe].watch, self.pes[pe].heard) else {
                continue;
            };
            let who = self.pes[pe].who;
            if !silent_too_long(now.duration_since(heard), hb, &who) {
                continue;
            }
            // what it sent while this thread did not run (a stopped PE 0) counts
            self.read_from(t);
            if self.pes[pe]
                .heard
                .is_some_and(|h| !silent_too_long(Instant::now().duration_since(h), hb, &who))
                || self.pes[pe].watch != Some(t)
            {
                continue;
            }
            if !self.stopping && self.exiting.is_none() && !self.dead.contains(&pe) {
                log::error!(
                    "config store: PE {pe} sent no heartbeat for {} s: taken for dead",
                    now.duration_since(heard).as_secs()
                );
            }
            self.remove(t);
            if let Some(r) = self.pes[pe].request {
                self.remove(r);
            }
            self.mark_dead(pe);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::client::Client;
    use super::super::protocol::read_frame;
    use super::*;

    fn target(
        addr: std::net::SocketAddr,
        token: &[u8],
        pe: usize,
        n_pes: usize,
        t: Duration,
    ) -> super::super::client::Target {
        super::super::client::Target {
            addrs: vec![addr],
            token: token.to_vec(),
            pe,
            n_pes,
            connect_timeout: t,
            tls: None,
            secret_file: None,
        }
    }

    fn start(n: usize, token: &[u8], op: Duration) -> (Server, std::net::SocketAddr) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        (
            Server::start(l, n, token.to_vec(), op, None, None, None).unwrap(),
            addr,
        )
    }

    fn hello_reply(addr: std::net::SocketAddr, frame: &[u8]) -> Option<Message> {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(frame).unwrap();
        read_frame(&mut s, MAX_CONTROL_FRAME).ok()
    }

    #[test]
    fn strangers_are_dropped_and_the_job_goes_on() {
        let (server, addr) = start(2, b"job-secret", Duration::from_secs(5));
        // wrong secret: refused without a word about the job
        let bad = encode(&Message::Hello {
            version: VERSION,
            token: b"guess".to_vec(),
            pe: 1,
            n_pes: 2,
            watch: false,
            who: Proc::default(),
        });
        assert_eq!(
            hello_reply(addr, &bad),
            Some(Message::Reject {
                reason: NOT_ADMITTED.into()
            })
        );
        // garbage, then a frame that is not a hello
        assert!(hello_reply(addr, &[0xff; 64]).is_none());
        let not_hello = encode(&Message::Bye);
        assert!(matches!(
            hello_reply(addr, &not_hello),
            Some(Message::Reject { .. })
        ));
        // the real PEs still get in and work together
        let t = Duration::from_secs(5);
        let h = std::thread::spawn(move || {
            let c = Client::connect(&target(addr, b"job-secret", 1, 2, t), t).unwrap();
            let r = c.allgather(b"one").unwrap();
            c.bye();
            r
        });
        let c0 = Client::connect(&target(addr, b"job-secret", 0, 2, t), t).unwrap();
        let r0 = c0.allgather(b"zero").unwrap();
        assert_eq!(r0, vec![b"zero".to_vec(), b"one".to_vec()]);
        // a second PE 0 is refused while the first is connected
        assert!(Client::connect(&target(addr, b"job-secret", 0, 2, t), t).is_err());
        c0.bye();
        assert_eq!(h.join().unwrap(), r0);
        server.shutdown(t);
    }

    #[test]
    fn missing_and_dead_pes_are_named() {
        let (server, addr) = start(3, b"s", Duration::from_secs(1));
        let t = Duration::from_secs(5);
        let c0 = Client::connect(&target(addr, b"s", 0, 3, t), Duration::from_secs(1)).unwrap();
        let c1 = Client::connect(&target(addr, b"s", 1, 3, t), Duration::from_secs(1)).unwrap();
        // PE 2 never arrives: the collective fails within the operation timeout, naming it
        let h = std::thread::spawn(move || c1.allgather(b"x").map(|_| ()).unwrap_err().to_string());
        let start_t = Instant::now();
        let e0 = c0.allgather(b"x").unwrap_err().to_string();
        assert!(e0.contains("2]"), "{e0}");
        assert!(h.join().unwrap().contains("2]"));
        assert!(start_t.elapsed() < Duration::from_secs(8));
        drop(c0); // disconnects without Bye: PE 0 is dead for the store now
        drop(server);
    }

    #[test]
    fn a_pe_that_leaves_fails_the_collectives_it_did_not_make_at_once() {
        // PE 2's init failed where the others' did not: it says Bye while PEs 0 and 1 wait in
        // the next exchange, which fails at once (not after the 30 s operation timeout) naming
        // it, as does one that starts later
        let (server, addr) = start(3, b"s", Duration::from_secs(30));
        let t = Duration::from_secs(5);
        let c = |pe| Client::connect(&target(addr, b"s", pe, 3, t), t).unwrap();
        let (c0, c1, c2) = (c(0), c(1), c(2));
        let h0 = std::thread::spawn(move || (c0.allgather(b"a").map(|_| ()).unwrap_err().to_string(), c0));
        std::thread::sleep(Duration::from_millis(300));
        let start_t = Instant::now();
        let h2 = std::thread::spawn(move || c2.bye());
        let (e0, c0) = h0.join().unwrap();
        assert!(e0.contains("PE(s) [2] left the job"), "{e0}");
        let e1 = c1.allgather(b"a").map(|_| ()).unwrap_err().to_string();
        assert!(e1.contains("PE(s) [2] left the job"), "{e1}");
        assert!(
            start_t.elapsed() < Duration::from_secs(5),
            "{:?}",
            start_t.elapsed()
        );
        c0.bye();
        c1.bye();
        h2.join().unwrap();
        server.shutdown(t);
    }

    #[test]
    fn a_pe_started_for_another_job_size_fails_the_job_at_once() {
        // PE 1 of a 2-PE job started as one of 3 (a unique id handed to a process with another
        // nranks): it is refused, and PE 0, waiting in the first exchange, fails at once (it
        // waited the 30 s operation timeout and named PE 1 as not arrived), as does a later one
        let (server, addr) = start(2, b"s", Duration::from_secs(30));
        let t = Duration::from_secs(5);
        let c0 = Client::connect(&target(addr, b"s", 0, 2, t), t).unwrap();
        let h0 = std::thread::spawn(move || (c0.allgather(b"a").map(|_| ()).unwrap_err().to_string(), c0));
        std::thread::sleep(Duration::from_millis(300));
        let start_t = Instant::now();
        let e1 = Client::connect(&target(addr, b"s", 1, 3, t), t)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e1.contains("PE 1 of 3 does not fit a job of 2 PEs"), "{e1}");
        let (e0, c0) = h0.join().unwrap();
        assert!(e0.contains("started for a job of another size"), "{e0}");
        assert!(
            start_t.elapsed() < Duration::from_secs(5),
            "{:?}",
            start_t.elapsed()
        );
        let again = c0.allgather(b"b").map(|_| ()).unwrap_err().to_string();
        assert!(again.contains("another size"), "{again}");
        c0.bye();
        server.shutdown(t);
    }

    /// Three PEs' clients of a store with operation timeout `op`.
    fn three(op: Duration) -> (Server, [Client; 3]) {
        let (server, addr) = start(3, b"s", op);
        let t = Duration::from_secs(5);
        let c = |pe| Client::connect(&target(addr, b"s", pe, 3, t), t).unwrap();
        (server, [c(0), c(1), c(2)])
    }

    /// The next round, made by every PE (PE 0 through `allgather_checked` with a check that
    /// finds nothing), completes.
    fn next_round_completes([c0, c1, c2]: [Client; 3]) {
        let never = || None;
        let h0 = std::thread::spawn(move || c0.allgather_checked(b"0", Some(&never)).unwrap());
        let h1 = std::thread::spawn(move || c1.allgather(b"1").unwrap());
        std::thread::sleep(Duration::from_millis(300));
        let r2 = c2.allgather(b"2").unwrap();
        assert_eq!(r2, vec![b"0".to_vec(), b"1".to_vec(), b"2".to_vec()]);
        assert_eq!(h0.join().unwrap(), r2);
        assert_eq!(h1.join().unwrap(), r2);
    }

    #[test]
    fn a_round_that_timed_out_fails_for_the_pes_that_come_late() {
        // PE 2 is busy elsewhere (a barrier instead of the others' allocation): the round fails
        // on PEs 0 and 1 when the first deadline passes, and PE 2, arriving later, fails at once
        // instead of completing it with the parts the others left; the next round works
        let (server, [c0, c1, c2]) = three(Duration::from_secs(1));
        let h0 = std::thread::spawn(move || (c0.allgather(b"a").map(|_| ()).unwrap_err().to_string(), c0));
        // PE 1 arrives later than PE 0, so its own deadline has not passed when PE 0's does
        std::thread::sleep(Duration::from_millis(500));
        let start_t = Instant::now();
        let e1 = c1.allgather(b"a").unwrap_err().to_string();
        assert!(e1.contains("[2]"), "{e1}");
        assert!(
            start_t.elapsed() < Duration::from_millis(900),
            "{:?}",
            start_t.elapsed()
        );
        let (e0, c0) = h0.join().unwrap();
        assert!(e0.contains("[2]"), "{e0}");
        let late = Instant::now();
        let e2 = c2.allgather(b"a").unwrap_err().to_string();
        assert!(e2.contains("already failed"), "{e2}");
        assert!(late.elapsed() < Duration::from_millis(500));
        next_round_completes([c0, c1, c2]);
        drop(server);
    }

    #[test]
    fn an_abandoned_round_fails_at_once() {
        // PE 0 waits in a round and finds PE 2 busy elsewhere: it gives the round up, which
        // fails it at once on PE 0 and PE 1 (waiting) and on PE 2 when it comes; the next round,
        // made by all, completes
        let (server, [c0, c1, c2]) = three(Duration::from_secs(30));
        let h1 = std::thread::spawn(move || (c1.allgather(b"a").map(|_| ()).unwrap_err().to_string(), c1));
        let start_t = Instant::now();
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let check = || {
            // busy elsewhere from the third look on
            (asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 2)
                .then(|| "PE 2 is in a barrier".to_string())
        };
        let e0 = c0.allgather_checked(b"a", Some(&check)).unwrap_err();
        assert!(
            matches!(e0, crate::error::Error::InvalidParam(_))
                && e0.to_string().contains("PE 2 is in a barrier"),
            "{e0}"
        );
        let (e1, c1) = h1.join().unwrap();
        assert!(e1.contains("PE 0 gave it up: PE 2 is in a barrier"), "{e1}");
        assert!(
            start_t.elapsed() < Duration::from_secs(3),
            "{:?}",
            start_t.elapsed()
        );
        let e2 = c2.allgather(b"a").unwrap_err().to_string();
        assert!(e2.contains("already failed") && e2.contains("gave it up"), "{e2}");
        next_round_completes([c0, c1, c2]);
        drop(server);
    }

    #[test]
    fn a_failed_job_does_not_wait_for_pes_that_never_came() {
        // PE 1 never connects (its init failed elsewhere): PE 0's collective fails after the
        // operation timeout, and its Bye then returns at once instead of after another one
        let (server, addr) = start(2, b"s", Duration::from_secs(3));
        let t = Duration::from_secs(10);
        let c0 = Client::connect(&target(addr, b"s", 0, 2, t), Duration::from_secs(10)).unwrap();
        let e0 = c0.allgather(b"x").unwrap_err().to_string();
        assert!(e0.contains("1]"), "{e0}");
        let t0 = Instant::now();
        c0.bye();
        assert!(t0.elapsed() < Duration::from_millis(1500), "{:?}", t0.elapsed());
        server.shutdown(t);
    }

    #[test]
    fn oversized_and_slow_hellos_are_cut_off() {
        let (server, addr) = start(2, b"s", Duration::from_secs(5));
        // a stranger announcing a huge frame is closed as soon as the length arrives
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&(64u32 << 20).to_le_bytes()).unwrap();
        let mut buf = [0u8; 16];
        let t0 = Instant::now();
        assert!(matches!(s.read(&mut buf), Ok(0) | Err(_)));
        assert!(t0.elapsed() < Duration::from_secs(2));
        // one byte at a time is not a hello either: the deadline is for the whole frame
        let mut drip = TcpStream::connect(addr).unwrap();
        drip.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let slow_hello = encode(&Message::Hello {
            version: VERSION,
            token: vec![b's'; 200],
            pe: 1,
            n_pes: 2,
            watch: false,
            who: Proc::default(),
        });
        let mut next = slow_hello.iter();
        let t0 = Instant::now();
        let closed = loop {
            let Some(&b) = next.next() else {
                break false;
            };
            if drip.write_all(&[b]).is_err() {
                break true;
            }
            match drip.read(&mut buf) {
                Ok(0) => break true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                _ => break true,
            }
            if t0.elapsed() > HELLO_TIMEOUT + Duration::from_secs(3) {
                break false;
            }
        };
        assert!(closed, "a dripping stranger was kept past the hello deadline");
        assert!(t0.elapsed() >= HELLO_TIMEOUT - Duration::from_millis(100));
        // more strangers than the cap: the oldest are evicted, a PE still gets in
        let idle: Vec<TcpStream> = (0..MAX_STRANGERS + 10)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        let t = Duration::from_secs(5);
        let h = std::thread::spawn(move || {
            let c = Client::connect(&target(addr, b"s", 1, 2, t), t).unwrap();
            let r = c.allgather(b"1").unwrap();
            c.bye();
            r
        });
        let c0 = Client::connect(&target(addr, b"s", 0, 2, t), t).unwrap();
        assert_eq!(c0.allgather(b"0").unwrap().len(), 2);
        c0.bye();
        h.join().unwrap();
        let evicted = idle
            .into_iter()
            .filter(|s| {
                s.set_nonblocking(true).unwrap();
                let mut b = [0u8; 1];
                !matches!((&*s).read(&mut b), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock)
            })
            .count();
        assert!(evicted >= 10, "only {evicted} strangers were evicted");
        server.shutdown(t);
    }
}
