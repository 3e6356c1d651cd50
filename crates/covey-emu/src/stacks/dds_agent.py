"""Eclipse Cyclone DDS agent of the covey lab: publish, relay or subscribe the telemetry.

Run by the `protocols` scenario inside a network namespace as
    python3 dds_agent.py ROLE RELIABILITY COUNT RATE SIZE RUN_SECONDS [GO_FILE]
ROLE is publish (topic uplink), relay (uplink -> downlink) or subscribe (downlink);
RELIABILITY is reliable or best_effort. Peers come from CYCLONEDDS_URI (unicast discovery).
The publisher sends once GO_FILE exists: the scenario creates it when the relay reports
"linked", because each end of a topic matches the other on its own, and a sample written
before the far end has matched is dropped there (volatile durability keeps nothing).
Prints one JSON event per line, like the Rust agents.
"""

import json
import os
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class Telemetry(IdlStruct, typename="covey.Telemetry"):
    json: str


def endpoint(cls, participant, topic, qos):
    """A reader or writer and a function saying whether it has matched a remote endpoint.
    Bindings from 0.11 on ask the entity (get_matched_*); 0.10's (built against Debian's
    libddsc for the TCP transport) have no such call, so a listener keeps the count."""
    query = "get_matched_publications" if cls is DataReader else "get_matched_subscriptions"
    if hasattr(cls, query):
        entity = cls(participant, topic, qos=qos)
        return entity, lambda: bool(getattr(entity, query)())
    count = [0]

    def on_matched(_entity, status):
        count[0] = status.current_count

    listener = Listener(on_publication_matched=on_matched, on_subscription_matched=on_matched)
    entity = cls(participant, topic, qos=qos, listener=listener)
    return entity, lambda: count[0] > 0


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def message(seq, size):
    head = '{"seq":%d,"hr":72,"spo2":98,"skin":412,"acc":[0.01,-0.02,0.98],"pad":"' % seq
    tail = '"}'
    return head + "x" * max(0, size - len(head) - len(tail)) + tail


def main():
    role, reliability, count, rate, size, run_s = sys.argv[1:7]
    go_file = sys.argv[7] if len(sys.argv) > 7 else None
    count, rate, size, run_s = int(count), float(rate), int(size), float(run_s)
    if reliability == "reliable":
        kind = Policy.Reliability.Reliable(duration(seconds=1))
    else:
        kind = Policy.Reliability.BestEffort
    qos = Qos(kind, Policy.History.KeepLast(1000), Policy.Durability.Volatile)
    participant = DomainParticipant(0)
    uplink = Topic(participant, "uplink", Telemetry)
    downlink = Topic(participant, "downlink", Telemetry)
    deadline = time.monotonic() + run_s
    if role == "publish":
        writer, matched = endpoint(DataWriter, participant, uplink, qos)
        # Wait (bounded) for the relay to match, as the Rust agents wait to connect.
        while not matched() and time.monotonic() < deadline:
            time.sleep(0.05)
        emit("ready")
        while go_file and not os.path.exists(go_file) and time.monotonic() < deadline:
            time.sleep(0.01)
        interval = 1.0 / rate
        start = time.monotonic()
        for seq in range(count):
            target = start + seq * interval
            delay = target - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            emit("sent", seq=seq, t_ns=time.time_ns())
            writer.write(Telemetry(json=message(seq, size)))
        while time.monotonic() < deadline:
            time.sleep(0.1)
    elif role == "relay":
        reader, reader_matched = endpoint(DataReader, participant, uplink, qos)
        writer, writer_matched = endpoint(DataWriter, participant, downlink, qos)
        emit("ready")
        linked = False
        while time.monotonic() < deadline:
            if not linked and reader_matched() and writer_matched():
                linked = True
                emit("linked")
            for sample in reader.take_iter(timeout=duration(milliseconds=100)):
                writer.write(sample)
    elif role == "subscribe":
        reader, matched = endpoint(DataReader, participant, downlink, qos)
        # Wait (bounded) for the relay's writer to match: with volatile durability a sample
        # relayed before discovery finishes on this lossy link is lost for good, and the
        # publisher starts only once this side is ready.
        while not matched() and time.monotonic() < deadline:
            time.sleep(0.05)
        emit("ready")
        while time.monotonic() < deadline:
            for sample in reader.take_iter(timeout=duration(milliseconds=100)):
                try:
                    seq = json.loads(sample.json)["seq"]
                except (ValueError, KeyError, TypeError):
                    continue
                emit("received", seq=seq, t_ns=time.time_ns())
    else:
        sys.exit("unknown role " + role)


if __name__ == "__main__":
    main()
