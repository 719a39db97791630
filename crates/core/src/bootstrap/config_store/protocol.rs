//! Wire format of the config store: pure encoding and decoding, no I/O.
//!
//! A frame is `[u32 length, little endian][u8 kind][body]`, where `length` counts the kind byte and
//! the body. Every field is little endian; byte strings are `[u32 length][bytes]`. A decoder never
//! trusts a length: truncated, oversized or malformed frames become [`ProtocolError`]s.

/// Longest job secret a `Hello` may carry.
pub const MAX_TOKEN: usize = 1024;
/// Largest frame a connection may send before it proved the job secret: a `Hello` (kind, version,
/// secret, PE, number of PEs, watch flag) with the longest secret. Nothing larger is ever buffered
/// for a stranger.
pub const MAX_HELLO_FRAME: usize = 1 + 4 + 4 + MAX_TOKEN + 4 + 4 + 1 + PROC_BYTES;
/// Largest contribution of one PE to an allgather. The core's collectives send a few bytes to a
/// few hundred (allocation requests, node ids, shared-memory names or an error text).
pub const MAX_PART: usize = 64 << 10;
/// Largest request frame of an admitted PE: an `Allgather` with the largest part.
pub const MAX_REQUEST_FRAME: usize = 1 + 8 + 4 + MAX_PART;
/// Largest frame on a watch connection (either way) and of the store's short answers (`Welcome`,
/// `Reject`, `Failed`): notices of a few bytes, reasons of a few hundred.
pub const MAX_CONTROL_FRAME: usize = 4096;
/// The store's only answer to a connection that did not prove the job secret: nothing about the
/// job (not its size, not why).
pub const NOT_ADMITTED: &str = "not admitted to this config store";
/// Protocol version carried in `Hello`.
pub const VERSION: u32 = 2;

/// Largest `AllgatherResult` of a job of `n_pes` PEs (each part at most [`MAX_PART`]).
pub fn max_result_frame(n_pes: usize) -> usize {
    (1 + 8 + 4 + n_pes.saturating_mul(4 + MAX_PART)).max(MAX_CONTROL_FRAME)
}

/// A process as the other side of a connection can look it up: its node (host name, boot id and
/// PID namespace, hashed), its PID and its start time (clock ticks after boot: a PID used again
/// later is another process). Sent in `Hello` and `Welcome`, so that a side that hears nothing
/// from a process on its own node can tell a dead one from one starved of CPU (`liveness.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Proc {
    pub node: u64,
    pub pid: u32,
    pub start: u64,
}

/// Bytes of an encoded [`Proc`].
const PROC_BYTES: usize = 8 + 4 + 8;

fn put_proc(out: &mut Vec<u8>, p: &Proc) {
    out.extend_from_slice(&p.node.to_le_bytes());
    out.extend_from_slice(&p.pid.to_le_bytes());
    out.extend_from_slice(&p.start.to_le_bytes());
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Client → store, first frame: the job secret, who I am, how many we are, and whether this
    /// is the PE's request connection or its watch connection (which receives job events).
    Hello {
        version: u32,
        token: Vec<u8>,
        pe: u32,
        n_pes: u32,
        watch: bool,
        /// The PE's process (optional on the wire: a hello without it decodes with the default).
        who: Proc,
    },
    /// Store → client: admitted; `session` is a random id shared by the whole job; `store` is
    /// the process that runs the store (optional on the wire, as `Hello::who`).
    Welcome { session: u64, store: Proc },
    /// Store → client: refused, with the reason; the store then closes the connection.
    Reject { reason: String },
    /// Client → store: my contribution to collective number `seq`.
    Allgather { seq: u64, data: Vec<u8> },
    /// Store → client: every PE's contribution to `seq`, in PE order.
    AllgatherResult { seq: u64, parts: Vec<Vec<u8>> },
    /// Store → client: the collective failed (a PE did not arrive in time, or died).
    Failed { seq: u64, reason: String },
    /// Client → store: this PE gives collective `seq` up (it found another PE busy with something
    /// else, which will not contribute): the collective fails, on every PE, with `reason`.
    Abandon { seq: u64, reason: String },
    /// Client → store: this PE is done with the store (finalize).
    Bye,
    /// Client → store (watch connection): end the whole job with `status`.
    GlobalExit { status: i32 },
    /// Store → watchers: PE `pe` called global exit with `status`; every PE exits with it.
    ExitNotice { pe: u32, status: i32 },
    /// Store → watchers: PE `pe` disconnected without finalizing.
    PeerDied { pe: u32 },
    /// Either way on a watch connection: I am alive (heartbeat).
    Ping,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("frame truncated")]
    Truncated,
    #[error("frame of {0} bytes exceeds the limit")]
    TooLarge(usize),
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
}

