"""aiocoap's OSCORE (RFC 8613) peer for Covey's interop tests.

Usage:
  aiocoap_oscore.py server CONTEXT_DIR
      Binds 127.0.0.1 on a free port, serves /hello (GET: a short text) and /counter
      (GET, observable: a number that grows every 0.2 s while observed), /large (GET: the
      1024 bytes of LARGE, 16 numbered lines of 64 bytes, in inner Block2 blocks of 256
      bytes, or smaller ones if asked) and /store (PUT keeps the payload, reassembled by
      aiocoap from inner Block1; GET returns it) to requests protected with the security
      context in CONTEXT_DIR, and prints `listening on 127.0.0.1:PORT (coap)` to stderr
      once it receives; then `/large block N of SIZE bytes` for each block of /large it
      sends and `/store took LENGTH bytes in N blocks` for each PUT to /store.
  aiocoap_oscore.py client [--block-size SIZE] URI CONTEXT_DIR [METHOD [PAYLOAD]]
      Sends METHOD (GET by default) to URI with PAYLOAD, protected with the context in
      CONTEXT_DIR; prints `code CODE` and `payload PAYLOAD` to stdout, or
      `error NAME: TEXT` when aiocoap raises. A payload of several lines is printed as
      `payload-length N` and `payload-hex HEX` instead of `payload PAYLOAD`. With
      --block-size (16 to 1024), the payload goes in Block1 blocks of SIZE bytes and the
      response is asked for in Block2 blocks of SIZE (aiocoap on its own sends up to 1024
      bytes in one message under OSCORE, so a 1 KiB body would not be block-wise).
  aiocoap_oscore.py observe URI CONTEXT_DIR N
      Observes URI under the context in CONTEXT_DIR and prints `notification PAYLOAD`
      for the first response and each notification after it, until N lines; then
      cancels the observation and exits. Prints `error NAME: TEXT` instead when aiocoap
      raises, the answer is not successful, or the observation ends before N.

CONTEXT_DIR holds aiocoap's settings.json (secret_hex, salt_hex, sender-id_hex,
recipient-id_hex); aiocoap writes its sequence numbers beside it.
"""

import asyncio
import sys

import aiocoap
import aiocoap.numbers.constants
import aiocoap.resource as resource
from aiocoap.credentials import CredentialsMap
from aiocoap.numbers.contentformat import ContentFormat
from aiocoap.optiontypes import BlockOption
from aiocoap.oscore_sitewrapper import OscoreSiteWrapper

TEXT = ContentFormat.TEXT
HELLO = b"Hello over OSCORE from aiocoap"
# 16 lines of 64 bytes, numbered so that a reassembly out of order shows.
LARGE = "".join(f"{i:03d}" + "x" * 60 + "\n" for i in range(16)).encode()
assert len(LARGE) == 1024
# /large's blocks are 256 bytes (2 ** (4 + 4)).
LARGE_BLOCK_EXP = 4


class Hello(resource.Resource):
    async def render_get(self, request):
        return aiocoap.Message(payload=HELLO, content_format=TEXT)


class Counter(resource.ObservableResource):
    def __init__(self):
        super().__init__()
        self.value = 0
        self.handle = None

    def tick(self):
        self.value += 1
        self.updated_state()
        self.handle = asyncio.get_running_loop().call_later(0.2, self.tick)

    def update_observation_count(self, count):
        if count and self.handle is None:
            self.handle = asyncio.get_running_loop().call_later(0.2, self.tick)
        elif count == 0 and self.handle is not None:
            self.handle.cancel()
            self.handle = None

    async def render_get(self, request):
        return aiocoap.Message(payload=str(self.value).encode(), content_format=TEXT)


class Large(resource.Resource):
    """Cuts LARGE into blocks of at most 256 bytes itself: aiocoap's own Block2 handling
    would send its 1024 bytes in one message, as it takes payloads of up to 1024 bytes
    for OSCORE remotes."""

    async def needs_blockwise_assembly(self, request):
        return False

    async def render_get(self, request):
        whole = aiocoap.Message(code=aiocoap.CONTENT, payload=LARGE, content_format=TEXT)
        asked = request.opt.block2
        if asked is None:
            size_exp, start = LARGE_BLOCK_EXP, 0
        else:
            size_exp, start = min(asked.size_exponent, LARGE_BLOCK_EXP), asked.start
        number = start >> (size_exp + 4)
        size = 2 ** (size_exp + 4)
        print(f"/large block {number} of {size} bytes", file=sys.stderr, flush=True)
        return whole._extract_block(number, size_exp, 1024)


