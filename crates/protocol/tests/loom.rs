//! Model checks of the protocols with loom: every interleaving of a few members and every outcome
//! of the weak memory model the C/Rust model allows (loom runs on any host; x86's stronger
//! ordering does not hide anything here). Data the protocols protect lives in loom `UnsafeCell`s,
//! so an ordering too weak to order a write before a read of another member is reported as a data
//! race, and a reader seeing stale data fails an assertion.

use aclshmem_protocol::signal::{self, Signal, Watch};
use aclshmem_protocol::{Word, barrier, ring};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::AtomicU64;
use loom::thread;
use std::sync::atomic::Ordering;

/// A loom atomic as a protocol word.
struct L(AtomicU64);

impl L {
    fn new() -> L {
        L(AtomicU64::new(0))
    }
}

impl Word for L {
    fn load(&self, order: Ordering) -> u64 {
        self.0.load(order)
    }
    fn store(&self, value: u64, order: Ordering) {
        self.0.store(value, order)
    }
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.0.fetch_add(value, order)
    }
}

/// A loom atomic as a signal word.
struct S(AtomicU64);

impl S {
    fn new() -> S {
        S(AtomicU64::new(0))
    }
}

impl Watch for S {
    type V = u64;
    fn load(&self, order: Ordering) -> u64 {
        self.0.load(order)
    }
}

impl Signal for S {
    fn store(&self, value: u64, order: Ordering) {
        self.0.store(value, order)
    }
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.0.fetch_add(value, order)
    }
}

/// Runs `f` under the model checker. Members spin while they wait, so the exploration bounds the
/// number of preemptions per execution to 3 (loom's documentation finds most bugs within 2-3).
/// The models have two threads: with three, the waiters' spinning makes the state space too large
/// for CI even at a bound of 1 (more than 2 minutes per model), so the multi-reader cases are
/// covered by the multi-PE tests instead.
fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.max_branches = 100_000;
    b.check(f);
}

/// Writes a cell the protocol is meant to protect.
fn put(cell: &UnsafeCell<u64>, v: u64) {
    // SAFETY: loom tracks every access of the cell and fails the model on an access that races
    // (one not ordered by happens-before with another member's access), before it happens.
    cell.with_mut(|c| unsafe { *c = v });
}

/// Reads a cell the protocol is meant to protect.
fn get(cell: &UnsafeCell<u64>) -> u64 {
    // SAFETY: as in `put`.
    cell.with(|c| unsafe { *c })
}

/// Runs `member` as member 1 on a new thread and as member 0 on this one.
fn two_members<F: Fn(usize) + Clone + 'static>(member: F) {
    let other = {
        let m = member.clone();
        thread::spawn(move || m(1))
    };
    member(0);
    other.join().unwrap();
}

/// Member `me` checks that every cell holds `base` plus its member's index.
fn check_cells(cells: &[UnsafeCell<u64>], base: u64, me: usize) {
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(get(c), base + i as u64, "member {me} read member {i}'s cell");
    }
}

fn yield_now<E>() -> Result<(), E> {
    thread::yield_now();
    Ok(())
}

/// Members write their own cell, pass a barrier, read every cell, pass a second barrier (the words
/// are reused, as consecutive barriers of a team do), then write again and read after a third.
fn barrier_members(n: usize) {
    model(move || {
        let arrive = Arc::new(L::new());
        let generation = Arc::new(L::new());
        let cells: Arc<Vec<UnsafeCell<u64>>> = Arc::new((0..n).map(|_| UnsafeCell::new(0)).collect());
        let member = {
            let (arrive, generation, cells) = (arrive.clone(), generation.clone(), cells.clone());
            move |me: usize| {
                let pass =
                    || barrier::central(&*arrive, &*generation, n as u64, |_| yield_now::<()>()).unwrap();
                put(&cells[me], 1 + me as u64);
                pass();
                check_cells(&cells, 1, me);
                pass();
                put(&cells[me], 100 + me as u64);
                pass();
                check_cells(&cells, 100, me);
            }
        };
        let others: Vec<_> = (1..n)
            .map(|me| {
                let m = member.clone();
                thread::spawn(move || m(me))
            })
            .collect();
        member(0);
        for t in others {
            t.join().unwrap();
        }
    });
}

#[test]
fn barrier_two_members() {
    barrier_members(2);
}

/// [`barrier::central_as`] with a program's arrival against a collective call's, twice, then both
/// alike: every member learns the mix of each barrier, and the data ordering holds as in
/// [`barrier::central`].
#[test]
fn barrier_kinds_two_members() {
    model(|| {
        let arrive = Arc::new(L::new());
        let generation = Arc::new(L::new());
        let cells: Arc<Vec<UnsafeCell<u64>>> = Arc::new((0..2).map(|_| UnsafeCell::new(0)).collect());
        let member = {
            let (arrive, generation, cells) = (arrive.clone(), generation.clone(), cells.clone());
            move |me: usize| {
                let pass = |program: bool| {
                    barrier::central_as(&*arrive, &*generation, 2, program, |_| yield_now::<()>()).unwrap()
                };
                put(&cells[me], 1 + me as u64);
                assert!(pass(me == 0), "member {me}: a mixed barrier passed for alike");
                check_cells(&cells, 1, me);
                assert!(
                    !pass(true),
                    "member {me}: two programs' arrivals passed for mixed"
                );
                put(&cells[me], 100 + me as u64);
                assert!(!pass(false), "member {me}: two calls' arrivals passed for mixed");
                check_cells(&cells, 100, me);
            }
        };
        two_members(member);
    });
}

