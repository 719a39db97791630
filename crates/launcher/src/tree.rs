//! The processes a PE started: a job's end (timeout, a failed PE, a signal to the launcher) ends
//! them too, not just the PE. A PE is often a wrapper (`sh -c`, a script, `python -m`) whose
//! program is its child; signalling the wrapper alone left the program running, orphaned, for
//! ever (in a barrier, say, since its peers were alive too).
//!
//! The launcher is the child subreaper of its job ([`become_subreaper`]): a process whose parent
//! ends is re-parented to the launcher, not to init, so [`descendants`] still finds it. The
//! launcher reaps only its PEs: other processes re-parented to it stay zombies until it exits, so
//! their pids are never recycled while it may still signal them.

use std::collections::HashMap;

/// Makes orphaned descendants children of this process (Linux; elsewhere nothing).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Parent of every process that `/proc` lists.
fn parents() -> HashMap<libc::pid_t, libc::pid_t> {
    let mut map = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return map;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if let Some(ppid) = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| parent_in_stat(&s))
        {
            map.insert(pid, ppid);
        }
    }
    map
}

/// The parent pid in a `/proc/PID/stat` line: `pid (comm) state ppid ...`, where comm may hold
/// spaces and parentheses (the last `)` ends it).
fn parent_in_stat(stat: &str) -> Option<libc::pid_t> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every process below `root` (children, grandchildren, ...), not `root` itself.
pub fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let parents = parents();
    let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
    for (&pid, &ppid) in &parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or_default() {
            if !out.contains(&c) && c != root {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

/// Sends `sig` to every process below `root` except `spare` (the PEs, which the supervisor
/// signals and reaps itself).
pub fn signal_below(root: libc::pid_t, sig: i32, spare: &[libc::pid_t]) {
    for pid in descendants(root) {
        if !spare.contains(&pid) {
            // SAFETY: kill has no memory-safety preconditions. A process below `root` whose parent
            // ended is re-parented to the launcher (the subreaper), which never reaps it, so its
            // pid is not recycled while the launcher runs.
            unsafe { libc::kill(pid, sig) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_from_stat_lines() {
        assert_eq!(parent_in_stat("12 (sh) S 7 12 12 0"), Some(7));
        assert_eq!(parent_in_stat("13 (a) b (c)) R 9 1 1"), Some(9));
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[test]
    fn descendants_include_grandchildren() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        let me = std::process::id() as libc::pid_t;
        let sh = child.id() as libc::pid_t;
        // (other tests of this process start children too)
        let grandchild = |below: &[libc::pid_t]| below.iter().any(|&p| parents().get(&p) == Some(&sh));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let below = loop {
            let below = descendants(me);
            if grandchild(&below) || std::time::Instant::now() > deadline {
                break below;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert!(below.contains(&sh), "{below:?}");
        assert!(grandchild(&below), "{below:?}");
        signal_below(sh, libc::SIGKILL, &[]);
        let _ = child.kill();
        let _ = child.wait();
    }
}
