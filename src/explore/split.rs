//! One search over several identical devices: the tuner's batches
//! (`Tuner::run_batches`) are measured by every device of the group at
//! once. The device that runs the tuner (the leader) publishes a batch and
//! measures points of it itself; the other devices' threads (helpers) take
//! the next untaken point until the leader closes the queue. Once no point
//! is left to take, the leader goes back to the tuner with the results in
//! so far instead of waiting for the last points other devices measure:
//! the tuner hands out the next points meanwhile, leaving alone the shapes
//! whose points are still in flight (`Tuner`), so that a search run to its
//! end measures the same points as on one device.
//!
//! A point whose program another device is measuring right now (two points
//! can give one kernel) is put back (`Outcome::Deferred`) while
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
    /// The device leaves the search (its worker process failed): the
    /// point goes back to the others and the device takes no more.
    Left,
}

/// A point handed to a device: whether it may be deferred (other points
/// are left to take, so putting it back does not leave the device idle).
pub type Take<'a> = (&'a Point, bool);

#[derive(Default)]
struct State {
    /// Points published and not taken yet, in order.
    pending: VecDeque<Point>,
    /// Points put back (`Outcome::Deferred`), taken after the pending ones.
    deferred: VecDeque<Point>,
    /// Measured points whose results the leader has not collected yet.
    done: Vec<(Point, Measure)>,
    /// Points taken and not measured yet.
    in_flight: usize,
    closed: bool,
}

/// The points being measured, shared by the devices of one group.
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

    /// The next pending point (else a deferred one), counted in flight,
    /// and whether it may be deferred again (others are left to take).
    fn take(g: &mut State) -> Option<(Point, bool)> {
        let p = g.pending.pop_front().or_else(|| g.deferred.pop_front())?;
        g.in_flight += 1;
        Some((p, Self::any(g)))
    }

    /// Whether a point is there to take.
    fn any(g: &State) -> bool {
        !g.pending.is_empty() || !g.deferred.is_empty()
    }

    fn put(&self, p: Point, o: Outcome) {
        let mut g = self.lock();
        g.in_flight -= 1;
        match o {
            Outcome::Done(m) => g.done.push((p, m)),
            // A device waiting for the others may take it now.
            Outcome::Deferred | Outcome::Left => g.deferred.push_back(p),
        }
        self.changed.notify_all();
    }

    /// The leader's side: publishes `batch`, measures points with `own`
    /// (this thread's device) while any are left to take, and returns the
    /// results measured so far by any device, of this batch or earlier
    /// ones, without waiting for the points other devices still measure
    /// (so that the tuner can hand out more while they finish). With an
    /// empty batch it waits for at least one result while points are in
    /// flight; an empty result then means nothing is left anywhere.
    pub fn lead(&self, batch: &[Point], own: &mut dyn FnMut(Take) -> Outcome) -> Vec<(Point, Measure)> {
        let mut g = self.lock();
        g.pending.extend(batch.iter().cloned());
        self.changed.notify_all();
        loop {
            if let Some((p, more)) = Self::take(&mut g) {
                drop(g);
                let o = own((&p, more));
                self.put(p, o);
                g = self.lock();
            } else if g.done.is_empty() && g.in_flight > 0 && batch.is_empty() {
                g = self.wait(g);
            } else {
                return std::mem::take(&mut g.done);
            }
        }
    }

    /// A helper's side: measures points with `f` until the leader closes
    /// the queue.
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
            let Some((p, more)) = Self::take(&mut g) else { continue };
            drop(g);
            let o = f((&p, more));
            let left = o == Outcome::Left;
            self.put(p, o);
            if left {
                return;
            }
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
        let p = Point { shape: 0, values: vec![] };
        let r = q.lead(std::slice::from_ref(&p), &mut |_| Outcome::Done(Some(2.0)));
        assert_eq!(r, vec![(p, Some(2.0))]);
    }

    #[test]
    fn the_leader_goes_on_while_a_helper_measures_its_last_point() {
        let q = BatchQueue::new();
        let pt = |s| Point { shape: s, values: vec![] };
        let (started, helper_started) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|scope| {
            let qr = &q;
            let h = scope.spawn(move || {
                qr.serve(&mut |(p, _)| {
                    started.send(()).unwrap();
                    released.recv().unwrap();
                    Outcome::Done(Some(p.shape as f64))
                })
            });
            // The leader takes point 0 first and holds it until the helper
            // has taken point 1; then nothing is left to take.
            let r = q.lead(&[pt(0), pt(1)], &mut |(p, _)| {
                helper_started.recv().unwrap();
                Outcome::Done(Some(p.shape as f64))
            });
            assert_eq!(r, vec![(pt(0), Some(0.0))], "back without the helper's point");
            release.send(()).unwrap();
            // With nothing to hand out, the leader waits for the last one.
            assert_eq!(q.lead(&[], &mut |_| Outcome::Done(None)), vec![(pt(1), Some(1.0))]);
            assert_eq!(q.lead(&[], &mut |_| Outcome::Done(None)), vec![], "nothing left anywhere");
            q.close();
            h.join().unwrap();
        });
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
        let shapes: Vec<usize> = r.iter().map(|(p, _)| p.shape).collect();
        assert_eq!(shapes, vec![1, 2, 0], "results as they come");
        assert!(r.iter().all(|(p, m)| *m == Some(p.shape as f64)));
        assert_eq!(order, vec![(0, true), (1, true), (2, true), (0, false)]);
    }
}
