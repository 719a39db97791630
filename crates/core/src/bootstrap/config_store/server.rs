//! The config store server, run by PE 0: admits the job's PEs and serves their allgathers.
//!
//! One thread accepts; one thread per admitted connection reads requests. A collective completes
//! when every PE contributed; a PE that disconnects without saying `Bye` is marked dead and every
//! pending and later collective fails at once naming it. A collective that does not complete within
//! the operation timeout fails naming the PEs that never arrived. Connections that do not present
//! the job secret first are answered with `Reject`, logged and closed: the job goes on.

use crate::util::Locked;
use std::collections::HashMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::conn::Conn;
use super::protocol::{FrameReader, Message, VERSION, read_frame, secrets_equal, write_frame};

/// How long a new connection may take to present its `Hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Round {
    parts: Vec<Option<Vec<u8>>>,
    arrived: usize,
    readers: usize,
    result: Option<Arc<Vec<u8>>>,
}

#[derive(Default)]
struct State {
    admitted: Vec<bool>,
    finished: Vec<bool>,
    dead: Vec<usize>,
    rounds: HashMap<u64, Round>,
    /// Each PE's watch connection (shared with the thread reading it).
    watchers: Vec<Option<Arc<Mutex<Conn>>>>,
    /// Set once a PE called global exit: deaths that follow are the job ending, not failures.
    exiting: Option<i32>,
}

struct Shared {
    n_pes: usize,
    token: Vec<u8>,
    session: u64,
    op_timeout: Duration,
    state: Mutex<State>,
    changed: Condvar,
    stopping: AtomicBool,
    tls: Option<Arc<rustls::ServerConfig>>,
}