class Store(resource.Resource):
    def __init__(self):
        super().__init__()
        self.payload = b""

    async def render_put(self, request):
        self.payload = request.payload
        # After reassembly, the request carries the Block1 option of its last block.
        blocks = 1 if request.opt.block1 is None else request.opt.block1.block_number + 1
        took = f"/store took {len(self.payload)} bytes in {blocks} blocks"
        print(took, file=sys.stderr, flush=True)
        return aiocoap.Message(code=aiocoap.CHANGED)

    async def render_get(self, request):
        return aiocoap.Message(payload=self.payload, content_format=TEXT)


def bound_port(context):
    # aiocoap 0.4.17 does not say which port binding to port 0 got; its UDP socket does.
    interface = context.request_interfaces[0].token_interface.message_interface
    return interface.transport.get_extra_info("socket").getsockname()[1]


async def server(context_dir):
    # The tests compare piggybacked answers byte for byte: on a loaded test machine aiocoap
    # must not turn a slow one into an empty ACK and a separate response (default 0.1 s).
    aiocoap.numbers.constants.TransportTuning.EMPTY_ACK_DELAY = 2.0
    site = resource.Site()
    site.add_resource(["hello"], Hello())
    site.add_resource(["counter"], Counter())
    site.add_resource(["large"], Large())
    site.add_resource(["store"], Store())
    credentials = CredentialsMap()
    credentials.load_from_dict({":client": {"oscore": {"contextfile": context_dir}}})
    context = await aiocoap.Context.create_server_context(
        OscoreSiteWrapper(site, credentials),
        bind=("127.0.0.1", 0),
        server_credentials=credentials,
        transports=["udp6"],
    )
    port = bound_port(context)
    print(f"listening on 127.0.0.1:{port} (coap)", file=sys.stderr, flush=True)
    await asyncio.get_running_loop().create_future()


async def client_context(uri, context_dir):
    context = await aiocoap.Context.create_client_context()
    context.client_credentials.load_from_dict(
        {uri.rsplit("/", 1)[0] + "/*": {"oscore": {"contextfile": context_dir}}}
    )
    return context


def print_payload(payload):
    if b"\n" in payload:
        print(f"payload-length {len(payload)}", flush=True)
        print(f"payload-hex {payload.hex()}", flush=True)
    else:
        print(f"payload {payload.decode(errors='replace')}", flush=True)


async def client(uri, context_dir, method="GET", payload="", block_size=None):
    context = await client_context(uri, context_dir)
    try:
        code = getattr(aiocoap, method)
        request = aiocoap.Message(code=code, uri=uri, payload=payload.encode())
        if block_size is not None:
            size_exp = block_size.bit_length() - 5
            if payload:
                # aiocoap takes the size of the blocks from a Block1 option of block 0.
                request.opt.block1 = BlockOption.BlockwiseTuple(0, False, size_exp)
            request.opt.block2 = BlockOption.BlockwiseTuple(0, False, size_exp)
        response = await context.request(request).response
    except Exception as e:
        print(f"error {type(e).__name__}: {e}", flush=True)
    else:
        print(f"code {response.code.dotted}", flush=True)
        print_payload(response.payload)
    finally:
        await context.shutdown()


async def observe(uri, context_dir, count):
    count = int(count)
    context = await client_context(uri, context_dir)
    printed = 0
    try:
        request = context.request(aiocoap.Message(code=aiocoap.GET, uri=uri, observe=0))
        response = await request.response
        if not response.code.is_successful():
            raise RuntimeError(f"{response.code.dotted} {response.payload!r}")
        print(f"notification {response.payload.decode(errors='replace')}", flush=True)
        printed += 1
        if printed < count:
            async for notification in request.observation:
                if not notification.code.is_successful():
                    raise RuntimeError(
                        f"{notification.code.dotted} {notification.payload!r}"
                    )
                text = notification.payload.decode(errors="replace")
                print(f"notification {text}", flush=True)
                printed += 1
                if printed >= count:
                    break
            else:
                raise RuntimeError(f"the observation ended after {printed}")
        request.observation.cancel()
    except Exception as e:
        print(f"error {type(e).__name__}: {e}", flush=True)
    finally:
        await context.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        asyncio.run(server(sys.argv[2]))
    elif sys.argv[1] == "observe":
        asyncio.run(observe(*sys.argv[2:]))
    elif sys.argv[2] == "--block-size":
        asyncio.run(client(*sys.argv[4:], block_size=int(sys.argv[3])))
    else:
        asyncio.run(client(*sys.argv[2:]))
