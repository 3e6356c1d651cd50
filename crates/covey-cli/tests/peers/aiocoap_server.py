"""A small aiocoap server for Covey's interop tests.

Usage: aiocoap_server.py PORT [PERIOD]

Binds 127.0.0.1:PORT and serves
  /hello   GET: a short text
  /store   GET, PUT: keeps what was PUT (bodies over one block arrive with Block1)
  /large   GET: 3000 bytes of numbered lines, sliced into Block2 blocks by aiocoap
  /counter GET, observable: a number that grows every PERIOD seconds (default 0.3)
  /.well-known/core
"""

import asyncio
import sys

import aiocoap
import aiocoap.resource as resource
from aiocoap.numbers.contentformat import ContentFormat

TEXT = ContentFormat.TEXT


def large_body(size=3000):
    lines = []
    n = 0
    while sum(len(line) for line in lines) < size:
        lines.append(f"{n:04} aiocoap block-wise line\n")
        n += 1
    return "".join(lines)[:size].encode("ascii")


class Hello(resource.Resource):
    async def render_get(self, request):
        return aiocoap.Message(payload=b"Hello from aiocoap", content_format=TEXT)


class Store(resource.Resource):
    def __init__(self):
        super().__init__()
        self.content = b"nothing stored yet"

    async def render_get(self, request):
        return aiocoap.Message(payload=self.content, content_format=TEXT)

    async def render_put(self, request):
        self.content = request.payload
        return aiocoap.Message(code=aiocoap.CHANGED)


class Large(resource.Resource):
    async def render_get(self, request):
        return aiocoap.Message(payload=large_body(), content_format=TEXT)


class Counter(resource.ObservableResource):
    def __init__(self, period):
        super().__init__()
        self.period = period
        self.value = 0
        self.handle = None

    def tick(self):
        self.value += 1
        self.updated_state()
        self.handle = asyncio.get_running_loop().call_later(self.period, self.tick)

    def update_observation_count(self, count):
        if count and self.handle is None:
            self.handle = asyncio.get_running_loop().call_later(self.period, self.tick)
        elif count == 0 and self.handle is not None:
            self.handle.cancel()
            self.handle = None

    async def render_get(self, request):
        return aiocoap.Message(payload=str(self.value).encode(), content_format=TEXT)


async def main(port, period):
    root = resource.Site()
    root.add_resource(
        [".well-known", "core"],
        resource.WKCResource(root.get_resources_as_linkheader),
    )
    root.add_resource(["hello"], Hello())
    root.add_resource(["store"], Store())
    root.add_resource(["large"], Large())
    root.add_resource(["counter"], Counter(period))
    await aiocoap.Context.create_server_context(root, bind=("127.0.0.1", port))
    print("serving", flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    port = int(sys.argv[1])
    period = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    asyncio.run(main(port, period))