/// A running store. Dropping it without [`Server::shutdown`] stops accepting at once.
pub struct Server {
    shared: Arc<Shared>,
    addr: std::net::SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts serving on `listener` for a job of `n_pes` PEs presenting `token`.
    pub fn start(
        listener: TcpListener,
        n_pes: usize,
        token: Vec<u8>,
        op_timeout: Duration,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> std::io::Result<Server> {
        let addr = listener.local_addr()?;
        let mut session = [0u8; 8];
        getrandom::fill(&mut session).map_err(|e| std::io::Error::other(e.to_string()))?;
        let shared = Arc::new(Shared {
            n_pes,
            token,
            session: u64::from_le_bytes(session),
            op_timeout,
            state: Mutex::new(State {
                admitted: vec![false; n_pes],
                finished: vec![false; n_pes],
                watchers: (0..n_pes).map(|_| None).collect(),
                ..State::default()
            }),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            tls,
        });
        let s2 = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("aclshmem-store".into())
            .spawn(move || accept_loop(listener, s2))?;
        Ok(Server {
            shared,
            addr,
            acceptor: Some(acceptor),
        })
    }

    /// Waits (at most `timeout`) until every admitted PE said `Bye` or disconnected, then stops.
    pub fn shutdown(mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.locked();
        loop {
            let pending: Vec<usize> = (0..self.shared.n_pes)
                .filter(|&p| st.admitted[p] && !st.finished[p] && !st.dead.contains(&p))
                .collect();
            let now = Instant::now();
            if pending.is_empty() || now >= deadline {
                if !pending.is_empty() {
                    log::warn!("config store: PEs {pending:?} did not finish before shutdown");
                }
                break;
            }
            st = self
                .shared
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(st);
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // wake the blocking accept
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.acceptor.is_some() {
            self.stop();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        let s2 = shared.clone();
        let _ = std::thread::Builder::new()
            .name("aclshmem-store-conn".into())
            .spawn(move || serve(stream, s2));
    }
}

fn reject(mut stream: Conn, peer: &str, reason: String) {
    log::warn!("config store: dropped connection from {peer}: {reason}");
    let _ = write_frame(&mut stream, &Message::Reject { reason });
}

fn serve(tcp: TcpStream, shared: Arc<Shared>) {
    let peer = tcp
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(HELLO_TIMEOUT));
    let mut stream = match &shared.tls {
        None => Conn::Plain(tcp),
        Some(cfg) => match rustls::ServerConnection::new(cfg.clone()) {
            Ok(c) => Conn::Server(Box::new(rustls::StreamOwned::new(c, tcp))),
            Err(e) => return log::warn!("config store: TLS session for {peer} failed: {e}"),
        },
    };
    if let Err(e) = stream.handshake() {
        if !shared.stopping.load(Ordering::SeqCst) {
            log::warn!("config store: dropped connection from {peer}: TLS handshake failed ({e})");
        }
        return;
    }
    let hello = match read_frame(&mut stream) {
        Ok(m) => m,
        Err(e) => {
            if !shared.stopping.load(Ordering::SeqCst) {
                log::warn!("config store: dropped connection from {peer}: no valid hello ({e})");
            }
            return;
        }
    };
    let (pe, watch) = match hello {
        Message::Hello {
            version,
            token,
            pe,
            n_pes,
            watch,
        } => {
            if !secrets_equal(&token, &shared.token) {
                return reject(stream, &peer, "wrong job secret".into());
            }
            if version != VERSION {
                return reject(
                    stream,
                    &peer,
                    format!("protocol version {version}, expected {VERSION}"),
                );
            }
            if n_pes as usize != shared.n_pes || pe as usize >= shared.n_pes {
                return reject(
                    stream,
                    &peer,
                    format!("PE {pe} of {n_pes} does not fit a job of {} PEs", shared.n_pes),
                );
            }
            (pe as usize, watch)
        }
        _ => return reject(stream, &peer, "first frame is not a hello".into()),
    };
    if shared.stopping.load(Ordering::SeqCst) {
        return reject(stream, &peer, "store is shutting down".into());
    }
    if watch {
        return watch_loop(stream, &shared, pe);
    }
    {
        let mut st = shared.state.locked();
        if st.admitted[pe] {
            drop(st);
            return reject(stream, &peer, format!("PE {pe} is already connected"));
        }
        st.admitted[pe] = true;
    }
    if write_frame(
        &mut stream,
        &Message::Welcome {
            session: shared.session,
        },
    )
    .is_err()
    {
        return mark_dead(&shared, pe);
    }
    let _ = stream.set_read_timeout(None);
    loop {
        match read_frame(&mut stream) {
            Ok(Message::Allgather { seq, data }) => {
                let reply = allgather(&shared, pe, seq, data);
                let ok = match reply {
                    Ok(frame) => stream.write_all(&frame).and_then(|_| stream.flush()).is_ok(),
                    Err(reason) => write_frame(&mut stream, &Message::Failed { seq, reason }).is_ok(),
                };
                if !ok {
                    return mark_dead(&shared, pe);
                }
            }
            Ok(Message::Bye) => return leave(&shared, pe),
            Ok(other) => {
                log::warn!("config store: PE {pe} sent an unexpected {other:?}; closing");
                return mark_dead(&shared, pe);
            }
            Err(_) => return mark_dead(&shared, pe),
        }
    }
}

/// A PE finalizes. Its connection stays open until every PE has left (or died), so no PE can
/// return from finalize, re-init and reach this store again while it still serves the old job; once
/// the last PE left, the store refuses new connections ("shutting down", which clients retry).
fn leave(shared: &Shared, pe: usize) {
    let deadline = Instant::now() + shared.op_timeout;
    let mut st = shared.state.locked();
    st.finished[pe] = true;
    st.admitted[pe] = false;
    let all_left = |st: &State| (0..shared.n_pes).all(|p| st.finished[p] || st.dead.contains(&p));
    if all_left(&st) {
        shared.stopping.store(true, Ordering::SeqCst);
    }
    shared.changed.notify_all();
    while !all_left(&st) {
        let now = Instant::now();
        if now >= deadline {
            log::warn!("config store: PE {pe} finalized but others did not within the operation timeout");
            return;
        }
        st = shared
            .changed
            .wait_timeout(st, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// Sends `msg` to every PE's watch connection.
/// PE 0 is told last: it runs the store, and the notice may end its process.
fn notify(st: &mut State, msg: &Message) {
    let order = (1..st.watchers.len()).chain(std::iter::once(0));
    for pe in order {
        if let Some(w) = &st.watchers[pe] {
            let _ = write_frame(&mut *w.locked(), msg);
        }
    }
}

/// How long a watch-connection reader holds the connection before letting a writer in (a notice to
/// every PE waits at most this long per PE).
const WATCH_POLL: Duration = Duration::from_millis(5);

/// A PE's watch connection: the store pushes job events to it (global exit, a PE's death); the PE
/// may send a global exit on it. Its end is not a death: that is told by the request connection.
fn watch_loop(mut stream: Conn, shared: &Shared, pe: usize) {
    if write_frame(
        &mut stream,
        &Message::Welcome {
            session: shared.session,
        },
    )
    .is_err()
    {
        return;
    }
    let _ = stream.set_read_timeout(Some(WATCH_POLL));
    let conn = Arc::new(Mutex::new(stream));
    {
        let mut st = shared.state.locked();
        st.watchers[pe] = Some(conn.clone());
        // a PE that died before this one started watching is still news
        if st.exiting.is_none() {
            let mut c = conn.locked();
            for d in st.dead.clone() {
                let _ = write_frame(&mut *c, &Message::PeerDied { pe: d as u32 });
            }
        }
    }
    let mut frames = FrameReader::default();
    loop {
        let polled = frames.poll(&mut *conn.locked());
        match polled {
            Ok(Some(Message::GlobalExit { status })) => {
                let mut st = shared.state.locked();
                log::error!("config store: PE {pe} called global exit with status {status}");
                st.exiting.get_or_insert(status);
                notify(
                    &mut st,
                    &Message::ExitNotice {
                        pe: pe as u32,
                        status,
                    },
                );
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let mut st = shared.state.locked();
    st.watchers[pe] = None;
}

fn mark_dead(shared: &Shared, pe: usize) {
    let mut st = shared.state.locked();
    if !st.finished[pe] && !st.dead.contains(&pe) {
        if !shared.stopping.load(Ordering::SeqCst) && st.exiting.is_none() {
            log::error!("config store: PE {pe} disconnected without finalizing");
            notify(&mut st, &Message::PeerDied { pe: pe as u32 });
        }
        st.dead.push(pe);
    }
    st.admitted[pe] = false;
    shared.changed.notify_all();
}

/// Adds `pe`'s part to round `seq` and waits for the round to complete; returns the encoded result.
fn allgather(shared: &Shared, pe: usize, seq: u64, data: Vec<u8>) -> Result<Arc<Vec<u8>>, String> {
    let n = shared.n_pes;
    let deadline = Instant::now() + shared.op_timeout;
    let mut st = shared.state.locked();
    {
        let round = st.rounds.entry(seq).or_insert_with(|| Round {
            parts: vec![None; n],
            ..Round::default()
        });
        if round.parts[pe].is_none() {
            round.arrived += 1;
        }
        round.parts[pe] = Some(data);
        if round.arrived == n {
            let parts = round
                .parts
                .iter_mut()
                .map(|p| p.take().unwrap_or_default())
                .collect();
            round.result = Some(Arc::new(super::protocol::encode(&Message::AllgatherResult {
                seq,
                parts,
            })));
            shared.changed.notify_all();
        }
    }
    loop {
        let round = st.rounds.get_mut(&seq).ok_or("collective state lost")?;
        if let Some(result) = round.result.clone() {
            round.readers += 1;
            if round.readers == n {
                st.rounds.remove(&seq);
            }
            return Ok(result);
        }
        let missing: Vec<usize> = (0..n).filter(|&p| round.parts[p].is_none()).collect();
        if !st.dead.is_empty() {
            return Err(format!(
                "PE(s) {:?} died (disconnected without finalizing)",
                st.dead
            ));
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(format!(
                "PE(s) {missing:?} did not arrive within {} s (control_operation_timeout)",
                shared.op_timeout.as_secs()
            ));
        }
        st = shared
            .changed
            .wait_timeout(st, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::client::Client;
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
        }
    }

    fn start(n: usize, token: &[u8], op: Duration) -> (Server, std::net::SocketAddr) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        (Server::start(l, n, token.to_vec(), op, None).unwrap(), addr)
    }

    fn hello_reply(addr: std::net::SocketAddr, frame: &[u8]) -> Option<Message> {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(frame).unwrap();
        read_frame(&mut s).ok()
    }

    #[test]
    fn strangers_are_dropped_and_the_job_goes_on() {
        let (server, addr) = start(2, b"job-secret", Duration::from_secs(5));
        // wrong secret
        let bad = super::super::protocol::encode(&Message::Hello {
            version: VERSION,
            token: b"guess".to_vec(),
            pe: 1,
            n_pes: 2,
            watch: false,
        });
        assert!(matches!(hello_reply(addr, &bad), Some(Message::Reject { .. })));
        // garbage, then a frame that is not a hello
        assert!(hello_reply(addr, &[0xff; 64]).is_none());
        let not_hello = super::super::protocol::encode(&Message::Bye);
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
}
