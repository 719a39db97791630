//! The safe core through the rlib API: streams, events, memory rules. (Process-wide state such as
//! aclInit/aclFinalize is covered by the C tests, one process each.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ascendcl::error::code;
use ascendcl::event::{Event, Status};
use ascendcl::memory::{self, Copy, Kind};
use ascendcl::stream::{Run, Stream};
use ascendcl::{device, handle};

fn stream() -> Arc<Stream> {
    Stream::new(handle::next_handle(), 0, 0, 0).expect("stream")
}

fn sleep_job(s: &Stream, ms: u64) {
    s.enqueue_fn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        Ok(())
    })
    .unwrap();
}

#[test]
fn jobs_run_in_submission_order() {
    let s = stream();
    let log = Arc::new(Mutex::new(Vec::new()));
    sleep_job(&s, 20);
    for i in 0..500 {
        let log = Arc::clone(&log);
        s.enqueue_fn(move || {
            log.lock().unwrap().push(i);
            Ok(())
        })
        .unwrap();
    }
    s.synchronize(None).unwrap();
    assert_eq!(*log.lock().unwrap(), (0..500).collect::<Vec<_>>());
    assert!(s.is_idle());
}

#[test]
fn first_error_is_reported_once_and_later_jobs_still_run() {
    let s = stream();
    let ran = Arc::new(AtomicUsize::new(0));
    s.enqueue_fn(|| Err(ascendcl::Error::new(507015, "first")))
        .unwrap();
    s.enqueue_fn(|| Err(ascendcl::Error::new(507014, "second")))
        .unwrap();
    let r = Arc::clone(&ran);
    s.enqueue_fn(move || {
        r.fetch_add(1, Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    assert_eq!(s.synchronize(None).unwrap_err().code(), 507015);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    s.synchronize(None).unwrap();
}

#[test]
fn a_panicking_job_becomes_an_internal_error() {
    let s = stream();
    s.enqueue_fn(|| panic!("boom")).unwrap();
    let e = s.synchronize(None).unwrap_err();
    assert_eq!(e.code(), code::RT_INTERNAL_ERROR);
    assert!(e.message().contains("boom"));
    s.enqueue_fn(|| Ok(())).unwrap();
    s.synchronize(None).unwrap();
}

#[test]
fn synchronize_timeout_and_poll() {
    let s = stream();
    s.synchronize(Some(Duration::ZERO)).unwrap();
    sleep_job(&s, 1000);
    let t = Instant::now();
    assert_eq!(
        s.synchronize(Some(Duration::from_millis(20))).unwrap_err().code(),
        code::RT_STREAM_SYNC_TIMEOUT
    );
    assert!(t.elapsed() < Duration::from_millis(900));
    assert!(!s.is_idle());
    s.synchronize(None).unwrap();
}

#[test]
fn synchronize_from_own_job_is_refused_not_deadlocked() {
    let s = stream();
    let inner = Arc::clone(&s);
    let code_seen = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&code_seen);
    s.enqueue_fn(move || {
        let e = inner.synchronize(None).unwrap_err();
        c.store(e.code() as usize, Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    s.synchronize(None).unwrap();
    assert_eq!(code_seen.load(Ordering::SeqCst), code::RT_PARAM_INVALID as usize);
}

#[test]
fn shutdown_drains_or_cancels() {
    let s = stream();
    let n = Arc::new(AtomicUsize::new(0));
    sleep_job(&s, 50);
    for _ in 0..50 {
        let n = Arc::clone(&n);
        s.enqueue_fn(move || {
            n.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    }
    s.shutdown(false);
    assert_eq!(n.load(Ordering::SeqCst), 50);
    assert_eq!(
        s.enqueue_fn(|| Ok(())).unwrap_err().code(),
        code::RT_INVALID_HANDLE
    );

    let s = stream();
    let cancelled = Arc::new(AtomicUsize::new(0));
    sleep_job(&s, 100);
    std::thread::sleep(Duration::from_millis(20));
    for _ in 0..10 {
        let c = Arc::clone(&cancelled);
        s.enqueue(Box::new(move |run| {
            if run == Run::Cancel {
                c.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        }))
        .unwrap();
    }
    s.shutdown(true);
    assert_eq!(cancelled.load(Ordering::SeqCst), 10);
    s.shutdown(true); // idempotent
}

#[test]
fn events_complete_in_stream_order() {
    let s = stream();
    let start = Event::new();
    let end = Event::new();
    assert_eq!(start.query(), Status::NotReady);
    start.synchronize(None).unwrap();
    assert_eq!(
        Event::elapsed_ms(&start, &end).unwrap_err().code(),
        code::RT_INTERNAL_ERROR
    );
    start.record(&s).unwrap();
    sleep_job(&s, 300);
    end.record(&s).unwrap();
    assert_eq!(end.query(), Status::NotReady);
    assert_eq!(
        Event::elapsed_ms(&start, &end).unwrap_err().code(),
        code::RT_EVENT_TIMESTAMP_INVALID
    );
    assert_eq!(
        end.synchronize(Some(Duration::from_millis(5)))
            .unwrap_err()
            .code(),
        code::RT_EVENT_SYNC_TIMEOUT
    );
    end.synchronize(None).unwrap();
    assert_eq!(end.query(), Status::Complete);
    let ms = Event::elapsed_ms(&start, &end).unwrap();
    assert!(ms >= 250.0, "{ms}");
    assert_eq!(
        Event::elapsed_ms(&end, &start).unwrap_err().code(),
        code::RT_EVENT_TIMESTAMP_REVERSAL
    );
}

#[test]
fn stream_wait_event_orders_two_streams() {
    let (a, b) = (stream(), stream());
    let ev = Event::new();
    let flag = Arc::new(AtomicUsize::new(0));
    sleep_job(&a, 80);
    let f = Arc::clone(&flag);
    a.enqueue_fn(move || {
        f.store(1, Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    ev.record(&a).unwrap();
    ev.wait_on(&b).unwrap();
    let seen = Arc::new(AtomicUsize::new(9));
    let (f, s2) = (Arc::clone(&flag), Arc::clone(&seen));
    b.enqueue_fn(move || {
        s2.store(f.load(Ordering::SeqCst), Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    b.synchronize(None).unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn event_recorded_on_a_force_destroyed_stream_still_completes() {
    let s = stream();
    let ev = Event::new();
    sleep_job(&s, 100);
    std::thread::sleep(Duration::from_millis(20));
    ev.record(&s).unwrap();
    s.shutdown(true);
    ev.synchronize(Some(Duration::from_secs(5))).unwrap();
    // recording on a closed stream fails but leaves the event complete (never hangs a waiter)
    assert_eq!(ev.record(&s).unwrap_err().code(), code::RT_INVALID_HANDLE);
    ev.synchronize(Some(Duration::from_secs(5))).unwrap();
}

#[test]
fn memory_rules() {
    let p = memory::allocate(100, Kind::Device(3)).unwrap();
    assert_eq!(p as usize % memory::ALIGN, 0);
    assert_eq!(memory::allocation_size(p as usize), Some(160)); // 100 → 128 + 32
    assert_eq!(
        memory::allocate(0, Kind::Host).unwrap_err().code(),
        code::INVALID_PARAM
    );
    assert_eq!(
        memory::allocate(usize::MAX, Kind::Host).unwrap_err().code(),
        code::RT_MEMORY_ALLOCATION
    );
    assert_eq!(
        memory::free(p as usize, true).unwrap_err().code(),
        code::RT_MEMORY_FREE
    );
    memory::free(p as usize, false).unwrap();
    assert_eq!(
        memory::free(p as usize, false).unwrap_err().code(),
        code::RT_MEMORY_FREE
    );
    assert_eq!(memory::free(0, false).unwrap_err().code(), code::INVALID_PARAM);

    let (x, y) = ([0u8; 4], [0u8; 4]);
    let (a, b) = (x.as_ptr(), y.as_ptr());
    let null = std::ptr::null::<u8>();
    assert_eq!(memory::check_copy(null, 0, null, 0, 99).unwrap(), Copy::Nothing);
    assert_eq!(
        memory::check_copy(null, 4, b, 4, 1).unwrap_err().code(),
        code::INVALID_PARAM
    );
    assert_eq!(
        memory::check_copy(a, 4, b, 4, 6).unwrap_err().code(),
        code::INVALID_PARAM
    );
    assert_eq!(memory::check_copy(a, 4, b, 4, 5).unwrap(), Copy::Bytes(4));
    assert_eq!(
        memory::check_copy(a, 3, b, 4, 1).unwrap_err().code(),
        code::RT_PARAM_INVALID
    );
    assert_eq!(memory::check_copy(a, 4, a, 4, 1).unwrap(), Copy::Nothing);
    assert_eq!(
        memory::check_set(a, 3, 4).unwrap_err().code(),
        code::RT_PARAM_INVALID
    );
    assert_eq!(memory::check_set(null, 3, 0).unwrap(), Copy::Nothing);
}

#[test]
fn devices_and_streams_per_thread() {
    // Runs on its own thread so the per-thread current context does not leak into other tests.
    std::thread::spawn(|| {
        assert_eq!(
            device::current_device().unwrap_err().code(),
            code::RT_CONTEXT_NULL
        );
        assert_eq!(
            device::check_device(device::device_count() as i32)
                .unwrap_err()
                .code(),
            code::RT_INVALID_DEVICEID
        );
        let ctx = device::create_context(9).unwrap();
        assert_eq!(device::current_device().unwrap(), 9);
        let h = device::create_stream(0).unwrap();
        let s = device::stream(h).unwrap();
        assert_eq!((s.device(), s.context()), (9, ctx));
        assert!(Arc::ptr_eq(
            &device::stream(0).unwrap(),
            device::current_context().unwrap().default_stream()
        ));
        device::destroy_context(ctx).unwrap();
        assert_eq!(
            device::stream(h).map(drop).unwrap_err().code(),
            code::RT_INVALID_HANDLE
        );
        assert_eq!(
            device::current_device().unwrap_err().code(),
            code::RT_CONTEXT_NULL
        );
    })
    .join()
    .unwrap();
}
