//! Whether a silent side of a config-store connection is dead: this process's identity
//! ([`Proc::me`]), a same-node process's liveness ([`Proc::alive`]) and how crowded this machine
//! is ([`silence_factor`]). Kept apart from `protocol.rs`, which is pure encoding (and compiled
//! alone into the fuzz target).

use super::protocol::Proc;

impl Proc {
    /// This process.
    pub fn me() -> Proc {
        static ME: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
        let (node, start) = *ME.get_or_init(|| (this_node(), start_time("self").unwrap_or(0)));
        Proc {
            node,
            pid: std::process::id(),
            start,
        }
    }

    /// Whether the process is alive: `None` when it is not on this node (or not known), so that
    /// only its silence can tell.
    pub fn alive(&self) -> Option<bool> {
        if self.pid == 0 || self.node == 0 || self.node != Proc::me().node {
            return None;
        }
        // its stat: gone (dead and reaped), another process with its PID, or a zombie
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok();
        Some(stat.is_some_and(|s| {
            let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let running = fields.first().is_some_and(|st| *st != "Z" && *st != "X");
            running && fields.get(19).and_then(|f| f.parse::<u64>().ok()) == Some(self.start)
        }))
    }
}

/// The start time (field 22 of `/proc/<pid>/stat`) of process `pid` ("self" for this one).
fn start_time(pid: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// This node as [`Proc::node`] names it (never 0).
fn this_node() -> u64 {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let ns = std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut host = [0u8; 256];
    // SAFETY: the buffer and its length are passed; gethostname NUL-terminates within it or truncates.
    unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len() - 1) };
    let end = host.iter().position(|&b| b == 0).unwrap_or(host.len());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in host[..end]
        .iter()
        .chain(b"|")
        .chain(boot.trim().as_bytes())
        .chain(b"|")
        .chain(ns.as_bytes())
    {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h | 1
}

/// Runnable threads per CPU up to which silence counts at face value.
const CROWDED: f64 = 8.0;

/// How many heartbeat timeouts silence must last to count as death on this machine now: 1, or
/// more when its run queue is far longer than its CPUs (`/proc/loadavg`: the larger of the
/// one-minute load and the threads runnable right now, per online CPU, over [`CROWDED`]).
/// Thousands of PEs on a few CPUs (2048 on 2: a load of 780 at init) leave each side's heartbeat
/// thread too little CPU to send a ping per timeout: the sides took each other for dead (PE 0
/// even its own store) while every process was alive. Where silence and starvation cannot be
/// told apart, silence counts for less; a dead process on this node still shows at once as its
/// connections' end.
pub fn silence_factor() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
    std::fs::read_to_string("/proc/loadavg").map_or(1, |l| factor_of(&l, cpus))
}

/// [`silence_factor`] of a `/proc/loadavg` line on `cpus` CPUs.
fn factor_of(loadavg: &str, cpus: usize) -> u32 {
    let mut fields = loadavg.split_whitespace();
    let load: f64 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0.0);
    let running: f64 = fields
        .nth(2)
        .and_then(|f| f.split('/').next())
        .and_then(|f| f.parse().ok())
        .unwrap_or(0.0);
    let per_cpu = load.max(running) / cpus.max(1) as f64;
    (per_cpu / CROWDED).ceil().clamp(1.0, 1000.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_of_this_node_is_told_alive_or_dead() {
        let me = Proc::me();
        assert_eq!(me.alive(), Some(true));
        // a child that ended (reaped), and one that is a zombie
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        let start = start_time(&pid.to_string());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let zombie = Proc {
            pid,
            start: start.unwrap_or(0),
            ..me
        };
        if start.is_some() {
            assert_eq!(zombie.alive(), Some(false), "a zombie is dead");
        }
        child.wait().expect("wait");
        assert_eq!(zombie.alive(), Some(false), "a reaped process is dead");
        // this PID with another start time: another process
        assert_eq!(
            Proc {
                start: me.start + 1,
                ..me
            }
            .alive(),
            Some(false)
        );
        // another node, or unknown: only silence can tell
        assert_eq!(
            Proc {
                node: me.node ^ 2,
                ..me
            }
            .alive(),
            None
        );
        assert_eq!(Proc::default().alive(), None);
    }

    #[test]
    fn silence_counts_for_less_on_a_crowded_machine() {
        // an idle or busy machine: silence counts at face value
        assert_eq!(factor_of("0.05 0.10 0.20 1/300 4000", 2), 1);
        assert_eq!(factor_of("15.90 3.00 2.00 16/300 4000", 2), 1);
        // 2048 PEs on 2 CPUs at init: load 780
        assert_eq!(factor_of("780.12 400.00 90.00 700/5000 9000", 2), 49);
        // the one-minute load lags a sudden crowd: the threads runnable now count too
        assert_eq!(factor_of("3.00 1.00 0.50 400/5000 9000", 2), 25);
        // unreadable fields count as idle; the factor is bounded
        assert_eq!(factor_of("", 2), 1);
        assert_eq!(factor_of("1e9 0 0 1/1 1", 1), 1000);
    }
}