/// The pairwise barrier: each member writes its cell, passes, reads both, passes, writes again,
/// passes and reads again (three consecutive barriers over the same counters).
#[test]
fn barrier_pair_two_members() {
    model(|| {
        let words: Arc<Vec<L>> = Arc::new((0..4).map(|_| L::new()).collect()); // count, seen per member
        let cells: Arc<Vec<UnsafeCell<u64>>> = Arc::new((0..2).map(|_| UnsafeCell::new(0)).collect());
        let member = {
            let (words, cells) = (words.clone(), cells.clone());
            move |me: usize| {
                let pass = || {
                    barrier::pair(
                        &words[2 * me],
                        &words[2 * (1 - me)],
                        &words[2 * me + 1],
                        yield_now::<()>,
                    )
                    .unwrap()
                };
                put(&cells[me], 1 + me as u64);
                pass();
                check_cells(&cells, 1, me);
                pass();
                put(&cells[me], 100 + me as u64);
                pass();
                check_cells(&cells, 100, me);
            }
        };
        two_members(member);
    });
}

/// One member's ring with `depth` buffers of one word each, and its `done` word.
struct Ring {
    flag: Vec<L>,
    pending: Vec<L>,
    buf: Vec<UnsafeCell<u64>>,
    done: L,
}

impl Ring {
    fn new(depth: usize) -> Ring {
        Ring {
            flag: (0..depth).map(|_| L::new()).collect(),
            pending: (0..depth).map(|_| L::new()).collect(),
            buf: (0..depth).map(|_| UnsafeCell::new(0)).collect(),
            done: L::new(),
        }
    }

    fn depth(&self) -> u64 {
        self.flag.len() as u64
    }

    fn slot(&self, p: usize) -> ring::Slot<'_, L> {
        ring::Slot {
            flag: &self.flag[p],
            pending: &self.pending[p],
        }
    }

    /// The core's publish (`collectives::small::publish`): unless the calls `known` to be
    /// completed by every other member cover the buffer's previous use (`seq - depth`), wait until
    /// each of `others` completed the call half a ring back (a later call than needed, so the next
    /// half ring of calls skips the check) and remember the least seen; copy; announce.
    fn publish(&self, others: &[&Ring], known: &mut u64, seq: u64, value: u64) {
        let d = self.depth();
        if seq > d && *known < seq - d {
            let want = seq - d.div_ceil(2);
            *known = others
                .iter()
                .map(|o| ring::wait_done(&o.done, |v| v >= want, yield_now::<()>).unwrap())
                .min()
                .unwrap_or(want);
        }
        let p = (seq % d) as usize;
        put(&self.buf[p], value);
        ring::announce(self.slot(p), seq, 0);
    }

    /// The core's read: wait for the flag, copy.
    fn read(&self, seq: u64) -> u64 {
        let p = (seq % self.depth()) as usize;
        ring::wait_flag(&self.flag[p], seq, |_| yield_now::<()>()).unwrap();
        get(&self.buf[p])
    }

    /// The end of every call, on every member.
    fn complete(&self, seq: u64) {
        ring::complete(&self.done, seq);
    }
}

/// A broadcast-like sequence: member 0 publishes `calls` values through a ring of `depth`
/// buffers and member 1 reads each one; with calls > depth the publisher reuses buffers while the
/// reader may still be behind, which is what the reader's `done` word must make safe (with depth
/// 2 the publisher also skips the check every other call: the half ring it waited for covers it).
fn ring_broadcasts(depth: usize, calls: u64) {
    model(move || {
        let r = Arc::new([Ring::new(depth), Ring::new(depth)]);
        let reader = {
            let r = r.clone();
            thread::spawn(move || {
                for seq in 1..=calls {
                    assert_eq!(r[0].read(seq), seq * 10, "call {seq} read stale data");
                    r[1].complete(seq);
                }
            })
        };
        let mut known = 0;
        for seq in 1..=calls {
            r[0].publish(&[&r[1]], &mut known, seq, seq * 10);
            r[0].complete(seq);
        }
        reader.join().unwrap();
    });
}

#[test]
fn ring_one_reader_reuses_buffers() {
    ring_broadcasts(1, 3);
}

#[test]
fn ring_publisher_skips_checks_within_half_a_ring() {
    ring_broadcasts(2, 4);
}

