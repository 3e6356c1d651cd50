//! `covey tunslip`: IPv6 between this host and a mote on a serial line, as Contiki's
//! `tunslip6` does it. Packets the host routes to the mote's /64 leave a TUN device and go
//! down the line in SLIP frames (RFC 1055); frames from the mote go up into the TUN device.
//! The mote asks for its prefix with `?P` and is answered `!P` and the prefix's 8 bytes; a
//! frame starting with `\r` is a line of the mote's log, printed as `mote: …`.
//!
//! The line is a serial device (`-s /dev/ttyUSB0`, set raw at `-B` baud) or a TCP stream
//! (`-a HOST -p PORT`: QEMU's `-serial tcp:…,server`, tunslip6's `-a`/`-p`). Several `-p`
//! serve several motes on one TUN device, as a border router serves the motes of its radio:
//! the i-th mote is told `PREFIX::(i+2)` after its prefix, a packet goes down the line of the
//! mote it is addressed to, and a multicast packet down every line. The command runs until
//! every line closes, or Ctrl-C.

use std::io::{Read, Write};
use std::net::{Ipv6Addr, TcpStream};
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::thread;

use clap::Args;
use covey_slip::{Decoded, Decoder};
use tun_rs::{DeviceBuilder, SyncDevice};

use crate::exit::{ExitKind, Failure};

/// The TUN device's MTU: IPv6's minimum (RFC 8200 §5), which a mote's buffers are sized for.
const MTU: u16 = 1280;
/// The longest frame read from the line: an MTU-sized packet; longer ones are dropped.
const MAX_FRAME: usize = MTU as usize;

/// `covey tunslip` arguments.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  covey tunslip -s /dev/ttyUSB0 fd00::1/64
  qemu-system-arm -M lm3s6965evb -nographic -serial tcp:127.0.0.1:60001,server=on \\
      -kernel covey-mote &
  covey tunslip -a 127.0.0.1 -p 60001 -t tun1 fd00:1::1/64
  covey get 'coap://[fd00:1::2]/sensors/temp'
  covey tunslip -a 127.0.0.1 -p 60001 -p 60002 -p 60003 -t tun1 fd00:1::1/64

The mote takes PREFIX::2 and routes through PREFIX::1, the address given here; with several
-p, the motes take PREFIX::2, PREFIX::3, ... in order, and multicast reaches them all. Needs
root (CAP_NET_ADMIN) for the TUN device.")]
pub struct TunslipArgs {
    /// This host's address on the line, with the prefix length the mote's /64 comes from
    /// (e.g. fd00::1/64).
    #[arg(value_name = "ADDRESS/PREFIX")]
    address: String,
    /// The serial device the mote is on.
    #[arg(
        short = 's',
        long = "device",
        value_name = "PATH",
        conflicts_with = "host"
    )]
    device: Option<String>,
    /// Connect to a serial line served over TCP at this host instead (QEMU's -serial tcp:…,server).
    #[arg(short = 'a', long = "host", value_name = "HOST")]
    host: Option<String>,
    /// The TCP port with -a; repeat it to serve several motes, one per port, on one TUN
    /// device.
    #[arg(short = 'p', long = "port", default_values_t = [60001], requires = "host")]
    ports: Vec<u16>,
    /// The TUN device's name.
    #[arg(short = 't', long = "tun", default_value = "tun0", value_name = "NAME")]
    tun: String,
    /// The serial device's speed in bit/s.
    #[arg(
        short = 'B',
        long = "baud",
        default_value_t = 115_200,
        value_name = "RATE"
    )]
    baud: u32,
    /// Also report every frame dropped (too long, badly escaped, or not IPv6).
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
}

/// The line to the mote: one reader, a writer shared by both directions.
type LineWriter = Arc<Mutex<Box<dyn Write + Send>>>;
/// The line as opened: its reading and writing ends.
type Line = (Box<dyn Read + Send>, Box<dyn Write + Send>);

