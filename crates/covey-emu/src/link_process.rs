//! The forwarder: one thread that reads every packet the namespaces send into their TUN
//! devices, hands it to the simulator's own point-to-point link model for its direction
//! (queue, serialisation at the rate, loss, delay with jitter), and writes it to the
//! receiving namespace's TUN device when the model says it arrives. The models run on real
//! time: a timerfd (absolute CLOCK_MONOTONIC, 1 ns timer slack) wakes the thread for the
//! next due packet and a short busy-wait takes it the rest of the way.

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use covey_proto::{Duration, Instant};
use covey_sim::media::{Destination, LinkConfig, Medium, Packet, PointToPoint};
use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

use super::clock::{thread_cpu_nanos, RealClock};
use super::flow_counters::{Flow, FlowTable};
use super::link_stats::{DirectionStats, ForwarderStats};
use super::message_marks::{MessageMarker, MessageTally};
use super::packet_pool::{PacketPool, SlotMeta};
use super::realtime::{make_current_thread_realtime, FORWARDER_PRIORITY};
use super::tun_link::TunPort;
use super::EmuError;

/// Packets read from one device per wake-up before the others get their turn.
const READ_BATCH: usize = 64;
/// epoll data of the timer and of the stop signal (ports use their index).
const TIMER: u64 = u64::MAX;
const STOP: u64 = u64::MAX - 1;

/// Everything the forwarder needs, moved into its thread.
pub struct ForwarderSetup {
    /// One TUN device per node, by node index.
    pub ports: Vec<TunPort>,
    /// One link per unordered pair of nodes: (a, b, a→b, b→a).
    pub links: Vec<(usize, usize, LinkConfig, LinkConfig)>,
    /// Seed of the models' random streams.
    pub seed: u64,
    /// The first three octets of the testbed's /24; node i has .(i + 1).
    pub subnet: [u8; 3],
    /// Packets the forwarder may hold at once.
    pub packet_capacity: usize,
    /// Flows counted apart.
    pub max_flows: usize,
    /// How long before a due time the thread stops sleeping and spins.
    pub spin: Duration,
    /// The devices' MTU: the largest packet a slot holds.
    pub mtu: usize,
    /// Whether to run the thread under SCHED_FIFO, so load elsewhere does not delay it.
    pub realtime: bool,
    /// How to recognise application messages in packets, if they are to be counted.
    pub message_marker: Option<MessageMarker>,
}

/// What the forwarder shares with the testbed: counters, read under a lock.
#[derive(Debug)]
pub struct Shared {
    /// Per-flow counts.
    pub flows: FlowTable,
    /// Per-direction counts, indexed `from * nodes + to`.
    pub directions: Vec<DirectionStats>,
    /// Forwarder-wide counts and timing precision.
    pub stats: ForwarderStats,
    /// Application messages put on each direction, indexed `from * nodes + to`.
    pub messages: Vec<MessageTally>,
}

/// The running forwarder thread.
#[derive(Debug)]
pub struct Forwarder {
    stop: Arc<EventFd>,
    thread: Option<JoinHandle<Result<(), EmuError>>>,
    shared: Arc<Mutex<Shared>>,
}

impl Forwarder {
    /// Starts the forwarder thread.
    pub fn spawn(setup: ForwarderSetup) -> Result<Forwarder, EmuError> {
        let n = setup.ports.len();
        let shared = Arc::new(Mutex::new(Shared {
            flows: FlowTable::new(setup.max_flows),
            directions: vec![DirectionStats::default(); n * n],
            stats: ForwarderStats::default(),
            messages: vec![MessageTally::default(); n * n],
        }));
        let stop = Arc::new(
            EventFd::from_flags(EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)
                .map_err(|e| EmuError::sys("create the forwarder's stop eventfd", e))?,
        );
        let mut state = State::new(setup, Arc::clone(&shared))?;
        let stop_rx = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("covey-emu-forwarder".into())
            .spawn(move || state.run(&stop_rx))
            .map_err(|e| EmuError::io("start the forwarder thread", e))?;
        Ok(Forwarder {
            stop,
            thread: Some(thread),
            shared,
        })
    }

