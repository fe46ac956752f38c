//! One search over several identical devices: the tuner's batches
//! (`Tuner::run_batches`) are measured by every device of the group at
//! once. The device that runs the tuner (the leader) publishes a batch and
//! measures points of it itself; the other devices' threads (helpers) take
//! the next untaken point of the same batch until the leader closes the
//! queue. Results come back in the batch's order, whichever device
//! measured them, so the tuner sees the same sequence as with one device.
//!
//! A point whose program another device is measuring right now (two points
//! of a batch often give one kernel) is put back (`Outcome::Deferred`) while
//! the batch has other points to take, so the device measures those instead
//! of waiting; taken again, the program's time is usually in the log by then.

use super::tuner::{Measure, Point};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// What a device made of a point it took.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Done(Measure),
    /// Another device is measuring the same program: taken again later.
    Deferred,
}

/// A point handed to a device: whether it may be deferred (other points
/// are left to take, so putting it back does not leave the device idle).
pub type Take<'a> = (&'a Point, bool);

#[derive(Default)]
struct State {
    batch: Vec<Point>,
    /// The next point of `batch` no device has taken.
    next: usize,
    /// Points put back (`Outcome::Deferred`), taken after the untaken ones.
    deferred: VecDeque<usize>,
    results: Vec<Measure>,
    /// Points of `batch` not measured yet.
    left: usize,
    closed: bool,
}

/// The batch being measured, shared by the devices of one group.
#[derive(Default)]
pub struct BatchQueue {
    state: Mutex<State>,
    changed: Condvar,
}

impl BatchQueue {
    pub fn new() -> BatchQueue {
        BatchQueue::default()
    }

    /// A poisoned lock only means another device's thread panicked while
    /// holding it; the state itself is always consistent between updates.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    /// The next untaken point of the batch (else a deferred one), with its
    /// index and whether it may be deferred again.
    fn take(g: &mut State) -> Option<(usize, Point, bool)> {
        let i = if g.next < g.batch.len() {
            g.next += 1;
            g.next - 1
        } else {
            g.deferred.pop_front()?
        };
        let more = g.next < g.batch.len() || !g.deferred.is_empty();
        Some((i, g.batch[i].clone(), more))
    }

    /// Whether a point is there to take.
    fn any(g: &State) -> bool {
        g.next < g.batch.len() || !g.deferred.is_empty()
    }

    fn put(&self, i: usize, o: Outcome) {
        let mut g = self.lock();
        match o {
            Outcome::Done(m) => {
                g.results[i] = m;
                g.left -= 1;
                if g.left == 0 {
                    self.changed.notify_all();
                }
            }
            Outcome::Deferred => {
                g.deferred.push_back(i);
                // A device waiting for the batch's end may take it now.
                self.changed.notify_all();
            }
        }
    }

    /// The leader's side: `batch` measured by this thread (`own`) and the
    /// helpers together; one result per point, in the batch's order.
    pub fn lead(&self, batch: &[Point], own: &mut dyn FnMut(Take) -> Outcome) -> Vec<Measure> {
        {
            let mut g = self.lock();
            g.batch = batch.to_vec();
            g.next = 0;
            g.deferred.clear();
            g.results = vec![None; batch.len()];
            g.left = batch.len();
            self.changed.notify_all();
        }
        let mut g = self.lock();
        loop {
            if let Some((i, p, more)) = Self::take(&mut g) {
                drop(g);
                let o = own((&p, more));
                self.put(i, o);
                g = self.lock();
            } else if g.left > 0 {
                g = self.wait(g);
            } else {
                g.batch.clear();
                return std::mem::take(&mut g.results);
            }
        }
    }

    /// A helper's side: measures points of the batches with `f` until the
    /// leader closes the queue.
    pub fn serve(&self, f: &mut dyn FnMut(Take) -> Outcome) {
        loop {
            let mut g = self.lock();
            loop {
                if g.closed {
                    return;
                }
                if Self::any(&g) {
                    break;
                }
                g = self.wait(g);
            }
            let Some((i, p, more)) = Self::take(&mut g) else { continue };
            drop(g);
            let o = f((&p, more));
            self.put(i, o);
        }
    }

