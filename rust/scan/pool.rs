//! A small worker pool: run a function over items on up to `threads` scoped std threads and
//! hand the results over in input order (all at once, or each as soon as it is due). No async runtime: manifest reading is file I/O plus
//! CPU-bound decoding, and the planner needs nothing to outlive the call.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Worker threads to use: the available cores (at least 1).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// `f` applied to every item on up to `threads` workers, each result handed to `consume` in
/// item order as soon as it and every one before it are done, so that the results are never
/// all held at once (a planner's parts, moved one by one into its task list). The first error
/// of `consume` stops the workers (items already started finish) and is returned. Runs inline
/// when there is one item or one thread; a panic in a worker propagates.
pub fn parallel_consume<T: Sync, R: Send, E>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads.max(1).min(items.len());
    if threads <= 1 {
        return items.iter().try_for_each(|item| consume(f(item)));
    }
    let (next, stop, f) = (&AtomicUsize::new(0), &AtomicBool::new(false), &f);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let tx = tx.clone();
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        if tx.send((i, f(item))).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        let mut waiting = BTreeMap::new();
        let mut due = 0;
        let mut outcome = Ok(());
        // Ends when every worker has finished (dropped its sender).
        for (i, r) in rx.iter() {
            if outcome.is_err() {
                continue;
            }
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&due) {
                due += 1;
                if let Err(e) = consume(r) {
                    stop.store(true, Ordering::Relaxed);
                    outcome = Err(e);
                    break;
                }
            }
        }
        for w in workers {
            if let Err(p) = w.join() {
                std::panic::resume_unwind(p);
            }
        }
        outcome
    })
}

/// `f` applied to every item, results in item order. Runs inline when there is one item or
/// one thread. A panic in a worker propagates (the planner's functions return errors instead).
pub fn parallel_map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    let consumed: Result<(), Infallible> = parallel_consume(items, threads, f, |r| {
        out.push(r);
        Ok(())
    });
    match consumed {
        Ok(()) => out,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consume_sees_every_result_in_item_order() {
        let items: Vec<u64> = (0..500).collect();
        for threads in [1, 2, 8] {
            let mut seen = Vec::new();
            // Later items finish first: the consumer must still see them in order.
            let slow = |i: &u64| {
                if i % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                i * 10
            };
            let r: Result<(), ()> = parallel_consume(&items, threads, slow, |v| {
                seen.push(v);
                Ok(())
            });
            assert!(r.is_ok());
            assert_eq!(seen, items.iter().map(|i| i * 10).collect::<Vec<_>>(), "threads {threads}");
        }
    }

    #[test]
    fn consume_stops_at_the_first_error() {
        let items: Vec<u32> = (0..10_000).collect();
        let ran = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let r = parallel_consume(
            &items,
            2,
            |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_micros(100)); // 10,000 items: ~0.5 s
                *i
            },
            |v| {
                if v == 3 {
                    return Err(format!("item {v}"));
                }
                seen.push(v);
                Ok(())
            },
        );
        assert_eq!(r, Err("item 3".to_string()));
        assert_eq!(seen, vec![0, 1, 2]);
        assert!(ran.load(Ordering::Relaxed) < items.len(), "the workers went on after the error");
    }
}