const K_HELLO: u8 = 1;
const K_WELCOME: u8 = 2;
const K_REJECT: u8 = 3;
const K_ALLGATHER: u8 = 4;
const K_RESULT: u8 = 5;
const K_FAILED: u8 = 6;
const K_BYE: u8 = 7;
const K_GLOBAL_EXIT: u8 = 8;
const K_EXIT_NOTICE: u8 = 9;
const K_PEER_DIED: u8 = 10;
const K_PING: u8 = 11;
const K_ABANDON: u8 = 12;

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Encodes one message as a complete frame (length prefix included).
pub fn encode(msg: &Message) -> Vec<u8> {
    let mut body = Vec::new();
    let kind = match msg {
        Message::Hello {
            version,
            token,
            pe,
            n_pes,
            watch,
            who,
        } => {
            body.extend_from_slice(&version.to_le_bytes());
            put_bytes(&mut body, token);
            body.extend_from_slice(&pe.to_le_bytes());
            body.extend_from_slice(&n_pes.to_le_bytes());
            body.push(*watch as u8);
            put_proc(&mut body, who);
            K_HELLO
        }
        Message::Welcome { session, store } => {
            body.extend_from_slice(&session.to_le_bytes());
            put_proc(&mut body, store);
            K_WELCOME
        }
        Message::Reject { reason } => {
            put_bytes(&mut body, reason.as_bytes());
            K_REJECT
        }
        Message::Allgather { seq, data } => {
            body.extend_from_slice(&seq.to_le_bytes());
            put_bytes(&mut body, data);
            K_ALLGATHER
        }
        Message::AllgatherResult { seq, parts } => {
            body.extend_from_slice(&seq.to_le_bytes());
            body.extend_from_slice(&(parts.len() as u32).to_le_bytes());
            for p in parts {
                put_bytes(&mut body, p);
            }
            K_RESULT
        }
        Message::Failed { seq, reason } => {
            body.extend_from_slice(&seq.to_le_bytes());
            put_bytes(&mut body, reason.as_bytes());
            K_FAILED
        }
        Message::Abandon { seq, reason } => {
            body.extend_from_slice(&seq.to_le_bytes());
            put_bytes(&mut body, reason.as_bytes());
            K_ABANDON
        }
        Message::Bye => K_BYE,
        Message::GlobalExit { status } => {
            body.extend_from_slice(&status.to_le_bytes());
            K_GLOBAL_EXIT
        }
        Message::ExitNotice { pe, status } => {
            body.extend_from_slice(&pe.to_le_bytes());
            body.extend_from_slice(&status.to_le_bytes());
            K_EXIT_NOTICE
        }
        Message::PeerDied { pe } => {
            body.extend_from_slice(&pe.to_le_bytes());
            K_PEER_DIED
        }
        Message::Ping => K_PING,
    };
    let mut out = Vec::with_capacity(5 + body.len());
    out.extend_from_slice(&((body.len() + 1) as u32).to_le_bytes());
    out.push(kind);
    out.extend_from_slice(&body);
    out
}

/// Reads the length prefix: how many bytes follow it. Rejects empty frames and frames longer than
/// `max` (the limit of the connection's state: see the `MAX_*` constants).
pub fn frame_len(prefix: [u8; 4], max: usize) -> Result<usize, ProtocolError> {
    let n = u32::from_le_bytes(prefix) as usize;
    if n == 0 {
        return Err(ProtocolError::Malformed("empty frame"));
    }
    if n > max {
        return Err(ProtocolError::TooLarge(n));
    }
    Ok(n)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        if self.0.len() < n {
            return Err(ProtocolError::Truncated);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, ProtocolError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| ProtocolError::Truncated)?,
        ))
    }
    fn u64(&mut self) -> Result<u64, ProtocolError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| ProtocolError::Truncated)?,
        ))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, ProtocolError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn string(&mut self) -> Result<String, ProtocolError> {
        String::from_utf8(self.bytes()?).map_err(|_| ProtocolError::Malformed("text is not UTF-8"))
    }
    /// A trailing [`Proc`], or the default when the frame ends here.
    fn proc_or_default(&mut self) -> Result<Proc, ProtocolError> {
        if self.0.is_empty() {
            return Ok(Proc::default());
        }
        Ok(Proc {
            node: self.u64()?,
            pid: self.u32()?,
            start: self.u64()?,
        })
    }
    fn end(&self) -> Result<(), ProtocolError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ProtocolError::Malformed("trailing bytes"))
        }
    }
}