    /// No more batches: the helpers return.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }
}

/// Closes the queue when dropped, so that helpers return even when the
/// leader's search ends early by an error.
pub struct CloseOnDrop<'a>(pub &'a BatchQueue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tuner::{ShapeSpace, Tuner};
    use super::*;
    use std::collections::HashSet;

    fn spaces() -> Vec<ShapeSpace> {
        (0..6)
            .map(|s| ShapeSpace {
                domains: vec![(0..7).map(|v| 1 << v).collect(), vec![1, 2, 3]],
                defaults: vec![8, 1 + s % 3],
            })
            .collect()
    }

    /// A fake measure: a time that depends on the point alone.
    fn cost(p: &Point) -> Measure {
        (p.shape != 4)
            .then(|| 1.0 + p.shape as f64 + ((p.values[0] as f64).log2() - 3.0).abs() + p.values[1] as f64)
    }

    /// A whole search on `devices` fake devices; the points each measured.
    fn search(devices: usize) -> Vec<Vec<Point>> {
        let q = BatchQueue::new();
        let mut mine = Vec::new();
        let helpers: Vec<Vec<Point>> = std::thread::scope(|scope| {
            let hs: Vec<_> = (1..devices)
                .map(|_| {
                    let q = &q;
                    scope.spawn(move || {
                        let mut done = Vec::new();
                        q.serve(&mut |(p, _)| {
                            done.push(p.clone());
                            // As a device's measurement takes time.
                            std::thread::sleep(std::time::Duration::from_micros(300));
                            Outcome::Done(cost(p))
                        });
                        done
                    })
                })
                .collect();
            let close = CloseOnDrop(&q);
            let mut t = Tuner::new(spaces(), (0..6).collect(), 9);
            t.run_batches(
                &mut |b| {
                    q.lead(b, &mut |(p, _)| {
                        mine.push(p.clone());
                        std::thread::sleep(std::time::Duration::from_micros(300));
                        Outcome::Done(cost(p))
                    })
                },
                &|| false,
                &|| false,
                2 * devices,
            );
            drop(close);
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        std::iter::once(mine).chain(helpers).collect()
    }

    #[test]
    fn devices_share_a_search_and_each_point_is_measured_once() {
        let one: Vec<Point> = search(1).concat();
        let all: HashSet<Point> = one.iter().cloned().collect();
        assert_eq!(all.len(), one.len());
        for n in [2, 3] {
            let per = search(n);
            assert_eq!(per.len(), n);
            let joined: Vec<Point> = per.concat();
            assert_eq!(joined.len(), one.len(), "{n} devices: each point once");
            assert_eq!(joined.iter().cloned().collect::<HashSet<_>>(), all, "{n} devices");
            // Every device took part.
            assert!(per.iter().all(|d| !d.is_empty()), "{:?}", per.iter().map(Vec::len).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_closed_queue_releases_its_helpers() {
        let q = BatchQueue::new();
        std::thread::scope(|scope| {
            let h = scope.spawn(|| q.serve(&mut |_| Outcome::Done(None)));
            q.close();
            h.join().unwrap();
        });
        // A batch with no helper is measured by the leader alone.
        let r = q.lead(&[Point { shape: 0, values: vec![] }], &mut |_| Outcome::Done(Some(2.0)));
        assert_eq!(r, vec![Some(2.0)]);
    }

    #[test]
    fn a_deferred_point_comes_back_after_the_others_and_never_as_the_last() {
        let q = BatchQueue::new();
        let batch: Vec<Point> = (0..3).map(|s| Point { shape: s, values: vec![] }).collect();
        let mut order = Vec::new();
        // Point 0 is deferred while others are left; then measured.
        let r = q.lead(&batch, &mut |(p, more)| {
            order.push((p.shape, more));
            if p.shape == 0 && more {
                Outcome::Deferred
            } else {
                Outcome::Done(Some(p.shape as f64))
            }
        });
        assert_eq!(r, vec![Some(0.0), Some(1.0), Some(2.0)], "results in the batch's order");
        assert_eq!(order, vec![(0, true), (1, true), (2, true), (0, false)]);
    }
}