/// Runs the bridge until every line closes.
pub fn run(args: TunslipArgs) -> Result<(), Failure> {
    let (address, prefix_len) = parse_address(&args.address)?;
    let lines = open_lines(&args)?;
    let tun = DeviceBuilder::new()
        .name(&args.tun)
        .mtu(MTU)
        .ipv6(address, prefix_len)
        .packet_information(false)
        .build_sync()
        .map_err(|e| {
            let hint = match e.kind() {
                std::io::ErrorKind::PermissionDenied => " (needs root or CAP_NET_ADMIN)",
                std::io::ErrorKind::NotFound => " (no /dev/net/tun: modprobe tun)",
                _ => "",
            };
            Failure::new(
                ExitKind::Other,
                format!("cannot create TUN device {}: {e}{hint}", args.tun),
            )
        })?;
    let tun = Arc::new(tun);
    let names = line_names(&args);
    println!(
        "covey tunslip: {} {address}/{prefix_len} <-> {}",
        args.tun,
        names.join(", ")
    );
    let _ = std::io::stdout().flush();

    let prefix: [u8; 8] = address.octets()[..8].try_into().unwrap_or_default();
    let several = lines.len() > 1;
    let mut motes = Vec::with_capacity(lines.len());
    let mut readers = Vec::with_capacity(lines.len());
    for (i, (reader, writer)) in lines.into_iter().enumerate() {
        motes.push(Mote {
            address: mote_address(prefix, i),
            writer: Arc::new(Mutex::new(writer)),
        });
        readers.push(reader);
    }
    let motes = Arc::new(motes);
    {
        // Runs until the process ends: the TUN device and the lines go with it.
        let (tun, motes) = (Arc::clone(&tun), Arc::clone(&motes));
        thread::spawn(move || tun_to_lines(&tun, &motes));
    }
    let handles: Vec<_> = readers
        .into_iter()
        .enumerate()
        .map(|(i, reader)| {
            let (tun, motes) = (Arc::clone(&tun), Arc::clone(&motes));
            let verbose = args.verbose;
            thread::spawn(move || {
                let mote = &motes[i];
                // One line keeps tunslip6's answer, the prefix alone (the mote takes ::2).
                let answer = match several {
                    true => mote.address.octets().to_vec(),
                    false => prefix.to_vec(),
                };
                let label = match several {
                    true => format!("mote {}", i + 1),
                    false => "mote".to_string(),
                };
                line_to_tun(reader, &tun, &mote.writer, (&answer, &label), verbose)
            })
        })
        .collect();
    let mut outcome = Ok(());
    for handle in handles {
        let ended = handle
            .join()
            .unwrap_or_else(|_| Err(Failure::new(ExitKind::Other, "a line's thread panicked")));
        if outcome.is_ok() {
            outcome = ended;
        }
    }
    outcome
}

/// One mote of the bridge: its address and its line's writing end.
struct Mote {
    address: Ipv6Addr,
    writer: LineWriter,
}

/// The address the `index`-th mote is given: `PREFIX::(index + 2)`.
fn mote_address(prefix: [u8; 8], index: usize) -> Ipv6Addr {
    let mut octets = [0u8; 16];
    octets[..8].copy_from_slice(&prefix);
    octets[8..].copy_from_slice(&(index as u64 + 2).to_be_bytes());
    Ipv6Addr::from(octets)
}

/// `fd00::1/64` into its address and prefix length.
fn parse_address(text: &str) -> Result<(Ipv6Addr, u8), Failure> {
    let usage = |why: &str| {
        Failure::new(
            ExitKind::Usage,
            format!(
                "{text:?} is not an IPv6 address with a prefix length such as fd00::1/64: {why}"
            ),
        )
    };
    let (address, len) = text.split_once('/').ok_or_else(|| usage("no /LENGTH"))?;
    let address: Ipv6Addr = address.parse().map_err(|_| usage("bad address"))?;
    let len: u8 = len.parse().map_err(|_| usage("bad length"))?;
    if !(1..=64).contains(&len) {
        return Err(usage(
            "the mote's prefix is 64 bits, so the length is 1 to 64",
        ));
    }
    Ok((address, len))
}

fn line_names(args: &TunslipArgs) -> Vec<String> {
    match (&args.device, &args.host) {
        (Some(device), _) => vec![device.clone()],
        (None, Some(host)) => args.ports.iter().map(|p| format!("{host}:{p}")).collect(),
        (None, None) => vec!["/dev/ttyUSB0".into()],
    }
}