    /// The counters, locked.
    pub fn shared(&self) -> MutexGuard<'_, Shared> {
        lock(&self.shared)
    }

    /// Stops the thread (closing every TUN device) and says whether it had failed.
    pub fn stop(&mut self) -> Result<(), EmuError> {
        let _ = self.stop.write(1);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Ok(()),
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The forwarder thread's state.
struct State {
    ports: Vec<TunPort>,
    links: Vec<(usize, usize, PointToPoint)>,
    /// Link index per ordered pair, `from * nodes + to`.
    pair_link: Vec<usize>,
    pool: PacketPool,
    scratch: Vec<u8>,
    subnet: [u8; 3],
    clock: RealClock,
    timer: TimerFd,
    armed: Option<Instant>,
    spin: Duration,
    realtime: bool,
    message_marker: Option<MessageMarker>,
    shared: Arc<Mutex<Shared>>,
}

impl State {
    fn new(setup: ForwarderSetup, shared: Arc<Mutex<Shared>>) -> Result<State, EmuError> {
        let n = setup.ports.len();
        let mut pair_link = vec![usize::MAX; n * n];
        let mut links = Vec::with_capacity(setup.links.len());
        for (k, &(a, b, ab, ba)) in setup.links.iter().enumerate() {
            if a >= n || b >= n || a == b {
                return Err(EmuError::Invalid(format!(
                    "link {a}-{b} between unknown nodes"
                )));
            }
            pair_link[a * n + b] = k;
            pair_link[b * n + a] = k;
            links.push((a, b, PointToPoint::new(a, b, ab, ba, setup.seed, k as u64)));
        }
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(|e| EmuError::sys("create the forwarder's timerfd", e))?;
        Ok(State {
            ports: setup.ports,
            links,
            pair_link,
            pool: PacketPool::new(setup.mtu, setup.packet_capacity),
            scratch: vec![0; setup.mtu],
            subnet: setup.subnet,
            clock: RealClock::start(),
            timer,
            armed: None,
            spin: setup.spin,
            realtime: setup.realtime,
            message_marker: setup.message_marker,
            shared,
        })
    }

    fn run(&mut self, stop: &EventFd) -> Result<(), EmuError> {
        // Timer slack defaults to 50 µs; the models want their due times kept.
        let _ = nix::sys::prctl::set_timerslack(1);
        if self.realtime {
            let realtime = make_current_thread_realtime(FORWARDER_PRIORITY);
            lock(&self.shared).stats.realtime = realtime;
        }
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map_err(|e| EmuError::sys("create the forwarder's epoll", e))?;
        let readable = |data| EpollEvent::new(EpollFlags::EPOLLIN, data);
        for (i, port) in self.ports.iter().enumerate() {
            epoll
                .add(port.device(), readable(i as u64))
                .map_err(|e| EmuError::sys("watch a TUN device", e))?;
        }
        epoll
            .add(&self.timer, readable(TIMER))
            .map_err(|e| EmuError::sys("watch the timerfd", e))?;
        epoll
            .add(stop, readable(STOP))
            .map_err(|e| EmuError::sys("watch the stop eventfd", e))?;
        let mut events = [EpollEvent::empty(); 64];
        loop {
            self.arm_timer()?;
            let ready = match epoll.wait(&mut events, EpollTimeout::NONE) {
                Ok(n) => n,
                Err(Errno::EINTR) => 0,
                Err(e) => return Err(EmuError::sys("wait for packets", e)),
            };
            let shared = Arc::clone(&self.shared);
            let mut shared = lock(&shared);
            for event in &events[..ready] {
                match event.data() {
                    STOP => return Ok(()),
                    TIMER => {
                        // Consumes the expiry; a spurious wake-up is harmless.
                        let _ = self.timer.wait();
                        self.armed = None;
                    }
                    port => self.read_port(port as usize, &mut shared),
                }
            }
            self.spin_until_due();
            self.advance(&mut shared);
            shared.stats.cpu_nanos = thread_cpu_nanos();
        }
    }

    /// The earliest time a link model needs the clock.
    fn next_due(&self) -> Option<Instant> {
        self.links
            .iter()
            .filter_map(|(_, _, l)| l.poll_timeout())
            .min()
    }

    /// Arms the timerfd `spin` before the next due time (or disarms it).
    fn arm_timer(&mut self) -> Result<(), EmuError> {
        let wake = self
            .next_due()
            .map(|t| Instant::from_nanos(t.as_nanos().saturating_sub(self.spin.as_nanos() as u64)));
        if wake == self.armed {
            return Ok(());
        }
        let result = match wake {
            Some(t) => self.timer.set(
                Expiration::OneShot(self.clock.monotonic_at(t)),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            ),
            None => self.timer.unset(),
        };
        result.map_err(|e| EmuError::sys("arm the timerfd", e))?;
        self.armed = wake;
        Ok(())
    }

    /// Busy-waits the last stretch to a due time that is at most `spin` away.
    fn spin_until_due(&self) {
        let Some(due) = self.next_due() else {
            return;
        };
        let now = self.clock.now();
        if due <= now || due.saturating_duration_since(now) > self.spin {
            return;
        }
        while self.clock.now() < due {
            std::hint::spin_loop();
        }
    }

    /// Reads up to a batch of packets from node `from`'s device into the link models.
    fn read_port(&mut self, from: usize, shared: &mut Shared) {
        let now = self.clock.now();
        for _ in 0..READ_BATCH {
            let Some(slot) = self.pool.alloc() else {
                // No room: drain the device into scratch so the sender sees drops, not a stall.
                match self.ports[from].device().recv(&mut self.scratch) {
                    Ok(_) => {
                        shared.stats.pool_exhausted += 1;
                        continue;
                    }
                    Err(_) => return,
                }
            };
            let len = match self.ports[from].device().recv(self.pool.buffer_mut(slot)) {
                Ok(len) => len,
                Err(_) => {
                    // WouldBlock (drained) or a read error: either way this device is done.
                    self.pool.free(slot);
                    return;
                }
            };
            *self.pool.meta_mut(slot) = SlotMeta {
                len,
                flow: 0,
                delivered: false,
            };
            let packet = self.pool.packet(slot);
            let route = Flow::parse(packet).and_then(|flow| {
                let to = self.node_of(flow.destination.ip().octets())?;
                (to != from).then_some((flow, to))
            });
            let Some((flow, to)) = route else {
                shared.stats.unroutable += 1;
                self.pool.free(slot);
                continue;
            };
            let index = shared.flows.lookup(flow, from, to);
            let counters = shared.flows.counters_mut(index);
            counters.packets_sent += 1;
            counters.bytes_sent += len as u64;
            let n = self.ports.len();
            if let Some(marker) = &self.message_marker {
                shared.messages[from * n + to].record(marker, packet);
            }
            self.pool.meta_mut(slot).flow = index;
            let link = self.pair_link[from * n + to];
            if let Some((_, _, model)) = self.links.get_mut(link) {
                model.send(
                    now,
                    Packet {
                        id: slot as u64,
                        from,
                        to: Destination::Node(to),
                        payload_bytes: len,
                    },
                );
            }
        }
    }

    /// The node holding `address`, if it is one of the testbed's.
    fn node_of(&self, address: [u8; 4]) -> Option<usize> {
        if address[..3] != self.subnet {
            return None;
        }
        let node = usize::from(address[3]).checked_sub(1)?;
        (node < self.ports.len()).then_some(node)
    }

    /// Runs every link model to now: writes what arrived, frees what is done.
    fn advance(&mut self, shared: &mut Shared) {
        let now = self.clock.now();
        let n = self.ports.len();
        for (a, b, model) in &mut self.links {
            if model.poll_timeout().is_some_and(|t| t <= now) {
                model.handle_timeout(now);
            }
            while let Some(d) = model.poll_delivery() {
                let slot = d.id as usize;
                let written = self.ports[d.to].device().send(self.pool.packet(slot));
                let late = self.clock.now().saturating_duration_since(d.at);
                let meta = self.pool.meta_mut(slot);
                if written.is_ok() {
                    meta.delivered = true;
                    let c = shared.flows.counters_mut(meta.flow);
                    c.packets_delivered += 1;
                    c.bytes_delivered += meta.len as u64;
                    shared.stats.forwarded += 1;
                    shared.stats.lateness.record(late);
                } else {
                    shared.stats.write_failed += 1;
                }
            }
            while let Some(id) = model.poll_released() {
                let slot = id as usize;
                let meta = *self.pool.meta_mut(slot);
                if !meta.delivered {
                    shared.flows.counters_mut(meta.flow).packets_lost += 1;
                }
                self.pool.free(slot);
            }
            shared.directions[*a * n + *b] = DirectionStats::of(model.a_to_b());
            shared.directions[*b * n + *a] = DirectionStats::of(model.b_to_a());
        }
        shared.stats.packets_held = self.pool.in_use() as u64;
    }
}
