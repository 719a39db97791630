//! `--tag-output`: copy each PE's stdout and stderr line by line, prefixed with `[pe i] `.
//!
//! One thread per pipe; each prefixed line is written with a single `write_all` while the
//! destination is locked, so lines of different PEs never interleave.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

/// Longest line copied in one piece; longer lines are split.
const MAX_LINE: u64 = 64 * 1024;
const READER_STACK: usize = 64 * 1024;

/// Which of the launcher's streams a pipe is copied to.
#[derive(Debug, Clone, Copy)]
pub enum Dest {
    Stdout,
    Stderr,
}

/// The running copy threads of a job.
pub struct Readers {
    done_tx: Sender<()>,
    done_rx: Receiver<()>,
    running: usize,
}

impl Readers {
    pub fn new() -> Self {
        let (done_tx, done_rx) = mpsc::channel();
        Readers {
            done_tx,
            done_rx,
            running: 0,
        }
    }

    /// Starts a thread copying `pipe` to `dest` with the prefix of PE `rank`.
    pub fn spawn<R: Read + Send + 'static>(&mut self, rank: u32, dest: Dest, pipe: R) -> io::Result<()> {
        let done = self.done_tx.clone();
        thread::Builder::new()
            .name(format!("pe{rank}-{dest:?}").to_lowercase())
            .stack_size(READER_STACK)
            .spawn(move || {
                let prefix = format!("[pe {rank}] ");
                match dest {
                    // `Stdout`/`Stderr` lock themselves for each `write_all`.
                    Dest::Stdout => copy_tagged(pipe, &prefix, &mut io::stdout()),
                    Dest::Stderr => copy_tagged(pipe, &prefix, &mut io::stderr()),
                }
                .ok();
                let _ = done.send(());
            })?;
        self.running += 1;
        Ok(())
    }

    /// Waits until every pipe reached end of file, or at most `grace` (a PE's child
    /// process may keep a pipe open after the PE itself is gone).
    pub fn finish(mut self, grace: Duration) {
        let deadline = Instant::now() + grace;
        while self.running > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.done_rx.recv_timeout(left).is_err() {
                break;
            }
            self.running -= 1;
        }
        let _ = io::stdout().flush();
    }
}

/// Copies `input` to `out` line by line, each line prefixed and written with one
/// `write_all`. A last line without a newline gets one.
pub fn copy_tagged<R: Read, W: Write + ?Sized>(input: R, prefix: &str, out: &mut W) -> io::Result<()> {
    let mut reader = BufReader::new(input);
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        line.extend_from_slice(prefix.as_bytes());
        let n = (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        out.write_all(&line)?;
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prefixed() {
        let mut out = Vec::new();
        copy_tagged(&b"a\n\nlast"[..], "[pe 7] ", &mut out).unwrap();
        assert_eq!(out, b"[pe 7] a\n[pe 7] \n[pe 7] last\n");
        let mut out = Vec::new();
        copy_tagged(&b""[..], "[pe 0] ", &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn long_lines_are_split() {
        let input = vec![b'x'; MAX_LINE as usize + 10];
        let mut out = Vec::new();
        copy_tagged(&input[..], "> ", &mut out).unwrap();
        let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].len(), 2 + MAX_LINE as usize);
        assert_eq!(lines[1], b"> xxxxxxxxxx");
    }
}