/// Opens the serial device (raw, at the baud rate) or connects to each TCP line.
fn open_lines(args: &TunslipArgs) -> Result<Vec<Line>, Failure> {
    let names = line_names(args);
    let fail = |name: &str, e: std::io::Error| {
        Failure::new(ExitKind::Unreachable, format!("cannot open {name}: {e}"))
    };
    if let Some(host) = &args.host {
        let mut lines = Vec::with_capacity(args.ports.len());
        for (port, name) in args.ports.iter().zip(&names) {
            let stream = TcpStream::connect((host.as_str(), *port)).map_err(|e| fail(name, e))?;
            let _ = stream.set_nodelay(true);
            let reader = stream.try_clone().map_err(|e| fail(name, e))?;
            lines.push((
                Box::new(reader) as Box<dyn Read + Send>,
                Box::new(stream) as Box<dyn Write + Send>,
            ));
        }
        return Ok(lines);
    }
    let name = &names[0];
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name)
        .map_err(|e| fail(name, e))?;
    make_raw(&file, args.baud).map_err(|why| {
        Failure::new(
            ExitKind::Usage,
            format!("cannot set up {name} as a serial line: {why}"),
        )
    })?;
    let reader = file.try_clone().map_err(|e| fail(name, e))?;
    Ok(vec![(Box::new(reader), Box::new(file))])
}

/// Raw mode at `baud` bit/s, as tunslip6's `stty_telos`; a file that is no terminal (a pipe,
/// a pty's other end already raw) is left as it is.
fn make_raw(file: &std::fs::File, baud: u32) -> Result<(), String> {
    use nix::sys::termios::{self, BaudRate, SetArg};
    let Ok(mut tty) = termios::tcgetattr(file.as_fd()) else {
        return Ok(());
    };
    let rate = match baud {
        9600 => BaudRate::B9600,
        19200 => BaudRate::B19200,
        38400 => BaudRate::B38400,
        57600 => BaudRate::B57600,
        115_200 => BaudRate::B115200,
        230_400 => BaudRate::B230400,
        460_800 => BaudRate::B460800,
        921_600 => BaudRate::B921600,
        other => return Err(format!("unsupported speed {other} (9600 to 921600)")),
    };
    termios::cfmakeraw(&mut tty);
    termios::cfsetspeed(&mut tty, rate).map_err(|e| e.to_string())?;
    termios::tcsetattr(file.as_fd(), SetArg::TCSAFLUSH, &tty).map_err(|e| e.to_string())
}

/// Packets the host routes to the motes: down the line of the mote a packet is addressed
/// to, a multicast packet down every line (the motes are one link, as on a radio).
fn tun_to_lines(tun: &SyncDevice, motes: &[Mote]) {
    let mut packet = vec![0u8; usize::from(MTU) + 64];
    let mut frame = Vec::with_capacity(2 * packet.len() + 2);
    while let Ok(n) = tun.recv(&mut packet) {
        let Some(destination) = destination(&packet[..n]) else {
            continue;
        };
        frame.clear();
        covey_slip::encode(&packet[..n], |b| frame.push(b));
        // One mote takes whatever the host routes to its line, as tunslip6 does.
        let all = motes.len() == 1 || destination.is_multicast();
        for mote in motes.iter().filter(|m| all || m.address == destination) {
            let Ok(mut line) = mote.writer.lock() else {
                return;
            };
            // A closed line loses its packets; the other motes still get theirs.
            let _ = line.write_all(&frame).and_then(|()| line.flush());
        }
    }
}

/// The destination of an IPv6 packet (bytes 24 to 40 of its header).
fn destination(packet: &[u8]) -> Option<Ipv6Addr> {
    let bytes: [u8; 16] = packet.get(24..40)?.try_into().ok()?;
    (packet[0] >> 4 == 6).then(|| Ipv6Addr::from(bytes))
}