/// Decodes the bytes after the length prefix (kind byte + body).
pub fn decode(frame: &[u8]) -> Result<Message, ProtocolError> {
    let (&kind, body) = frame.split_first().ok_or(ProtocolError::Truncated)?;
    let mut r = Reader(body);
    let msg = match kind {
        K_HELLO => Message::Hello {
            version: r.u32()?,
            token: r.bytes()?,
            pe: r.u32()?,
            n_pes: r.u32()?,
            watch: match r.take(1)?[0] {
                0 => false,
                1 => true,
                _ => return Err(ProtocolError::Malformed("watch flag is not 0 or 1")),
            },
            who: r.proc_or_default()?,
        },
        K_WELCOME => Message::Welcome {
            session: r.u64()?,
            store: r.proc_or_default()?,
        },
        K_REJECT => Message::Reject { reason: r.string()? },
        K_ALLGATHER => Message::Allgather {
            seq: r.u64()?,
            data: r.bytes()?,
        },
        K_RESULT => {
            let seq = r.u64()?;
            let n = r.u32()? as usize;
            // each part needs at least its 4-byte length: bound the allocation by the input
            if n > r.0.len() / 4 {
                return Err(ProtocolError::Truncated);
            }
            let mut parts = Vec::with_capacity(n);
            for _ in 0..n {
                parts.push(r.bytes()?);
            }
            Message::AllgatherResult { seq, parts }
        }
        K_FAILED => Message::Failed {
            seq: r.u64()?,
            reason: r.string()?,
        },
        K_ABANDON => Message::Abandon {
            seq: r.u64()?,
            reason: r.string()?,
        },
        K_BYE => Message::Bye,
        K_GLOBAL_EXIT => Message::GlobalExit {
            status: r.u32()? as i32,
        },
        K_EXIT_NOTICE => Message::ExitNotice {
            pe: r.u32()?,
            status: r.u32()? as i32,
        },
        K_PEER_DIED => Message::PeerDied { pe: r.u32()? },
        K_PING => Message::Ping,
        k => return Err(ProtocolError::UnknownKind(k)),
    };
    r.end()?;
    Ok(msg)
}

/// Reads one frame of at most `max` bytes from a stream.
pub fn read_frame(r: &mut impl std::io::Read, max: usize) -> std::io::Result<Message> {
    let mut prefix = [0u8; 4];
    r.read_exact(&mut prefix)?;
    let n = frame_len(prefix, max).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let mut buf = vec![0u8; n];
    r.read_exact(&mut buf)?;
    decode(&buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Writes one frame to a stream and flushes it (a TLS stream sends its records).
pub fn write_frame(w: &mut impl std::io::Write, msg: &Message) -> std::io::Result<()> {
    w.write_all(&encode(msg))?;
    w.flush()
}

/// Incremental frame reader for connections read with a timeout or without blocking: bytes of a
/// partly received frame stay buffered, so framing never breaks. A frame announcing more than the
/// reader's limit is an error as soon as its length prefix arrives, so at most one frame (and one
/// read's worth of bytes) is ever buffered.
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    limit: usize,
}

impl FrameReader {
    /// A reader accepting frames of at most `limit` bytes.
    pub fn new(limit: usize) -> FrameReader {
        FrameReader {
            buf: Vec::new(),
            limit,
        }
    }

    /// Changes the limit (a connection that proved the job secret may send larger frames).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// Appends received bytes; call [`FrameReader::next_frame`] after each call.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// A complete frame already buffered, if any.
    pub fn next_frame(&mut self) -> Result<Option<Message>, ProtocolError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let n = frame_len(
            self.buf[..4].try_into().map_err(|_| ProtocolError::Truncated)?,
            self.limit,
        )?;
        if self.buf.len() < 4 + n {
            return Ok(None);
        }
        let msg = decode(&self.buf[4..4 + n]);
        self.buf.drain(..4 + n);
        msg.map(Some)
    }

    /// Reads once from `r` (which may time out) and returns a complete frame when there is one.
    /// `Ok(None)`: nothing complete yet (timeout). `Err`: the connection ended or broke.
    pub fn poll(&mut self, r: &mut impl std::io::Read) -> std::io::Result<Option<Message>> {
        let invalid = |e: ProtocolError| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        if let Some(m) = self.next_frame().map_err(invalid)? {
            return Ok(Some(m));
        }
        let mut chunk = [0u8; 4096];
        loop {
            return match r.read(&mut chunk) {
                Ok(0) => Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    self.next_frame().map_err(invalid)
                }
                // a signal (a handler, or SIGSTOP/SIGCONT) ended a read that has a timeout: the
                // connection is fine
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    Ok(None)
                }
                Err(e) => Err(e),
            };
        }
    }
}

