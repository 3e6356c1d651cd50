"""aiocoap's OSCORE (RFC 8613) peer for Covey's interop tests.

Usage:
  aiocoap_oscore.py server CONTEXT_DIR
      Binds 127.0.0.1 on a free port, serves /hello (GET: a short text) and /counter
      (GET, observable: a number that grows every 0.2 s while observed) to requests
      protected with the security context in CONTEXT_DIR, and prints
      `listening on 127.0.0.1:PORT (coap)` to stderr once it receives.
  aiocoap_oscore.py client URI CONTEXT_DIR [METHOD [PAYLOAD]]
      Sends METHOD (GET by default) to URI with PAYLOAD, protected with the context in
      CONTEXT_DIR; prints `code CODE` and `payload PAYLOAD` to stdout, or
      `error NAME: TEXT` when aiocoap raises.

CONTEXT_DIR holds aiocoap's settings.json (secret_hex, salt_hex, sender-id_hex,
recipient-id_hex); aiocoap writes its sequence numbers beside it.
"""

import asyncio
import sys

import aiocoap
import aiocoap.resource as resource
from aiocoap.credentials import CredentialsMap
from aiocoap.numbers.contentformat import ContentFormat
from aiocoap.oscore_sitewrapper import OscoreSiteWrapper

TEXT = ContentFormat.TEXT
HELLO = b"Hello over OSCORE from aiocoap"


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


def bound_port(context):
    # aiocoap 0.4.17 does not say which port binding to port 0 got; its UDP socket does.
    interface = context.request_interfaces[0].token_interface.message_interface
    return interface.transport.get_extra_info("socket").getsockname()[1]


async def server(context_dir):
    site = resource.Site()
    site.add_resource(["hello"], Hello())
    site.add_resource(["counter"], Counter())
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


async def client(uri, context_dir, method="GET", payload=""):
    context = await aiocoap.Context.create_client_context()
    context.client_credentials.load_from_dict(
        {uri.rsplit("/", 1)[0] + "/*": {"oscore": {"contextfile": context_dir}}}
    )
    try:
        code = getattr(aiocoap, method)
        request = aiocoap.Message(code=code, uri=uri, payload=payload.encode())
        response = await context.request(request).response
    except Exception as e:
        print(f"error {type(e).__name__}: {e}", flush=True)
    else:
        print(f"code {response.code.dotted}", flush=True)
        print(f"payload {response.payload.decode(errors='replace')}", flush=True)
    finally:
        await context.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        asyncio.run(server(sys.argv[2]))
    else:
        asyncio.run(client(*sys.argv[2:]))