/// Broadcasts whose root alternates over a single buffer each: a member that was root in the
/// previous call completes it too, so the next root's check of its `done` word passes.
#[test]
fn ring_alternating_roots() {
    model(|| {
        let rings = Arc::new([Ring::new(1), Ring::new(1)]);
        let member = |me: usize, rings: Arc<[Ring; 2]>| {
            let mut known = 0;
            for seq in 1..=3u64 {
                let root = (seq % 2) as usize;
                if root == me {
                    rings[me].publish(&[&rings[1 - me]], &mut known, seq, seq * 10);
                } else {
                    assert_eq!(rings[root].read(seq), seq * 10, "call {seq} read stale data");
                }
                rings[me].complete(seq);
            }
        };
        let r1 = rings.clone();
        let t = thread::spawn(move || member(1, r1));
        member(0, rings);
        t.join().unwrap();
    });
}

/// Every member publishes and reads every other member's data (fcollect-like), two calls over a
/// single buffer: publishing the second call must wait for the other member's read of the first.
#[test]
fn ring_all_to_all() {
    model(|| {
        let rings = Arc::new([Ring::new(1), Ring::new(1)]);
        let member = |me: usize, rings: Arc<[Ring; 2]>| {
            let mut known = 0;
            for seq in 1..=2u64 {
                let other = 1 - me;
                rings[me].publish(&[&rings[other]], &mut known, seq, seq * 10 + me as u64);
                assert_eq!(rings[other].read(seq), seq * 10 + other as u64);
                rings[me].complete(seq);
            }
        };
        let r1 = rings.clone();
        let t = thread::spawn(move || member(1, r1));
        member(0, rings);
        t.join().unwrap();
    });
}

/// Put-with-signal then a wait: the writer stores the data, then sets the signal (`signal::set`);
/// the target waits for the signal (`signal::wait_until`) and must read the data.
#[test]
fn put_signal_set_then_wait() {
    model(|| {
        let sig = Arc::new(S::new());
        let data = Arc::new([UnsafeCell::new(0), UnsafeCell::new(0)]);
        let writer = {
            let (sig, data) = (sig.clone(), data.clone());
            thread::spawn(move || {
                put(&data[0], 42);
                put(&data[1], 43);
                signal::set(&*sig, 1);
            })
        };
        let seen = signal::wait_until(&*sig, |v| v == 1, yield_now::<()>).unwrap();
        assert_eq!(seen, 1);
        assert_eq!(
            (get(&data[0]), get(&data[1])),
            (42, 43),
            "the wait saw the signal, not the data"
        );
        writer.join().unwrap();
    });
}

/// Two writers put into their own part of the target's buffer and add 1 to one signal (the target
/// is one of them, as a PE that also signals itself); a wait for the sum 2 must see both parts.
#[test]
fn put_signal_add_from_two_writers() {
    model(|| {
        let sig = Arc::new(S::new());
        let data = Arc::new([UnsafeCell::new(0), UnsafeCell::new(0)]);
        let other = {
            let (sig, data) = (sig.clone(), data.clone());
            thread::spawn(move || {
                put(&data[1], 7);
                signal::add(&*sig, 1);
            })
        };
        put(&data[0], 5);
        signal::add(&*sig, 1);
        signal::wait_until(&*sig, |v| v == 2, yield_now::<()>).unwrap();
        assert_eq!((get(&data[0]), get(&data[1])), (5, 7));
        other.join().unwrap();
    });
}

/// The test form: a single look that sees the signal may read the data too.
#[test]
fn put_signal_then_test() {
    model(|| {
        let sig = Arc::new(S::new());
        let data = Arc::new(UnsafeCell::new(0));
        let writer = {
            let (sig, data) = (sig.clone(), data.clone());
            thread::spawn(move || {
                put(&data, 9);
                signal::set(&*sig, 3);
            })
        };
        if signal::peek(&*sig) == 3 {
            assert_eq!(get(&data), 9);
        }
        writer.join().unwrap();
    });
}

/// The model has teeth: the same put-with-signal with a Relaxed signal store (what works on x86
/// and fails on AArch64) is reported, as a data race on the data or as stale data.
#[test]
#[should_panic(expected = "Causality violation")]
fn relaxed_signal_is_caught() {
    struct Relaxed(S);
    impl Watch for Relaxed {
        type V = u64;
        fn load(&self, order: Ordering) -> u64 {
            self.0.load(order)
        }
    }
    impl Signal for Relaxed {
        fn store(&self, value: u64, _: Ordering) {
            self.0.store(value, Ordering::Relaxed)
        }
        fn fetch_add(&self, value: u64, _: Ordering) -> u64 {
            self.0.fetch_add(value, Ordering::Relaxed)
        }
    }
    model(|| {
        let sig = Arc::new(Relaxed(S::new()));
        let data = Arc::new(UnsafeCell::new(0));
        let writer = {
            let (sig, data) = (sig.clone(), data.clone());
            thread::spawn(move || {
                put(&data, 42);
                signal::set(&*sig, 1);
            })
        };
        signal::wait_until(&*sig, |v| v == 1, yield_now::<()>).unwrap();
        assert_eq!(get(&data), 42);
        writer.join().unwrap();
    });
}