/// How often each side of a watch connection sends [`Message::Ping`].
pub const HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);
/// Longest pause between two looks of a heartbeat check that still counts as watching. A thread
/// that did not run for longer (its process stopped, the machine overloaded or paused) cannot
/// tell a silent peer from one that did not run either: the silence before such a pause does not
/// count, the peer gets a whole timeout from then on. (Under heavy load a PE took its own PE 0's
/// store for dead: its watcher ran first after a pause of more than the timeout, before the store
/// thread could send a ping.) The loops look every 50-100 ms when they run.
pub const WATCH_GAP: std::time::Duration = std::time::Duration::from_secs(2);
/// Shortest heartbeat timeout taken (a shorter setting is raised to it).
pub const MIN_HEARTBEAT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The heartbeat timeout of ACLSHMEM_HEARTBEAT_TIMEOUT: `None` when off (0).
pub fn heartbeat_timeout(setting: std::time::Duration) -> Option<std::time::Duration> {
    (!setting.is_zero()).then(|| setting.max(MIN_HEARTBEAT_TIMEOUT))
}

/// Constant-time equality for secrets.
pub fn secrets_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(m: Message) {
        let f = encode(&m);
        let n = frame_len(f[..4].try_into().unwrap(), MAX_REQUEST_FRAME).unwrap();
        assert_eq!(n, f.len() - 4);
        assert_eq!(decode(&f[4..]).unwrap(), m);
    }

    #[test]
    fn every_message_roundtrips() {
        roundtrip(Message::Hello {
            version: VERSION,
            token: b"secret".to_vec(),
            pe: 3,
            n_pes: 8,
            watch: true,
            who: Proc {
                node: 77,
                pid: 1234,
                start: 99,
            },
        });
        roundtrip(Message::Welcome {
            session: 0xdead_beef,
            store: Proc {
                node: 5,
                pid: 6,
                start: 7,
            },
        });
        roundtrip(Message::Reject {
            reason: "bad token".into(),
        });
        roundtrip(Message::Allgather {
            seq: 7,
            data: vec![1, 2, 3],
        });
        roundtrip(Message::AllgatherResult {
            seq: 7,
            parts: vec![vec![], vec![9; 100]],
        });
        roundtrip(Message::Failed {
            seq: 1,
            reason: "PE 3 died".into(),
        });
        roundtrip(Message::Abandon {
            seq: 4,
            reason: "PE 1 waits in a barrier".into(),
        });
        roundtrip(Message::Bye);
        roundtrip(Message::GlobalExit { status: -3 });
        roundtrip(Message::ExitNotice { pe: 2, status: 7 });
        roundtrip(Message::PeerDied { pe: 5 });
        roundtrip(Message::Ping);
    }

    #[test]
    fn truncated_frames_are_errors() {
        let f = encode(&Message::Hello {
            version: 1,
            token: b"abc".to_vec(),
            pe: 1,
            n_pes: 2,
            watch: false,
            who: Proc {
                node: 1,
                pid: 2,
                start: 3,
            },
        });
        for cut in 5..f.len() {
            if cut == f.len() - PROC_BYTES {
                // the process is optional: a hello of an earlier build ends here
                assert!(
                    matches!(decode(&f[4..cut]), Ok(Message::Hello { who, .. }) if who == Proc::default())
                );
            } else {
                assert!(decode(&f[4..cut]).is_err(), "cut at {cut}");
            }
        }
        assert_eq!(decode(&[]), Err(ProtocolError::Truncated));
    }

    #[test]
    fn oversized_and_malformed_frames_are_errors() {
        assert!(matches!(
            frame_len(((MAX_HELLO_FRAME + 1) as u32).to_le_bytes(), MAX_HELLO_FRAME),
            Err(ProtocolError::TooLarge(_))
        ));
        assert!(frame_len(0u32.to_le_bytes(), MAX_HELLO_FRAME).is_err());
        // a hello with the longest secret fits the hello limit
        let longest = encode(&Message::Hello {
            version: VERSION,
            token: vec![7; MAX_TOKEN],
            pe: 1,
            n_pes: 2,
            watch: true,
            who: Proc {
                node: 1,
                pid: 2,
                start: 3,
            },
        });
        assert_eq!(longest.len() - 4, MAX_HELLO_FRAME);
        let biggest = encode(&Message::Allgather {
            seq: 1,
            data: vec![0; MAX_PART],
        });
        assert_eq!(biggest.len() - 4, MAX_REQUEST_FRAME);
        // a frame reader refuses an oversized frame as soon as its length arrives
        let mut fr = FrameReader::new(MAX_HELLO_FRAME);
        fr.feed(&(64u32 << 20).to_le_bytes());
        assert!(matches!(fr.next_frame(), Err(ProtocolError::TooLarge(_))));
        assert_eq!(decode(&[200]), Err(ProtocolError::UnknownKind(200)));
        // a result claiming 2^32-1 parts in a tiny body must not allocate or succeed
        let mut f = vec![K_RESULT];
        f.extend_from_slice(&1u64.to_le_bytes());
        f.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode(&f), Err(ProtocolError::Truncated));
        // trailing garbage
        let mut f = encode(&Message::Bye)[4..].to_vec();
        f.push(0);
        assert!(decode(&f).is_err());
        // a byte string longer than the frame
        let mut f = vec![K_REJECT];
        f.extend_from_slice(&1000u32.to_le_bytes());
        assert_eq!(decode(&f), Err(ProtocolError::Truncated));
        let mut f = vec![K_REJECT];
        f.extend_from_slice(&2u32.to_le_bytes());
        f.extend_from_slice(&[0xff, 0xfe]);
        assert!(decode(&f).is_err());
    }

    #[test]
    fn frame_reader_survives_partial_frames() {
        let mut bytes = encode(&Message::GlobalExit { status: 3 });
        bytes.extend(encode(&Message::PeerDied { pe: 1 }));
        let mut fr = FrameReader::new(MAX_CONTROL_FRAME);
        // feed one byte at a time, as timeouts would cut it
        let mut got = vec![];
        for b in &bytes {
            let mut one: &[u8] = std::slice::from_ref(b);
            if let Some(m) = fr.poll(&mut one).unwrap() {
                got.push(m);
            }
        }
        while let Some(m) = fr.next_frame().unwrap() {
            got.push(m);
        }
        assert_eq!(
            got,
            vec![Message::GlobalExit { status: 3 }, Message::PeerDied { pe: 1 }]
        );
        let mut empty: &[u8] = &[];
        assert!(fr.poll(&mut empty).is_err());
    }

    /// A reader whose first read is interrupted by a signal (EINTR), as a read with a timeout is
    /// when the process is stopped and continued.
    struct InterruptedOnce(bool, Vec<u8>);

    impl std::io::Read for InterruptedOnce {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if !self.0 {
                self.0 = true;
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = self.1.len().min(buf.len());
            buf[..n].copy_from_slice(&self.1[..n]);
            self.1.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn frame_reader_retries_interrupted_reads() {
        let mut r = InterruptedOnce(false, encode(&Message::PeerDied { pe: 4 }));
        let mut fr = FrameReader::new(MAX_CONTROL_FRAME);
        assert_eq!(fr.poll(&mut r).unwrap(), Some(Message::PeerDied { pe: 4 }));
    }

    #[test]
    fn secret_comparison() {
        assert!(secrets_equal(b"abc", b"abc"));
        assert!(!secrets_equal(b"abc", b"abd"));
        assert!(!secrets_equal(b"abc", b"abcd"));
    }
}