/// Frames from the mote: packets up into the TUN device, the prefix request answered, log
/// lines printed. Returns when the line closes.
fn line_to_tun(
    mut reader: Box<dyn Read + Send>,
    tun: &SyncDevice,
    writer: &LineWriter,
    (address, label): (&[u8], &str),
    verbose: bool,
) -> Result<(), Failure> {
    let mut decoder = Decoder::<MAX_FRAME>::new();
    let mut bytes = [0u8; 2048];
    let mut dropped = 0u64;
    loop {
        let n = match reader.read(&mut bytes) {
            Ok(0) => {
                eprintln!("covey tunslip: {label}'s line closed ({dropped} frames dropped)");
                return Ok(());
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Failure::new(
                    ExitKind::Other,
                    format!("reading the line: {e}"),
                ));
            }
        };
        for &byte in &bytes[..n] {
            match decoder.push(byte) {
                Decoded::Pending => {}
                Decoded::Dropped => {
                    dropped += 1;
                    if verbose {
                        eprintln!("covey tunslip: dropped a frame (too long or badly escaped)");
                    }
                }
                Decoded::Frame(_) => match decoder.frame() {
                    [b'?', b'P', ..] => {
                        let mut answer = Vec::with_capacity(40);
                        let reply = [&b"!P"[..], address].concat();
                        covey_slip::encode(&reply, |b| answer.push(b));
                        let sent = writer.lock().map_err(|_| ()).and_then(|mut w| {
                            w.write_all(&answer)
                                .and_then(|()| w.flush())
                                .map_err(|_| ())
                        });
                        if sent.is_ok() {
                            let mut prefix = [0u8; 8];
                            prefix.copy_from_slice(&address[..8]);
                            match address.len() {
                                16 => println!(
                                    "covey tunslip: address {} sent to {label}",
                                    Ipv6Addr::from(
                                        <[u8; 16]>::try_from(address).unwrap_or_default()
                                    )
                                ),
                                _ => println!(
                                    "covey tunslip: prefix {}::/64 sent to the mote",
                                    prefix_text(prefix)
                                ),
                            }
                        }
                    }
                    [b'\r', text @ ..] => {
                        print!("{label}: {}", String::from_utf8_lossy(text));
                        if !text.ends_with(b"\n") {
                            println!();
                        }
                    }
                    frame @ [first, ..] if first >> 4 == 6 => {
                        if let Err(e) = tun.send(frame) {
                            eprintln!("covey tunslip: the TUN device refused a packet: {e}");
                        }
                    }
                    _ => {
                        dropped += 1;
                        if verbose {
                            eprintln!("covey tunslip: dropped a frame that is not IPv6");
                        }
                    }
                },
            }
        }
        let _ = std::io::stdout().flush();
    }
}

fn prefix_text(prefix: [u8; 8]) -> String {
    let mut octets = [0u8; 16];
    octets[..8].copy_from_slice(&prefix);
    let text = Ipv6Addr::from(octets).to_string();
    text.trim_end_matches("::").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_needs_a_prefix_length_of_at_most_64() {
        assert_eq!(
            parse_address("fd00:1::1/64").ok(),
            Some(("fd00:1::1".parse().unwrap(), 64))
        );
        for bad in ["fd00::1", "fd00::1/65", "10.0.0.1/24", "fd00::1/x"] {
            let e = parse_address(bad).unwrap_err();
            assert_eq!(e.kind, ExitKind::Usage, "{bad}");
        }
    }

    #[test]
    fn each_mote_of_a_bridge_has_its_own_address_after_the_prefix() {
        let prefix = [0xfd, 0, 0, 1, 0, 0, 0, 0];
        assert_eq!(
            mote_address(prefix, 0),
            "fd00:1::2".parse::<Ipv6Addr>().unwrap()
        );
        assert_eq!(
            mote_address(prefix, 2),
            "fd00:1::4".parse::<Ipv6Addr>().unwrap()
        );
    }

    #[test]
    fn a_packets_destination_is_read_from_its_ipv6_header() {
        let mut packet = [0u8; 40];
        packet[0] = 0x60;
        packet[24..40].copy_from_slice(&"ff05::fd".parse::<Ipv6Addr>().unwrap().octets());
        assert_eq!(destination(&packet), Some("ff05::fd".parse().unwrap()));
        packet[0] = 0x45;
        assert_eq!(destination(&packet), None);
        assert_eq!(destination(&packet[..30]), None);
    }

    #[test]
    fn the_prefix_is_shown_without_its_host_part() {
        assert_eq!(prefix_text([0xfd, 0, 0, 1, 0, 0, 0, 0]), "fd00:1");
    }
}
